# A COMMIT whose answer is lost (PostgreSQL: the connection dropped after COMMIT was
# sent) is reported as "outcome unknown", exit 7, with one line that says how to find
# out: `wakeq timeline`, and --key for a retry that replays. The failpoint `commit-lost`
# commits for real and then reports the answer lost, so the task exists afterwards.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null

# an unkeyed enqueue
expect_exit 7 env WAKEQ_FAILPOINT=commit-lost "$WQ" enqueue k
expect_eq "$(lines "$T/last.err")" 1 "lines of the message"
grep -q 'wakeq timeline' "$T/last.err" || fail "message does not name wakeq timeline: $(cat "$T/last.err")"
grep -q -- '--key' "$T/last.err" || fail "message does not name --key: $(cat "$T/last.err")"
[ -s "$T/last.out" ] && fail "an id was printed although the outcome is unknown: $(cat "$T/last.out")"
expect_eq "$(wq list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 1 \
	"tasks after the lost answer (the commit happened)"

# a keyed enqueue: exit 7, and the retry replays the task it did create
expect_exit 7 env WAKEQ_FAILPOINT=commit-lost "$WQ" enqueue k --key order-1 --payload '{"n":1}'
grep -q "wakeq timeline order-1" "$T/last.err" || fail "keyed message: $(cat "$T/last.err")"
id=$(wq enqueue k --key order-1 --payload '{"n":1}' --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["replayed"] is True, d; print(d["id"])')
expect_eq "$(wq list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 2 \
	"tasks after the keyed retry"
wq timeline order-1 | grep -q "replayed" || fail "no replayed event on task $id"

# cancel: the change happened, the answer says unknown
expect_exit 7 env WAKEQ_FAILPOINT=commit-lost "$WQ" cancel "$id"
grep -q 'wakeq timeline' "$T/last.err" || fail "cancel message: $(cat "$T/last.err")"
expect_eq "$(state_of "$id")" cancelled "state after a cancel whose answer was lost"
exit 0

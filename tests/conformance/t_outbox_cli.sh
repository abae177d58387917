# The outbox commands: deliveries, inbox, dead; exit codes (2 usage, 4 unknown id, 6 wrong
# state); only a succeeded task notifies (a discarded or failed one does not); a channel
# the worker has no configuration for backs off with a message naming it.
. "$WAKEQ_TESTS/conformance/lib.sh"
. "$WAKEQ_TESTS/conformance/outbox-lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF2
[kind.ok]
command = sh $HANDLERS/handler.sh ok
[kind.discard]
command = sh $HANDLERS/handler.sh exit 3
[kind.broken]
command = sh $HANDLERS/handler.sh exit 1
EOF2
ok=$(wq enqueue ok --notify inbox:bob)
discard=$(wq enqueue discard --notify inbox:bob)
broken=$(wq enqueue broken --notify inbox:bob)
lost=$(wq enqueue ok --notify webhook:nosuch)
expect_exit 2 wq enqueue ok --notify pager
expect_exit 2 wq enqueue ok --notify inbox:
run_worker "$T/w.ini"

expect_eq "$(inbox_count bob)" 1 "bob's notifications"
expect_eq "$(inbox_count bob "$ok")" 1 "about the succeeded task"
wq deliveries --json | python3 -c '
import json, sys
ds = json.load(sys.stdin)
tasks = sorted({d["task_id"] for d in ds})
assert tasks == sorted([int(sys.argv[1]), int(sys.argv[2])]), ds' "$ok" "$lost" \
	|| fail "deliveries of a discarded or failed task"
expect_eq "$(delivery "$lost" webhook:nosuch 'd["state"]')" pending "unconfigured channel state"
expect_eq "$(delivery "$lost" webhook:nosuch 'd["last_error"]')" \
	"channel 'webhook:nosuch' is not configured" "unconfigured channel error"

# deliveries
expect_exit 2 wq deliveries --state bogus
grep -q "unknown delivery state 'bogus'" "$T/last.err" || fail "bad state message"
expect_exit 0 wq deliveries --state delivered --json
expect_eq "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$T/last.out")" 1 \
	"delivered deliveries"
expect_exit 0 wq deliveries --state pending
grep -q "webhook:nosuch" "$T/last.out" || fail "pending list"
expect_exit 2 wq deliveries retry
expect_exit 2 wq deliveries retry abc
expect_exit 2 wq deliveries resend 1
expect_exit 4 wq deliveries retry 99999
did=$(delivery "$ok" inbox:bob 'd["id"]')
expect_exit 6 wq deliveries retry "$did"
grep -q "delivered; only a dead delivery can be retried" "$T/last.err" || fail "retry refusal"

# inbox
expect_exit 2 wq inbox
expect_exit 2 wq inbox "two words"
expect_exit 0 wq inbox nobody
expect_exit 0 wq inbox bob
grep -q "succeeded" "$T/last.out" || fail "inbox text"
nid=$(json_field "$(wq inbox bob --unread --json)" 'd[0]["id"]')
expect_exit 0 wq inbox read "$nid"
expect_exit 0 wq inbox read "$nid"
expect_eq "$(json_field "$(wq inbox bob --unread --json)" 'len(d)')" 0 "unread after read"
expect_eq "$(json_field "$(wq inbox bob --json)" 'd[0]["read_at"] is not None')" True "read_at"
expect_exit 4 wq inbox read 99999
expect_exit 2 wq inbox read abc
expect_exit 2 wq inbox read "$nid" --json

# dead
# no dead delivery; the failed task is listed with the command that retries it
expect_exit 0 wq dead
grep -q "wakeq retry $broken" "$T/last.out" || fail "dead: the failed task"
! grep -q "delivery" "$T/last.out" || fail "dead: no delivery is dead"
expect_eq "$(json_field "$(wq dead --json)" '[(x["type"], x["id"]) for x in d]')" "[('task', $broken)]" "dead --json"

# the timeline shows the delivery as its own lines
wq timeline "$ok" >"$T/tl.txt"
grep -q "delivery-queued.*inbox:bob" "$T/tl.txt" || fail "delivery-queued line"
grep -q "delivered.*inbox:bob" "$T/tl.txt" || fail "delivered line"

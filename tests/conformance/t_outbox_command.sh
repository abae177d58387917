# Command channels: argv from [channel.NAME], the notification JSON on stdin (metadata,
# never the result body), exit 0 = delivered, anything else retried with backoff; dead
# after max_attempts and reported to the operators' inbox under its configured name.
. "$WAKEQ_TESTS/conformance/lib.sh"
. "$WAKEQ_TESTS/conformance/outbox-lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF2
operators_inbox = oncall
delivery_concurrency = 2
[channel.pager]
type = command
command = sh $HANDLERS/channel.sh fail-first 1
retry_backoff = 20ms
[channel.broken]
type = command
command = sh $HANDLERS/channel.sh fail-first 100
max_attempts = 2
retry_backoff = 10ms
[kind.summarize]
command = sh $HANDLERS/handler.sh echo
EOF2
secret="RESULT-SECRET-$$"
a=$(wq enqueue summarize --payload "{\"s\":\"$secret\"}" --notify command:pager)
b=$(wq enqueue summarize --notify command:broken)
run_worker "$T/w.ini"

expect_eq "$(delivery "$a" command:pager 'd["state"]')" delivered "pager delivery"
expect_eq "$(delivery "$a" command:pager 'd["attempts"]')" 2 "pager attempts"
expect_eq "$(lines "$T/pages.pager")" 2 "pager calls"
pid=$(delivery "$a" command:pager 'd["id"]')
expect_eq "$(cut -d' ' -f1-2 "$T/pages.pager" | sort -u)" "$pid command:pager" "pager environment"
! grep -q "db-set" "$T/pages.pager" || fail "a channel command was handed the store (WAKEQ_DB)"
for f in "$T"/page.pager.*.json; do
	! grep -q "$secret" "$f" || fail "the result body reached the command channel"
	python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))
assert b["task_id"] == int(sys.argv[2]) and b["delivery_id"] == int(sys.argv[3]), b
assert b["result"]["size"] > 0 and len(b["result"]["sha256"]) == 64, b' "$f" "$a" "$pid" \
		|| fail "notification on stdin: $(cat "$f")"
done
wq timeline "$a" | grep delivery-failed | grep -q '"exit 1"' || fail "exit status missing from the timeline"

expect_eq "$(delivery "$b" command:broken 'd["state"]')" dead "broken delivery"
expect_eq "$(delivery "$b" command:broken 'd["attempts"]')" 2 "broken attempts"
expect_eq "$(delivery "$b" command:broken 'd["last_error"]')" "exit 1" "broken last error"
expect_eq "$(inbox_count oncall "$b")" 1 "report in the configured operators' inbox"
expect_eq "$(inbox_count operators)" 0 "report in the default operators' inbox"
expect_eq "$(lines "$T/runs")" 2 "handler runs"

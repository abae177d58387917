# A channel that never recovers: the delivery is `dead` after max_attempts, reported on
# two channels (an error line in the worker log, a notification in the operators' inbox)
# and in `wakeq dead`; `deliveries retry` later delivers it without re-running the task,
# and the report is never doubled.
. "$WAKEQ_TESTS/conformance/lib.sh"
. "$WAKEQ_TESTS/conformance/outbox-lib.sh"

wq init >/dev/null
start_hook "500"
config "$T/w.ini" <<EOF2
[channel.ops]
type = webhook
url = $HOOK_URL
max_attempts = 3
retry_backoff = 20ms
[kind.summarize]
command = sh $HANDLERS/handler.sh ok
EOF2
id=$(wq enqueue summarize --notify webhook:ops)
run_worker "$T/w.ini"

did=$(delivery "$id" webhook:ops 'd["id"]')
expect_eq "$(delivery "$id" webhook:ops 'd["state"]')" dead "delivery state"
expect_eq "$(delivery "$id" webhook:ops 'd["attempts"]')" 3 "attempts before dead"
expect_eq "$(delivery "$id" webhook:ops 'd["last_error"]')" "HTTP 500" "last error"
expect_eq "$(hook_requests)" 3 "requests the receiver saw"
grep -q "error: delivery $did (webhook:ops) of task $id is dead after 3 attempt" "$T/worker.log" \
	|| fail "no error line about the dead delivery in the worker log"
expect_eq "$(inbox_count operators)" 1 "operators' notifications"
wq inbox operators --json | python3 -c '
import json, sys
n = json.load(sys.stdin)[0]
assert n["subject"] == "dead-delivery", n
assert n["delivery_id"] == int(sys.argv[1]) and n["task_id"] == int(sys.argv[2]), n' \
	"$did" "$id" || fail "the operators' notification"
wq dead --json | python3 -c '
import json, sys
ds = [d for d in json.load(sys.stdin) if d["type"] == "delivery"]
assert [d["id"] for d in ds] == [int(sys.argv[1])], ds
assert ds[0]["command"] == "wakeq deliveries retry %s" % sys.argv[1], ds' "$did" || fail "wakeq dead --json"
wq dead | grep "webhook:ops" | grep -q "wakeq deliveries retry $did" || fail "wakeq dead does not name the command"
wq dead | grep -q "webhook:ops" || fail "wakeq dead does not list it"
expect_eq "$(event_count "$id" dead)" 1 "dead events"
expect_exit 1 wq doctor
grep -q "dead-delivery.*delivery $did" "$T/last.out" || fail "doctor does not report the dead delivery: $(cat "$T/last.out")"

# dead stays dead: no more attempts, no second report
run_worker "$T/w.ini"
expect_eq "$(hook_requests)" 3 "requests after another worker run"
expect_eq "$(inbox_count operators)" 1 "operators' notifications after another run"

# the receiver is back; an operator sends it again
printf '200\n' >"$T/hook/script"
expect_exit 0 wq deliveries retry "$did"
expect_exit 6 wq deliveries retry "$did"
grep -q "pending" "$T/last.err" || fail "the refusal does not name the state: $(cat "$T/last.err")"
run_worker "$T/w.ini"
expect_eq "$(delivery "$id" webhook:ops 'd["state"]')" delivered "state after deliveries retry"
expect_eq "$(delivery "$id" webhook:ops 'd["attempts"]')" 4 "attempts after deliveries retry"
expect_eq "$(hook_requests)" 4 "requests after deliveries retry"
expect_eq "$(lines "$T/runs")" 1 "handler runs"
expect_eq "$(event_count "$id" succeeded)" 1 "results recorded"
expect_eq "$(event_count "$id" delivery-retry)" 1 "delivery-retry events"
expect_eq "$(inbox_count operators)" 1 "operators' notifications after the retry"
wq dead | grep -q "nothing is dead" || fail "wakeq dead still lists it"
expect_exit 6 wq deliveries retry "$did"
expect_exit 4 wq deliveries retry 99999

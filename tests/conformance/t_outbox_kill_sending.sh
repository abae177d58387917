# A delivery found `sending` after a crash: the worker is SIGKILLed while its webhook
# request is in flight → after a restart the delivery is sent again with the same
# Idempotency-Key and delivered, the uncertainty is on the timeline, the handler did not
# run again and the inbox did not double.
. "$WAKEQ_TESTS/conformance/lib.sh"
. "$WAKEQ_TESTS/conformance/outbox-lib.sh"

wq init >/dev/null
start_hook "hang,200"
config "$T/w.ini" <<EOF2
[channel.ops]
type = webhook
url = $HOOK_URL
timeout = 60s
retry_backoff = 50ms
[kind.summarize]
command = sh $HANDLERS/handler.sh ok
EOF2
id=$(wq enqueue summarize --notify webhook:ops --notify inbox:alice)

start_worker w1 "$T/w.ini"
wait_until 30 has_requests 1
wait_until 30 delivery_state_is "$id" inbox:alice delivered
expect_eq "$(delivery "$id" webhook:ops 'd["state"]')" sending "webhook state while in flight"
kill -KILL "$(cat "$T/w1.pid")"
wait "$(cat "$T/w1.pid")" 2>/dev/null || true
expect_eq "$(delivery "$id" webhook:ops 'd["state"]')" sending "webhook state after the kill"

run_worker "$T/w.ini"
expect_eq "$(delivery "$id" webhook:ops 'd["state"]')" delivered "webhook state after restart"
expect_eq "$(delivery "$id" webhook:ops 'd["attempts"]')" 2 "webhook attempts"
expect_eq "$(hook_requests)" 2 "requests the receiver saw"
did=$(delivery "$id" webhook:ops 'd["id"]')
python3 -c '
import json, sys
keys = {json.loads(l)["idempotency_key"] for l in open(sys.argv[1])}
assert keys == {sys.argv[2]}, keys' "$T/hook/requests" "$did" || fail "Idempotency-Key changed"
expect_eq "$(event_count "$id" delivery-uncertain)" 1 "delivery-uncertain events"
wq timeline "$id" | grep delivery-uncertain | grep -q worker-lost || fail "uncertainty reason"
expect_eq "$(lines "$T/runs")" 1 "handler runs"
expect_eq "$(state_of "$id")" succeeded "task state"
expect_eq "$(event_count "$id" succeeded)" 1 "results recorded"
expect_eq "$(inbox_count alice)" 1 "alice's notifications"
expect_eq "$(delivery "$id" inbox:alice 'd["attempts"]')" 1 "inbox delivery attempts"

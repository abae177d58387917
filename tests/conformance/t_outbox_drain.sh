# Drain: a delivery still sending at the drain deadline is left `sending` (the worker
# records no outcome it does not know); the next worker retries it, records the
# uncertainty, and delivers it with the same Idempotency-Key.
. "$WAKEQ_TESTS/conformance/lib.sh"
. "$WAKEQ_TESTS/conformance/outbox-lib.sh"

wq init >/dev/null
start_hook "hang,200"
DRAIN=300ms config "$T/w.ini" <<EOF2
[channel.ops]
type = webhook
url = $HOOK_URL
timeout = 60s
[kind.summarize]
command = sh $HANDLERS/handler.sh ok
EOF2
id=$(wq enqueue summarize --notify webhook:ops)
start_worker w1 "$T/w.ini"
wait_until 30 has_requests 1
pid=$(cat "$T/w1.pid")
kill -TERM "$pid"
wait_until 30 eval "! alive $pid"
wait "$pid" || fail "worker exited $? after SIGTERM"
expect_eq "$(delivery "$id" webhook:ops 'd["state"]')" sending "state after the drain deadline"
grep -q "stays sending" "$T/w1.log" || fail "the drain did not say it left the delivery sending"

run_worker "$T/w.ini"
expect_eq "$(delivery "$id" webhook:ops 'd["state"]')" delivered "state after restart"
expect_eq "$(hook_requests)" 2 "requests"
expect_eq "$(event_count "$id" delivery-uncertain)" 1 "delivery-uncertain events"
expect_eq "$(lines "$T/runs")" 1 "handler runs"

# Deliveries are claimed like tasks: two workers racing over the same outbox send each
# webhook delivery once (one request per delivery, each with its own key, one attempt)
# and write each inbox notification once.
. "$WAKEQ_TESTS/conformance/lib.sh"
. "$WAKEQ_TESTS/conformance/outbox-lib.sh"

N=40
wq init >/dev/null
start_hook "200"
config "$T/w.ini" <<EOF2
delivery_concurrency = 3
[channel.ops]
type = webhook
url = $HOOK_URL
[kind.hop]
command = sh $HANDLERS/handler.sh ok
EOF2
i=0
while [ $i -lt $N ]; do
	wq enqueue hop --payload "{\"i\":$i}" --notify webhook:ops --notify inbox:carol >/dev/null
	i=$((i + 1))
done
"$WQ" worker --config "$T/w.ini" --until-idle >"$T/a.log" 2>&1 &
a=$!
"$WQ" worker --config "$T/w.ini" --until-idle >"$T/b.log" 2>&1 &
b=$!
BG_PIDS="$BG_PIDS $a $b"
wait $a || fail "worker a exited $?"
wait $b || fail "worker b exited $?"
# a worker that found nothing left may have stopped early: finish what remains
run_worker "$T/w.ini"

expect_eq "$(lines "$T/runs")" "$N" "handler runs"
expect_eq "$(hook_requests)" "$N" "webhook requests"
python3 -c '
import json, sys
keys = [json.loads(l)["idempotency_key"] for l in open(sys.argv[1])]
assert len(set(keys)) == len(keys), "a delivery was sent twice"' "$T/hook/requests" \
	|| fail "duplicate webhook requests"
wq deliveries --json | python3 -c '
import json, sys
ds = json.load(sys.stdin)
assert len(ds) == 2 * int(sys.argv[1]), len(ds)
bad = [d for d in ds if d["state"] != "delivered" or d["attempts"] != 1]
assert not bad, bad[:3]' "$N" || fail "deliveries not delivered exactly once"
expect_eq "$(inbox_count carol)" "$N" "carol's notifications"

# A drain that waits only for a claim in flight ends when that claim fails: the failed
# answer once returned before the drain's check, and the worker waited out its whole
# drain_timeout with nothing to wait for. The claim is held in its store lane until
# the drain has begun, then fails (failpoint specs of one name act in order).
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
CONCURRENCY=1 DRAIN=120s config "$T/w.ini" <<EOF2
[kind.gate]
command = sh $HANDLERS/handler.sh gate
EOF2
t1=$(wq enqueue gate)

start_worker_fp "claim:1:hold:$T/go,claim:1:error" w "$T/w.ini"
wpid=$(cat "$T/w.pid")

wait_until 30 fired claim
kill -TERM "$wpid"
wait_until 30 grep -q "draining" "$T/w.log"
touch "$T/go"
# the claim fails; the drain has nothing left to wait for (well before drain_timeout)
gone() { ! kill -0 "$wpid" 2>/dev/null; }
wait_until 30 gone
wait "$wpid"
grep -q "injected" "$T/w.log" || fail "the claim did not fail as injected"
expect_eq "$(state_of "$t1")" pending "t1 (its claim failed)"
expect_eq "$(lines "$T/runs")" 0 "handlers started"

# A drain that begins while an outcome batch and the claim riding in it are in flight
# waits for the tasks that claim brings. The batch's job was the last one running, and
# the answer settles the batch before it starts the claimed tasks (worker_store.c
# on_done): settling it once ended the drain (instance unregistered, loop closing) and
# the claimed task was then started unwatched, or not at all, and left `running` for
# recovery to interrupt. Ordered by failpoints, not timing: the batch is held in its
# store lane (finish:1:hold) until the drain has begun.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
CONCURRENCY=1 DRAIN=60s config "$T/w.ini" <<EOF2
prefetch = 0
[kind.gate]
command = sh $HANDLERS/handler.sh gate
EOF2
t1=$(wq enqueue gate)
t2=$(wq enqueue gate)

start_worker_fp "finish:1:hold:$T/go" w "$T/w.ini"
wpid=$(cat "$T/w.pid")

wait_until 30 test -f "$T/started.$t1"
# t1 ends: its outcome batch, with a claim for its slot (t2), is held before its commit
touch "$T/gate.$t1"
wait_until 30 fired finish
kill -TERM "$wpid"
wait_until 30 grep -q "draining" "$T/w.log"
touch "$T/go"

# the claim's task starts and the drain waits for it: the instance is still registered
# while it runs, and stops only after its outcome
wait_until 30 test -f "$T/started.$t2"
expect_eq "$(state_of "$t1") $(state_of "$t2")" "succeeded running" "after the held commit"
! grep -q "instance .* stopped" "$T/w.log" || fail "the drain ended with t2 claimed"
touch "$T/gate.$t2"
wait "$wpid" || fail "the worker exited $? after its drain"
expect_eq "$(state_of "$t2")" succeeded "t2, run to its end inside the drain"
line_of() { grep -n "$1" "$T/w.log" | head -1 | cut -d: -f1; }
[ "$(line_of "task $t2 attempt .* succeeded")" -lt "$(line_of "instance .* stopped")" ] ||
	fail "the instance stopped before t2's outcome"
expect_eq "$(lines "$T/runs")" 2 "handlers started"

# Without prefetch (prefetch = 0) a worker never holds more tasks than it has handler
# slots: a claim asks for the slots that are free once the tasks already claimed but not
# yet started have taken theirs. The case that over-claimed: an outcome batch's commit
# brings the answer to the claim that rode in it (a task for the slot that outcome
# frees), and a second outcome queued meanwhile goes out at once in the next batch, with
# a claim of its own. That claim counted the slot the first answer's task was about to
# take as free: one task too many was claimed, marked running and held unstarted.
#
# The order is made with failpoints, not timing: the first batch is held in the store
# thread (finish:1:hold) until the second outcome is queued (outcome-queued:2).
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
CONCURRENCY=2 config "$T/w.ini" <<EOF2
prefetch = 0
[kind.gate]
command = sh $HANDLERS/handler.sh gate
EOF2
t1=$(wq enqueue gate)
t2=$(wq enqueue gate)
t3=$(wq enqueue gate)
t4=$(wq enqueue gate)
t5=$(wq enqueue gate)

running_count() { wq list --state running --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
claims_of() { wq timeline "$1" --json | python3 -c 'import json,sys; print(sum(1 for e in json.load(sys.stdin)["events"] if e["type"] == "claimed"))'; }

start_worker_fp "finish:1:hold:$T/go,outcome-queued:2:delay:1ms" w "$T/w.ini"
wpid=$(cat "$T/w.pid")

# both slots busy: t1 and t2 run, nothing else claimed
wait_until 30 test -f "$T/started.$t1"
wait_until 30 test -f "$T/started.$t2"
expect_eq "$(running_count)" 2 "running tasks with both slots busy"

# t1 ends: its outcome batch (with a claim for its slot) is held before its commit
touch "$T/gate.$t1"
wait_until 30 fired finish
# t2 ends meanwhile: its outcome waits for the next batch
touch "$T/gate.$t2"
wait_until 30 fired outcome-queued
touch "$T/go"

# the first commit's claim gives t1's slot to t3; the next batch (t2's outcome) claims
# for t2's slot only: t4. Once t4 started, that claim has committed.
wait_until 30 test -f "$T/started.$t3"
wait_until 30 test -f "$T/started.$t4"
expect_eq "$(state_of "$t1") $(state_of "$t2")" "succeeded succeeded" "the first two tasks"
expect_eq "$(running_count)" 2 "running (claimed) tasks, concurrency 2, prefetch 0"
expect_eq "$(state_of "$t5") $(claims_of "$t5")" "pending 0" "t5 (no free slot for it)"
expect_eq "$(lines "$T/runs")" 4 "handlers started"

# the rest runs as slots free
for id in $t3 $t4 $t5; do touch "$T/gate.$id"; done
wait_all_succeeded 5 60
kill -TERM "$wpid"
wait "$wpid" || fail "the worker exited $? after its drain"
expect_eq "$(lines "$T/runs")" 5 "handlers started"

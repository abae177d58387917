# Two worker processes on one database racing over 500 tasks: every task runs exactly
# once, counted by the handler's own side effect (a line per start), not by claims. The
# tasks are of two kinds both workers serve, so each claim merges the two kinds' own
# ranges (wave 6; on PostgreSQL each kind's rows locked SKIP LOCKED inside its LATERAL).
. "$WAKEQ_TESTS/conformance/lib.sh"
# Volume, not power loss, is what this test is about: WAL with synchronous=NORMAL keeps
# every commit across a process crash and saves an fsync per transaction.
export WAKEQ_SQLITE_SYNCHRONOUS=NORMAL

N=${RACE_TASKS:-500}
wq init >/dev/null
CONCURRENCY=4 config "$T/w.ini" <<EOF
# a lease far above the write latency of a few processes sharing 2 cores; this test is
# about claims, not about lost workers (t_host_lease is)
lease = 15s
[kind.race]
command = sh $HANDLERS/handler.sh ok
[kind.race2]
command = sh $HANDLERS/handler.sh ok
EOF
start_worker a "$T/w.ini"
start_worker b "$T/w.ini"
# enqueued while the workers claim, in batches (enqueue_in_batches), the kinds alternating
line_of() {
	kind=race
	[ $(($1 % 2)) -eq 1 ] && kind=race2
	printf '{"kind":"%s","payload":{"n":%d}}\n' $kind "$1"
}
enqueue_in_batches "$N" line_of || fail "a batch of tasks was not accepted whole"

wait_all_succeeded "$N" 180
kill -TERM "$(cat "$T/a.pid")" "$(cat "$T/b.pid")"
wait_until 30 eval "! alive $(cat "$T/a.pid") && ! alive $(cat "$T/b.pid")"

expect_eq "$(lines "$T/runs")" "$N" "handler starts"
expect_eq "$(cut -d' ' -f1 "$T/runs" | sort -u | wc -l | tr -d ' ')" "$N" "distinct tasks run"
# both workers took part (each claims in batches as soon as slots free up)
wq list --limit 100000 --json | python3 -c '
import json,sys
ts=json.load(sys.stdin)
assert all(t["attempts"]==1 for t in ts), "a task was claimed twice"
print(len(set(t["instance"] for t in ts)))' >"$T/instances"
[ "$(cat "$T/instances")" -ge 2 ] || echo "note: only one worker got tasks this run" >&2

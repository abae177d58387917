# wave8 sqlw2: a batch of 32 `succeeded` outcomes goes to the store as one multi-row
# UPDATE on either store (SQLite: SQL_FINISH_SUCCEEDED_ROWS32, its answer checked at
# once; PostgreSQL: SQL_FINISH_SUCCEEDED_MANY, which checks itself). Should that check
# fail (facts and fence disagreeing: not expected), nothing of the batch is kept and
# each outcome is recorded alone, once. The failure is injected (failpoint
# finish-many-mismatch); the batch is made to hold 32 outcomes by holding the first
# one's commit (finish:1:hold) until the other 32 are queued.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
CONCURRENCY=33 config "$T/w.ini" <<EOF2
[kind.gate]
command = sh $HANDLERS/handler.sh gate
EOF2
ids=""
for _ in $(seq 33); do ids="$ids $(wq enqueue gate)"; done
set -- $ids
start_worker_fp "finish:1:hold:$T/go,outcome-queued:33:delay:1ms,finish-many-mismatch:1" \
	w "$T/w.ini"
wpid=$(cat "$T/w.pid")
for id in "$@"; do wait_until 30 test -f "$T/started.$id"; done
first=$1
touch "$T/gate.$first" # its outcome's batch is held before its commit
wait_until 30 fired finish
shift
for id in "$@"; do touch "$T/gate.$id"; done
wait_until 30 fired outcome-queued # the 33rd outcome is queued
touch "$T/go"
set -- $ids
for id in "$@"; do wait_until 60 state_is "$id" succeeded; done
expect_eq "$(grep -c " finish-many-mismatch " "$T/fired")" 1 "injected multi-row finish failures"
for id in "$@"; do
	expect_eq "$(grep -c "^$id " "$T/runs")" 1 "handler runs of task $id"
	expect_eq "$(field_of "$id" attempts)" 1 "attempts of task $id"
done
alive "$wpid" || fail "the worker died"
kill -TERM "$wpid"
wait_until 30 eval "! alive $wpid"
echo ok

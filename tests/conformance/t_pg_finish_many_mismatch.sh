# PostgreSQL: a batch's `succeeded` outcomes are recorded by one multi-row UPDATE that
# checks it changed every row the batch's facts said were this attempt's. Should that
# check ever fail (facts and fence disagreeing: not expected), nothing of the batch is
# kept, and offering the same batch again would fail alike for ever: each outcome is
# then recorded alone, on its own fenced path. The check's failure is injected
# (failpoint finish-many-mismatch); the batch is made to hold three outcomes by holding
# the first one's commit (finish:1:hold) until the others are queued.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
CONCURRENCY=4 config "$T/w.ini" <<EOF2
[kind.gate]
command = sh $HANDLERS/handler.sh gate
EOF2
ids=""
for _ in 1 2 3 4; do ids="$ids $(wq enqueue gate)"; done
set -- $ids
fired_once() { grep -q " $1 " "$T/fired" 2>/dev/null; }

WAKEQ_FAILPOINT="finish:1:hold:$T/go,outcome-queued:4:delay:1ms,finish-many-mismatch:1" \
	WAKEQ_FAILPOINT_LOG="$T/fired" "$WQ" worker --config "$T/w.ini" >"$T/w.log" 2>&1 &
wpid=$!
BG_PIDS="$BG_PIDS $wpid"
for id in "$@"; do wait_until 30 test -f "$T/started.$id"; done
touch "$T/gate.$1" # its outcome's batch is held before its commit
wait_until 30 fired_once finish
touch "$T/gate.$2" "$T/gate.$3" "$T/gate.$4"
wait_until 30 fired_once outcome-queued # the fourth outcome is queued
touch "$T/go"
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

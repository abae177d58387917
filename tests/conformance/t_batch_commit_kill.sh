# Group commit (issue 11): a worker killed right after the transaction that recorded a
# batch of outcomes committed (the `outcome-committed` failpoint: a real SIGKILL before
# anything is logged, settled or claimed) -> the outcomes are durable, no task runs again,
# and the result's delivery (queued in the same transaction) arrives exactly once.
. "$WAKEQ_TESTS/conformance/lib.sh"
. "$WAKEQ_TESTS/conformance/outbox-lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF
[kind.wake]
command = sh $HANDLERS/handler.sh ok
EOF
id=$(wq enqueue wake --notify inbox:ops)

set +e
WAKEQ_FAILPOINT=outcome-committed "$WQ" worker --config "$T/w.ini" --until-idle >"$T/crashed.log" 2>&1
status=$?
set -e
expect_eq "$status" 137 "exit status of the worker killed after the outcome commit"
expect_eq "$(state_of "$id")" succeeded "state right after the crash (the commit holds)"
expect_eq "$(lines "$T/runs")" 1 "handler starts before the restart"
if grep -q "attempt $id.1 succeeded" "$T/crashed.log"; then
	fail "the killed worker reported the outcome: $(cat "$T/crashed.log")"
fi

run_worker "$T/w.ini"
expect_eq "$(state_of "$id")" succeeded "state after the restart"
expect_eq "$(grep -c "^$id " "$T/runs")" 1 "handler starts after the restart"
expect_eq "$(wq timeline "$id" --json | python3 -c 'import json,sys; print(sum(e["type"]=="succeeded" for e in json.load(sys.stdin)["events"]))')" 1 "succeeded events"
expect_eq "$(inbox_count ops "$id")" 1 "notifications about the task"

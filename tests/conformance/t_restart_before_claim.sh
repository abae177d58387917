# SPEC §18.1 restart before claim: a due task, a worker that dies right before its claim
# (a real SIGKILL through the `claim` failpoint), then a restarted worker → the task is
# claimed once and runs once.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF
[kind.wake]
command = sh $HANDLERS/handler.sh ok
EOF
id=$(wq enqueue wake --payload '{"agent":"a1"}')
later=$(wq enqueue wake --in 1h)

set +e
WAKEQ_FAILPOINT=claim "$WQ" worker --config "$T/w.ini" --until-idle >"$T/crashed.log" 2>&1
status=$?
set -e
expect_eq "$status" 137 "exit status of the worker killed before its claim"
expect_eq "$(state_of "$id")" pending "state after the crash before claim"
expect_eq "$(lines "$T/runs")" 0 "handler starts before the restart"

run_worker "$T/w.ini"
expect_eq "$(state_of "$id")" succeeded "state after the restart"
expect_eq "$(grep -c "^$id " "$T/runs")" 1 "handler starts of the due task"
expect_eq "$(wq timeline "$id" --json | python3 -c 'import json,sys; print(sum(e["type"]=="claimed" for e in json.load(sys.stdin)["events"]))')" 1 "claims"
expect_eq "$(state_of "$later")" pending "the task due in an hour"
expect_eq "$(wq result "$id" 2>/dev/null)" "result of task $id" "stored result"

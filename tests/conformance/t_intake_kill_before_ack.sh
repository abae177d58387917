#!/bin/sh
# Issue 13 / SPEC §9: a worker killed between its task's success and the acknowledgement
# (SIGKILL at the failpoint intake_ack_send: the acknowledgement is claimed, the source
# not yet told) leaves the message unseen; the next worker acknowledges it once the dead
# one's instance is reaped, and does not run the task again. Both source types.
. "$(dirname "$0")/lib.sh"
. "$TESTS/conformance/intake-lib.sh"

case_kill() {
	type=$1
	add_messages "$MBOX" 1 1
	config "$T/w.ini" <<CFG
lease = 1s
[kind.mail]
command = $IH ok
$(source_section mail)
CFG
	set +e
	WAKEQ_FAILPOINT=intake_ack_send timeout 60 "$WQ" worker --config "$T/w.ini" --until-idle >>"$T/worker.log" 2>&1
	st=$?
	set -e
	expect_eq "$st" 137 "$type: the first worker's end (SIGKILL at the failpoint)"
	task=$(intake_eval 'r[0]["task_id"]')
	expect_eq "$(state_of "$task")" succeeded "$type: task after the kill"
	expect_eq "$(intake_eval 'r[0]["state"]')" handled "$type: record after the kill"
	expect_eq "$(unseen_now "$type")" 1 "$type: unseen after the kill"
	run_intake_worker "$T/w.ini"
	expect_eq "$(intake_eval 'r[0]["state"]')" acknowledged "$type: record after the restart"
	expect_eq "$(unseen_now "$type")" 0 "$type: unseen after the restart"
	expect_eq "$(seen_now "$type")" 1 "$type: seen after the restart"
	expect_eq "$(lines "$T/runs")" 1 "$type: the task ran once"
	expect_eq "$(wq timeline "$task" --json | python3 -c '
import json,sys
print(sum(1 for e in json.load(sys.stdin)["events"] if e["type"] == "source-acknowledged"))')" 1 "$type: acknowledged once"
}

for_each_source case_kill
echo ok

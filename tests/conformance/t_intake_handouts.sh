#!/bin/sh
# Issue 13 / SPEC §9: a handler that fails (exit 75, and exit 1 on the second handout:
# any failure is the message coming back) leaves the message unseen — each of
# its handouts finds it still unacknowledged at the source; after the third handout
# (max_handouts = 3) it is abandoned, acknowledged at the source, and reported exactly
# once on each channel: an error line in the worker log and a notification in the
# operators' inbox; `wakeq dead` lists its task and `doctor` counts it. Both source types.
. "$(dirname "$0")/lib.sh"
. "$TESTS/conformance/intake-lib.sh"

case_handouts() {
	type=$1
	add_messages "$MBOX" 1 1
	config "$T/w.ini" <<CFG
[kind.mail]
command = $IH mixed
retry_backoff = 10ms
retry_backoff_max = 50ms
$(source_section mail "max_handouts = 3" "operators = ops-$type")
CFG
	run_intake_worker "$T/w.ini"
	key=$(intake_eval 'r[0]["key"]')
	task=$(intake_eval 'r[0]["task_id"]')
	expect_eq "$(lines "$T/runs")" 3 "$type: handouts"
	# every handout began while the message was still unseen at the source
	expect_eq "$(grep -c ' yes$' "$T/runs")" 3 "$type: unseen at each handout"
	expect_eq "$(intake_eval 'r[0]["state"]')" abandoned "$type: state"
	expect_eq "$(intake_eval 'r[0]["handouts"]')" 3 "$type: handouts recorded"
	expect_eq "$(intake_eval 'r[0]["outcome"]')" abandoned "$type: outcome"
	expect_eq "$(state_of "$task")" failed "$type: the task"
	expect_eq "$(unseen_now "$type")" 0 "$type: unseen after giving up"
	expect_eq "$(seen_now "$type")" 1 "$type: acknowledged at the source"
	expect_eq "$(grep -c "error.*intake mail: message $key abandoned after 3 handouts" "$T/worker.log")" 1 "$type: the log's error line"
	expect_eq "$(wq inbox "ops-$type" --json | python3 -c '
import json,sys
print(sum(1 for n in json.load(sys.stdin) if n["subject"] == "abandoned-intake" and n["task_id"] == int(sys.argv[1])))' "$task")" 1 "$type: the operators' notification"
	expect_eq "$(wq timeline "$task" --json | python3 -c '
import json,sys
print(sum(1 for e in json.load(sys.stdin)["events"] if e["type"] == "source-acknowledged"))')" 1 "$type: acknowledged once"
	wq dead | grep -q "intake:mail:$key" || fail "$type: wakeq dead does not list the task"
	wq doctor --json >"$T/doctor.json" || true
	expect_eq "$(python3 -c '
import json,sys
print(sum(1 for f in json.load(open(sys.argv[1]))["findings"] if f["type"] == "abandoned-message"))' "$T/doctor.json")" 1 "$type: doctor's count"
	# another run changes nothing: no new handout, report or acknowledgement
	run_intake_worker "$T/w.ini"
	expect_eq "$(lines "$T/runs")" 3 "$type: handouts after another run"
	expect_eq "$(grep -c "abandoned after" "$T/worker.log")" 1 "$type: error lines after another run"
	expect_eq "$(wq inbox "ops-$type" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 1 "$type: notifications after another run"
}

for_each_source case_handouts
echo ok

#!/bin/sh
# Issue 13 / SPEC §9: a handled message is acknowledged exactly once, after its task:
# a success (exit 0) as succeeded, a deliberate discard (exit 3) as discarded. Both
# source types; the acknowledgement is on the task's timeline once.
. "$(dirname "$0")/lib.sh"
. "$TESTS/conformance/intake-lib.sh"

ack_events() {
	wq timeline "$1" --json | python3 -c '
import json,sys
print(sum(1 for e in json.load(sys.stdin)["events"] if e["type"] == "source-acknowledged"))'
}

case_ack() {
	type=$1
	add_message "$MBOX" 1 "please handle"
	add_message "$MBOX" 2 "please discard"
	[ "$(id -u)" -eq 0 ] && [ "$type" = imap ] && chown -R "$mail_uid:$mail_gid" "$MBOX"
	config "$T/w.ini" <<CFG
[kind.mail]
command = $IH byhead
$(source_section mail)
CFG
	run_intake_worker "$T/w.ini"
	expect_eq "$(lines "$T/runs")" 2 "$type: handouts"
	expect_eq "$(grep -c ' yes$' "$T/runs")" 2 "$type: unseen while handled"
	expect_eq "$(intake_count_state acknowledged)" 2 "$type: acknowledged"
	expect_eq "$(intake_eval 'sorted(x["outcome"] for x in r)')" "['discarded', 'succeeded']" "$type: outcomes"
	for t in $(intake_eval '" ".join(str(x["task_id"]) for x in r)'); do
		expect_eq "$(ack_events "$t")" 1 "$type: acknowledgements of task $t"
	done
	expect_eq "$(intake_eval 'all(x["ack_attempts"] == 1 for x in r)')" True "$type: sent once"
	expect_eq "$(unseen_now "$type")" 0 "$type: unseen after"
	expect_eq "$(seen_now "$type")" 2 "$type: seen after"
	[ "$type" = maildir ] && expect_eq "$(ls "$MBOX/new" | wc -l | tr -d ' ')" 0 "maildir: new/ after"
	# polling again: nothing new, nothing acknowledged twice
	run_intake_worker "$T/w.ini"
	expect_eq "$(lines "$T/runs")" 2 "$type: handouts after another run"
	for t in $(intake_eval '" ".join(str(x["task_id"]) for x in r)'); do
		expect_eq "$(ack_events "$t")" 1 "$type: acknowledgements of task $t after another run"
	done
}

for_each_source case_ack
echo ok

#!/bin/sh
# Issue 13 / SPEC §9: reading never acknowledges. Two polls in a row without any
# processing (the worker handles another kind) record each message once, enqueue one
# task each, and leave every message unseen at the source — checked with an
# independent client (curl's IMAP, ls for Maildir). Both source types.
. "$(dirname "$0")/lib.sh"
. "$TESTS/conformance/intake-lib.sh"

case_fetch_twice() {
	type=$1
	add_messages "$MBOX" 1 5
	config "$T/w.ini" <<CFG
[kind.other]
command = $IH ok
$(source_section mail)
CFG
	expect_eq "$(unseen_now "$type")" 5 "$type: unseen before"
	run_intake_worker "$T/w.ini"
	expect_eq "$(intake_count_state pending)" 5 "$type: records after the first poll"
	expect_eq "$(unseen_now "$type")" 5 "$type: unseen after the first poll"
	run_intake_worker "$T/w.ini"
	expect_eq "$(intake_eval 'len(r)')" 5 "$type: records after the second poll"
	expect_eq "$(intake_count_state pending)" 5 "$type: pending after the second poll"
	expect_eq "$(wq list --kind mail --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 5 "$type: tasks (none doubled)"
	# each task is the message's operation, intake:SOURCE:KEY
	expect_eq "$(wq list --kind mail --json | python3 -c '
import json,sys
print(all(t["operation"].startswith("intake:mail:") for t in json.load(sys.stdin)))')" True "$type: operation keys"
	expect_eq "$(unseen_now "$type")" 5 "$type: unseen after the second poll"
	expect_eq "$(seen_now "$type")" 0 "$type: seen after the second poll"
	[ "$type" = maildir ] && expect_eq "$(ls "$MBOX/new" | wc -l | tr -d ' ')" 5 "maildir: files still in new/"
	[ ! -f "$T/runs" ] || fail "$type: a handler ran"
}

for_each_source case_fetch_twice
echo ok

#!/bin/sh
# Issue 13: when the mailbox's UIDVALIDITY changes, the records of the old validity that
# still wait (pending, or an acknowledgement queued) are retired and the mailbox is read
# again under the new validity: every message gets a record and a task under its new
# key, none is acknowledged under an old UID. Real Dovecot (doveadm sets the validity).
. "$(dirname "$0")/lib.sh"
. "$TESTS/conformance/intake-lib.sh"

setup_source imap
add_messages "$MBOX" 1 3
config "$T/w.ini" <<CFG
[kind.other]
command = $IH ok
$(source_section mail)
CFG
run_intake_worker "$T/w.ini"
expect_eq "$(intake_count_state pending)" 3 "records under the first validity"
old=$(intake_eval 'r[0]["uidvalidity"]')
new=$((old + 1000))
doveadm -c "$T/dovecot/dovecot.conf" mailbox update -u "$IMAP_USER" --uid-validity "$new" INBOX ||
	fail "doveadm could not set the UIDVALIDITY"
imap_cmd "STATUS INBOX (UIDVALIDITY)" | grep -q "UIDVALIDITY $new" || fail "UIDVALIDITY did not change"
run_intake_worker "$T/w.ini"
expect_eq "$(intake_count_state retired)" 3 "old records retired"
expect_eq "$(intake_count_state pending)" 3 "new records"
expect_eq "$(intake_eval "sorted(set(x['uidvalidity'] for x in r if x['state'] == 'pending'))")" "[$new]" "validity of the new records"
grep -q "UIDVALIDITY is now $new: 3 records of the old one retired" "$T/worker.log" || fail "no log line about the retirement"
# the tasks of the old records were told (an event on each)
for t in $(intake_eval "' '.join(str(x['task_id']) for x in r if x['state'] == 'retired')"); do
	wq timeline "$t" --json | grep -q intake-retired || fail "task $t has no intake-retired event"
done
expect_eq "$(unseen_now imap)" 3 "unseen (nothing acknowledged)"
# now the new records are handled and acknowledged under the new validity
config "$T/w2.ini" <<CFG
[kind.mail]
command = $IH ok
$(source_section mail)
CFG
run_intake_worker "$T/w2.ini"
expect_eq "$(intake_count_state acknowledged)" 3 "acknowledged under the new validity"
expect_eq "$(unseen_now imap)" 0 "unseen after"
stop_dovecot
echo ok

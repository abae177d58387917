#!/bin/sh
# A mailbox of more than search_window messages is listed in windows of message numbers
# (`UID SEARCH a:b UNSEEN`, intake_imap.c: libcurl drops pieces of an answer line longer
# than its 16 KiB buffer, so one search of a large mailbox misses messages and may name
# a wrong UID). 300 messages, windows of 16 (the last one short), a third of them seen
# already by another client: every unseen message is recorded and handled once, none that
# was seen, none twice, and afterwards nothing is unseen.
. "$(dirname "$0")/lib.sh"
. "$TESTS/conformance/intake-lib.sh"

N=300
setup_source imap
add_messages "$MBOX" 1 "$N"
expect_eq "$(unseen_now imap)" "$N" "unseen before"
# messages 1, 4, 7, ... read by someone else: not for wakeq
imap_cmd "UID STORE 1:$N +FLAGS.SILENT (\\Seen)" >/dev/null
imap_cmd "UID STORE $(seq 2 3 "$N" | tr '\n' ',')$(seq 3 3 "$N" | tr '\n' ',' | sed 's/,$//') -FLAGS.SILENT (\\Seen)" >/dev/null
WANT=$((N - (N + 2) / 3))
expect_eq "$(unseen_now imap)" "$WANT" "unseen after another client read a third"
CONCURRENCY=4 config "$T/w.ini" <<CFG
[kind.mail]
command = sh -c "cat >/dev/null; echo \$WAKEQ_TASK_ID >>$T/runs"
$(source_section mail)
search_window = 16
CFG
run_intake_worker "$T/w.ini"
expect_eq "$(lines "$T/runs")" "$WANT" "handler runs"
expect_eq "$(intake_eval 'len(r)')" "$WANT" "records"
expect_eq "$(intake_eval 'len(set(x["key"] for x in r))')" "$WANT" "distinct keys"
expect_eq "$(intake_eval 'sum(1 for x in r if int(x["key"].split(":")[1]) % 3 == 1)')" 0 \
	"messages seen before recorded"
expect_eq "$(intake_count_state acknowledged)" "$WANT" "acknowledged"
expect_eq "$(unseen_now imap)" 0 "unseen after"

# search_window out of range, or on a Maildir source: a configuration error naming it
for bad in 0 1025 x; do
	sed "s/^search_window = 16$/search_window = $bad/" "$T/w.ini" >"$T/bad.ini"
	expect_exit 2 wq worker --config "$T/bad.ini" --until-idle
	grep -q "search_window must be 1..1024" "$T/last.err" || fail "search_window = $bad: $(cat "$T/last.err")"
done
mkdir -p "$T/md/new" "$T/md/cur" "$T/md/tmp"
config "$T/md.ini" <<CFG
[kind.mail]
command = true
[source.local]
type = maildir
path = $T/md
kind = mail
search_window = 16
CFG
expect_exit 2 wq worker --config "$T/md.ini" --until-idle
grep -q "(maildir) needs path and takes no url, username, password or search_window" \
	"$T/last.err" || fail "search_window on a Maildir source: $(cat "$T/last.err")"
stop_dovecot
echo ok

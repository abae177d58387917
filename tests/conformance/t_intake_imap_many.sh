#!/bin/sh
# Issue 13: 1,000 messages through one IMAP source (a real Dovecot) with two workers
# polling the same mailbox: every message is recorded once, handled once (the handler's
# own log) and acknowledged once (one claim of its acknowledgement, one
# source-acknowledged event); afterwards nothing is unseen at the server.
. "$(dirname "$0")/lib.sh"
. "$TESTS/conformance/intake-lib.sh"

N=${INTAKE_MANY:-1000}
setup_source imap
add_messages "$MBOX" 1 "$N"
expect_eq "$(unseen_now imap)" "$N" "unseen before"
CONCURRENCY=4 config "$T/w.ini" <<CFG
[kind.mail]
command = sh -c "cat >/dev/null; echo \$WAKEQ_TASK_ID >>$T/runs"
$(source_section mail)
CFG
for w in 1 2; do
	timeout 300 "$WQ" worker --config "$T/w.ini" --until-idle >"$T/w$w.log" 2>&1 &
	echo $! >"$T/w$w.pid"
	BG_PIDS="$BG_PIDS $!"
done
for w in 1 2; do
	wait "$(cat "$T/w$w.pid")" || fail "worker $w exited $? ($(tail -n 5 "$T/w$w.log"))"
done
# one more pass picks up whatever the last moments left (an acknowledgement claimed by
# the other worker's final tick): it must find nothing new and run nothing
run_intake_worker "$T/w.ini"
expect_eq "$(lines "$T/runs")" "$N" "handler runs"
expect_eq "$(sort -u "$T/runs" | wc -l | tr -d ' ')" "$N" "distinct tasks run"
expect_eq "$(intake_eval 'len(r)')" "$N" "records"
expect_eq "$(intake_eval 'len(set(x["key"] for x in r))')" "$N" "distinct keys"
expect_eq "$(intake_count_state acknowledged)" "$N" "acknowledged"
expect_eq "$(intake_eval 'sum(1 for x in r if x["ack_attempts"] != 1)')" 0 "acknowledgements sent more than once"
expect_eq "$(wq list --state succeeded --limit 100000 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" "$N" "succeeded tasks"
expect_eq "$(unseen_now imap)" 0 "unseen after"
expect_eq "$(seen_now imap)" "$N" "seen after"
# one source-acknowledged event per task, for 50 of them (their timelines, then one
# python3 for all: a python3 per task cost seconds on a loaded machine)
mkdir "$T/tl"
for t in $(intake_eval '" ".join(str(x["task_id"]) for x in r[:50])'); do
	wq timeline "$t" --json >"$T/tl/$t"
done
python3 - "$T/tl" <<'PY' || fail "not acknowledged exactly once"
import json, os, sys
ts = os.listdir(sys.argv[1])
assert len(ts) == 50, "timelines: %d" % len(ts)
for t in ts:
    n = sum(1 for e in json.load(open(os.path.join(sys.argv[1], t)))["events"]
            if e["type"] == "source-acknowledged")
    assert n == 1, "task %s: %d source-acknowledged events" % (t, n)
PY
stop_dovecot
echo ok

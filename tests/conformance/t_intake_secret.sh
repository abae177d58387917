#!/bin/sh
# Issue 13: the IMAP password appears nowhere but its file: not in the worker's log (also
# when the server refuses a wrong one), not in events, `doctor`, `intake` output or error
# messages, and not in the database. Two planted passwords: the right one (read from
# password_file) and a wrong one (from password_env) that the server refuses.
. "$(dirname "$0")/lib.sh"
. "$TESTS/conformance/intake-lib.sh"

setup_source imap
add_messages "$MBOX" 1 2
WRONG="planted-wrong-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
export INTAKE_WRONG_PASSWORD="$WRONG"
config "$T/w.ini" <<CFG
[kind.mail]
command = $IH ok
$(source_section mail)
[source.refused]
type = imap
url = $IMAP_URL
username = $IMAP_USER
password_env = INTAKE_WRONG_PASSWORD
kind = mail
poll = 200ms
CFG
# the refused source never polls clean: bounded by a stop once the good one is done
"$WQ" worker --config "$T/w.ini" >"$T/worker.log" 2>&1 &
pid=$!
BG_PIDS="$BG_PIDS $pid"
wait_until 60 state_count_is acknowledged 2
wait_until 30 grep -q "intake refused: polling" "$T/worker.log"
kill -TERM "$pid"
wait "$pid" || true
grep -q "Login denied\|login denied\|authentication" "$T/worker.log" || echo "note: refusal wording: $(grep refused "$T/worker.log" | head -1)" >&2
{
	cat "$T/worker.log"
	wq intake list --json
	wq doctor --json || true
	wq dead --json || true
	wq inbox operators --json
	for t in $(intake_eval '" ".join(str(x["task_id"]) for x in r)'); do
		wq timeline "$t" --json
		wq show "$t" --json
	done
	"$WQ" worker --config "$T/w.ini" --until-idle --help 2>&1 || true
} >"$T/everything.txt" 2>&1
for p in "$IMAP_PASS" "$WRONG"; do
	grep -qF -- "$p" "$T/everything.txt" && fail "a password appears in the output"
	case "$BACKEND" in
	sqlite) grep -qaF -- "$p" "$WAKEQ_DB" "$WAKEQ_DB-wal" 2>/dev/null && fail "a password is in the database" ;;
	postgres) /usr/lib/postgresql/15/bin/pg_dump "$WAKEQ_DB" | grep -qF -- "$p" && fail "a password is in the database" ;;
	esac
	grep -rqaF -- "$p" "$T"/*.log "$T"/*.ini 2>/dev/null && fail "a password is in a log or the config"
done
# ... and only in its file
grep -qF -- "$IMAP_PASS" "$T/imap.secret" || fail "the secret file lost its password"
stop_dovecot
echo ok

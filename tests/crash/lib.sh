# lib.sh — the crash tests' workload, sourced after tests/conformance/lib.sh by sweep and
# random. Each case has its own database (a SQLite file, or a PostgreSQL database on the
# server of scripts/with-postgres), webhook receiver and evidence directory.

CRASH="$TESTS/crash"
CASE_DBS=""
. "$TESTS/conformance/outbox-lib.sh"

# Drops the cases' PostgreSQL databases, then lib.sh's cleanup.
crash_cleanup() {
	status=$?
	for db in $CASE_DBS; do
		psql -q "$WAKEQ_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
	done
	(exit $status)
	cleanup
}
trap crash_cleanup EXIT

# case_begin DIR: a fresh database and evidence directory DIR; sets WAKEQ_DB,
# WAKEQ_TEST_DIR, HOOK_URL (a receiver answering 200) and DIR/w.ini.
case_begin() {
	C=$1
	mkdir -p "$C"
	export WAKEQ_TEST_DIR="$C"
	case "$BACKEND" in
	sqlite) export WAKEQ_DB="$C/wakeq.db" ;;
	postgres)
		CASE_DB="${PG_DBNAME}_$(basename "$C")"
		psql -q "$WAKEQ_TEST_PG_URL" -c "CREATE DATABASE $CASE_DB" >/dev/null
		CASE_DBS="$CASE_DBS $CASE_DB"
		export WAKEQ_DB="${WAKEQ_TEST_PG_URL%/*}/$CASE_DB" ;;
	esac
	"$WQ" init >/dev/null
	T_SAVED=$T
	T=$C
	start_hook 200
	T=$T_SAVED
	: >"$C/accepted"
	: >"$C/killed"
	HEARTBEAT=100ms config "$C/w.ini" <<EOF
lease = 1s
[channel.hook]
type = webhook
url = $HOOK_URL
timeout = 10s
retry_backoff = 50ms
[kind.fx]
command = sh $CRASH/handler.sh fx
[kind.plain]
command = sh $CRASH/handler.sh plain
[kind.mail]
command = sh $CRASH/handler.sh mail
[source.mail]
type = maildir
path = $C/md
kind = mail
poll = 100ms
EOF
	mkdir -p "$C/md/new" "$C/md/cur" "$C/md/tmp"
}

# case_end: drops the case's PostgreSQL database (a passing case leaves nothing).
case_end() {
	if [ "$BACKEND" = postgres ]; then
		psql -q "$WAKEQ_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $CASE_DB WITH (FORCE)" >/dev/null 2>&1 || true
	fi
}

# accept ARGS...: enqueue, the id kept in $C/accepted (an enqueue that failed accepted
# nothing; one whose answer was lost is not counted either).
accept() {
	if id=$("$WQ" enqueue "$@" 2>>"$C/enqueue.err"); then
		echo "$id" >>"$C/accepted"
	fi
}

# workload: journaled effects with a webhook and an inbox channel, a lock key, a keyed
# task, three messages in a Maildir source (kind mail) and a schedule whose slot is due
# (added on a clock 10 s behind: the test clock, not a sleep).
workload() {
	WAKEQ_TEST_CLOCK_OFFSET=-10s "$WQ" schedule add tick --every 5s plain >/dev/null
	for i in 1 2 3; do
		accept fx --payload "{\"n\":$i}" --notify webhook:hook --notify inbox:ops
	done
	accept plain --lock L --payload '{"n":4}'
	accept plain --lock L --payload '{"n":5}'
	accept plain --key k-6 --payload '{"n":6}'
	for i in 1 2 3; do add_mail "$i"; done
}

# add_mail N: message N into the case's Maildir source (through tmp/, as a delivery
# agent does). The source is evidence the store does not write: a message the worker
# acknowledged is in cur/ with the S flag.
add_mail() {
	mname="1700000000.M$1P$$.crash"
	printf 'From: <s%s@example.org>\r\nTo: <t@example.org>\r\nSubject: crash %s\r\nMessage-ID: <m%s.%s@example.org>\r\n\r\nbody %s\r\n' \
		"$1" "$1" "$1" "$$" "$1" >"$C/md/tmp/$mname"
	mv "$C/md/tmp/$mname" "$C/md/new/$mname"
}

# killed_pids: the pids a failpoint killed (from $C/fired) into $C/killed.
killed_pids() {
	[ -f "$C/fired" ] && awk '$3 == "kill" { print $1 }' "$C/fired" >>"$C/killed"
	return 0
}

# check_case: the checker over the case, settled.
check_case() {
	python3 "$CRASH/check" --db "$WAKEQ_DB" --dir "$C" --accepted "$C/accepted" \
		--killed "$C/killed" --logs "$C" --maildir "$C/md" --settled
}

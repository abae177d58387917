# intake-lib.sh — helpers of the intake tests (issue 13), sourced after lib.sh. Each test
# runs its case once per source type: `for_each_source CASE` calls CASE maildir, then
# CASE imap (a real Dovecot on 127.0.0.1, dovecot-lib.sh), each on a fresh store.
. "$TESTS/conformance/dovecot-lib.sh"

IH="$HANDLERS/intake-handler.sh"

# setup_source TYPE: a mailbox for TYPE; sets MBOX (the Maildir the messages go into)
# and SOURCE_LINES (the [source.mail] keys that reach it).
setup_source() {
	case "$1" in
	maildir)
		MBOX="$T/md"
		mkdir -p "$MBOX/new" "$MBOX/cur" "$MBOX/tmp"
		SOURCE_LINES="type = maildir
path = $MBOX" ;;
	imap)
		[ -n "${DOVECOT_PID:-}" ] || start_dovecot
		MBOX="$MAILDIR"
		export INTAKE_IMAP_URL="$IMAP_URL" INTAKE_IMAP_USER="$IMAP_USER" INTAKE_IMAP_SECRET="$T/imap.secret"
		SOURCE_LINES="type = imap
url = $IMAP_URL
username = $IMAP_USER
password_file = $T/imap.secret" ;;
	esac
}

# source_section KIND [MORE KEYS]: the [source.mail] section for the current type.
source_section() {
	printf '[source.mail]\n%s\nkind = %s\npoll = 200ms\n' "$SOURCE_LINES" "$1"
	shift
	for l in "$@"; do printf '%s\n' "$l"; done
}

# fresh_store: an empty store for the next case (same backend).
fresh_store() {
	case "$BACKEND" in
	sqlite) rm -f "$WAKEQ_DB" "$WAKEQ_DB-wal" "$WAKEQ_DB-shm" ;;
	postgres) psql -q "$WAKEQ_DB" -c "DROP SCHEMA public CASCADE; CREATE SCHEMA public" >/dev/null ;;
	esac
	rm -f "$T/runs" "$T/worker.log"
}

# empty_mailbox: removes every message (and, for IMAP, lets Dovecot see it).
empty_mailbox() {
	rm -f "$MBOX"/new/* "$MBOX"/cur/*
}

# unseen_now TYPE / seen_now TYPE: messages without / with the seen flag at the source,
# asked independently of wakeq (curl's IMAP; ls for Maildir).
unseen_now() {
	case "$1" in
	maildir) { ls "$MBOX/new"; ls "$MBOX/cur" | grep -v ':2,.*S'; } | sed '/^$/d' | wc -l | tr -d ' ' ;;
	imap) unseen_count ;;
	esac
}
seen_now() {
	case "$1" in
	maildir) ls "$MBOX/cur" | grep -c ':2,.*S' || true ;;
	imap) seen_count ;;
	esac
}

# intake_json: the records as JSON.
intake_json() { wq intake list --json; }
# intake_eval PYEXPR: evaluates PYEXPR with `r` bound to the list of records.
intake_eval() { wq intake list --json | python3 -c 'import json,sys; r=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
intake_count_state() { intake_eval "sum(1 for x in r if x['state'] == '$1')"; }
state_count_is() { [ "$(intake_count_state "$1")" -eq "$2" ]; }

# run_intake_worker CONFIG [ARGS]: a worker --until-idle in the foreground (bounded).
run_intake_worker() {
	cfg=$1; shift
	timeout 120 "$WQ" worker --config "$cfg" --until-idle "$@" >>"$T/worker.log" 2>&1 ||
		fail "worker exited $? (log: $(tail -n 8 "$T/worker.log"))"
}

for_each_source() {
	for type in maildir imap; do
		fresh_store
		setup_source "$type"
		empty_mailbox
		"$1" "$type"
	done
	stop_dovecot
}

# lib.sh — the conformance suite's harness, sourced by every t_*.sh.
#
# Each test runs in its own temporary directory with its own database: a SQLite file, or
# a fresh PostgreSQL database created on the server that scripts/with-postgres started.
# Tests synchronise on states and marker files, polled with a deadline, never on a sleep.
set -eu

WQ=${WAKEQ_BIN:?WAKEQ_BIN is not set (run through ctest)}
TESTS=${WAKEQ_TESTS:?WAKEQ_TESTS is not set}
BACKEND=${WAKEQ_TEST_BACKEND:-sqlite}

fail() { echo "FAIL: $*" >&2; exit 1; }
# skip WHY: exit 77 (ctest: skipped). Under CI (CI set, and not "false" or "0") a skipped
# test is a failure: a run that silently left out a backend must not be green.
skip() {
	case "${CI:-}" in
	"" | false | 0) echo "SKIP: $*" >&2; exit 77 ;;
	*) echo "FAIL: CI=$CI and this test would be skipped: $*" >&2; exit 1 ;;
	esac
}

# before anything is created: nothing to clean up when there is no server
if [ "$BACKEND" = postgres ] && [ -z "${WAKEQ_TEST_PG_URL:-}" ]; then
	skip "no PostgreSQL server (run through scripts/with-postgres)"
fi

T=$(mktemp -d "/tmp/wakeq-test.XXXXXX")
export WAKEQ_TEST_DIR="$T"
BG_PIDS=""
PG_DBNAME=""

cleanup() {
	status=$?
	for p in $BG_PIDS; do kill -KILL "$p" 2>/dev/null || true; done
	for p in $BG_PIDS; do wait "$p" 2>/dev/null || true; done
	if [ -n "$PG_DBNAME" ]; then
		psql -q "$WAKEQ_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $PG_DBNAME WITH (FORCE)" >/dev/null 2>&1 || true
	fi
	if [ $status -ne 0 ] && [ $status -ne 77 ]; then
		echo "--- test directory $T kept for inspection" >&2
		for f in "$T"/*.log; do [ -f "$f" ] && { echo "--- $f (tail)" >&2; tail -n 30 "$f" >&2; }; done
	else
		# A killed process of another PID namespace (unshare --kill-child) may still be
		# finishing a write when the directory goes: the removal is tried again, and
		# never changes the test's verdict.
		rm -rf "$T" 2>/dev/null || { sleep 1; rm -rf "$T"; } || true
	fi
	exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

case "$BACKEND" in
sqlite)
	export WAKEQ_DB="$T/wakeq.db" ;;
postgres)
	PG_DBNAME="wq_t_$$_$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
	psql -q "$WAKEQ_TEST_PG_URL" -c "CREATE DATABASE $PG_DBNAME" >/dev/null
	export WAKEQ_DB="${WAKEQ_TEST_PG_URL%/*}/$PG_DBNAME" ;;
*)
	fail "unknown backend $BACKEND" ;;
esac

wq() { "$WQ" "$@"; }

# expect_exit CODE CMD...: runs CMD, fails unless it exits with CODE. Its stderr is kept
# in $T/last.err, stdout in $T/last.out.
expect_exit() {
	want=$1; shift
	set +e
	"$@" >"$T/last.out" 2>"$T/last.err"
	got=$?
	set -e
	[ "$got" -eq "$want" ] || fail "expected exit $want, got $got from: $* (stderr: $(cat "$T/last.err"))"
}

expect_eq() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; }

# json_field JSON-TEXT PYTHON-EXPR: evaluates EXPR with `d` bound to the parsed JSON.
json_field() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"; }

state_of() { json_field "$(wq show "$1" --json)" 'd["state"]'; }
field_of() { json_field "$(wq show "$1" --json)" "d[\"$2\"]"; }

# wait_until SECONDS CMD...: polls CMD until it succeeds or the deadline: every 20 ms for
# the first second, then every 100 ms (a poll must not starve the processes it waits for).
wait_until() {
	limit=$1; shift
	end=$(( $(date +%s) + limit ))
	polls=0
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$end" ] || fail "timed out after ${limit}s waiting for: $*"
		polls=$((polls + 1))
		if [ $polls -lt 50 ]; then sleep 0.02; else sleep 0.1; fi
	done
}

# succeeded_count: how many tasks are succeeded (one listing).
succeeded_count() { wq list --state succeeded --limit 1000000 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
# all_succeeded N: N tasks are succeeded. Wait for a cheap sign first (the handlers' own
# `runs` file reaching N lines), so that the listing runs a few times, not hundreds.
runs_reached() { [ "$(lines "$T/runs")" -ge "$1" ]; }
succeeded_is() { [ "$(succeeded_count)" -eq "$1" ]; }
# enqueue_in_batches N LINE_FN [TAG]: N tasks through `wakeq enqueue --batch`, 10 to a
# transaction, task I's JSON line printed by `LINE_FN I` (files $T/batch.TAG*); 1 unless
# every task of every batch was accepted. For tests that race workers over many tasks
# while they are enqueued: one CLI process per task would cost most of their time.
enqueue_in_batches() {
	_eb_n=$1 _eb_i=0 _eb_f="$T/batch.${3:-b}"
	while [ $_eb_i -lt "$_eb_n" ]; do
		_eb_j=$_eb_i
		: >"$_eb_f"
		while [ $_eb_j -lt $((_eb_i + 10)) ] && [ $_eb_j -lt "$_eb_n" ]; do
			"$2" $_eb_j >>"$_eb_f"
			_eb_j=$((_eb_j + 1))
		done
		"$WQ" enqueue --batch "$_eb_f" >"$_eb_f.out" || return 1
		[ "$(grep -c ' accepted$' "$_eb_f.out")" -eq $((_eb_j - _eb_i)) ] || return 1
		_eb_i=$_eb_j
	done
}

wait_all_succeeded() {
	wait_until "$2" runs_reached "$1"
	wait_until 60 succeeded_is "$1"
}

state_is() { [ "$(state_of "$1")" = "$2" ]; }

# lines FILE: number of lines (0 when missing)
lines() { if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }

# start_worker NAME CONFIG [ARGS...]: starts a worker in the background, its log in
# $T/NAME.log, its pid in $T/NAME.pid (and remembered for cleanup).
start_worker() {
	name=$1; cfg=$2; shift 2
	"$WQ" worker --config "$cfg" "$@" >"$T/$name.log" 2>&1 &
	echo $! >"$T/$name.pid"
	BG_PIDS="$BG_PIDS $!"
}

# start_worker_fp SPEC NAME CONFIG [ARGS...]: start_worker with the failpoints SPEC
# ($WAKEQ_FAILPOINT, src/failpoint.h), each firing logged to $T/fired; the commands the
# test runs afterwards get none. fired POINT: POINT has fired there.
start_worker_fp() {
	export WAKEQ_FAILPOINT="$1" WAKEQ_FAILPOINT_LOG="$T/fired"
	shift
	start_worker "$@"
	unset WAKEQ_FAILPOINT WAKEQ_FAILPOINT_LOG
}
fired() { grep -q " $1 " "$T/fired" 2>/dev/null; }

# pause_worker PID: SIGSTOP a worker at a moment it holds no write lock. On SQLite a
# process stopped inside a write transaction blocks every other writer until it resumes
# (README: "SQLite and paused processes"), which is not what these tests are about: so
# after each stop a write is tried with a bound; when it cannot get through, the worker
# is resumed for a moment and stopped again.
pause_worker() {
	for _try in 1 2 3 4 5 6 7 8 9 10; do
		kill -STOP "$1"
		if timeout 3 "$WQ" enqueue wakeq-test-probe >/dev/null 2>&1; then
			return 0
		fi
		kill -CONT "$1"
		sleep 0.05
	done
	fail "could not pause worker $1 outside a write transaction"
}

# run_worker CONFIG [ARGS...]: runs a worker --until-idle in the foreground.
run_worker() {
	cfg=$1; shift
	"$WQ" worker --config "$cfg" --until-idle "$@" >>"$T/worker.log" 2>&1 || fail "worker exited $? (log: $(tail -n 5 "$T/worker.log"))"
}

# A config with fast timings for tests: config FILE <<EOF, then more [worker] keys (they
# follow its [worker] header) and the [kind.X] sections.
config() {
	{
		printf '[worker]\nconcurrency = %s\ndrain_timeout = %s\nheartbeat = %s\npoll_interval = 20ms\nkill_grace = 2s\n' \
			"${CONCURRENCY:-4}" "${DRAIN:-10s}" "${HEARTBEAT:-200ms}"
		cat
	} >"$1"
}

HANDLERS="$TESTS/bin"

# alive PID: the process exists and is not a zombie.
alive() { [ -r "/proc/$1/stat" ] && ! awk '{ if ($3 == "Z") exit 0; exit 1 }' "/proc/$1/stat" 2>/dev/null; }

# tmpfs_db SIZE: the SQLite database on a tmpfs of SIZE of its own at $T/fs (a full disk
# or a read-only file system made on demand; skipped where mounting is not allowed),
# unmounted before the cleanup removes $T, keeping the test's exit status. The processes
# the test started are ended first (they hold the files open). `set +e`: under `set -e`
# the `(exit $st)` of a failed test would end the trap before cleanup, leaving its
# workers running (as t_sq_full_disk's own trap did).
tmpfs_db() {
	mkdir "$T/fs"
	mount -t tmpfs -o "size=$1" tmpfs "$T/fs" 2>/dev/null || skip "cannot mount a tmpfs here (not root?)"
	trap 'st=$?; set +e
		for p in $BG_PIDS; do kill -KILL "$p" 2>/dev/null; done
		for p in $BG_PIDS; do wait "$p" 2>/dev/null; done
		BG_PIDS=""
		umount "$T/fs" 2>/dev/null || umount -l "$T/fs" 2>/dev/null
		(exit $st); cleanup' EXIT
	export WAKEQ_DB="$T/fs/wakeq.db"
}

# private_pg: re-runs this test script under a PostgreSQL server of its own, for a test
# that restarts the server (scripts/with-postgres stops it after). Returns in the re-run.
private_pg() {
	[ -z "${WAKEQ_PRIVATE_PG:-}" ] || return 0
	trap - EXIT
	rm -rf "$T"
	[ -n "$PG_DBNAME" ] && psql -q "$WAKEQ_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $PG_DBNAME" >/dev/null 2>&1
	WAKEQ_PRIVATE_PG=1 exec "$TESTS/../scripts/with-postgres" sh "$0"
}

# expect_spawn_retried ID CAUSE WHAT: ID's handler could not be started (CAUSE: a grep
# pattern of the worker log's line, in $T/w.log), so the attempt was scheduled again as
# spawn-resources and no handler start was recorded (WHAT names the condition).
expect_spawn_retried() {
	spawn_tried() { wq timeline "$1" | grep -q spawn-resources || state_is "$1" failed; }
	wait_until 30 spawn_tried "$1"
	st=$(state_of "$1")
	[ "$st" = pending ] || [ "$st" = running ] || fail "state after the failed spawn: $st (expected pending)"
	wq timeline "$1" | grep "retry-scheduled" | grep -q spawn-resources ||
		fail "no retry-scheduled (spawn-resources) on the timeline"
	expect_eq "$(grep -c "^$1 " "$T/runs" || true)" 0 "handler starts $3"
	grep -q "task $1 attempt .*cannot start the handler: .*$2" "$T/w.log" ||
		fail "the worker log does not give the cause: $(grep "task $1" "$T/w.log" | tail -n 3)"
}

# expect_worker_refuses CONFIG LOG CAUSE WHAT: a worker --until-idle on a store it cannot
# use exits 1 at once (the guard: 60 s) and its log (LOG) names CAUSE (a grep pattern);
# WHAT describes the store in the message.
expect_worker_refuses() {
	set +e
	timeout 60 "$WQ" worker --config "$1" --until-idle >"$2" 2>&1
	got=$?
	set -e
	expect_eq "$got" 1 "exit status of a worker on $4"
	grep -q "$3" "$2" || fail "the worker does not name the cause: $(cat "$2")"
}

# Workers sleep until the next due time (issues 11, 12). With poll_interval = 60s only a
# wake-up or the due timer can explain a start within seconds:
#  1. a task enqueued by another process starts at once (SQLite: the wake-up file next to
#     the database, watched with inotify; PostgreSQL: LISTEN/NOTIFY);
#  2. a delayed task enqueued while a worker idles starts at its due time, not before;
#  3. a delayed task survives a worker restart and starts at its due time;
#  4. a retry's backoff (exit 75) is waited out by the timer, not by the poll.
# The bounds are generous (seconds); the figure is measured by bench/w3_lateness.
. "$WAKEQ_TESTS/conformance/lib.sh"

# forget PID: it was reaped; never signal it at cleanup (its number may be reused)
forget() { BG_PIDS=$(echo " $BG_PIDS " | sed "s/ $1 / /"); }

wq init >/dev/null
{
	printf '[worker]\nconcurrency = 2\nheartbeat = 1s\npoll_interval = 60s\nkill_grace = 2s\n'
	printf '[kind.ping]\ncommand = sh %s/handler.sh ok\n' "$HANDLERS"
	printf '[kind.flaky]\ncommand = sh %s/handler.sh exit 75\nmax_attempts = 2\n' "$HANDLERS"
	printf 'retry_backoff = 1s\nretry_backoff_max = 1s\n'
} >"$T/w.ini"

# late ID: seconds from the task's due time to its start (negative: early)
late() {
	json_field "$(wq show "$1" --json)" '__import__("datetime").datetime.fromisoformat(d["started_at"].replace("Z","+00:00")).timestamp() - __import__("datetime").datetime.fromisoformat(d["due_at"].replace("Z","+00:00")).timestamp()'
}
on_time() { # ID: started at its due time (not early) and within 2 s of it
	l=$(late "$1")
	python3 -c "import sys; sys.exit(0 if 0 <= $l < 2 else 1)" || fail "task $1 started ${l}s after its due time"
}

start_worker w "$T/w.ini"
# the first task shows the worker claims; the poll after it is a minute away
first=$(wq enqueue ping)
wait_until 30 state_is "$first" succeeded

# 1. enqueued by another process: woken, not polled
second=$(wq enqueue ping)
wait_until 5 state_is "$second" succeeded

# 2. due in 3 s while the worker idles: the timer, set when the enqueue woke it
delayed=$(wq enqueue ping --in 3s)
state_is "$delayed" pending || fail "a delayed task started before its time"
wait_until 10 state_is "$delayed" succeeded
on_time "$delayed"

# 3. due in 3 s, the worker restarted meanwhile: the new worker's timer
again=$(wq enqueue ping --in 3s)
kill -TERM "$(cat "$T/w.pid")"
set +e
wait "$(cat "$T/w.pid")"
set -e
forget "$(cat "$T/w.pid")"
start_worker w2 "$T/w.ini"
wait_until 10 state_is "$again" succeeded
on_time "$again"

# 4. a retry 1 s later: the worker that recorded it waits for it
flaky=$(wq enqueue flaky)
wait_until 10 state_is "$flaky" failed
expect_eq "$(field_of "$flaky" attempts)" 2 "attempts of the retried task"
expect_eq "$(lines "$T/runs")" 6 "handler starts"

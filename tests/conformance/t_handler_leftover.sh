# A handler that exits while a process it started still holds its stdout/stderr: after
# the EOF grace (kill_grace) the worker kills that leftover by the handler's process
# group and records the outcome. Never kill(0, SIGKILL): the handler's pid is gone by
# then, and signalling "group 0" would kill the worker's own process group (issue 9,
# item 1). The same when the drain stops a handler whose child ignores SIGTERM.
# The worker runs in a process group of its own (setsid), so that the old defect kills
# the worker and not this test.
. "$WAKEQ_TESTS/conformance/lib.sh"

# forget PID: it was reaped; never signal it at cleanup (its number may be reused)
forget() { BG_PIDS=$(echo " $BG_PIDS " | sed "s/ $1 / /"); }

wq init >/dev/null
cat >"$T/leftover.sh" <<'SH'
# exits at once; its background child keeps stdout and stderr open for 30 s
sleep 30 &
echo $! >"$WAKEQ_TEST_DIR/holder.$WAKEQ_TASK_ID"
echo started
SH
cat >"$T/stubborn.sh" <<'SH'
# blocks; its background child ignores SIGTERM and keeps stdout and stderr open
cat >/dev/null
sh -c 'trap "" TERM; echo $$ >"$WAKEQ_TEST_DIR/holder.$WAKEQ_TASK_ID.tmp"; exec sleep 30' &
while [ ! -f "$WAKEQ_TEST_DIR/holder.$WAKEQ_TASK_ID.tmp" ]; do sleep 0.02; done
mv "$WAKEQ_TEST_DIR/holder.$WAKEQ_TASK_ID.tmp" "$WAKEQ_TEST_DIR/holder.$WAKEQ_TASK_ID"
exec sleep 60
SH
cat >"$T/w.ini" <<EOF
[worker]
concurrency = 2
drain_timeout = 300ms
heartbeat = 200ms
poll_interval = 20ms
kill_grace = 500ms
[kind.literal]
command = /bin/sh -c "sleep 3 & echo started"
[kind.leftover]
command = sh $T/leftover.sh
[kind.stubborn]
command = sh $T/stubborn.sh
EOF

setsid "$WQ" worker --config "$T/w.ini" >"$T/w.log" 2>&1 &
wpid=$!
BG_PIDS="$BG_PIDS $wpid"
wait_until 30 grep -q "started (pid" "$T/w.log"

# ended: the task reached STATE, or the worker is gone (the defect)
ended() { state_is "$1" "$2" || ! alive "$wpid"; }

# 1. the reproduction from the issue, literally
id=$(wq enqueue literal)
wait_until 30 ended "$id" succeeded
alive "$wpid" || fail "the worker died (killed its own process group?)"
expect_eq "$(state_of "$id")" succeeded "state (literal)"
expect_eq "$(wq result "$id")" started "result (literal)"

# 2. the leftover holder is killed, not just abandoned
id=$(wq enqueue leftover)
wait_until 30 ended "$id" succeeded
alive "$wpid" || fail "the worker died (killed its own process group?)"
expect_eq "$(state_of "$id")" succeeded "state (leftover)"
expect_eq "$(wq result "$id")" started "result (leftover)"
holder=$(cat "$T/holder.$id")
wait_until 10 eval "! alive $holder"
grep -q "output pipes still open after exit were closed" "$T/w.log" ||
	fail "the log does not say the output pipes were closed"

# 3. through the drain: SIGTERM stops the handler, its child ignores it and holds the pipes
id=$(wq enqueue stubborn)
wait_until 30 test -f "$T/holder.$id"
holder=$(cat "$T/holder.$id")
kill -TERM "$wpid"
set +e
wait "$wpid"
rc=$?
set -e
forget "$wpid"
expect_eq "$rc" 0 "worker exit status after the drain"
expect_eq "$(state_of "$id")" interrupted "state (drain)"
expect_eq "$(field_of "$id" reason)" drain-deadline "reason (drain)"
wait_until 10 eval "! alive $holder"
# this shell, in the process group the worker was started from, is still here
kill -0 $$ || fail "the test shell's process group was signalled"

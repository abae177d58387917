# A handler that ignores SIGTERM and overruns its kind's runtime limit (issue 15, faults;
# the drain's deadline is t_drain_deadline): the worker sends SIGTERM at the limit, then
# SIGKILL after kill_grace; the task is `interrupted` (runtime-limit), never re-run; the
# handler is gone; the worker goes on with other tasks meanwhile and after.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
cat >"$T/w.ini" <<EOF
[worker]
concurrency = 2
drain_timeout = 2s
heartbeat = 200ms
poll_interval = 20ms
kill_grace = 500ms
[kind.stubborn]
command = sh $HANDLERS/handler.sh ignore-term
timeout = 500ms
[kind.quick]
command = sh $HANDLERS/handler.sh ok
EOF
start_worker w "$T/w.ini"
wpid=$(cat "$T/w.pid")
id=$(wq enqueue stubborn)
wait_until 30 test -f "$T/started.$id"
hpid=$(cat "$T/started.$id")
q1=$(wq enqueue quick)
wait_until 30 state_is "$q1" succeeded
wait_until 30 state_is "$id" interrupted
expect_eq "$(field_of "$id" reason)" runtime-limit "reason"
alive "$hpid" && fail "the handler $hpid that ignores SIGTERM outlived its runtime limit"
grep -q "task $id attempt $id\.1" "$T/w.log" || fail "the worker log does not name the attempt"
q2=$(wq enqueue quick)
wait_until 30 state_is "$q2" succeeded
expect_eq "$(grep -c "^$id " "$T/runs")" 1 "handler starts of the stubborn task"
alive "$wpid" || fail "the worker died"
kill -TERM "$wpid"
wait_until 30 eval "! alive $wpid"
echo ok

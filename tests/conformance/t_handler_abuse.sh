# Handlers that abuse their pipes (issue 15, faults). (1) A flood: 48 MiB on stdout and
# 48 MiB on stderr at once, from several handlers: the worker reads and drops what is
# beyond its caps (result 1 MiB: the attempt fails result-too-large, nothing stored; the
# stderr tail kept is at most keep_stderr), its memory stays bounded (peak RSS growth
# under 64 MiB), and other tasks keep running. (2) A grandchild that leaves the handler's
# process group (setsid) and keeps stdout/stderr open: the attempt still ends after the
# EOF grace, its result recorded, the worker alive. (Ignoring SIGTERM: t_drain_deadline,
# t_handler_leftover.)
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
cat >"$T/flood.sh" <<'SH'
cat >/dev/null
echo "$WAKEQ_TASK_ID $WAKEQ_ATTEMPT_ID" >>"$WAKEQ_TEST_DIR/runs"
head -c 50331648 /dev/zero | tr '\0' y >&2 &
head -c 50331648 /dev/zero | tr '\0' x
wait
exit 0
SH
cat >"$T/escape.sh" <<'SH'
cat >/dev/null
echo "$WAKEQ_TASK_ID $WAKEQ_ATTEMPT_ID" >>"$WAKEQ_TEST_DIR/runs"
# a grandchild in a session of its own, holding stdout and stderr
setsid sh -c 'echo $$ >"$WAKEQ_TEST_DIR/escaped.$WAKEQ_TASK_ID"; exec sleep 60' &
while [ ! -s "$WAKEQ_TEST_DIR/escaped.$WAKEQ_TASK_ID" ]; do sleep 0.02; done
echo "escaped result"
SH
cat >"$T/w.ini" <<EOF
[worker]
concurrency = 4
drain_timeout = 2s
heartbeat = 200ms
poll_interval = 20ms
kill_grace = 500ms
[kind.flood]
command = sh $T/flood.sh
max_attempts = 1
keep_stderr = 1KiB
[kind.escape]
command = sh $T/escape.sh
[kind.quick]
command = sh $HANDLERS/handler.sh ok
EOF
start_worker w "$T/w.ini"
wpid=$(cat "$T/w.pid")
q0=$(wq enqueue quick)
wait_until 30 state_is "$q0" succeeded
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$wpid/status"; }
before=$(hwm)

# (1) the flood: three at once, and a quick task beside them
f1=$(wq enqueue flood); f2=$(wq enqueue flood); f3=$(wq enqueue flood)
q1=$(wq enqueue quick)
wait_until 30 state_is "$q1" succeeded
for f in $f1 $f2 $f3; do wait_until 90 state_is "$f" failed; done
after=$(hwm)
growth=$(( (after - before) / 1024 ))
echo "worker peak RSS $before KiB before the flood, $after KiB after (+$growth MiB)" >&2
[ "$growth" -lt 64 ] || fail "the worker's memory grew by $growth MiB reading 3 x 96 MiB of output"
for f in $f1 $f2 $f3; do
	expect_eq "$(field_of "$f" reason)" result-too-large "reason of the flooding task $f"
	expect_exit 4 wq result "$f"
	n=$(wq show "$f" --json --stderr | python3 -c 'import json,sys; s=json.load(sys.stdin)["stderr"]; print(sum(len(x["stderr"]) for x in s))')
	[ "$n" -gt 0 ] && [ "$n" -le 1024 ] || fail "stderr kept for task $f: $n bytes (keep_stderr 1KiB)"
done
alive "$wpid" || fail "the worker died in the flood"

# (2) the setsid grandchild
e=$(wq enqueue escape)
wait_until 30 test -s "$T/escaped.$e"
escaped=$(cat "$T/escaped.$e")
BG_PIDS="$BG_PIDS $escaped" # it is this test's to end
wait_until 30 state_is "$e" succeeded
expect_eq "$(wq result "$e")" "escaped result" "the result of the handler whose grandchild escaped"
expect_eq "$(grep -c "^$e " "$T/runs")" 1 "handler starts (escape)"
alive "$wpid" || fail "the worker died"
kill -0 $$ || fail "the test shell was signalled"

# everything ran once
expect_eq "$(lines "$T/runs")" 6 "handler starts"
kill -TERM "$wpid"
wait_until 30 eval "! alive $wpid"
echo ok

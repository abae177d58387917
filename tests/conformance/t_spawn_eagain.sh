# A worker that may not create another process (EAGAIN from clone: RLIMIT_NPROC reached)
# cannot start a handler: nothing ran, so the attempt is not counted as the handler's
# failure: the task is pending again with backoff (retry-scheduled, spawn-resources),
# the log names the cause, the worker survives; once processes may be created again the
# task runs once and succeeds (issue 15, faults; EMFILE: t_spawn_resources). RLIMIT_NPROC
# does not bind root, so the worker runs as an otherwise unused user id (setpriv), its soft
# limit lowered (prlimit) to the number of tasks that user has.
. "$WAKEQ_TESTS/conformance/lib.sh"

command -v prlimit >/dev/null || skip "prlimit (util-linux) not installed"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
[ "$(id -u)" -eq 0 ] || skip "needs root (to run the worker as another user)"
# a user id of its own (no other process counts against its limit), no name needed
UID_W=$((40000 + $$ % 20000))
chown "$UID_W:$UID_W" "$T"
# SQLite: the file belongs to that user (root's later opens keep its owner for -wal/-shm)
setpriv --reuid=$UID_W --regid=$UID_W --clear-groups "$WQ" init >/dev/null
config "$T/w.ini" <<EOF
[kind.quick]
command = sh $HANDLERS/handler.sh ok
max_attempts = 1
retry_backoff = 200ms
retry_backoff_max = 200ms
EOF
# (not through the function: $! must be the worker itself, not a subshell)
setpriv --reuid=$UID_W --regid=$UID_W --clear-groups "$WQ" worker --config "$T/w.ini" >"$T/w.log" 2>&1 &
wpid=$!
BG_PIDS="$BG_PIDS $wpid"
id0=$(wq enqueue quick)
wait_until 30 state_is "$id0" succeeded

# the tasks (threads included) of that user now: one more cannot be created. The limit is
# changed by that user itself (root here may lack CAP_SYS_RESOURCE for another user's
# process); a soft limit may be lowered and raised again up to the hard one.
as_w() { setpriv --reuid=$UID_W --regid=$UID_W --clear-groups "$@"; }
soft=$(as_w prlimit --pid "$wpid" --nproc --output SOFT --noheadings | tr -d ' ')
n=$(ps -eLo uid= | awk -v u=$UID_W '$1 == u' | wc -l | tr -d ' ')
as_w prlimit --pid "$wpid" --nproc="$n:"

id=$(wq enqueue quick)
expect_spawn_retried "$id" "Resource temporarily unavailable" "while no process can be created"
alive "$wpid" || fail "the worker died"

as_w prlimit --pid "$wpid" --nproc="$soft:"
wait_until 30 state_is "$id" succeeded
expect_eq "$(grep -c "^$id " "$T/runs")" 1 "handler starts"
alive "$wpid" || fail "the worker died"
kill -TERM "$wpid"
wait_until 30 eval "! alive $wpid"
echo ok

# A worker out of file descriptors (EMFILE) cannot start a handler: nothing ran, so the
# task goes back to pending with backoff (reason spawn-resources), even with no attempt
# left, and the worker logs the cause; once descriptors are available again the task
# runs, once, and succeeds (issue 9, item 7). The worker's soft RLIMIT_NOFILE is lowered
# while it runs (prlimit) so that the claim still works but the spawn's pipes cannot be
# created.
. "$WAKEQ_TESTS/conformance/lib.sh"

command -v prlimit >/dev/null || skip "prlimit (util-linux) not installed"
wq init >/dev/null
config "$T/w.ini" <<EOF
[kind.quick]
command = sh $HANDLERS/handler.sh ok
max_attempts = 1
retry_backoff = 200ms
retry_backoff_max = 200ms
EOF
start_worker w "$T/w.ini"
wpid=$(cat "$T/w.pid")

# a first task opens whatever the worker keeps open (store files, connections)
id0=$(wq enqueue quick)
wait_until 30 state_is "$id0" succeeded
soft=$(prlimit --pid "$wpid" --nofile --output SOFT --noheadings | tr -d ' ')

# the lowest limit that leaves 3 free descriptor numbers: not enough for the 3 pipes
limit=$(python3 - "$wpid" <<'PY'
import os, sys
used = {int(f) for f in os.listdir("/proc/%s/fd" % sys.argv[1])}
free, n = 0, 0
while free < 3:
    if n not in used:
        free += 1
    n += 1
print(n)
PY
)
prlimit --pid "$wpid" --nofile="$limit:"

id=$(wq enqueue quick)
expect_spawn_retried "$id" "open files" "while out of descriptors"

# descriptors again: the task runs, exactly once, and succeeds
prlimit --pid "$wpid" --nofile="$soft:"
wait_until 30 state_is "$id" succeeded
expect_eq "$(grep -c "^$id " "$T/runs")" 1 "handler starts"
alive "$wpid" || fail "the worker died"

# A killed worker whose parent has not reaped it is a zombie: its pid still exists, but
# it is dead. Another worker on the same host (same host identity) interrupts its task at
# its first recovery, well before the lease, instead of waiting for the lease to run out
# (issue 9, item 4). The worker is started by a small python3 parent that never waits.
# Needs a store that keeps the instances' host identity (host_id): without it pids are
# never compared and only the lease (60 s here) would decide.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
HEARTBEAT=100ms config "$T/w.ini" <<EOF
lease = 60s
[kind.long]
command = sh $HANDLERS/handler.sh block
EOF

id=$(wq enqueue long)
python3 - "$T/a.log" "$T/a.pid" "$WQ" worker --config "$T/w.ini" <<'PY' &
import os, signal, subprocess, sys
log, pidfile, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
p = subprocess.Popen(argv, stdout=open(log, "w"), stderr=subprocess.STDOUT)
with open(pidfile + ".tmp", "w") as f:
    f.write("%d\n" % p.pid)
os.rename(pidfile + ".tmp", pidfile)
while True:  # never waits for the child: once it dies, it stays a zombie
    signal.pause()
PY
parent=$!
BG_PIDS="$BG_PIDS $parent"
wait_until 30 test -s "$T/a.pid"
apid=$(cat "$T/a.pid")
# the worker before its parent: while the parent lives, the worker's pid (even as a
# zombie) is not reused
BG_PIDS=$(echo " $BG_PIDS " | sed "s/ $parent / $apid $parent /")
wait_until 30 test -f "$T/started.$id"
wait_until 30 state_is "$id" running

kill -KILL "$apid"
is_zombie() { awk '{ exit ($3 == "Z") ? 0 : 1 }' "/proc/$apid/stat"; }
wait_until 10 is_zombie
killed_at=$(date +%s%N)

start_worker b "$T/w.ini"
wait_until 20 state_is "$id" interrupted
elapsed_ms=$(( ($(date +%s%N) - killed_at) / 1000000 ))
[ "$elapsed_ms" -lt 30000 ] || fail "interrupted only after ${elapsed_ms}ms (lease 60s)"
is_zombie || fail "the worker was reaped meanwhile: the test proves nothing"
expect_eq "$(field_of "$id" reason)" worker-lost "reason"
grep -q "pid $apid is dead (a zombie" "$T/b.log" || fail "b's log does not name the zombie"

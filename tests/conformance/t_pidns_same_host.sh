# Two live workers with the same host name in different PID namespaces (containers that
# share a host name) must not declare each other lost: a pid of the other namespace
# means another process here, so pids are compared only when the host identity
# (boot id and PID namespace) is the same; otherwise only the lease decides (issue 9,
# item 4). Worker a runs in a new PID namespace (where it is pid 1) with a long task;
# worker b, in ours, with the same WAKEQ_HOST, heartbeats and recovers several times:
# the task stays running.
. "$WAKEQ_TESTS/conformance/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root for unshare --pid"
unshare --pid --fork --mount-proc --kill-child true 2>/dev/null || skip "unshare --pid is not permitted here"

wq init >/dev/null
HEARTBEAT=100ms config "$T/w.ini" <<EOF
lease = 60s
[kind.long]
command = sh $HANDLERS/handler.sh block
EOF

# instance_of NAME: the instance id worker NAME logged at start
instance_of() { sed -n 's/^.* wakeq: info: instance \([^ ]*\) started (pid.*/\1/p' "$T/$1.log" | tail -n 1; }
# beats ID: how many heartbeat intervals after its start the instance last heartbeated
beats() {
	case "$BACKEND" in
	sqlite)
		python3 - "$WAKEQ_DB" "$1" <<'PY' ;;
import sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=10)
r = c.execute("SELECT heartbeat_at - started_at FROM instances WHERE id = ?", (sys.argv[2],)).fetchone()
print(r[0] // 100000 if r else -1)
PY
	postgres)
		echo "SELECT (heartbeat_at - started_at) / 100000 FROM instances WHERE id = :'id'" |
			psql -Atq -v id="$1" "$WAKEQ_DB" ;;
	esac
}
beats_reached() { [ "$(beats "$1")" -ge "$2" ]; }

id=$(wq enqueue long)
WAKEQ_HOST=shared unshare --pid --fork --mount-proc --kill-child \
	"$WQ" worker --config "$T/w.ini" >"$T/a.log" 2>&1 &
BG_PIDS="$BG_PIDS $!"
wait_until 30 test -f "$T/started.$id"
wait_until 30 state_is "$id" running
grep -q "started (pid 1," "$T/a.log" || fail "worker a is not pid 1 of its own PID namespace"

WAKEQ_HOST=shared start_worker b "$T/w.ini"
wait_until 30 eval '[ -n "$(instance_of b)" ]'
bid=$(instance_of b)
# b heartbeats (and runs recovery after each heartbeat) at least 8 times, unless one
# declares the other lost first (then b's first instance id is gone from the store)
observed() { beats_reached "$bid" 8 || ! state_is "$id" running || grep -q "is gone" "$T/b.log"; }
wait_until 30 observed

expect_eq "$(state_of "$id")" running "state of a's task after b's recoveries"
if wq timeline "$id" | grep -q interrupted; then fail "a's task was interrupted"; fi
if grep -q "is gone" "$T/b.log"; then fail "b declared a gone: $(grep "is gone" "$T/b.log")"; fi
if grep -q "declared lost" "$T/a.log"; then fail "a was declared lost"; fi
beats_reached "$bid" 8 || fail "b's instance $bid stopped heartbeating"

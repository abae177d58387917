# Two hosts whose clocks differ by more than the lease never reap each other's live
# instances: a lease's age is measured on one clock, the store's (issue 15). Worker a
# runs in its own PID namespace (another host identity, so only the lease decides) with
# its clock 5 minutes behind ($WAKEQ_TEST_CLOCK_OFFSET, test builds), worker b in ours 5
# minutes ahead; the lease is 2 s. b heartbeats and recovers many times: a's task stays
# running. Then a is killed: b declares it lost within the lease on the store's clock.
. "$WAKEQ_TESTS/conformance/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root for unshare --pid"
unshare --pid --fork --mount-proc --kill-child true 2>/dev/null || skip "unshare --pid is not permitted here"

wq init >/dev/null
HEARTBEAT=100ms config "$T/a.ini" <<EOF
lease = 2s
[kind.long]
command = sh $HANDLERS/handler.sh block
EOF
HEARTBEAT=100ms config "$T/b.ini" <<EOF
lease = 2s
[kind.other]
command = sh $HANDLERS/handler.sh ok
EOF

instance_of() { sed -n 's/^.*wakeq: info: instance \([^ ]*\) started (pid.*/\1/p' "$T/$1.log" | tail -n 1; }
# beats_of ID: how many heartbeats the instance's row has seen (a test-side count kept
# by polling: the row's heartbeat value changes at each one)
heartbeat_of() {
	case "$BACKEND" in
	sqlite)
		python3 - "$WAKEQ_DB" "$1" <<'PY' ;;
import sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=10)
r = c.execute("SELECT heartbeat_at FROM instances WHERE id = ?", (sys.argv[2],)).fetchone()
print(r[0] if r else -1)
PY
	postgres)
		echo "SELECT heartbeat_at FROM instances WHERE id = :'id'" | psql -Atq -v id="$1" "$WAKEQ_DB" ;;
	esac
}

# due on a's clock (5 minutes behind)
id=$(WAKEQ_TEST_CLOCK_OFFSET=-5m wq enqueue long)
WAKEQ_TEST_CLOCK_OFFSET=-5m unshare --pid --fork --mount-proc --kill-child \
	"$WQ" worker --config "$T/a.ini" >"$T/a.log" 2>&1 &
apid=$!
BG_PIDS="$BG_PIDS $apid"
wait_until 30 test -f "$T/started.$id"
wait_until 30 state_is "$id" running

WAKEQ_TEST_CLOCK_OFFSET=5m start_worker b "$T/b.ini"
wait_until 30 eval '[ -n "$(instance_of b)" ]'
bid=$(instance_of b)
aid=$(instance_of a)
[ -n "$aid" ] || fail "no instance id in a's log"
# b recovers after every heartbeat: wait until b's row has heartbeaten for 3 leases
# (6 s on the store's clock), unless b declares a lost first
first=$(heartbeat_of "$bid")
b_waited() {
	grep -q "is gone" "$T/b.log" && return 0
	[ "$(heartbeat_of "$bid")" -ge $((first + 6000000)) ]
}
wait_until 60 b_waited
if grep -q "is gone" "$T/b.log"; then fail "b declared a gone: $(grep "is gone" "$T/b.log")"; fi
expect_eq "$(state_of "$id")" running "a's task after b's recoveries"
if grep -q "declared lost" "$T/a.log"; then fail "a was declared lost"; fi

# a really dies: b declares it lost (the lease, measured on the store's clock)
kill -KILL "$apid"
wait "$apid" 2>/dev/null || true
wait_until 30 state_is "$id" interrupted
expect_eq "$(field_of "$id" reason)" worker-lost "reason after a died"
grep -q "instance $aid is gone" "$T/b.log" || fail "b did not name a: $(grep gone "$T/b.log")"
exit 0

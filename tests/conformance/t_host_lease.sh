# A host whose heartbeat stops (its worker is SIGSTOPped) → its running task becomes
# `interrupted` after the lease, not before, through a worker on another host; SIGCONT →
# the paused worker notices it lost its lease, re-registers, and records no outcome over
# the new state (only a `stale-outcome` event).
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
HEARTBEAT=100ms config "$T/w.ini" <<EOF
lease = 1500ms
[kind.gated]
command = sh $HANDLERS/handler.sh gate
EOF
id=$(wq enqueue gated)
WAKEQ_HOST=host-a start_worker a "$T/w.ini"
wait_until 30 test -f "$T/started.$id"
apid=$(cat "$T/a.pid")
pause_worker "$apid"
stopped_at=$(date +%s%N)
WAKEQ_HOST=host-b start_worker b "$T/w.ini"
wait_until 30 state_is "$id" interrupted
elapsed_ms=$(( ($(date +%s%N) - stopped_at) / 1000000 ))
[ "$elapsed_ms" -ge 1400 ] || fail "interrupted after ${elapsed_ms}ms, before the 1500ms lease ran out"
expect_eq "$(field_of "$id" reason)" worker-lost "reason"
grep -q "host-a" "$T/b.log" || fail "host-b's log does not name the lost host-a instance"

: >"$T/gate.$id"
kill -CONT "$apid"
has_stale() { wq timeline "$id" | grep -q stale-outcome; }
wait_until 30 has_stale
expect_eq "$(state_of "$id")" interrupted "state after host-a came back"
expect_exit 4 wq result "$id"
wait_until 30 grep -qi "lost" "$T/a.log"
# host-a is alive again under a new instance id: new work still runs, exactly once
id2=$(wq enqueue gated)
: >"$T/gate.$id2"
wait_until 30 state_is "$id2" succeeded
expect_eq "$(grep -c "^$id2 " "$T/runs")" 1 "starts of the task after the pause"

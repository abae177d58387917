# The attempt is a fencing token: a worker paused (SIGSTOP) past its lease loses its task
# to recovery (`interrupted`, worker-lost, not before the lease); when it comes back
# (SIGCONT) and its handler finishes, it records nothing but a `stale-outcome` event.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
HEARTBEAT=100ms config "$T/w.ini" <<EOF
lease = 1s
[kind.gated]
command = sh $HANDLERS/handler.sh gate
EOF
id=$(wq enqueue gated)
start_worker a "$T/w.ini"
wait_until 30 test -f "$T/started.$id"
apid=$(cat "$T/a.pid")
pause_worker "$apid"
stopped_at=$(date +%s%N)

start_worker b "$T/w.ini"
wait_until 30 state_is "$id" interrupted
elapsed_ms=$(( ($(date +%s%N) - stopped_at) / 1000000 ))
[ "$elapsed_ms" -ge 900 ] || fail "interrupted after ${elapsed_ms}ms, before the 1s lease ran out"
expect_eq "$(field_of "$id" reason)" worker-lost "reason"
kill -TERM "$(cat "$T/b.pid")"
wait_until 15 eval "! alive $(cat "$T/b.pid")"

: >"$T/gate.$id"
kill -CONT "$apid"
has_stale() { wq timeline "$id" | grep -q stale-outcome; }
wait_until 30 has_stale
expect_eq "$(state_of "$id")" interrupted "state after the stale worker came back"
expect_exit 4 wq result "$id"
expect_eq "$(lines "$T/runs")" 1 "handler starts"

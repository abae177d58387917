# A worker whose own heartbeats fail judges nobody's lease (the defect behind a flaky
# t_pg_outage_peers): while its last successful heartbeat is more than a lease old, its
# recovery passes (which still get through) reap no other instance by heartbeat age; once
# its heartbeats get through again it judges after a lease of its own unbroken ones.
# Deterministic by failpoint: worker b's heartbeats 12..27 fail (each tick runs a
# heartbeat, then a recovery pass: worker.c maintain()). Worker a, holding a task, goes on
# heartbeating through b's first failures and is stopped after b's fourth: so a's last
# heartbeat is newer than b's last good one, and a turns stale only once b's own gap is
# past the lease. The rule's absence shows as a reaped before b's failures end.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
# heartbeat 100 ms, lease 800 ms: b's 16 failed heartbeats span 1.6 s
HEARTBEAT=100ms CONCURRENCY=1 config "$T/w.ini" <<EOF
lease = 800ms
[kind.hold]
command = sh $HANDLERS/handler.sh gate
EOF
id=$(wq enqueue hold)
WAKEQ_HOST=host-a start_worker a "$T/w.ini"
wait_until 60 test -f "$T/started.$id"
apid=$(cat "$T/a.pid")

fps="instance_heartbeat:12:error"
i=13
while [ "$i" -le 27 ]; do fps="$fps,instance_heartbeat:$i:error"; i=$((i + 1)); done
# b serves another kind: it claims nothing, it only judges
HEARTBEAT=100ms CONCURRENCY=1 config "$T/b.ini" <<EOF
lease = 800ms
[kind.other]
command = true
EOF
WAKEQ_FAILPOINT=$fps WAKEQ_FAILPOINT_LOG="$T/fired" WAKEQ_HOST=host-b start_worker b "$T/b.ini"
fired() { [ "$(lines "$T/fired")" -ge "$1" ]; }
wait_until 60 fired 4
pause_worker "$apid"
wait_until 60 fired 16
# Every failed heartbeat was followed by a recovery pass; a's heartbeat was more than a
# lease old for the last few of them, b's own last good one older still.
expect_eq "$(state_of "$id")" running "the task of the stopped worker while b's heartbeats failed"
if grep -q worker-lost "$T/b.log"; then fail "b judged a while its own heartbeats failed: $(grep worker-lost "$T/b.log")"; fi

# b's heartbeats get through again: after a lease of them it judges a (really stale).
interrupted() { [ "$(state_of "$id")" = interrupted ]; }
wait_until 60 interrupted
grep -q worker-lost "$T/b.log" || fail "a reaped without a worker-lost line in b's log"
kill -CONT "$apid"
kill -TERM "$apid" "$(cat "$T/b.pid")"
echo "ok: no judgement during 16 failed heartbeats; a reaped after b's return"

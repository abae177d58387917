#!/bin/sh
# Schedules (issue 12), doctor: a schedule whose owner died (its lease expired, not
# paused) and that no worker took over is a finding, schedule-owner-gone; a worker with
# the scheduler takes it over and doctor is clean again. `--no-scheduler` workers never
# own schedules.
. "$(dirname "$0")/lib.sh"

config "$T/w.ini" <<EOF
schedule_lease = 1s
[kind.tick]
command = $HANDLERS/handler.sh ok
EOF

wq schedule add tick --every 1s tick >/dev/null
expect_exit 0 wq doctor

start_worker w1 "$T/w.ini"
owner() { json_field "$(wq schedule show tick --json)" 'd["owner"] or ""'; }
has_owner() { [ -n "$(owner)" ]; }
wait_until 20 has_owner
kill -KILL "$(cat "$T/w1.pid")"

# a worker without the scheduler does not take it over
start_worker w2 "$T/w.ini" --no-scheduler
gone() { wq doctor --json | grep -q schedule-owner-gone; }
wait_until 20 gone
expect_exit 1 wq doctor
grep -q "schedule-owner-gone" "$T/last.out" || fail "doctor: $(cat "$T/last.out")"
grep -q "schedule tick" "$T/last.out" || fail "doctor names no schedule: $(cat "$T/last.out")"

start_worker w3 "$T/w.ini"
not_gone() { ! gone; }
wait_until 20 not_gone
w3=$(cat "$T/w3.pid")
taken() { [ "$(owner | cut -d: -f2)" = "$w3" ]; }
wait_until 20 taken
echo ok

#!/bin/sh
# Schedules (issue 12): SIGTERM stops producing first. A draining worker (its handler
# still running) has already let go of its schedule leases, so another worker takes the
# schedule over at once, not after the lease would have expired.
. "$(dirname "$0")/lib.sh"

config "$T/w.ini" <<EOF
schedule_lease = 1h
[kind.slow]
command = $HANDLERS/handler.sh gate
EOF

wq schedule add slow --every 1s slow >/dev/null
start_worker w1 "$T/w.ini"
owner() { json_field "$(wq schedule show slow --json)" 'd["owner"] or ""'; }
has_owner() { [ -n "$(owner)" ]; }
started() { ls "$T"/started.* >/dev/null 2>&1; }
wait_until 20 has_owner
wait_until 20 started
w1=$(cat "$T/w1.pid")
kill -TERM "$w1"
no_owner() { [ -z "$(owner)" ]; }
wait_until 20 no_owner
alive "$w1" || fail "the worker should still be draining (its handler runs)"
grep -q "draining" "$T/w1.log" || fail "no drain in the log: $(cat "$T/w1.log")"

# another worker takes over at once (the lease is an hour long)
start_worker w2 "$T/w.ini"
w2=$(cat "$T/w2.pid")
taken() { [ "$(owner | cut -d: -f2)" = "$w2" ]; }
wait_until 20 taken
for f in "$T"/started.*; do touch "$T/gate.${f##*.}"; done
exited() { ! alive "$w1"; }
wait_until 30 exited
echo ok

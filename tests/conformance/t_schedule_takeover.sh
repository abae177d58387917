#!/bin/sh
# Schedules (issue 12): an `--every 1s` schedule under three workers; its owner is
# SIGKILLed half-way. Another worker takes the lease over (after [worker]
# schedule_lease), every slot's key (schedule:NAME:<slot>) is enqueued at most once, and
# slots keep coming after the takeover.
. "$(dirname "$0")/lib.sh"

config "$T/w.ini" <<EOF
schedule_lease = 1s
[kind.tick]
command = $HANDLERS/handler.sh ok
EOF

wq schedule add tick --every 1s tick --catch-up latest >/dev/null

start_worker w1 "$T/w.ini"
start_worker w2 "$T/w.ini"
start_worker w3 "$T/w.ini"

owner() { json_field "$(wq schedule show tick --json)" 'd["owner"] or ""'; }
has_owner() { [ -n "$(owner)" ]; }
tasks() { wq list --kind tick --limit 100000 --json; }
task_count() { tasks | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
count_at_least() { [ "$(task_count)" -ge "$1" ]; }

wait_until 20 has_owner
wait_until 20 count_at_least 3
first=$(owner)
# the owner's pid: the instance id is "host:pid:random"
pid=$(echo "$first" | cut -d: -f2)
found=""
for w in w1 w2 w3; do [ "$(cat "$T/$w.pid")" = "$pid" ] && found=$w; done
[ -n "$found" ] || fail "owner $first is none of the three workers"
kill -KILL "$pid"
before=$(task_count)

other_owner() { o=$(owner); [ -n "$o" ] && [ "$o" != "$first" ]; }
wait_until 20 other_owner
wait_until 20 count_at_least $((before + 3))

# every slot key at most once, all of the form schedule:tick:<RFC 3339>
tasks | python3 -c '
import json, sys, collections
t = json.load(sys.stdin)
ops = [x["operation"] for x in t]
dup = [k for k, n in collections.Counter(ops).items() if n > 1]
assert not dup, "slot enqueued twice: %r" % dup
bad = [k for k in ops if not k.startswith("schedule:tick:20")]
assert not bad, "unexpected keys %r" % bad
' || fail "slot keys"

# the new owner fired slots of its own; no slot fired twice
wq schedule show tick --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
first = sys.argv[1]
fired = [e for e in d["events"] if e["type"] == "fired"]
assert any(e["instance"] != first for e in fired), "no slot fired after the takeover"
slots = [e["slot"] for e in fired]
assert len(slots) == len(set(slots)), "a slot fired twice: %r" % slots
' "$first" || fail "takeover events"
echo ok

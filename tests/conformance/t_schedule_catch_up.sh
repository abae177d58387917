#!/bin/sh
# Schedules (issue 12), catch-up after downtime: no worker ran for several slots of three
# `--every 1s` schedules. `latest`: one run for all of them (the rest recorded
# skipped-missed); `all`: every missed slot runs; `none`: missed slots do not run.
# --until-idle counts only slots already due: the worker then stops.
. "$(dirname "$0")/lib.sh"

config "$T/w.ini" <<EOF
[kind.a]
command = $HANDLERS/handler.sh ok
[kind.b]
command = $HANDLERS/handler.sh ok
[kind.c]
command = $HANDLERS/handler.sh ok
EOF

wq schedule add latest --every 1s a --catch-up latest --overlap allow >/dev/null
wq schedule add all --every 1s b --catch-up all --overlap allow >/dev/null
wq schedule add none --every 1s c --catch-up none --overlap allow >/dev/null

# downtime: wait (bounded) until at least 5 slots of each have come due. The schedules
# were added one after another (a slow build can cross a second between them) and their
# slots follow their own creation times: wait on the newest of the three.
created=$(for s in latest all none; do json_field "$(wq schedule show $s --json)" 'd["created_at"]'; done | sort | tail -n 1)
five_due() {
	python3 -c '
import sys, datetime
c = datetime.datetime.fromisoformat(sys.argv[1].replace("Z", "+00:00"))
sys.exit(0 if datetime.datetime.now(datetime.timezone.utc) >= c + datetime.timedelta(seconds=5.5) else 1)' "$created"
}
wait_until 15 five_due
expect_eq "$(wq list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 0 "tasks before any worker"

run_worker "$T/w.ini"

# The first firing of each schedule after the downtime is one transaction: its events
# share one time. Later slots came due on time while the worker ran; they do not count.
first_round() {
	wq schedule show "$1" --json | python3 -c '
import json, sys
ev = json.load(sys.stdin)["events"]
first = min(e["at"] for e in ev)
r = [e for e in ev if e["at"] == first]
fired = sum(1 for e in r if e["type"] == "fired")
missed = sum(e["count"] for e in r if e["type"] == "skipped-missed")
print(fired, missed)'
}
set -- $(first_round all); echo "all: fired $1, missed $2"
[ "$1" -ge 5 ] && [ "$2" -eq 0 ] || fail "catch-up all: fired $1, missed $2 (expected every missed slot to run)"
set -- $(first_round latest); echo "latest: fired $1, missed $2"
[ "$1" -eq 1 ] && [ "$2" -ge 4 ] || fail "catch-up latest: fired $1, missed $2 (expected one run for all)"
set -- $(first_round none); echo "none: fired $1, missed $2"
# the newest slot may be on time (within a tick of the worker), the others were missed
[ "$1" -le 1 ] && [ "$2" -ge 4 ] || fail "catch-up none: fired $1, missed $2 (expected missed slots not to run)"
# the slots' keys: each at most once
wq list --limit 100000 --json | python3 -c '
import json, sys, collections
ops = [t["operation"] for t in json.load(sys.stdin)]
assert len(ops) == len(set(ops)), ops' || fail "a slot enqueued twice"
echo ok

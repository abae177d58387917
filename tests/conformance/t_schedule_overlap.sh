#!/bin/sh
# Schedules (issue 12), overlap `skip` (the default): while a slot's run is still running,
# the next slots are recorded skipped-overlap, not queued; once it is over, slots run
# again. `--overlap allow` queues them regardless.
. "$(dirname "$0")/lib.sh"

config "$T/w.ini" <<EOF
[kind.slow]
command = $HANDLERS/handler.sh gate
[kind.slow2]
command = $HANDLERS/handler.sh gate
EOF

wq schedule add slow --every 1s slow >/dev/null
wq schedule add slow2 --every 1s slow2 --overlap allow >/dev/null
start_worker w1 "$T/w.ini"

count() { wq list --kind "$1" --limit 100000 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
skips() {
	wq schedule show "$1" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(e["count"] for e in d["events"] if e["type"] == "skipped-overlap"))'
}
skips_at_least() { [ "$(skips "$1")" -ge "$2" ]; }
count_at_least() { [ "$(count "$1")" -ge "$2" ]; }

wait_until 20 count_at_least slow 1
first=$(json_field "$(wq list --kind slow --json)" 'd[0]["id"]')
wait_until 20 skips_at_least slow 2
expect_eq "$(count slow)" 1 "tasks of an overlapping schedule while its run is running"
# allow: slots queue behind the running one
wait_until 20 count_at_least slow2 3
expect_eq "$(skips slow2)" 0 "skips with --overlap allow"

# the run ends: the next slot runs again
touch "$T/gate.$first"
wait_until 20 count_at_least slow 2
echo ok

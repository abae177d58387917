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

# downtime: wait (bounded) until at least 5 slots of each have come due
created=$(json_field "$(wq schedule show all --json)" 'd["created_at"]')
five_due() {
	python3 -c '
import sys, datetime
c = datetime.datetime.fromisoformat(sys.argv[1].replace("Z", "+00:00"))
sys.exit(0 if datetime.datetime.now(datetime.timezone.utc) >= c + datetime.timedelta(seconds=5.5) else 1)' "$created"
}
wait_until 15 five_due
expect_eq "$(wq list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 0 "tasks before any worker"

run_worker "$T/w.ini"

count() { wq list --kind "$1" --limit 100000 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
# slots recorded missed by the first firing (the downtime): the oldest such event
missed() {
	wq schedule show "$1" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
ev = [e for e in d["events"] if e["type"] == "skipped-missed"]
print(ev[-1]["count"] if ev else 0)'
}
a=$(count a); b=$(count b); c=$(count c)
echo "latest=$a all=$b none=$c"
[ "$b" -ge 5 ] || fail "catch-up all ran $b tasks, expected every missed slot (>= 5)"
[ "$(missed all)" -eq 0 ] || fail "catch-up all recorded missed slots"
[ "$(missed latest)" -ge 4 ] || fail "catch-up latest: $(missed latest) slots recorded missed"
# the worker ran a moment: at most one slot more than the catch-up's single run
[ "$a" -ge 1 ] && [ "$a" -le 2 ] || fail "catch-up latest ran $a tasks"
[ "$(missed none)" -ge 4 ] || fail "catch-up none: $(missed none) slots recorded missed"
[ "$c" -le 2 ] || fail "catch-up none ran $c tasks"
echo ok

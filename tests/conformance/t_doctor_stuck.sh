# doctor reports a task `running` longer than --stuck-after (default 1h) as
# `stuck-running`, with its attempt id, instance and start time: a worker that is alive
# but lost track of its handler would keep it running forever with doctor clean.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF2
[kind.wake]
command = sh $HANDLERS/handler.sh block
EOF2

id=$(wq enqueue wake)
start_worker w1 "$T/w.ini"
wait_until 30 test -f "$T/started.$id"
expect_eq "$(state_of "$id")" running "state of the blocked task"

# running for less than the default hour: not stuck
expect_exit 0 wq doctor
grep -q "^clean" "$T/last.out" || fail "doctor with the default bound: $(cat "$T/last.out")"

# with a bound it has outlived (running for over 1ms by the time doctor asks)
wait_until 30 sh -c '! "$0" doctor --stuck-after 1ms >/dev/null' "$WQ"
expect_exit 1 wq doctor --stuck-after 1ms
grep -q "^stuck-running task $id operation [^ ]*: attempt $id.1 running since 20[0-9-]*T[0-9:.]*Z under instance [^ ]" "$T/last.out" ||
	fail "doctor does not report the stuck task: $(cat "$T/last.out")"
wq doctor --stuck-after 1ms --json | python3 -c '
import json,sys
d=json.load(sys.stdin)
assert d["clean"] is False, d
f=[x for x in d["findings"] if x["type"]=="stuck-running"]
assert len(f)==1 and f[0]["task_id"]=='"$id"', d' || fail "doctor --json"

expect_exit 2 wq doctor --stuck-after soon
expect_exit 2 wq doctor --stuck-after 0s
exit 0

# Payload versions (issue 10, SPEC §18): [kind.NAME] payload_versions lists what a
# worker's handler accepts. `enqueue --config` refuses another version (exit 2); a worker
# that claims a task of a version it does not accept fails it (unsupported-payload-version)
# without running the handler. After a restart with a handler that reads both, the v1 and
# v2 fixtures (tests/fixtures/wake-v1.json, wake-v2.json) are both processed by it.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/old.ini" <<EOF
[kind.wake]
command = sh $HANDLERS/versioned-handler.sh
payload_versions = 1
EOF
config "$T/new.ini" <<EOF
[kind.wake]
command = sh $HANDLERS/versioned-handler.sh
payload_versions = 1, 2
EOF
idof() { json_field "$1" 'd["id"]'; }
FX="$TESTS/fixtures"

expect_exit 2 wq enqueue wake --config "$T/old.ini" --payload-version 2 --payload @"$FX/wake-v2.json"
grep -q "payload version 2 is not accepted by kind wake (payload_versions = 1" "$T/last.err" \
	|| fail "message: $(cat "$T/last.err")"
expect_eq "$(json_field "$(wq list --json)" 'len(d)')" 0 "tasks after the refused enqueue"

# the old worker (v1 only) meets a v2 task enqueued without its configuration
v1=$(idof "$(wq enqueue wake --config "$T/old.ini" --payload @"$FX/wake-v1.json" --json)")
v2=$(idof "$(wq enqueue wake --payload-version 2 --payload @"$FX/wake-v2.json" --json)")
run_worker "$T/old.ini"
expect_eq "$(state_of "$v1")" succeeded "v1 under the old worker"
expect_eq "$(state_of "$v2")" failed "v2 under the old worker"
expect_eq "$(field_of "$v2" reason)" unsupported-payload-version "reason"
field_of "$v2" reason_detail | grep -q "payload version 2; kind wake accepts 1" \
	|| fail "detail: $(field_of "$v2" reason_detail)"
grep -q "^$v2 " "$T/runs" && fail "the handler ran for an unsupported version"

# restart with the new configuration: v1 and v2 fixtures, both processed by one handler
a=$(idof "$(wq enqueue wake --config "$T/new.ini" --payload @"$FX/wake-v1.json" --json)")
b=$(idof "$(wq enqueue wake --config "$T/new.ini" --payload-version 2 --payload @"$FX/wake-v2.json" --json)")
expect_exit 0 wq retry "$v2"
run_worker "$T/new.ini"
for id in "$a" "$b" "$v2"; do expect_eq "$(state_of "$id")" succeeded "task $id"; done
wq result "$a" | grep -q "agent a1: hello from v1 (v1)" || fail "v1 result: $(wq result "$a")"
wq result "$b" | grep -q "agent a1: hello from v2 (v2)" || fail "v2 result: $(wq result "$b")"
wq result "$v2" | grep -q "(v2)" || fail "retried v2 result: $(wq result "$v2")"

# Issue 14: `wakeq enqueue --config FILE` (or $WAKEQ_CONFIG) refuses a kind or a notify
# channel the file does not define: exit 2 naming them, nothing enqueued. Without a
# config nothing is checked; inbox: needs no section; a channel's type must match.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
cat >"$T/w.ini" <<EOF
[kind.mail]
command = true
[channel.hook]
type = webhook
url = http://127.0.0.1:9/x
[channel.script]
type = command
command = true
EOF
count() { wq list --limit 1000 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }

expect_exit 2 wq enqueue mial --config "$T/w.ini"
grep -q "kind 'mial' is not defined in $T/w.ini" "$T/last.err" || fail "kind message: $(cat "$T/last.err")"
expect_exit 2 wq enqueue mail --config "$T/w.ini" --notify webhook:hok --notify command:script --notify command:nope
grep -q "'webhook:hok', 'command:nope'" "$T/last.err" || fail "channels message: $(cat "$T/last.err")"
! grep -q "command:script" "$T/last.err" || fail "a defined channel was named: $(cat "$T/last.err")"
# the type must match: [channel.hook] is a webhook
expect_exit 2 wq enqueue mail --config "$T/w.ini" --notify command:hook
grep -q "command:hook" "$T/last.err" || fail "type mismatch: $(cat "$T/last.err")"
# both at once: the kind and the channels in one message
expect_exit 2 wq enqueue x --config "$T/w.ini" --notify webhook:y
grep -q "kind 'x'.*webhook:y" "$T/last.err" || fail "both: $(cat "$T/last.err")"
# through $WAKEQ_CONFIG too, and as JSON under --json
export WAKEQ_CONFIG="$T/w.ini"
expect_exit 2 wq enqueue mial --json
json_field "$(cat "$T/last.err")" 'd["exit"]' | grep -qx 2 || fail "json error: $(cat "$T/last.err")"
unset WAKEQ_CONFIG
expect_eq "$(count)" 0 "tasks after refused enqueues"

# what the file defines is accepted; without a config nothing is checked
expect_exit 0 wq enqueue mail --config "$T/w.ini" --notify webhook:hook --notify command:script --notify inbox:ops
expect_exit 0 wq enqueue anything --notify webhook:whatever
expect_eq "$(count)" 2 "tasks after accepted enqueues"
exit 0

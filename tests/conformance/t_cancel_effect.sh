# SPEC §13: a running task whose cancel the handler honours (SIGTERM → exit 75) ends
# `cancelled` only when the attempt left no effect begun and unconfirmed. A handler that
# ran `wakeq effect begin send-mail` and then stopped is `interrupted`
# (cancelled-while-running), naming the effect, and doctor reports it; a handler that
# began nothing is `cancelled`.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF2
[kind.mail]
command = sh $HANDLERS/effect-handler.sh begin-term send-mail
[kind.wake]
command = sh $HANDLERS/handler.sh block
EOF2

a=$(wq enqueue mail --key mail-a --payload '{"to":"a@example.org"}')
b=$(wq enqueue wake)
start_worker w1 "$T/w.ini"
wait_until 30 test -f "$T/started.$a"
wait_until 30 test -f "$T/started.$b"
wq cancel "$a" >/dev/null
wq cancel "$b" >/dev/null
not_running() { [ "$(state_of "$1")" != running ]; }
wait_until 30 not_running "$a"
wait_until 30 not_running "$b"

expect_eq "$(state_of "$a")" interrupted "state of a task cancelled after its effect began"
expect_eq "$(field_of "$a" reason)" cancelled-while-running "reason"
expect_eq "$(field_of "$a" reason_detail)" "effect send-mail begun, not confirmed" "reason detail"
wq timeline "$a" | grep " interrupted " | grep -q '"handler_outcome":"cancelled"' ||
	fail "the handler's report is not on the timeline: $(wq timeline "$a")"
grep -q "task $a attempt $a.1 interrupted: cancelled-while-running (effect send-mail begun, not confirmed)" "$T/w1.log" ||
	fail "the worker log does not say what was recorded: $(cat "$T/w1.log")"
# handler.sh block is killed by SIGTERM (no exit 75): interrupted "killed"; a handler
# that confirms with 75 and began nothing is tested in the store contract test
expect_eq "$(state_of "$b")" interrupted "state of a handler killed by the cancel"

expect_exit 1 wq doctor
grep -q "^uncertain-effect task $a operation mail-a: effect send-mail begun by attempt $a.1" "$T/last.out" ||
	fail "doctor does not report the unconfirmed effect: $(cat "$T/last.out")"
grep -q "^interrupted task $a operation mail-a: reason cancelled-while-running: effect send-mail" "$T/last.out" ||
	fail "doctor does not report the interrupted task: $(cat "$T/last.out")"
exit 0

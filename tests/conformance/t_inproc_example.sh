# The README's in-process handler program (examples/inproc.c, linked against
# libwakeq.a): a `greet` task enqueued with the CLI is handled by the C function and
# succeeds with its result; a retry of the same operation finds its effect done.
. "$WAKEQ_TESTS/conformance/lib.sh"

EXAMPLE="$(dirname "$WQ")/examples/inproc"
[ -x "$EXAMPLE" ] || fail "example program not built: $EXAMPLE"

wq init >/dev/null
id=$(wq enqueue greet --payload '{"name":"Ada"}')
WAKEQ_UNTIL_IDLE=1 "$EXAMPLE" >"$T/example.out" 2>"$T/example.log" || fail "example failed: $(cat "$T/example.log")"
expect_eq "$(state_of "$id")" succeeded "task state"
expect_eq "$(wq result "$id" 2>/dev/null)" '{"greeted":true}' "result body"
grep -q "greeting sent: Hello, {\"name\":\"Ada\"} (task $id, attempt $id.1)" "$T/example.out" ||
	fail "the handler did not run as expected: $(cat "$T/example.out")"
wq timeline "$id" >"$T/timeline" 2>&1
grep -q "effect-done" "$T/timeline" || fail "no effect-done on the timeline"
grep -q "in_process" "$T/timeline" || fail "started event does not say in_process"

# a kind given both a command and an in-process handler is refused
cat >"$T/both.ini" <<INI
[kind.greet]
command = /bin/true
INI
set +e
WAKEQ_CONFIG="$T/both.ini" WAKEQ_UNTIL_IDLE=1 "$EXAMPLE" >/dev/null 2>"$T/both.err"
st=$?
set -e
[ "$st" -ne 0 ] || fail "a kind with a command and a handler was accepted"
grep -q "either by a command or in-process" "$T/both.err" || fail "unclear refusal: $(cat "$T/both.err")"
echo ok

# SPEC §18.2 restart during the run: the worker is SIGKILLed while its handler runs →
# after a restart the task is `interrupted` (worker-lost), the handler was started exactly
# once and is not re-run; `resolve --retry` runs it again exactly once.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/block.ini" <<EOF
[kind.agent-wake]
command = sh $HANDLERS/handler.sh block
EOF
config "$T/ok.ini" <<EOF
[kind.agent-wake]
command = sh $HANDLERS/handler.sh ok
EOF
id=$(wq enqueue agent-wake --payload '{"agent":"a1","prompt":"check the mail"}')

start_worker w1 "$T/block.ini"
wait_until 30 test -f "$T/started.$id"
expect_eq "$(state_of "$id")" running "state while the handler runs"
kill -KILL "$(cat "$T/w1.pid")"
wait "$(cat "$T/w1.pid")" 2>/dev/null || true

# the handler must not outlive its worker (PR_SET_PDEATHSIG)
handler_pid=$(cat "$T/started.$id")
wait_until 10 eval "! alive $handler_pid"

# the restarted worker, with a handler that would succeed, must not run it again
run_worker "$T/ok.ini"
expect_eq "$(state_of "$id")" interrupted "state after the restart"
expect_eq "$(field_of "$id" reason)" worker-lost "reason"
expect_eq "$(lines "$T/runs")" 1 "handler starts"
wq list --state interrupted --json | grep -q "\"id\": *$id" || fail "interrupted task missing from the to-do list"

wq resolve "$id" --retry --note "checked the mailbox: nothing was sent" >/dev/null
expect_eq "$(state_of "$id")" pending "state after resolve --retry"
run_worker "$T/ok.ini"
expect_eq "$(state_of "$id")" succeeded "state after the retry"
expect_eq "$(lines "$T/runs")" 2 "handler starts after one resolve --retry"
wq timeline "$id" >"$T/timeline.txt"
grep -q "resolved" "$T/timeline.txt" || fail "no resolved event on the timeline"
grep -q "checked the mailbox" "$T/timeline.txt" || fail "resolution note missing from the timeline"

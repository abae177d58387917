# Drain deadline: SIGTERM with a short drain_timeout while a handler blocks → the worker
# exits promptly, the handler is stopped, the task is `interrupted` with reason
# `drain-deadline`, and the worker's instance is gone from the store.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
DRAIN=300ms config "$T/w.ini" <<EOF
[kind.slow]
command = sh $HANDLERS/handler.sh ignore-term
EOF
id=$(wq enqueue slow)
start_worker w "$T/w.ini"
wait_until 30 test -f "$T/started.$id"
handler_pid=$(cat "$T/started.$id")
wpid=$(cat "$T/w.pid")
kill -TERM "$wpid"
# drain_timeout 300ms + kill_grace 2s (the handler ignores SIGTERM): well under 15s
wait_until 15 eval "! alive $wpid"
set +e; wait "$wpid"; status=$?; set -e
expect_eq "$status" 0 "worker exit status after a drain"
expect_eq "$(state_of "$id")" interrupted "state after the drain deadline"
expect_eq "$(field_of "$id" reason)" drain-deadline "reason"
alive "$handler_pid" && fail "handler $handler_pid outlived the drain"
expect_eq "$(lines "$T/runs")" 1 "handler starts"

# A second signal skips the wait: a long drain_timeout, two SIGTERMs → prompt exit.
DRAIN=1h config "$T/long.ini" <<EOF
[kind.slow]
command = sh $HANDLERS/handler.sh block
EOF
id2=$(wq enqueue slow)
start_worker w2 "$T/long.ini"
wait_until 30 test -f "$T/started.$id2"
kill -TERM "$(cat "$T/w2.pid")"
wait_until 10 grep -q "drain" "$T/w2.log"
kill -TERM "$(cat "$T/w2.pid")"
wait_until 15 eval "! alive $(cat "$T/w2.pid")"
expect_eq "$(state_of "$id2")" interrupted "state after a second signal"
expect_eq "$(field_of "$id2" reason)" drain-deadline "reason after a second signal"

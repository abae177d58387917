# Turn locks (issue 10): a worker SIGKILLed while its task holds a key. The restarted
# worker's recovery interrupts the task (worker-lost) and frees the key in the same
# transaction, so the next task of the key runs; the interrupted task does not keep the
# key while it waits for a decision.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/block.ini" <<EOF
[kind.turn]
command = sh $HANDLERS/handler.sh block
EOF
config "$T/ok.ini" <<EOF
[kind.turn]
command = sh $HANDLERS/handler.sh ok
EOF
first=$(wq enqueue turn --lock agent:a)
second=$(wq enqueue turn --lock agent:a)

start_worker w1 "$T/block.ini"
wait_until 30 test -f "$T/started.$first"
expect_eq "$(state_of "$second")" pending "second task while the first holds the key"
wq lock list | grep -q "^agent:a  task $first attempt 1" || fail "lock list: $(wq lock list)"
kill -KILL "$(cat "$T/w1.pid")"
wait "$(cat "$T/w1.pid")" 2>/dev/null || true

run_worker "$T/ok.ini"
expect_eq "$(state_of "$first")" interrupted "first task after the restart"
expect_eq "$(state_of "$second")" succeeded "second task after the restart"
wq timeline "$first" >"$T/timeline.txt"
grep -q "lock-released" "$T/timeline.txt" || fail "no lock-released on the first task's timeline"
expect_eq "$(wq lock list)" "no lock is held" "locks at the end"

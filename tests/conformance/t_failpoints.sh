# Failpoints (src/failpoint.h, issue 15): the syntax name[:count][:action], the actions
# kill / error / delay / hold, several at once, the firing log, and the named points of the
# worker: a kill at each leaves the store in the state the crash contract names.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
export WAKEQ_FAILPOINT_LOG="$T/fired"
config "$T/ok.ini" <<EOF2
[kind.k]
command = sh $HANDLERS/handler.sh ok
EOF2

# error: the store call fails, nothing is written, the message says it was injected
expect_exit 1 env WAKEQ_FAILPOINT=enqueue:error "$WQ" enqueue k
grep -q 'injected I/O error' "$T/last.err" || fail "error message: $(cat "$T/last.err")"
expect_eq "$(wq list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 0 "tasks after an injected enqueue error"
grep -q " enqueue error$" "$T/fired" || fail "firing not logged: $(cat "$T/fired")"

# a malformed specification is fatal, never ignored
expect_exit 70 env WAKEQ_FAILPOINT=enqueue:0 "$WQ" list
expect_exit 70 env WAKEQ_FAILPOINT=enqueue:sometimes "$WQ" list
expect_exit 70 env WAKEQ_FAILPOINT=enqueue:delay "$WQ" list
expect_exit 70 env WAKEQ_FAILPOINT=enqueue:hold "$WQ" list

# several at once; delay goes on; count: the 2nd hit fires, not the 1st
expect_exit 0 env WAKEQ_FAILPOINT=query:delay:10ms,get:2:error "$WQ" list
grep -q " query delay$" "$T/fired" || fail "delay not logged"
expect_exit 137 env WAKEQ_FAILPOINT=nothing,enqueue:kill "$WQ" enqueue k
expect_eq "$(wq list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 0 "tasks after a kill before enqueue"

# claim-committed: killed after the claim's commit, before any handler started →
# after a restart the task is interrupted (worker-lost), never run
a=$(wq enqueue k)
set +e
WAKEQ_FAILPOINT=claim-committed "$WQ" worker --config "$T/ok.ini" --until-idle >"$T/w1.log" 2>&1
st=$?
set -e
expect_eq "$st" 137 "worker exit at claim-committed"
run_worker "$T/ok.ini"
expect_eq "$(state_of "$a")" interrupted "state after claim-committed"
expect_eq "$(lines "$T/runs")" 0 "handler runs after claim-committed"

# handler-exited: the handler ran once, its outcome is lost with the worker →
# interrupted, not run again
b=$(wq enqueue k)
set +e
WAKEQ_FAILPOINT=handler-exited "$WQ" worker --config "$T/ok.ini" --until-idle >"$T/w2.log" 2>&1
st=$?
set -e
expect_eq "$st" 137 "worker exit at handler-exited"
run_worker "$T/ok.ini"
expect_eq "$(state_of "$b")" interrupted "state after handler-exited"
expect_eq "$(lines "$T/runs")" 1 "handler runs after handler-exited"

# outcome-committed: the outcome is durable → succeeded, run once
c=$(wq enqueue k)
set +e
WAKEQ_FAILPOINT=outcome-committed "$WQ" worker --config "$T/ok.ini" --until-idle >"$T/w3.log" 2>&1
st=$?
set -e
expect_eq "$st" 137 "worker exit at outcome-committed"
run_worker "$T/ok.ini"
expect_eq "$(state_of "$c")" succeeded "state after outcome-committed"
expect_eq "$(lines "$T/runs")" 2 "handler runs after outcome-committed"

# finish:error: the store refuses the outcome once; the worker keeps it and records it
# when the store takes writes again → succeeded, run once
d=$(wq enqueue k)
WAKEQ_FAILPOINT=finish:error "$WQ" worker --config "$T/ok.ini" --until-idle >"$T/w4.log" 2>&1 ||
	fail "worker after an injected finish error: $(tail -n 5 "$T/w4.log")"
expect_eq "$(state_of "$d")" succeeded "state after an injected finish error"
expect_eq "$(lines "$T/runs")" 3 "handler runs after finish:error"
grep -q " finish error$" "$T/fired" || fail "finish error not logged"
exit 0

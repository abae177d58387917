# Prefetch with a command kind (issue 11, wave 5; README "Prefetch"): a worker with a
# command kind keeps at most `concurrency` claimed tasks beyond its running handlers
# (prefetch = 5 here, concurrency 1: one kept). A kept task never started: a drain gives
# it back to pending at once (prefetch-returned, the attempt not counted), and after a
# crash it is interrupted (worker-lost) like the handler that was running; none of them
# is run by the worker that kept it.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
CONCURRENCY=1 DRAIN=60s config "$T/w.ini" <<EOF2
prefetch = 5
[kind.gate]
command = sh $HANDLERS/handler.sh gate
[kind.quick]
command = sh $HANDLERS/handler.sh ok
EOF2
CONCURRENCY=1 config "$T/ok.ini" <<EOF2
[kind.gate]
command = sh $HANDLERS/handler.sh ok
[kind.quick]
command = sh $HANDLERS/handler.sh ok
EOF2
returned() { wq timeline "$1" --json | python3 -c 'import json,sys; print(sum(1 for e in json.load(sys.stdin)["events"] if e["type"] == "prefetch-returned"))'; }

# --- a drain gives the kept task back ---
g=$(wq enqueue gate)
q1=$(wq enqueue quick --max-attempts 1)
q2=$(wq enqueue quick)
q3=$(wq enqueue quick)
start_worker w "$T/w.ini"
wpid=$(cat "$T/w.pid")
wait_until 30 test -f "$T/started.$g"
wait_until 30 state_is "$q1" running # claimed with the gate task, kept: no slot free
expect_eq "$(lines "$T/runs")" 1 "handlers started while the only slot is busy"
kill -TERM "$wpid"
wait_until 30 state_is "$q1" pending # given back at once, the gate task still running
expect_eq "$(state_of "$g")" running "the gate task during the drain"
touch "$T/gate.$g"
wait "$wpid" || fail "the worker exited $? after its drain"
expect_eq "$(state_of "$g")" succeeded "the gate task"
expect_eq "$(field_of "$q1" reason)" prefetch-returned "reason of the kept task"
# at most `concurrency` (1) were kept through every poll of the run: all of them came back
expect_eq "$(returned "$q1") $(returned "$q2") $(returned "$q3")" "1 0 0" \
	"prefetch-returned events"
expect_eq "$(state_of "$q2") $(state_of "$q3")" "pending pending" "the tasks not kept"
expect_eq "$(lines "$T/runs")" 1 "handlers started"

# the returned attempt does not count: q1 (max_attempts 1) still runs, once
run_worker "$T/ok.ini"
for id in $q1 $q2 $q3; do expect_eq "$(state_of "$id")" succeeded "task $id"; done
expect_eq "$(lines "$T/runs")" 4 "handlers started"

# --- a crash: the running and the kept task are interrupted, neither runs again ---
: >"$T/runs"
g=$(wq enqueue gate)
q=$(wq enqueue quick)
start_worker w2 "$T/w.ini"
wpid=$(cat "$T/w2.pid")
wait_until 30 test -f "$T/started.$g"
wait_until 30 state_is "$q" running
kill -KILL "$wpid"
wait "$wpid" 2>/dev/null || true
hpid=$(cat "$T/started.$g")
wait_until 10 eval "! alive $hpid" # PR_SET_PDEATHSIG
run_worker "$T/ok.ini"
for id in $g $q; do
	expect_eq "$(state_of "$id") $(field_of "$id" reason)" "interrupted worker-lost" "task $id"
done
expect_eq "$(lines "$T/runs")" 1 "handlers started (the gate task's only)"

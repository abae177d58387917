# Exit status semantics (SPEC §4): 0 succeeded with the stdout result; 3 succeeded,
# discarded, no result; 75 retried with backoff until max_attempts, then failed; any other
# status failed at once; a result over the cap fails the attempt with a clear record.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF
result_max = 1KiB
[kind.ok]
command = sh $HANDLERS/handler.sh echo
[kind.discard]
command = sh $HANDLERS/handler.sh exit 3
[kind.tempfail]
command = sh $HANDLERS/handler.sh exit 75
retry_backoff = 10ms
[kind.broken]
command = sh $HANDLERS/handler.sh exit 1
[kind.big]
command = sh $HANDLERS/handler.sh big 5000
[kind.missing]
command = $T/unstartable-handler
EOF
# The worker refuses a command that is not there at its start (t_worker_command.sh); one
# whose interpreter is missing passes that check and still cannot be started.
printf '#!/nonexistent/interpreter\n' >"$T/unstartable-handler"
chmod +x "$T/unstartable-handler"
ok=$(wq enqueue ok --payload '{"text":"hello"}')
discard=$(wq enqueue discard)
temp=$(wq enqueue tempfail --max-attempts 3)
broken=$(wq enqueue broken)
big=$(wq enqueue big)
missing=$(wq enqueue missing)
run_worker "$T/w.ini"

expect_eq "$(state_of "$ok")" succeeded "exit 0"
expect_eq "$(wq result "$ok" 2>"$T/result.err")" '{"text":"hello"}' "result body"
grep -q "untrusted" "$T/result.err" || fail "result is not labelled untrusted on stderr"
expect_eq "$(state_of "$discard")" succeeded "exit 3"
expect_eq "$(field_of "$discard" outcome)" discarded "exit 3 outcome"
expect_exit 4 wq result "$discard"
expect_eq "$(state_of "$temp")" failed "exit 75 after max attempts"
expect_eq "$(field_of "$temp" attempts)" 3 "attempts of the retried task"
expect_eq "$(grep -c "^$temp " "$T/runs")" 3 "starts of the retried task"
wq timeline "$temp" --json | python3 -c '
import json,sys
types=[e["type"] for e in json.load(sys.stdin)["events"]]
assert types.count("retry-scheduled")==2 and types[-1]=="failed", types' || fail "retry timeline"
expect_eq "$(state_of "$broken")" failed "exit 1"
expect_eq "$(field_of "$broken" attempts)" 1 "a permanent failure is not retried"
expect_eq "$(field_of "$broken" reason)" exit-1 "reason of exit 1"
expect_eq "$(state_of "$big")" failed "result over the cap"
expect_eq "$(field_of "$big" reason)" result-too-large "reason of an oversize result"
expect_eq "$(state_of "$missing")" failed "a handler that cannot be started"
expect_eq "$(field_of "$missing" reason)" spawn-failed "reason of a spawn failure"

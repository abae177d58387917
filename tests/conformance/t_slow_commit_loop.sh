# Group commit off the loop (issue 11): while the store thread's outcome batch is slow
# (the failpoint `finish:delay:2s`: the first batch takes 2 s longer), the event loop goes on: a handler that
# exceeds its runtime limit meanwhile is stopped on time, and its stop-requested event is
# written before the slow batch's outcome is.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF
[kind.fast]
command = sh $HANDLERS/handler.sh ok
[kind.slow]
command = sh $HANDLERS/handler.sh block
timeout = 300ms
EOF
slow=$(wq enqueue slow)
fast=$(wq enqueue fast)

WAKEQ_FAILPOINT=finish:delay:2s run_worker "$T/w.ini"
expect_eq "$(state_of "$fast")" succeeded "the fast task"
expect_eq "$(state_of "$slow")" interrupted "the task over its runtime limit"
ids() { wq timeline "$1" --json | python3 -c '
import json, sys
print([e["id"] for e in json.load(sys.stdin)["events"] if e["type"] == sys.argv[1]][0])' "$2"; }
stop=$(ids "$slow" stop-requested)
done_id=$(ids "$fast" succeeded)
[ "$stop" -lt "$done_id" ] ||
	fail "the loop waited for the slow commit: stop-requested $stop after succeeded $done_id"

# PostgreSQL wake-ups (LISTEN/NOTIFY): an idle worker whose poll interval is 60s starts
# a task enqueued by another process at once; the poll is only the fallback.
. "$WAKEQ_TESTS/conformance/lib.sh"
[ "$BACKEND" = postgres ] || skip "LISTEN/NOTIFY is PostgreSQL's"

wq init >/dev/null
{
	printf '[worker]\nconcurrency = 2\nheartbeat = 1s\npoll_interval = 60s\n'
	printf '[kind.ping]\ncommand = sh %s/handler.sh ok\n' "$HANDLERS"
} >"$T/w.ini"
WAKEQ_HOST=listener start_worker w "$T/w.ini"
wait_until 30 grep -q "started" "$T/w.log"
# the worker's first poll ran at start; the next one is a minute away
first=$(wq enqueue ping)
wait_until 20 state_is "$first" succeeded
second=$(wq enqueue ping)
wait_until 20 state_is "$second" succeeded
expect_eq "$(lines "$T/runs")" 2 "handler starts"

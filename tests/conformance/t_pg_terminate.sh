# Terminated PostgreSQL backends (pg_terminate_backend on every connection of this
# database, three times while tasks run): the workers reconnect, every task succeeds,
# none runs twice.
. "$WAKEQ_TESTS/conformance/lib.sh"
[ "$BACKEND" = postgres ] || skip "terminates PostgreSQL backends"

N=40
wq init >/dev/null
HEARTBEAT=200ms CONCURRENCY=4 config "$T/w.ini" <<EOF
[kind.nap]
command = sh $HANDLERS/handler.sh nap 0.2
EOF
i=0
while [ $i -lt $N ]; do wq enqueue nap --payload "{\"i\":$i}" >/dev/null; i=$((i + 1)); done
WAKEQ_HOST=host-a start_worker a "$T/w.ini"
WAKEQ_HOST=host-b start_worker b "$T/w.ini"

at_least() { [ "$(lines "$T/runs")" -ge "$1" ]; }
for round in 5 15 25; do
	wait_until 60 at_least $round
	psql -q "$WAKEQ_DB" -At -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()" >"$T/terminated.$round"
	[ "$(cat "$T/terminated.$round")" -ge 2 ] || fail "round $round terminated $(cat "$T/terminated.$round") backends"
done
wait_all_succeeded "$N" 120
kill -TERM "$(cat "$T/a.pid")" "$(cat "$T/b.pid")"
expect_eq "$(lines "$T/runs")" "$N" "handler starts"
expect_eq "$(cut -d' ' -f1 "$T/runs" | sort -u | wc -l | tr -d ' ')" "$N" "distinct tasks run"

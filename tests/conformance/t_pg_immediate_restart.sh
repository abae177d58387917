# PostgreSQL restarted (`pg_ctl restart -m immediate`) while a worker is inside the
# transaction that records an outcome (issue 15, faults: "immediate restart mid-commit";
# t_pg_restart restarts at a random moment). A psql session holds the task's row lock,
# so the worker's outcome transaction is begun and waits on it; the server is then
# restarted under it. The worker reconnects and records the kept outcome: the task ends
# succeeded, its result stored once (one `succeeded` event, one attempt), the handler
# started once (its own `runs` file); and the worker goes on with new work.
. "$WAKEQ_TESTS/conformance/lib.sh"
[ "$BACKEND" = postgres ] || skip "restarts the PostgreSQL server"

private_pg

wq init >/dev/null
HEARTBEAT=200ms config "$T/w.ini" <<EOF
[kind.job]
command = sh $HANDLERS/handler.sh gate
[kind.quick]
command = sh $HANDLERS/handler.sh ok
EOF
id=$(wq enqueue job)
start_worker w "$T/w.ini"
wpid=$(cat "$T/w.pid")
wait_until 30 test -f "$T/started.$id"

# hold the task's row lock in a transaction that stays open
psql -q -X "$WAKEQ_DB" >"$T/locker.log" 2>&1 <<EOF &
BEGIN;
SELECT id FROM tasks WHERE id = $id FOR UPDATE;
SELECT pg_sleep(600);
EOF
locker=$!
BG_PIDS="$BG_PIDS $locker"
q() { psql -X -q -At "$WAKEQ_DB" -c "$1"; }
locking() { [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(600)%' AND state = 'active'")" -ge 1 ]; }
wait_until 30 locking

# the handler ends; the worker's outcome transaction waits on the lock
touch "$T/gate.$id"
waiting() { [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")" -ge 1 ]; }
wait_until 30 waiting
expect_eq "$(q "SELECT state FROM tasks WHERE id = $id")" running "the task while its outcome waits"

as_pg=""
[ "$(id -u)" -eq 0 ] && as_pg="runuser -u postgres --"
$as_pg "$WAKEQ_TEST_PG_BIN/pg_ctl" -D "$WAKEQ_TEST_PG_DATA" -m immediate -w -t 60 restart \
	>"$T/restart.log" 2>&1 || fail "pg_ctl restart failed: $(cat "$T/restart.log")"
set +e
wait "$locker" # its connection went with the server
set -e

wait_until 60 state_is "$id" succeeded
expect_eq "$(wq result "$id" 2>/dev/null)" "late result of task $id" "the kept result"
expect_eq "$(field_of "$id" attempts)" 1 "attempts"
n=$(wq timeline "$id" --json | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin)["events"] if e["type"] == "succeeded"))')
expect_eq "$n" 1 "succeeded events"
grep -q "NOT recorded" "$T/w.log" && fail "the worker gave up the outcome: $(grep 'NOT recorded' "$T/w.log")"

# the worker goes on
q1=$(wq enqueue quick)
wait_until 30 state_is "$q1" succeeded
alive "$wpid" || fail "the worker died"
expect_eq "$(lines "$T/runs")" 2 "handler starts"
expect_eq "$(grep -c "^$id " "$T/runs")" 1 "handler starts of the task whose outcome was in flight"
kill -TERM "$wpid"
wait_until 30 eval "! alive $wpid"
echo ok

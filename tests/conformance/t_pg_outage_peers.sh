# A store outage longer than the lease does not make the workers reap each other: the
# first worker back finds every other heartbeat stale, but it was cut off too, so it
# judges heartbeat ages only after a lease of its own unbroken heartbeats. Worker a holds
# a running task and comes back later than worker b (it is stopped during the outage and
# resumed once b has heartbeated on the restarted server); the task must end `succeeded`,
# run once, never `interrupted` (worker-lost). Found by tests/crash/random (issue 15).
# Uses a PostgreSQL server of its own, so the outage disturbs no other test.
. "$WAKEQ_TESTS/conformance/lib.sh"
[ "$BACKEND" = postgres ] || skip "stops the PostgreSQL server"
private_pg

wq init >/dev/null
# heartbeat 200 ms, lease 3 s (a is resumed well within a lease of b's return)
HEARTBEAT=200ms CONCURRENCY=1 config "$T/w.ini" <<EOF
lease = 3s
[kind.hold]
command = sh $HANDLERS/handler.sh gate
EOF
id=$(wq enqueue hold --payload '{}' --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
WAKEQ_HOST=host-a start_worker a "$T/w.ini"
started() { [ -f "$T/started.$id" ]; }
wait_until 60 started
WAKEQ_HOST=host-b start_worker b "$T/w.ini"
two_workers() { [ "$(wq workers --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" -eq 2 ]; }
wait_until 60 two_workers

as_pg=""
[ "$(id -u)" -eq 0 ] && as_pg="runuser -u postgres --"
pg_ctl() { $as_pg "$WAKEQ_TEST_PG_BIN/pg_ctl" -D "$WAKEQ_TEST_PG_DATA" -w -t 60 "$@" >>"$T/pg_ctl.log" 2>&1; }
# The server goes first, then a stops: a stopped while the store is up would rightly be
# lost once its heartbeat is a lease old.
pg_ctl -m immediate stop || fail "pg_ctl stop: $(cat "$T/pg_ctl.log")"
down_at=$(date +%s%N)
kill -STOP "$(cat "$T/a.pid")"
# The fault itself: the store stays away for more than the lease (3 s), so every
# heartbeat on it is stale when it comes back.
sleep 3.5
pg_ctl -l "$WAKEQ_TEST_PG_DATA/outage.log" \
	-o "-c listen_addresses=127.0.0.1 -p $WAKEQ_TEST_PG_PORT -k ${WAKEQ_TEST_PG_DATA%/data} -c fsync=off -c max_connections=200" start || fail "pg_ctl start: $(cat "$T/pg_ctl.log")"
up_at=$(date +%s%N)
[ $(( (up_at - down_at) / 1000000 )) -gt 3000 ] || fail "the outage was not longer than the lease"

# b is back: its heartbeat is newer than the restart, a's is not
b_back() {
	wq workers --json >"$T/workers.json" 2>/dev/null || return 1
	python3 - "$T/workers.json" <<'PY'
import json,sys
ws=json.load(open(sys.argv[1]))
hb=sorted(w["heartbeat_at"] for w in ws)
sys.exit(0 if len(ws)==2 and hb[0]!=hb[1] else 1)
PY
}
wait_until 60 b_back
# b has gone on heartbeating: one more heartbeat after the restart (a reaper without the
# rule acts right after its first)
b_beat_again() {
	wq workers --json >"$T/workers2.json" 2>/dev/null || return 1
	! cmp -s "$T/workers.json" "$T/workers2.json"
}
wait_until 60 b_beat_again
expect_eq "$(state_of "$id")" running "the task of the worker not back yet"
kill -CONT "$(cat "$T/a.pid")"
touch "$T/gate.$id"
done_state() { [ "$(state_of "$id")" != running ]; }
wait_until 60 done_state
expect_eq "$(state_of "$id")" succeeded "the task held across the outage"
expect_eq "$(lines "$T/runs")" 1 "handler starts"
if grep -q worker-lost "$T/b.log"; then fail "worker b reaped a: $(grep worker-lost "$T/b.log")"; fi
kill -TERM "$(cat "$T/a.pid")" "$(cat "$T/b.pid")"
echo "ok: outage of $(( (up_at - down_at) / 1000000 )) ms, no worker reaped"

# PostgreSQL restarted (`pg_ctl restart -m immediate`) while tasks run: the workers
# reconnect; no task is lost, none runs twice, and the ones running during the restart
# are recorded (succeeded, or interrupted where the outcome could not be known).
# Uses a PostgreSQL server of its own, so the restart disturbs no other test.
. "$WAKEQ_TESTS/conformance/lib.sh"
[ "$BACKEND" = postgres ] || skip "restarts the PostgreSQL server"

private_pg

N=60
wq init >/dev/null
HEARTBEAT=200ms CONCURRENCY=4 config "$T/w.ini" <<EOF
[kind.nap]
command = sh $HANDLERS/handler.sh nap 0.3
EOF
i=0
while [ $i -lt $N ]; do wq enqueue nap --payload "{\"i\":$i}" >/dev/null; i=$((i + 1)); done
WAKEQ_HOST=host-a start_worker a "$T/w.ini"
WAKEQ_HOST=host-b start_worker b "$T/w.ini"

some_done() { [ "$(lines "$T/runs")" -ge 12 ]; }
wait_until 60 some_done
as_pg=""
[ "$(id -u)" -eq 0 ] && as_pg="runuser -u postgres --"
restart_began=$(python3 -c 'import datetime; print(datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:23]+"Z")')
$as_pg "$WAKEQ_TEST_PG_BIN/pg_ctl" -D "$WAKEQ_TEST_PG_DATA" -m immediate -w -t 60 restart \
	>"$T/restart.log" 2>&1 || fail "pg_ctl restart failed: $(cat "$T/restart.log")"

settled() {
	wq list --limit 1000 --json >"$T/list.json" 2>/dev/null || return 1
	python3 - "$T/list.json" "$N" <<'PY'
import json,sys
ts=json.load(open(sys.argv[1]))
sys.exit(0 if len(ts)==int(sys.argv[2]) and all(t["state"] in ("succeeded","interrupted") for t in ts) else 1)
PY
}
wait_until 120 settled
kill -TERM "$(cat "$T/a.pid")" "$(cat "$T/b.pid")"

python3 - "$T/list.json" "$T/runs" "$restart_began" <<'PY' || fail "after the restart"
import json,sys,collections
ts={t["id"]:t for t in json.load(open(sys.argv[1]))}
runs=collections.Counter(int(l.split()[0]) for l in open(sys.argv[2]))
twice=[i for i,c in runs.items() if c>1]
assert not twice, "ran twice: %s" % twice
for i,t in ts.items():
    if t["state"]=="succeeded":
        assert runs[i]==1, "task %d succeeded but ran %d times" % (i, runs[i])
    else:
        assert t["reason"] in ("worker-lost",), "task %d interrupted for %s" % (i, t["reason"])
interrupted=sum(t["state"]=="interrupted" for t in ts.values())
# the restart really hit running tasks: some started before it and finished after it
# (RFC 3339 UTC with milliseconds compares as text)
across=[i for i,t in ts.items() if t["started_at"] and t["started_at"] < sys.argv[3]
        and (t["finished_at"] or "9") > sys.argv[3]]
assert across, "no task was running when the server restarted"
print("succeeded %d, interrupted %d, %d running across the restart" %
      (len(ts)-interrupted, interrupted, len(across)))
PY

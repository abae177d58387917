# Issue 14: `wakeq stats` counts tasks by state and kind, the running ones per worker
# instance and deliveries by state; `wakeq workers` lists the registered instances with
# their running tasks. Bulk resolve of interrupted tasks: --dry-run changes nothing, the
# real run records `resolved` with --by.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF2
[kind.slow]
command = sh $HANDLERS/handler.sh block
EOF2
expect_eq "$(wq workers)" "no worker instance is registered" "workers, none"
a=$(wq enqueue slow)
b=$(wq enqueue slow)
later=$(wq enqueue other --in 1h)
start_worker w1 "$T/w.ini"
wait_until 30 test -f "$T/started.$a"
wait_until 30 test -f "$T/started.$b"
pid=$(cat "$T/w1.pid")

wq stats --json >"$T/stats.json"
python3 - "$T/stats.json" <<'EOF2' || fail "stats --json: $(cat "$T/stats.json")"
import json, sys
d = json.load(open(sys.argv[1]))
counts = {(t["state"], t["kind"]): t["count"] for t in d["tasks"]}
assert counts == {("running", "slow"): 2, ("pending", "other"): 1}, counts
assert d["oldest_pending"] is None, d  # the pending one is not due yet
assert [r["count"] for r in d["running"]] == [2], d["running"]
assert d["deliveries"] == [], d
EOF2
wq stats | grep -q "^  running  *slow  *2$" || fail "stats text: $(wq stats)"
wq workers --json >"$T/workers.json"
python3 - "$T/workers.json" "$pid" "$T/stats.json" <<'EOF2' || fail "workers --json: $(cat "$T/workers.json")"
import json, sys
w = json.load(open(sys.argv[1]))
st = json.load(open(sys.argv[3]))
assert len(w) == 1 and w[0]["pid"] == int(sys.argv[2]) and w[0]["running"] == 2, w
assert w[0]["id"] == st["running"][0]["instance"], (w, st)
assert w[0]["heartbeat_at"] and w[0]["started_at"] and w[0]["host"], w
EOF2
wq workers | grep -q " $pid .* 2$" || fail "workers text: $(wq workers)"

# Cancelling the blocking handlers interrupts them (killed): two interrupted tasks.
wq cancel "$a" >/dev/null
wq cancel "$b" >/dev/null
not_running() { [ "$(state_of "$1")" != running ]; }
wait_until 30 not_running "$a"
wait_until 30 not_running "$b"
expect_eq "$(state_of "$a")" interrupted "state after cancel"
wq resolve --state interrupted --kind slow --failed --dry-run >"$T/out" || fail "resolve dry-run"
grep -q "would be resolved failed 2 task(s): $a $b" "$T/out" || fail "dry-run: $(cat "$T/out")"
expect_eq "$(state_of "$a")" interrupted "dry-run changed a task"
expect_exit 2 wq resolve --state failed --kind slow --failed
expect_exit 2 wq resolve --state interrupted --kind slow
wq resolve --state interrupted --kind slow --failed --by carol --note "bulk" >"$T/out" || fail "bulk resolve"
grep -q "resolved failed 2 task(s): $a $b" "$T/out" || fail "bulk resolve: $(cat "$T/out")"
expect_eq "$(state_of "$b")" failed "bulk resolve"
wq timeline "$a" | grep " resolved " | grep -q '"by":"carol"' || fail "resolved event: $(wq timeline "$a")"
wq stats --json | python3 -c '
import json,sys
d=json.load(sys.stdin)
c={(t["state"],t["kind"]):t["count"] for t in d["tasks"]}
assert c=={("failed","slow"):2,("pending","other"):1}, c
assert d["running"]==[], d' || fail "stats after the resolve"
exit 0

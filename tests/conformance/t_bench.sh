# `wakeq bench` runs every workload (tiny) on the store it is given and prints one
# machine-readable line per result whose figures are positive and whose n is the one
# asked for; the drained tasks really succeeded, once each.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
# bench RESULTS-EXPECTED N ARGS...: runs bench, checks every line's fields.
bench() {
	want=$1 n=$2; shift 2
	wq --db "$WAKEQ_DB" bench --tasks "$n" "$@" >"$T/bench.out" 2>"$T/bench.err" ||
		fail "bench $*: $(cat "$T/bench.err")"
	python3 - "$T/bench.out" "$want" "$n" "$BACKEND" <<'PY' || fail "bench $*: $(cat "$T/bench.out")"
import sys
lines = [l.split() for l in open(sys.argv[1]) if l.strip()]
assert len(lines) == int(sys.argv[2]), lines
for l in lines:
    f = dict(kv.split("=", 1) for kv in l)
    assert f["backend"] == sys.argv[4], f
    assert f["synchronous"] in ("full", "server"), f
    assert int(f["n"]) == int(sys.argv[3]), f
    assert int(f["concurrency"]) > 0, f
    if f["workload"] == "W3":
        assert 0 < float(f["p50_ms"]) <= float(f["p99_ms"]) <= float(f["max_ms"]), f
    else:
        assert float(f["seconds"]) > 0 and float(f["tasks_per_s"]) > 0, f
        assert float(f["us_per_task"]) > 0, f
PY
}

bench 1 20 --workload W1
bench 1 16 --workload W1c --concurrency 4
bench 1 16 --workload W1c --concurrency 4 --processes
bench 1 50 --workload W1b --batch 7
bench 1 20 --workload W2 --concurrency 4
bench 1 10 --workload W2c --concurrency 2
bench 1 5 --workload W3 --poll 20ms --pause 2ms
bench 2 10 --workload W5 --rows 15,30 --concurrency 2
grep -q 'rows=30' "$T/bench.out" || fail "W5 names its table size: $(cat "$T/bench.out")"

# JSON lines: the same fields
wq --db "$WAKEQ_DB" bench --workload W1,W1b --tasks 5 --json >"$T/bench.json"
python3 - "$T/bench.json" <<'PY' || fail "bench --json: $(cat "$T/bench.json")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["workload"] for r in rows] == ["W1", "W1b"], rows
assert all(r["n"] == 5 and r["tasks_per_s"] > 0 for r in rows), rows
PY

count() { wq list --kind "$1" --state "$2" --limit 1000 --json | python3 -c 'import json,sys; t=json.load(sys.stdin); print(len(t), max([x["attempts"] for x in t] or [0]))'; }
expect_eq "$(count bench-w2 succeeded)" "20 1" "W2 tasks succeeded once each"
expect_eq "$(count bench-w2c succeeded)" "10 1" "W2c tasks succeeded once each"
expect_eq "$(count bench-w1b pending)" "55 0" "W1b tasks enqueued (50, then 5)"
expect_eq "$(count bench-w1c pending)" "32 0" "W1c tasks enqueued (threads and processes)"
expect_eq "$(count bench-w5 succeeded)" "20 1" "W5 measured tasks succeeded"

expect_exit 2 wq bench --tasks 0
expect_exit 2 wq bench --workload W9
expect_exit 2 wq bench --workload W5 --rows 100,10

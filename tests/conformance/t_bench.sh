# `wakeq bench` runs the whole path (enqueue, claim, spawn, record) on the store it is
# given and reports rates; every benchmarked task really succeeded, once.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
wq --db "$WAKEQ_DB" bench --tasks 20 --concurrency 4 --json >"$T/bench.json"
python3 - "$T/bench.json" <<'PY' || fail "bench report: $(cat "$T/bench.json")"
import json,sys
b=json.load(open(sys.argv[1]))
assert b["tasks"]==20 and b["run_per_second"]>0 and b["enqueue_per_second"]>0, b
PY
expect_eq "$(succeeded_count)" 20 "benchmarked tasks succeeded"
expect_eq "$(wq list --limit 100 --json | python3 -c 'import json,sys; print(max(t["attempts"] for t in json.load(sys.stdin)))')" 1 "attempts per task"
expect_exit 2 wq bench --tasks 0

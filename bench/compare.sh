#!/bin/sh
# compare.sh OLD NEW [RUNS] [-- BENCH ARGS...]: alternates `OLD bench --json ARGS` and
# `NEW bench --json ARGS` RUNS times (default 5) and prints, per result (workload, mode,
# rows), the median of each side and the ratio NEW/OLD (tasks/s; for W3 the p50 latency,
# where a ratio below 1 is better).
set -eu
old=$1 new=$2
shift 2
runs=5
if [ $# -gt 0 ] && [ "$1" != "--" ]; then runs=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
i=0
while [ $i -lt "$runs" ]; do
	"$old" bench --json "$@" >>"$out/old.jsonl"
	"$new" bench --json "$@" >>"$out/new.jsonl"
	i=$((i + 1))
done
python3 - "$out" <<'PY'
import json, statistics, sys
d = sys.argv[1]
def load(side):
    res = {}
    for line in open(f"{d}/{side}.jsonl"):
        r = json.loads(line)
        key = (r["workload"], r.get("mode", ""), r.get("rows", 0))
        metric = "p50_ms" if "p50_ms" in r else "tasks_per_s"
        res.setdefault(key, (metric, []))[1].append(r[metric])
    return res
o, w = load("old"), load("new")
for key in o:
    metric, ov = o[key]
    nv = w.get(key, (metric, [float("nan")]))[1]
    a, b = statistics.median(ov), statistics.median(nv)
    name = " ".join(str(k) for k in key if k)
    print(f"{name:24s} {metric:12s} old {a:12.2f}  new {b:12.2f}  new/old {b / a:6.3f}")
PY

#!/bin/sh
# compare.sh OLD NEW [RUNS] [-- BENCH ARGS...]: alternates `OLD bench` and `NEW bench`
# RUNS times and prints the median rates of each and the ratio NEW/OLD.
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
	"$old" bench --json "$@" >"$out/old.$i.json"
	"$new" bench --json "$@" >"$out/new.$i.json"
	i=$((i + 1))
done
python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
d, n = sys.argv[1], int(sys.argv[2])
def med(side, key):
    return statistics.median(json.load(open(f"{d}/{side}.{i}.json"))[key] for i in range(n))
for key in ("enqueue_per_second", "run_per_second", "max_rss_kib"):
    o, w = med("old", key), med("new", key)
    print(f"{key:20s} old {o:12.1f}  new {w:12.1f}  new/old {w / o:6.3f}")
PY

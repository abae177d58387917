#!/bin/sh
# spawn_rate.sh BUILD_DIR [N] [C] [ROUNDS]: builds bench/spawn_rate.c against BUILD_DIR's
# libwakeq.a and runs the three modes alternately ROUNDS times (default 3), printing
# every line and then the median of each mode and the ratios spawn/setpriv, spawn/uv.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$1 n=${2:-2000} c=${3:-8} rounds=${4:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# shellcheck disable=SC2046
cc -O2 -D_GNU_SOURCE -I"$here/../include" -I"$here/../src" -o "$out/spawn_rate" \
	"$here/spawn_rate.c" "$build/libwakeq.a" \
	$(pkg-config --libs sqlite3 libuv jansson nettle) -ldl -lpthread
i=0
while [ $i -lt "$rounds" ]; do
	for m in spawn setpriv uv; do "$out/spawn_rate" $m "$n" "$c"; done
	i=$((i + 1))
done | tee "$out/lines"
python3 - "$out/lines" <<'PY'
import re, statistics, sys
r = {}
for line in open(sys.argv[1]):
    d = dict(kv.split("=") for kv in line.split())
    r.setdefault(d["mode"], []).append(float(d["spawns_per_s"]))
m = {k: statistics.median(v) for k, v in r.items()}
print(" ".join(f"median_{k}={v:.0f}" for k, v in m.items()),
      f"spawn/setpriv={m['spawn'] / m['setpriv']:.2f} spawn/uv={m['spawn'] / m['uv']:.2f}")
PY

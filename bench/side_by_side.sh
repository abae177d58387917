#!/bin/sh
# side_by_side.sh — `wakeq bench` and the peer harness in one run, as ratios.
#
#   bench/side_by_side.sh                 # from the checkout, after building build/wakeq
#   WAKEQ_BIN=build-x/wakeq N=2000 bench/side_by_side.sh
#
# Runs `wakeq bench` (W1, W1b, W2, W2c, W5; W3 unless SKIP_W3=1) on fresh SQLite stores,
# then — when the peer harness exists (PEERS_DIR, default ../shared/peers next to the
# checkout; the project does not depend on it) — each of its PEERS scripts with the same
# N (REPS rounds of one rep each, SKIP_SLOW=1), and prints every wakeq figure as
# ratios against the peers and the physical limits measured in the same run. Raw lines
# of both go to OUT (default a new directory under /tmp), ratios.txt there too.
#
# Knobs: N (2000), CONCURRENCY (8), W5_ROWS (10000,100000), PEERS ("limits spawn
# beanstalkd plainjob"), REPS (1), SKIP_W3 (0), WAKEQ_DB (a postgres:// URL: wakeq on it
# instead of SQLite), SKIP_WAKEQ=1 (reuse OUT/wakeq.log: only the peers again).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
WAKEQ_BIN=${WAKEQ_BIN:-$here/build/wakeq}
N=${N:-2000}
CONCURRENCY=${CONCURRENCY:-8}
W5_ROWS=${W5_ROWS:-10000,100000}
PEERS=${PEERS:-limits spawn beanstalkd plainjob}
PEERS_DIR=${PEERS_DIR:-$here/../shared/peers}
OUT=${OUT:-$(mktemp -d /tmp/wakeq-side.XXXXXX)}
SKIP_W3=${SKIP_W3:-0}
mkdir -p "$OUT"
[ -x "$WAKEQ_BIN" ] || { echo "side_by_side: no wakeq at $WAKEQ_BIN (set WAKEQ_BIN)" >&2; exit 2; }
db=""
[ -n "${WAKEQ_DB:-}" ] && db="--db $WAKEQ_DB"

wl="W1,W1b,W2,W2c"
[ "$SKIP_W3" = 1 ] || wl="$wl,W3"
[ "${SKIP_WAKEQ:-0}" = 1 ] || {
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) wakeq $("$WAKEQ_BIN" --version | head -1)," \
		"commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)," \
		"$(nproc) cores, N=$N concurrency=$CONCURRENCY"
	# shellcheck disable=SC2086
	"$WAKEQ_BIN" $db bench --workload "$wl" --tasks "$N" --concurrency "$CONCURRENCY" --poll 50ms
	# shellcheck disable=SC2086
	"$WAKEQ_BIN" $db bench --workload W1c --tasks "$N" --concurrency "$CONCURRENCY"
	# shellcheck disable=SC2086
	"$WAKEQ_BIN" $db bench --workload W5 --tasks "$N" --concurrency "$CONCURRENCY" --rows "$W5_ROWS"
} | tee "$OUT/wakeq.log"
[ -s "$OUT/wakeq.log" ] || { echo "side_by_side: no $OUT/wakeq.log" >&2; exit 1; }

if [ -d "$PEERS_DIR" ]; then
	# each peer's own script (what run_all.sh runs in turn), REPS rounds of all of them
	mkdir -p "$OUT/tools"
	r=1
	while [ "$r" -le "${REPS:-1}" ]; do
		for p in $PEERS; do
			RESULTS_DIR="$OUT" WQ_TOOLS="$OUT/tools" WAKEQ_SRC="$here" N="$N" REPS=1 \
				SKIP_SLOW=1 SKIP_W3="${SKIP_W3_PEERS:-1}" "$PEERS_DIR/$p.sh" \
				>>"$OUT/peers.log" 2>>"$OUT/peers.err" ||
				echo "# $p.sh failed: see $OUT/peers.err" >&2
		done
		r=$((r + 1))
	done
	# The harness's spawn.sh builds all its wakeq tools at once, linking libwakeq.a with
	# libraries it no longer uses (libcrypto, inih): when that fails, its spawn ceiling
	# (one C file on libuv alone) is built and run here, with the same parameters.
	src="$PEERS_DIR/wakeq/spawn_ceiling.c"
	case " $PEERS " in *" spawn "*)
		if ! grep -q "^peer=limit-spawn" "$OUT/peers.log" 2>/dev/null && [ -f "$src" ] &&
			gcc -O2 -o "$OUT/tools/spawn_ceiling" "$src" $(pkg-config --cflags --libs libuv); then
			r=1
			while [ "$r" -le "${REPS:-1}" ]; do
				for m in vfork-pdeathsig posix_spawn; do
					"$OUT/tools/spawn_ceiling" --method "$m" --n "$N" \
						--concurrency "$CONCURRENCY" --variant "$m-true" -- /bin/true \
						>>"$OUT/peers.log" 2>>"$OUT/peers.err"
				done
				r=$((r + 1))
			done
		fi ;;
	esac
else
	echo "# no peer harness at $PEERS_DIR: wakeq's own figures only" >&2
	: >"$OUT/peers.log"
fi

python3 - "$OUT/wakeq.log" "$OUT/peers.log" <<'PY' | tee "$OUT/ratios.txt"
import statistics, sys

def lines(path):
    for l in open(path):
        if l.startswith(("workload=", "peer=")):
            yield dict(t.split("=", 1) for t in l.split() if "=" in t)

wq = {}
for r in lines(sys.argv[1]):
    key = r["workload"] + ("@" + r["rows"] if "rows" in r else "")
    wq[key] = r
peers = {}
for r in lines(sys.argv[2]):
    for m in ("jobs_per_s", "commits_per_s", "tps", "spawns_per_s"):
        if m in r:
            peers.setdefault((r["peer"], r.get("variant", ""), r["workload"]), []).append(float(r[m]))

def peer(name, variant, workload):
    v = [x for (p, va, w), xs in peers.items() for x in xs
         if p == name and va.lower().startswith(variant.lower()) and w == workload]
    return statistics.median(v) if v else None

def rate(key):
    r = wq.get(key)
    return float(r["tasks_per_s"]) if r and "tasks_per_s" in r else None

rows = [
    ("W1  / SQLite WAL FULL commit (1 conn)", rate("W1"), peer("limit-sqlite", "wal-syncFULL", "commit")),
    ("W1  / raw fdatasync", rate("W1"), peer("limit-raw", "", "commit")),
    ("W1  / plainjob syncfull W1", rate("W1"), peer("plainjob", "syncfull", "W1")),
    ("W1  / beanstalkd fsync W1", rate("W1"), peer("beanstalkd", "fsync0", "W1")),
    ("W1c / SQLite WAL FULL commit", rate("W1c"), peer("limit-sqlite", "wal-syncFULL", "commit")),
    ("W1b / SQLite WAL FULL commit", rate("W1b"), peer("limit-sqlite", "wal-syncFULL", "commit")),
    ("W1b / plainjob default (sync=NORMAL) W1", rate("W1b"), peer("plainjob", "default", "W1")),
    ("W2  / plainjob syncfull W2", rate("W2"), peer("plainjob", "syncfull", "W2")),
    ("W2  / beanstalkd fsync W2", rate("W2"), peer("beanstalkd", "fsync0", "W2")),
    ("W2c / spawn ceiling vfork+PDEATHSIG /bin/true", rate("W2c"), peer("limit-spawn", "vfork-pdeathsig-true", "spawn")),
    ("W2c / spawn posix_spawn /bin/true", rate("W2c"), peer("limit-spawn", "posix_spawn-true", "spawn")),
]
w5 = sorted((int(k.split("@")[1]), rate(k)) for k in wq if k.startswith("W5@"))
print("%-48s %12s %12s %8s" % ("ratio", "wakeq/s", "other/s", "ratio"))
for name, a, b in rows:
    if a is None:
        continue
    print("%-48s %12.0f %12s %8s" % (name, a, "%.0f" % b if b else "-",
                                     "%.3f" % (a / b) if b else "-"))
if len(w5) > 1:
    print("%-48s %12.0f %12.0f %8.3f" % ("W5 claim+finish rate: largest / smallest table (%d / %d rows)" % (w5[-1][0], w5[0][0]),
                                         w5[-1][1], w5[0][1], w5[-1][1] / w5[0][1]))
if "W3" in wq:
    r = wq["W3"]
    print("W3 (50 ms poll on SQLite): p50 %s ms, p99 %s ms, max %s ms" % (r["p50_ms"], r["p99_ms"], r["max_ms"]))
PY
echo "# raw lines and ratios in $OUT" >&2

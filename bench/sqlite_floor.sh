#!/bin/sh
# sqlite_floor.sh [N] [B]: builds bench/sqlite_floor.c against the system's SQLite and
# prints, for the minimal schema and for each of wakeq's schema parts added to it (w, i,
# f, d, then all; then the split row n with i, f, d), the drain's instructions per task under callgrind (deterministic:
# repeat runs agree to the instruction) and its tasks/s (wall clock, noisy) from a run
# without valgrind. Compare with bench/store_drain.sh BUILD N B (wakeq's own store).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-10000} b=${2:-64}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# shellcheck disable=SC2046
cc -O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -o "$out/sqlite_floor" \
	"$here/sqlite_floor.c" $(pkg-config --cflags --libs sqlite3)
for flags in ${FLAGS:-- w i f d wifd nifd}; do
	f=$flags
	[ "$f" = - ] && f=
	valgrind --tool=callgrind --collect-atstart=no --toggle-collect=drain \
		--callgrind-out-file="$out/cg" "$out/sqlite_floor" "$out/db" "$n" "$b" ${f:+"$f"} \
		>/dev/null 2>"$out/log"
	ir=$(grep -o 'Collected : [0-9]*' "$out/log" | awk '{print $3}')
	wall=$("$out/sqlite_floor" "$out/db" "$n" "$b" ${f:+"$f"} | grep -o 'tasks_per_s=[0-9]*')
	echo "sqlite_floor n=$n batch=$b flags=$flags per_task=$((ir / n)) $wall"
done

#!/bin/sh
# store_drain.sh BUILD_DIR [N] [B]: builds bench/store_drain.c against BUILD_DIR's
# libwakeq.a (and this tree's headers: the build must be of this tree) and prints the
# drain's instructions per task under callgrind (the setup's enqueues not counted).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$1 n=${2:-10000} b=${3:-8}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# shellcheck disable=SC2046
cc -O2 -g -std=c11 -D_GNU_SOURCE -I"$here/../include" -I"$here/../src" \
	-o "$out/store_drain" "$here/store_drain.c" "$build/libwakeq.a" \
	$(pkg-config --libs sqlite3 libuv jansson nettle libcurl) \
	$(pkg-config --exists libpq && pkg-config --libs libpq) -ldl -lpthread -lm
WAKEQ_SQLITE_SYNCHRONOUS=OFF valgrind --tool=callgrind --collect-atstart=no \
	--toggle-collect=drain --callgrind-out-file="$out/cg" \
	"$out/store_drain" "$out/db" "$n" "$b" 2>"$out/log"
ir=$(grep -o 'Collected : [0-9]*' "$out/log" | awk '{print $3}')
echo "store_drain n=$n batch=$b instructions=$ir per_task=$((ir / n))"

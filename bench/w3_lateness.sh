#!/bin/sh
# w3_lateness.sh BUILD_DIR [N] [DB_URL] [POLL_INTERVAL] [GAP_MS]
#
# W3 (issue 11): enqueue from another process to handler start. Builds bench/w3_handler.c
# and bench/w3_lateness.c against BUILD_DIR's libwakeq.a, starts BUILD_DIR/wakeq worker
# (concurrency 8, poll_interval POLL_INTERVAL, default 250ms as shipped) on DB_URL (default:
# a fresh SQLite file in a temporary directory; a postgres:// URL is used as given and must
# be a database made for it) with one kind whose command is w3_handler, runs N samples
# (default 500) with a random gap of U(0, GAP_MS) between them (default 20; for a build
# that polls, give the poll interval), prints the result line, then stops the worker
# (SIGTERM, by its pid).
# Compare two builds in the same session, alternating:
#   for i in 1 2 3; do bench/w3_lateness.sh OLD_BUILD 500; bench/w3_lateness.sh NEW_BUILD 500; done
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd) n=${2:-500} url=${3:-} poll=${4:-250ms} gap=${5:-20}
tmp=$(mktemp -d)
wpid=
cleanup() {
	if [ -n "$wpid" ]; then kill -TERM "$wpid" 2>/dev/null || true; wait "$wpid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
cc -O2 -o "$tmp/w3_handler" "$here/w3_handler.c"
# nettle for this tree, libcrypto for a build before issue 11 moved SHA-256 to nettle
# shellcheck disable=SC2046
cc -O2 -D_GNU_SOURCE -I"$here/../include" -o "$tmp/w3_lateness" "$here/w3_lateness.c" \
	"$build/libwakeq.a" $(pkg-config --libs sqlite3 libuv jansson nettle libcrypto inih libcurl libpq) -lpthread
[ -n "$url" ] || url="$tmp/w3.db"
"$build/wakeq" --db "$url" init >/dev/null
mkfifo "$tmp/fifo"
cat >"$tmp/w.ini" <<INI
[worker]
concurrency = 8
poll_interval = $poll
heartbeat = 2s
[kind.w3]
command = $tmp/w3_handler $tmp/fifo
INI
"$build/wakeq" --db "$url" worker --config "$tmp/w.ini" >"$tmp/w.log" 2>&1 &
wpid=$!
i=0
until grep -q "started (pid" "$tmp/w.log" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 500 ] || { echo "worker did not start: $(cat "$tmp/w.log")" >&2; exit 1; }
	sleep 0.01
done
"$tmp/w3_lateness" "$url" "$tmp/fifo" "$n" w3 "$gap" | sed "s|^|build=$(basename "$build") poll=$poll |"

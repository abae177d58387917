#!/bin/sh
# cli_loop.sh — `wakeq enqueue` called from a shell loop, as a user's script would (issue 11:
# "CLI wakeq enqueue in a shell loop"). Each binary gets a fresh SQLite store; binaries
# are alternated round by round so a noisy machine hits both alike.
#
#   bench/cli_loop.sh N ROUNDS WAKEQ [WAKEQ...]
#
# Prints one line per binary and round: bin=… round=… n=… seconds=… enqueues_per_s=…
# and, as a floor for the loop itself, the same loop around /bin/true.
set -eu
[ $# -ge 3 ] || { echo "usage: cli_loop.sh N ROUNDS WAKEQ [WAKEQ...]" >&2; exit 2; }
n=$1 rounds=$2
shift 2
dir=$(mktemp -d /tmp/wakeq-cli-loop.XXXXXX)
trap 'rm -rf "$dir"' EXIT

now() { date +%s.%N; }
loop() { # label cmd...
	label=$1
	shift
	i=0
	t0=$(now)
	while [ "$i" -lt "$n" ]; do
		"$@" >/dev/null
		i=$((i + 1))
	done
	t1=$(now)
	echo "$label n=$n" | awk -v a="$t0" -v b="$t1" -v n="$n" \
		'{ printf "%s seconds=%.3f enqueues_per_s=%.0f\n", $0, b - a, n / (b - a) }'
}

r=1
while [ "$r" -le "$rounds" ]; do
	k=0
	for bin in "$@"; do
		k=$((k + 1))
		db="$dir/q$k-$r.db"
		"$bin" --db "$db" init >/dev/null
		loop "bin=$bin round=$r" "$bin" --db "$db" enqueue bench --payload '{"n":1}'
	done
	loop "bin=/bin/true round=$r" /bin/true
	r=$((r + 1))
done

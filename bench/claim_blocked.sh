#!/bin/sh
# claim_blocked.sh OLD NEW [ROUNDS] [BLOCKED] [MODE] [pg]: what tasks that cannot run yet cost
# the claims of others (docs/performance.md, "How the figures scale"). A store holds
# BLOCKED (default 20,000) pending tasks of kind `k`, enqueued with `wakeq enqueue
# --batch`, then 500 of kind `u`; a worker serving both (concurrency 8, /bin/true, poll
# 50ms) runs until the 500 succeeded; printed: the seconds from its start to the last
# one's finish (read from the store, so the polling for it, every 0.2 s, is not counted).
# MODE `lock` (default): every `k` task has turn-lock key `q`, whose lease an outside
# holder keeps for the whole run (so none of them runs, the queue's head included);
# `later`: due in 10 hours with priority 1000 (a head start of 16.7 hours puts them
# before the `u` tasks in claim order); `delayed`: due in $DELAY (default 24h), priority
# 0. OLD and NEW (wakeq binaries) are alternated ROUNDS times (default 3), each on a
# store of its own made by itself (the two may differ in schema). With `pg`, run under
# scripts/with-postgres: the stores are databases blocked_old / blocked_new on
# $WAKEQ_TEST_PG_URL. Prints one `old|new seconds=S` line per run.
set -eu
old=$1 new=$2 rounds=${3:-3} blocked=${4:-20000} mode=${5:-lock} pg=${6:-}
tmp=$(mktemp -d /tmp/claim-blocked.XXXXXX)
worker=
cleanup() {
	[ -n "$worker" ] && kill "$worker" 2>/dev/null && wait "$worker" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
case $mode in
lock) line='{"kind":"k","payload":{},"lock":"q"}' ;;
later) line='{"kind":"k","payload":{},"in":"10h","priority":1000}' ;;
delayed) line="{\"kind\":\"k\",\"payload\":{},\"in\":\"${DELAY:-24h}\"}" ;;
*) echo "claim_blocked.sh: MODE is lock, later or delayed, not '$mode'" >&2; exit 2 ;;
esac
awk -v n="$blocked" -v l="$line" 'BEGIN { for (i = 0; i < n; i++) print l }' >"$tmp/k.jsonl"
awk 'BEGIN { for (i = 0; i < 500; i++) print "{\"kind\":\"u\",\"payload\":{}}" }' \
	>"$tmp/u.jsonl"

# run SIDE: a fresh store, the blocked tasks, then the timed 500.
run() {
	bin=$1
	if [ -n "$pg" ]; then
		u=$WAKEQ_TEST_PG_URL
		PGOPTIONS='-c client_min_messages=warning' psql "$u" -qc \
			"DROP DATABASE IF EXISTS blocked_$2" >/dev/null
		psql "$u" -qc "CREATE DATABASE blocked_$2" >/dev/null
		db="${u%/*}/blocked_$2"
	else
		db=$tmp/$2.db
		rm -f "$db" "$db-wal" "$db-shm"
	fi
	cat >"$tmp/w.ini" <<EOF
[worker]
concurrency = 8
poll_interval = 50ms
[kind.k]
command = /bin/true
[kind.u]
command = /bin/true
EOF
	"$bin" --db "$db" init >/dev/null
	[ "$mode" = lock ] && "$bin" --db "$db" lock acquire q --holder bench --ttl 24h >/dev/null
	"$bin" --db "$db" enqueue --batch "$tmp/k.jsonl" >/dev/null
	"$bin" --db "$db" enqueue --batch "$tmp/u.jsonl" >/dev/null
	t0=$(date +%s%6N)
	"$bin" --db "$db" worker --config "$tmp/w.ini" >/dev/null 2>"$tmp/w.log" &
	worker=$!
	until "$bin" --db "$db" stats --json | tr -d ' \n' |
		grep -q '"state":"succeeded","kind":"u","count":500}'; do
		kill -0 "$worker" 2>/dev/null || { cat "$tmp/w.log" >&2; exit 1; }
		sleep 0.2
	done
	last="SELECT max(finished_at) FROM tasks WHERE kind = 'u'"
	if [ -n "$pg" ]; then t1=$(psql "$db" -Atc "$last"); else t1=$(sqlite3 "$db" "$last"); fi
	kill "$worker"
	wait "$worker" || :
	worker=
	echo "$2 seconds=$(echo "scale=3; ($t1 - $t0) / 1000000" | bc)"
}

i=0
while [ "$i" -lt "$rounds" ]; do
	run "$old" old
	run "$new" new
	i=$((i + 1))
done

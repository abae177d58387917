#!/bin/sh
# claim_backlog.sh OLD NEW [ROUNDS] [BACKLOG] [pg]: W2 (N = 2,000, concurrency 8) on a
# store that holds BACKLOG (default 20,000) pending tasks of kind `other`, which no
# worker serves, ordered before the W2 tasks: what a backlog of another kind costs each
# claim (docs/performance.md, "Wave 6: claim by kind"). OLD and NEW (wakeq binaries) are
# alternated ROUNDS times (default 3), each on a store of its own made by itself (the
# two may differ in schema). With `pg`, run under scripts/with-postgres: the stores are
# databases claimk_old / claimk_new on $WAKEQ_TEST_PG_URL, analyzed after the fill.
# Prints one `old|new JSON` line per run.
set -eu
old=$1 new=$2 rounds=${3:-3} backlog=${4:-20000} pg=${5:-}
T=1700000000000000
fill="INSERT INTO tasks (kind, operation, payload, payload_size, payload_sha256,
 payload_version, priority, state, due_at, order_at, created_at, updated_at, max_attempts)
 SELECT 'other', 'backlog-' || i, '{}', 2, '', 1, 0, 'pending', $T, $T - 100000 + i, $T,
 $T, 3 FROM"
tmp=$(mktemp -d /tmp/claim-backlog.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for side in old new; do
	eval bin=\$$side
	if [ -n "$pg" ]; then
		u=$WAKEQ_TEST_PG_URL
		psql "$u" -qc "DROP DATABASE IF EXISTS claimk_$side" >/dev/null
		psql "$u" -qc "CREATE DATABASE claimk_$side" >/dev/null
		db="${u%/*}/claimk_$side"
		"$bin" --db "$db" init >/dev/null
		if [ "$backlog" -gt 0 ]; then
			psql "$db" -qc "$fill generate_series(1, $backlog) AS i"
			psql "$db" -qc "ANALYZE tasks"
		fi
	else
		db=$tmp/$side.db
		"$bin" --db "$db" init >/dev/null
		[ "$backlog" -gt 0 ] && sqlite3 "$db" "WITH RECURSIVE n (i) AS (SELECT 1 UNION
		 ALL SELECT i + 1 FROM n WHERE i < $backlog) $fill n"
	fi
	eval db_$side=\$db
done
i=0
while [ "$i" -lt "$rounds" ]; do
	for side in old new; do
		eval bin=\$$side db=\$db_$side
		printf '%s ' "$side"
		"$bin" bench --json --workload W2 --db "$db"
	done
	i=$((i + 1))
done

#!/bin/sh
# pg_floor.sh URL [B] [CLIENTS] [BATCHES]: the least PostgreSQL work per drained task, without
# wakeq — pgbench runs bench/pg_floor/batch.sql (a batch of B tasks claimed and finished
# with the rows and events SPEC requires, one commit) from CLIENTS sessions on a fresh
# database with the minimal schema of bench/pg_floor/schema.sql; prints tasks/s.
# URL: a maintenance connection (postgres://user@host:port/db) to a server configured as
# the one to compare with (durable: fsync and synchronous_commit on). The database
# wq_pg_floor is created there and dropped afterwards. Compare with `wakeq bench
# --workload W2 --prefetch B --db URL-of-a-fresh-database` on the same server.
set -eu
export PGOPTIONS="-c client_min_messages=warning"
here=$(cd "$(dirname "$0")" && pwd)
url=$1 b=${2:-64} c=${3:-1} batches=${4:-1200}
pgbin=
for d in /usr/lib/postgresql/*/bin; do
	[ -x "$d/pgbench" ] && pgbin=$d # the last, i.e. the newest major version
done
[ -n "$pgbin" ] || pgbin=$(dirname "$(command -v pgbench)")
db_url=$(echo "$url" | sed 's|/[^/]*$|/wq_pg_floor|')
"$pgbin/psql" -q "$url" -c "DROP DATABASE IF EXISTS wq_pg_floor" -c "CREATE DATABASE wq_pg_floor"
trap '"$pgbin/psql" -q "$url" -c "DROP DATABASE IF EXISTS wq_pg_floor WITH (FORCE)"' EXIT
"$pgbin/psql" -q "$db_url" -v n=$((b * batches + b)) -f "$here/pg_floor/schema.sql" 2>/dev/null
tps=$("$pgbin/pgbench" -n -c "$c" -j "$c" -t $((batches / c)) -D b="$b" \
	-f "$here/pg_floor/batch.sql" "$db_url" 2>&1 | awk '/^tps/ {print $3}')
echo "pg_floor batch=$b clients=$c tps=$tps tasks_per_s=$(awk -v t="$tps" -v b="$b" 'BEGIN { printf "%d", t * b }')"

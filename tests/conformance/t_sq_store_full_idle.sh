# Transient store errors under --until-idle are retried for a bounded time (README "The
# worker and its configuration"): SQLite on a small filesystem that fills up while a
# handler runs and stays full. The handler's outcome is kept while the worker retries;
# once 20 store calls in a row have failed over at least one lease the worker gives up,
# drains (the kept outcome is logged NOT recorded) and exits 1 naming the error. A later
# worker's recovery then finds the task interrupted (worker-lost): never re-run.
# PostgreSQL: skipped (the server is shared; t_pg_restart covers outages of a daemon).
. "$WAKEQ_TESTS/conformance/lib.sh"

[ "$BACKEND" = sqlite ] || skip "full disk: SQLite only"
tmpfs_db 4m

wq init >/dev/null
DRAIN=1s config "$T/w.ini" <<EOF2
[kind.job]
command = sh $HANDLERS/handler.sh gate
EOF2
id=$(wq enqueue job)
"$WQ" worker --config "$T/w.ini" --until-idle >"$T/idle.log" 2>&1 &
pid=$!
BG_PIDS="$BG_PIDS $pid"
wait_until 30 test -f "$T/started.$id"
dd if=/dev/zero of="$T/fs/filler" bs=64k 2>/dev/null || true
avail=$(df -P "$T/fs" | awk 'NR == 2 { print $4 }')
[ "$avail" -eq 0 ] || fail "the filesystem is not full ($avail KiB free)"
touch "$T/gate.$id"

# Bounded: the lease here is 2 s (10 heartbeats of 200 ms), the drain 1 s.
gone() { ! alive "$pid"; }
wait_until 60 gone
set +e
wait "$pid"
got=$?
set -e
expect_eq "$got" 1 "exit status of worker --until-idle on a store that stays full"
grep -q "gives up" "$T/idle.log" || fail "the worker does not say it gave up: $(tail -n 5 "$T/idle.log")"
last=$(tail -n 1 "$T/idle.log")
case "$last" in
*full*) ;;
*) fail "the last line does not name the full disk: $last" ;;
esac
grep -q "task $id attempt $id.1: outcome .* NOT recorded" "$T/idle.log" ||
	fail "the drain does not log the outcome it could not record: $(cat "$T/idle.log")"

rm -f "$T/fs/filler"
config "$T/w2.ini" <<EOF2
[kind.job]
command = sh $HANDLERS/handler.sh ok
EOF2
run_worker "$T/w2.ini"
expect_eq "$(state_of "$id")" interrupted "the task whose outcome was never recorded"
expect_eq "$(field_of "$id" reason)" worker-lost "its reason"
expect_eq "$(lines "$T/runs")" 1 "handler starts"
echo ok

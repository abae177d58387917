# A full disk (SQLite on a 4 MiB tmpfs, filled with a file) during enqueue and prune,
# while a worker holds the store open (t_sq_full_disk covers the outcome and the
# delivery): each command fails with exit 1 naming the full disk, nothing is half-written
# (no task, no operation record: the same key is not a replay later), reads still work;
# the worker neither dies nor floods its log (a failing heartbeat is retried on the
# heartbeat, not on every poll, and no delivery is claimed meanwhile). Once space is
# back the delivery goes out once, the same enqueue creates the task, the worker runs it
# once (the handler's own `runs` file), and the prune goes through.
. "$WAKEQ_TESTS/conformance/lib.sh"

[ "$BACKEND" = sqlite ] || skip "full disk: SQLite only (a full disk cannot be made for a shared server)"
tmpfs_db 4m

wq init >/dev/null
# a channel that fails until $T/chan.ok exists: its delivery is due again and again
cat >"$T/chan.sh" <<'SH'
cat >/dev/null
[ -f "$WAKEQ_TEST_DIR/chan.ok" ] || exit 1
echo "$WAKEQ_DELIVERY_ID" >>"$WAKEQ_TEST_DIR/sends"
SH
HEARTBEAT=200ms config "$T/w.ini" <<EOF
[kind.job]
command = sh $HANDLERS/handler.sh ok
[channel.flaky]
type = command
command = sh $T/chan.sh
max_attempts = 1000
retry_backoff = 100ms
retry_backoff_max = 100ms
EOF
start_worker w "$T/w.ini"
wpid=$(cat "$T/w.pid")
a=$(wq enqueue job --key before-1 --notify command:flaky)
b=$(wq enqueue job --key before-2)
wait_until 30 state_is "$b" succeeded
wait_until 30 state_is "$a" succeeded
tasks() { wq list --limit 1000 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
expect_eq "$(tasks)" 2 "tasks before the disk fills"
chan_failed() { grep -q "delivery [0-9]* (command:flaky) of task $a attempt 2/" "$T/w.log"; }
wait_until 30 chan_failed

dd if=/dev/zero of="$T/fs/filler" bs=64k 2>/dev/null || true
full_at=$(date +%s%N)
avail=$(df -P "$T/fs" | awk 'NR == 2 { print $4 }')
[ "$avail" -eq 0 ] || fail "the filesystem is not full ($avail KiB free)"

# enqueue: exit 1, the cause named, nothing written
expect_exit 1 wq enqueue job --key on-full --payload '{"n":1}'
grep -q "full" "$T/last.err" || fail "enqueue on a full disk does not name the cause: $(cat "$T/last.err")"
expect_eq "$(tasks)" 2 "tasks after the refused enqueue"
expect_exit 4 wq timeline on-full
# prune: exit 1, the cause named, nothing removed
expect_exit 1 wq prune --task-retention 1ms --operation-retention 1ms
grep -q "full" "$T/last.err" || fail "prune on a full disk does not name the cause: $(cat "$T/last.err")"
expect_eq "$(tasks)" 2 "tasks after the refused prune"
expect_eq "$(state_of "$a")" succeeded "a read while the disk is full"

# the worker lives and logs the failing heartbeat about once per heartbeat (200 ms), not
# on every poll (20 ms), and claims no delivery under the unconfirmed lease (the flaky
# one is due every 100 ms): wait for the 4th heartbeat line (>= 600 ms), then compare
# the counts with the time the disk has been full (at most twice the heartbeat's rate:
# a late timer and a claim may both try)
beats() { grep -c "error: heartbeat: .*full" "$T/w.log" || true; }
beats_ge() { [ "$(beats)" -ge "$1" ]; }
wait_until 30 beats_ge 4
n=$(beats)
ms=$(( ($(date +%s%N) - full_at) / 1000000 ))
[ "$n" -le $(( ms / 100 + 3 )) ] || fail "$n heartbeat error lines in $ms ms (heartbeat 200 ms): the log is flooded"
n=$(grep -c "error: delivery claim: .*full" "$T/w.log" || true)
[ "$n" -le $(( ms / 100 + 3 )) ] || fail "$n delivery claim error lines in $ms ms (heartbeat 200 ms): the log is flooded"
alive "$wpid" || fail "the worker died on a full disk"

# space again: the same enqueue is new (nothing of the refused one was kept), runs once
rm -f "$T/fs/filler"
touch "$T/chan.ok" # (its failed attempts' events would fill the disk again)
delivered() { [ "$(lines "$T/sends")" -ge 1 ]; }
wait_until 30 delivered
expect_exit 0 wq enqueue job --key on-full --payload '{"n":1}' --json
expect_eq "$(json_field "$(cat "$T/last.out")" 'd["replayed"]')" False "the enqueue after the disk full is new"
c=$(json_field "$(cat "$T/last.out")" 'd["id"]')
wait_until 30 state_is "$c" succeeded
expect_eq "$(grep -c "^$c " "$T/runs")" 1 "handler starts of the task enqueued after the disk full"
expect_eq "$(lines "$T/runs")" 3 "handler starts"
expect_exit 0 wq prune --task-retention 1ms --operation-retention 1ms --json
[ "$(json_field "$(cat "$T/last.out")" 'd["tasks"]')" -ge 2 ] || fail "prune after the disk full: $(cat "$T/last.out")"
alive "$wpid" || fail "the worker died"
grep -q "NOT recorded" "$T/w.log" && fail "the worker gave up an outcome"
expect_eq "$(lines "$T/sends")" 1 "deliveries sent"
kill -TERM "$wpid"
wait_until 30 eval "! alive $wpid"
echo ok

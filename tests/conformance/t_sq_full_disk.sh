# An outcome the store does not take is kept, not dropped (README "The worker and its
# configuration"): the SQLite store on a small filesystem that fills up while a handler
# runs. Recording the outcome fails (SQLITE_FULL); once space is freed the worker records
# it: the task ends succeeded with its result, recorded once, the handler started once.
# Then the same for the task's delivery through a command channel.
# PostgreSQL: the same keep-and-retry path is covered by t_pg_restart (the server goes
# away while a handler runs); a full disk cannot be made here for a server we share.
. "$WAKEQ_TESTS/conformance/lib.sh"
. "$WAKEQ_TESTS/conformance/outbox-lib.sh"

[ "$BACKEND" = sqlite ] || skip "full disk: SQLite only (PostgreSQL: see t_pg_restart)"
tmpfs_db 4m

wq init >/dev/null
# A command channel that marks its start, waits at its own gate, then exits 0.
cat >"$T/chan.sh" <<'EOF'
#!/bin/sh
cat >/dev/null
echo "$WAKEQ_DELIVERY_ID" >>"$WAKEQ_TEST_DIR/sends"
while [ ! -f "$WAKEQ_TEST_DIR/gate.delivery" ]; do sleep 0.02; done
exit 0
EOF
config "$T/w.ini" <<EOF
[kind.job]
command = sh $HANDLERS/handler.sh gate
[channel.pager]
type = command
command = sh $T/chan.sh
timeout = 60s
EOF
id=$(wq enqueue job --notify command:pager)
start_worker w "$T/w.ini"
wait_until 30 test -f "$T/started.$id"

# Fill the filesystem while the handler waits at its gate.
dd if=/dev/zero of="$T/fs/filler" bs=64k 2>/dev/null || true
avail=$(df -P "$T/fs" | awk 'NR == 2 { print $4 }')
[ "$avail" -eq 0 ] || fail "the filesystem is not full ($avail KiB free)"
touch "$T/gate.$id" # the handler prints its result and exits 0

# Synchronise on the worker's word that the write failed (whatever it then does with the
# outcome: earlier versions dropped it here, "recording outcome ... failed").
full_logged() { grep -Eq "task $id attempt $id\.1.*(did not take the outcome|recording outcome|NOT recorded)" "$T/w.log"; }
wait_until 30 full_logged
expect_eq "$(state_of "$id")" running "the task while its outcome cannot be written"

rm -f "$T/fs/filler"
wait_until 30 state_is "$id" succeeded
expect_eq "$(wq result "$id" 2>/dev/null)" "late result of task $id" "the kept result"
expect_eq "$(field_of "$id" attempts)" 1 "attempts"
expect_eq "$(lines "$T/runs")" 1 "handler starts"
n=$(wq timeline "$id" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
ev = d["events"] if isinstance(d, dict) else d
print(sum(1 for e in ev if e.get("type") == "succeeded"))')
expect_eq "$n" 1 "succeeded events on the timeline"
grep "did not take the outcome" "$T/w.log" | grep -q "full" ||
	fail "the kept outcome's log line does not name the full disk: $(grep 'did not take' "$T/w.log")"
grep -q "NOT recorded" "$T/w.log" && fail "the worker gave up an outcome: $(grep 'NOT recorded' "$T/w.log")"

# The same for a delivery: its outcome cannot be written, then can.
wait_until 30 test -f "$T/sends"
dd if=/dev/zero of="$T/fs/filler" bs=64k 2>/dev/null || true
avail=$(df -P "$T/fs" | awk 'NR == 2 { print $4 }')
[ "$avail" -eq 0 ] || fail "the filesystem is not full ($avail KiB free)"
touch "$T/gate.delivery"
dfull_logged() { grep -Eq "delivery [0-9]+ \(command:pager\).*(did not take the outcome|recording the outcome failed|NOT recorded)" "$T/w.log"; }
wait_until 30 dfull_logged
rm -f "$T/fs/filler"
delivered() { [ "$(delivery "$id" command:pager 'd["state"]')" = delivered ]; }
wait_until 30 delivered
expect_eq "$(delivery "$id" command:pager 'd["attempts"]')" 1 "delivery attempts"
expect_eq "$(lines "$T/sends")" 1 "channel command starts"
grep -q "NOT recorded" "$T/w.log" && fail "the worker gave up an outcome: $(grep 'NOT recorded' "$T/w.log")"

kill -TERM "$(cat "$T/w.pid")"
wait_until 30 sh -c "! kill -0 $(cat "$T/w.pid") 2>/dev/null"
echo ok

# A SQLite database on a read-only file system (a tmpfs remounted read-only; as root a
# chmod would not stop us): reads work (show, list, result, timeline), every write fails
# with exit 1 naming the read-only file system and changes nothing, a worker stops at once
# saying the error does not clear by retrying (its connection cannot write). Once the
# file system is writable again, the same work goes through, each handler started once.
# Before, every command, reads included, failed with "set journal_mode: unable to open
# database file" (WAL needs its -shm file). A -wal file left behind by a killed process
# without its -shm file keeps the file from being opened read-only (the -wal may hold
# transactions an immutable open would ignore), with a message saying so.
. "$WAKEQ_TESTS/conformance/lib.sh"

[ "$BACKEND" = sqlite ] || skip "read-only file system: SQLite only"
tmpfs_db 16m

wq init >/dev/null
config "$T/w.ini" <<EOF
[kind.job]
command = sh $HANDLERS/handler.sh ok
EOF
done_id=$(wq enqueue job)
run_worker "$T/w.ini"
expect_eq "$(state_of "$done_id")" succeeded "the task run before"
pend=$(wq enqueue job --key later)
mount -o remount,ro "$T/fs" || fail "cannot remount the tmpfs read-only"

# reads
expect_exit 0 wq show "$pend"
expect_exit 0 wq list --json
expect_eq "$(json_field "$(cat "$T/last.out")" 'len(d)')" 2 "tasks listed"
expect_exit 0 wq result "$done_id"
expect_eq "$(cat "$T/last.out")" "result of task $done_id" "the result"
expect_exit 0 wq timeline "$done_id"

# writes: refused, named, nothing changed
for cmd in "enqueue job --key ro" "cancel $pend" "prune --task-retention 1ms --operation-retention 1ms"; do
	# shellcheck disable=SC2086
	expect_exit 1 wq $cmd
	grep -q "read-only file system" "$T/last.err" || fail "wakeq $cmd: the cause is not named: $(cat "$T/last.err")"
done
expect_eq "$(state_of "$pend")" pending "the task whose cancel was refused"
expect_eq "$(state_of "$done_id")" succeeded "the task a prune would have removed"

# a worker stops at once, naming the cause
expect_worker_refuses "$T/w.ini" "$T/ro-worker.log" "read-only file system" "a read-only database"
expect_eq "$(lines "$T/runs")" 1 "handler starts while read-only"

# writable again: the same work goes through, once
mount -o remount,rw "$T/fs"
expect_exit 0 wq enqueue job --key ro --json
expect_eq "$(json_field "$(cat "$T/last.out")" 'd["replayed"]')" False "the enqueue refused before is new"
run_worker "$T/w.ini"
expect_eq "$(state_of "$pend")" succeeded "the pending task"
expect_eq "$(lines "$T/runs")" 3 "handler starts"
expect_eq "$(cut -d' ' -f1 "$T/runs" | sort -u | wc -l | tr -d ' ')" 3 "distinct tasks run"

# a -wal file left behind by a killed worker. With its -shm file SQLite reads it (the
# WAL included) and a write is refused; without the -shm file an immutable open would
# ignore what the -wal may hold, so the store is not opened then, and the message says why
start_worker k "$T/w.ini"
kpid=$(cat "$T/k.pid")
wait_until 30 grep -q "started (pid" "$T/k.log"
kill -KILL "$kpid"
# reaped, not only a zombie: a killed thread group's leader shows Z while its other
# threads (the store thread's connection) still hold the files; the remount would fail
wait "$kpid" 2>/dev/null || true
[ -s "$T/fs/wakeq.db-wal" ] || fail "no -wal file left behind by the killed worker"
mount -o remount,ro "$T/fs" || fail "cannot remount the tmpfs read-only"
expect_eq "$(state_of "$pend")" succeeded "a read with the -wal and -shm files left behind"
expect_exit 1 wq enqueue job
grep -q "readonly\|read-only" "$T/last.err" || fail "the refused write does not name the cause: $(cat "$T/last.err")"
mount -o remount,rw "$T/fs"
rm -f "$T/fs/wakeq.db-shm"
mount -o remount,ro "$T/fs"
expect_exit 1 wq show "$pend"
grep -q "read-only file system and its -wal file was left behind" "$T/last.err" ||
	fail "the refusal does not say why: $(cat "$T/last.err")"
mount -o remount,rw "$T/fs"
expect_eq "$(state_of "$pend")" succeeded "the task, read where the file can be written"
echo ok

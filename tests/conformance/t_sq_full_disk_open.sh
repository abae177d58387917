# A full disk when no process holds the SQLite file open (issue 15, faults): opening it
# needs its -shm file, which cannot be created, so every command fails, reads included:
# exit 1, and the message names the cause ("No space left on device"), not only SQLite's
# "disk I/O error". With space back, everything is there and a worker runs the task once.
. "$WAKEQ_TESTS/conformance/lib.sh"

[ "$BACKEND" = sqlite ] || skip "full disk: SQLite only"
tmpfs_db 4m
wq init >/dev/null
id=$(wq enqueue job --key kept)
# The last connection to close leaves a short WAL and its -shm in place (sq_close); one
# that checkpointed on close removed both. That case: no process holds the file, so the
# -shm file may go (SQLite rebuilds it from the WAL).
rm -f "$T/fs/wakeq.db-shm"
dd if=/dev/zero of="$T/fs/filler" bs=64k 2>/dev/null || true
avail=$(df -P "$T/fs" | awk 'NR == 2 { print $4 }')
[ "$avail" -eq 0 ] || fail "the filesystem is not full ($avail KiB free)"

for cmd in "list" "show $id" "enqueue job --key more"; do
	# shellcheck disable=SC2086
	expect_exit 1 wq $cmd
	grep -q "No space left on device" "$T/last.err" ||
		fail "wakeq $cmd on a full disk does not name the cause: $(cat "$T/last.err")"
done
config "$T/w.ini" <<EOF
[kind.job]
command = sh $HANDLERS/handler.sh ok
EOF
expect_worker_refuses "$T/w.ini" "$T/full-worker.log" "No space left on device" "a full disk"
expect_eq "$(lines "$T/runs")" 0 "handler starts on a full disk"

rm -f "$T/fs/filler"
expect_exit 4 wq timeline more
run_worker "$T/w.ini"
expect_eq "$(state_of "$id")" succeeded "the task enqueued before the disk filled"
expect_eq "$(lines "$T/runs")" 1 "handler starts"
echo ok

# A store error that retrying cannot clear (README "The worker and its configuration"):
# `wakeq worker --until-idle` on a corrupt database exits 1 at once with the store's
# message, instead of logging "database disk image is malformed" on every poll forever.
# SQLite: pages in the middle of the file overwritten with garbage, the header and the
# schema page kept. PostgreSQL has no file to corrupt: the tasks table is dropped instead
# (an undefined table is the same class of error: WQ_ESTORE, not transient).
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF
[kind.job]
command = sh $HANDLERS/handler.sh echo
EOF
# SQLite: enough pages (payloads of 6 KB) to corrupt some in the middle of the file
n=1; [ "$BACKEND" = sqlite ] && n=40
pad=$(printf '%06000d' 0)
i=0
while [ $i -lt $n ]; do
	wq enqueue job --payload "{\"n\":$i,\"pad\":\"$pad\"}" >/dev/null
	i=$((i + 1))
done

case "$BACKEND" in
sqlite)
	pages=$(( $(wc -c <"$WAKEQ_DB") / 4096 ))
	[ "$pages" -ge 60 ] || fail "expected a database of at least 60 pages, got $pages"
	# the third quarter (task rows and their payloads, events); page 1 and the pages
	# `wq init` wrote (the schema's own b-tree reaches page ~40, the table roots) are
	# untouched: a smaller store (fewer index pages per task) must not move the
	# damage onto them, or the open itself fails
	# with 0xff bytes: not a valid page type, the same garbage every run
	tr '\000' '\377' </dev/zero | dd of="$WAKEQ_DB" bs=4096 seek=$((pages / 2)) \
		count=$((pages / 4)) iflag=fullblock conv=notrunc 2>/dev/null
	want="malformed" ;;
postgres)
	psql -q "$WAKEQ_DB" -c "DROP TABLE tasks CASCADE" >/dev/null
	want="tasks" ;;
esac

# The guard: a worker that never returns is killed after 60 s (exit 124).
set +e
timeout 60 "$WQ" worker --config "$T/w.ini" --until-idle >"$T/worker.log" 2>&1
got=$?
set -e
[ $got -ne 124 ] || fail "worker --until-idle did not return on a corrupt store within 60 s"
expect_eq "$got" 1 "exit status of worker --until-idle on a corrupt store"
last=$(tail -n 1 "$T/worker.log")
case "$last" in
*"$want"*) ;;
*) fail "the worker's last line does not name the store error: $last" ;;
esac
# the error is reported once as fatal, not once per poll: the fatal line and the exit's
# (a poll's read before them may name it too); each outcome of the batch that met it
# says so once more, kept for later ("did not take the outcome"), at most one per slot
n=$(grep -v "did not take the outcome" "$T/worker.log" | grep -c "$want" || true)
[ "$n" -le 3 ] || fail "the store error was logged $n times (expected a clean stop)"
k=$(grep -c "did not take the outcome" "$T/worker.log" || true)
[ "$k" -le 4 ] || fail "$k outcomes were refused with the store error (concurrency 4)"
grep -q "does not clear by retrying" "$T/worker.log" ||
	fail "the log does not say the error is not transient: $(cat "$T/worker.log")"
echo ok

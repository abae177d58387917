# A worker that learns it was declared lost stops the handlers it still runs under the
# lost id at once (SIGTERM, SIGKILL after kill_grace): after `wakeq resolve --retry` the
# old attempt must not keep running beside the new one (issue 9, item 5). The old
# attempt's outcome is refused by fencing: a `stale-outcome` event, nothing else.
. "$WAKEQ_TESTS/conformance/lib.sh"

# forget PID: it was reaped; never signal it at cleanup (its number may be reused)
forget() { BG_PIDS=$(echo " $BG_PIDS " | sed "s/ $1 / /"); }

wq init >/dev/null
cat >"$T/h.sh" <<'SH'
# Attempt 1 blocks; later attempts print a result. Each start notes, in $dir/overlap,
# any other attempt of the same task still alive (a zombie counts as gone).
cat >/dev/null
dir=$WAKEQ_TEST_DIR
echo "$WAKEQ_TASK_ID $WAKEQ_ATTEMPT_ID" >>"$dir/runs"
for f in "$dir/pid.$WAKEQ_TASK_ID".*; do
	[ -f "$f" ] || continue
	p=$(cat "$f")
	if [ -r "/proc/$p/stat" ] && ! awk '{ exit ($3 == "Z") ? 0 : 1 }' "/proc/$p/stat"; then
		echo "$WAKEQ_ATTEMPT_ID started while $f (pid $p) ran" >>"$dir/overlap"
	fi
done
echo $$ >"$dir/pid.$WAKEQ_ATTEMPT_ID.tmp"
mv "$dir/pid.$WAKEQ_ATTEMPT_ID.tmp" "$dir/pid.$WAKEQ_ATTEMPT_ID"
case "$WAKEQ_ATTEMPT_ID" in
*.1) exec sleep 600 ;;
*) echo "result of $WAKEQ_ATTEMPT_ID" ;;
esac
SH
HEARTBEAT=100ms config "$T/w.ini" <<EOF
lease = 1s
[kind.twice]
command = sh $T/h.sh
EOF

id=$(wq enqueue twice)
start_worker a "$T/w.ini"
apid=$(cat "$T/a.pid")
wait_until 30 test -f "$T/pid.$id.1"
old=$(cat "$T/pid.$id.1")

# a is paused past its lease; b declares it lost, then leaves
pause_worker "$apid"
start_worker b "$T/w.ini"
wait_until 30 state_is "$id" interrupted
expect_eq "$(field_of "$id" reason)" worker-lost "reason"
kill -TERM "$(cat "$T/b.pid")"
wait_until 15 eval "! alive $(cat "$T/b.pid")"
wait "$(cat "$T/b.pid")" || true
forget "$(cat "$T/b.pid")"
alive "$old" || fail "the old handler ended while its worker was paused"

# an operator retries the task while the old attempt's handler still runs
wq resolve "$id" --retry --note "retry after worker-lost" >/dev/null
kill -CONT "$apid"

# a learns at its next heartbeat that it was lost and stops the old handler at once
# (it dies of SIGTERM; the bound is well below anything but that)
wait_until 10 eval "! alive $old"
wait_until 30 state_is "$id" succeeded
alive "$apid" || fail "worker a died"
expect_eq "$(wq result "$id" 2>/dev/null)" "result of $id.2" "result"
[ ! -f "$T/overlap" ] || fail "two attempts ran at once: $(cat "$T/overlap")"
expect_eq "$(lines "$T/runs")" 2 "handler starts"

# the old attempt recorded nothing but stale-outcome
wq timeline "$id" >"$T/timeline.txt"
grep -q "stale-outcome" "$T/timeline.txt" || fail "no stale-outcome on the timeline"
if grep "stop-requested" "$T/timeline.txt" >&2; then fail "a stop-requested event was recorded for the lost attempt"; fi
expect_eq "$(grep -cE '^[0-9][^ ]*Z +succeeded ' "$T/timeline.txt")" 1 "succeeded events"
grep -q "declared lost.*stopping its 1 running handler" "$T/a.log" ||
	fail "worker a's log does not say it stopped the lost handler"

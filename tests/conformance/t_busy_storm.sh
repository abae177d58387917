# A storm of writers (issue 15, faults: SQLITE_BUSY from 8 writer processes): 8 processes
# released together each enqueue 20 tasks, one CLI process per enqueue, while a worker
# drains. Every enqueue returns an id (a busy store is waited for, never reported to the
# user as a failure), and every accepted task runs exactly once, counted by the handler's
# own `runs` file. On PostgreSQL the same storm (row locks and connection churn).
. "$WAKEQ_TESTS/conformance/lib.sh"

W=8
N=20
wq init >/dev/null
CONCURRENCY=4 config "$T/w.ini" <<EOF
[kind.storm]
command = sh $HANDLERS/handler.sh ok
EOF
start_worker w "$T/w.ini"
wpid=$(cat "$T/w.pid")

writer() {
	while [ ! -f "$T/go" ]; do sleep 0.01; done
	j=0
	while [ $j -lt $N ]; do
		if id=$("$WQ" enqueue storm --payload "{\"w\":$1,\"n\":$j}" 2>>"$T/err.$1"); then
			echo "$id" >>"$T/accepted.$1"
		else
			echo "enqueue $1/$j exited $?" >>"$T/err.$1"
		fi
		j=$((j + 1))
	done
	touch "$T/done.$1"
}
i=1
while [ $i -le $W ]; do
	writer $i &
	BG_PIDS="$BG_PIDS $!"
	i=$((i + 1))
done
touch "$T/go"
all_done() { [ "$(ls "$T" | grep -c '^done\.')" -eq $W ]; }
wait_until 120 all_done

cat "$T"/err.* >"$T/errors" 2>/dev/null || true
[ ! -s "$T/errors" ] || fail "enqueues failed during the storm: $(head -n 5 "$T/errors")"
cat "$T"/accepted.* | sort -n >"$T/accepted"
expect_eq "$(lines "$T/accepted")" $((W * N)) "accepted enqueues"
expect_eq "$(sort -u "$T/accepted" | wc -l | tr -d ' ')" $((W * N)) "distinct ids handed out"

wait_all_succeeded $((W * N)) 120
alive "$wpid" || fail "the worker died"
cut -d' ' -f1 "$T/runs" | sort -n >"$T/ran"
expect_eq "$(sort -u "$T/ran" | wc -l | tr -d ' ')" $((W * N)) "distinct tasks run"
expect_eq "$(lines "$T/runs")" $((W * N)) "handler starts"
cmp -s "$T/accepted" "$T/ran" || fail "the tasks run are not the tasks accepted: $(diff "$T/accepted" "$T/ran" | head -n 5)"
! grep -qi "locked\|busy" "$T/w.log" || fail "the worker reported a busy store: $(grep -i 'locked\|busy' "$T/w.log" | head -n 3)"
kill -TERM "$wpid"
wait_until 30 eval "! alive $wpid"
echo ok

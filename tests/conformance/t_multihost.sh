# Workers on several hosts share one store (SPEC §3, §16): four worker processes with
# different WAKEQ_HOST values race over 2,000 tasks → each task ran exactly once, and
# recovery never interrupted a live host's task.
. "$WAKEQ_TESTS/conformance/lib.sh"
# Volume, not power loss, is what this test is about: WAL with synchronous=NORMAL keeps
# every commit across a process crash and saves an fsync per transaction.
export WAKEQ_SQLITE_SYNCHRONOUS=NORMAL

N=${MULTIHOST_TASKS:-2000}
wq init >/dev/null
CONCURRENCY=4 config "$T/w.ini" <<EOF
# a lease far above the write latency of eight processes sharing 2 cores; this test is
# about claims, not about lost workers (t_host_lease is)
lease = 15s
[kind.hop]
command = sh $HANDLERS/handler.sh ok
EOF
for h in a b c d; do
	WAKEQ_HOST="host-$h" start_worker "w$h" "$T/w.ini"
done
# four enqueuers at once, N/4 tasks each, in batches (enqueue_in_batches) while the
# workers claim: the claims race as before
line_of_part() { printf '{"kind":"hop","payload":{"p":%d,"i":%d}}\n' "$part" "$1"; }
for p in 1 2 3 4; do
	(part=$p; enqueue_in_batches $((N / 4)) line_of_part $p) &
	eval "enq$p=$!"
done
for p in 1 2 3 4; do eval "wait \$enq$p" || fail "enqueuer $p failed"; done

wait_all_succeeded "$N" 600
for h in a b c d; do kill -TERM "$(cat "$T/w$h.pid")"; done
for h in a b c d; do wait_until 30 eval "! alive $(cat "$T/w$h.pid")"; done

expect_eq "$(lines "$T/runs")" "$N" "handler starts"
expect_eq "$(cut -d' ' -f1 "$T/runs" | sort -u | wc -l | tr -d ' ')" "$N" "distinct tasks run"
wq list --limit 100000 --json | python3 -c '
import json,sys
ts=json.load(sys.stdin)
bad=[t["id"] for t in ts if t["attempts"]!=1 or t["state"]!="succeeded"]
assert not bad, "tasks claimed twice or not succeeded: %s" % bad[:10]
hosts=set(t["instance"].split(":")[0] for t in ts)
print(" ".join(sorted(hosts)))' >"$T/hosts" || fail "$(cat "$T/hosts")"
grep -q "host-" "$T/hosts" || fail "instances do not carry the WAKEQ_HOST names: $(cat "$T/hosts")"
for h in a b c d; do
	grep -q "interrupted" "$T/w$h.log" && fail "worker host-$h logged an interruption: $(grep interrupted "$T/w$h.log" | head -3)"
done
true

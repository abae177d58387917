# Webhook receivers that misbehave (issue 15, faults): one that hangs, one that resets
# the connection, one that redirects (to another path, and to itself), one that answers
# bytes that are not HTTP. Each delivery is an honest failed attempt (the receiver saw
# exactly as many requests as the store counts attempts; the last error names what
# happened), retried with backoff up to max_attempts, then `dead`; a redirect is never
# followed (the landing path is never reached, a redirect to itself never loops); the
# tasks' results stay as they were (succeeded, stored, each handler started once); and
# while a delivery hangs the worker goes on running other tasks.
. "$WAKEQ_TESTS/conformance/lib.sh"
. "$WAKEQ_TESTS/conformance/outbox-lib.sh"

wq init >/dev/null
mkdir "$T/recv"
python3 "$HANDLERS/bad-receiver.py" "$T/recv" >"$T/recv.log" 2>&1 &
BG_PIDS="$BG_PIDS $!"
wait_until 30 test -s "$T/recv/port"
base="http://127.0.0.1:$(cat "$T/recv/port")"
{
	# the hang channel times out after 1 s; the others have time to see the answer even
	# on a loaded machine (a timeout there would hide what the receiver did)
	for m in hang reset redirect loop garbage; do
		to=10s; [ $m = hang ] && to=1s
		printf '[channel.%s]\ntype = webhook\nurl = %s/hooks/%s\ntimeout = %s\nmax_attempts = 3\nretry_backoff = 100ms\n' \
			"$m" "$base" "$m" "$to"
	done
	# a receiver that hangs for longer than this test waits on it
	printf '[channel.stuck]\ntype = webhook\nurl = %s/hooks/stuck/hang\ntimeout = 60s\nmax_attempts = 1\n' "$base"
} >"$T/channels.ini"
# DRAIN=1s: the stuck delivery is still in flight when the worker is stopped at the end,
# and the drain waits for it up to drain_timeout (10 s by default) before aborting it
CONCURRENCY=2 DRAIN=1s config "$T/w.ini" <<EOF
$(cat "$T/channels.ini")
[kind.notify]
command = sh $HANDLERS/handler.sh ok
EOF
start_worker w "$T/w.ini"

# while a delivery hangs, other tasks run
stuck=$(wq enqueue notify --notify webhook:stuck)
seen() { grep -qx "$1" "$T/recv/requests"; }
wait_until 30 seen /hooks/stuck/hang
ids=""
for i in 1 2 3 4 5 6; do ids="$ids $(wq enqueue notify)"; done
for i in $ids; do wait_until 30 state_is "$i" succeeded; done
expect_eq "$(delivery "$stuck" webhook:stuck 'd["state"]')" sending "the hanging delivery while the other tasks ran"

for m in hang reset redirect loop garbage; do
	eval "t_$m=\$(wq enqueue notify --notify webhook:$m)"
done
# a cheap sign first (the worker's log line), then the store's word below
dead_logged() { grep -q "(webhook:$1) of task $2 is dead after" "$T/w.log"; }
for m in hang reset redirect loop garbage; do
	eval "id=\$t_$m"
	wait_until 40 dead_logged "$m" "$id"
done

# one listing of the deliveries, one timeline and one show per task (a loaded machine
# pays for every process started here)
wq deliveries --json >"$T/deliveries.json"
for m in hang reset redirect loop garbage; do
	eval "id=\$t_$m"
	wq timeline "$id" --json >"$T/timeline.$m.json"
	wq show "$id" --json >"$T/show.$m.json"
	expect_eq "$(wq result "$id" 2>/dev/null)" "result of task $id" "the result of the task notifying webhook:$m"
	expect_eq "$(grep -c "^$id " "$T/runs")" 1 "handler starts of the task notifying webhook:$m"
done
python3 - "$T" <<'PY2' >&2 || fail "the deliveries to the bad receivers"
import collections, json, sys
t = sys.argv[1]
reqs = collections.Counter(l.strip() for l in open(t + "/recv/requests"))
dels = json.load(open(t + "/deliveries.json"))
expect = {"hang": ("imeout", "imed out"), "reset": ("Connection reset",),
          "redirect": ("HTTP 302",), "loop": ("HTTP 302",), "garbage": ("curl: ",)}
for m, words in expect.items():
    show = json.load(open("%s/show.%s.json" % (t, m)))
    ev = collections.Counter(e["type"] for e in json.load(open("%s/timeline.%s.json" % (t, m)))["events"])
    d = [d for d in dels if d["task_id"] == show["id"] and d["channel"] == "webhook:" + m]
    assert len(d) == 1, (m, d)
    d = d[0]
    print("webhook:%s: %s after %d attempts: %s" % (m, d["state"], d["attempts"], d["last_error"]))
    assert d["state"] == "dead" and d["attempts"] == 3, (m, d)
    assert reqs["/hooks/" + m] == 3, (m, "requests the receiver saw", reqs)
    assert (ev["delivery-attempt"], ev["delivery-failed"], ev["dead"]) == (3, 2, 1), (m, ev)
    assert ev["succeeded"] == 1 and show["state"] == "succeeded", (m, show["state"], ev)
    assert any(w in d["last_error"] for w in words), (m, d["last_error"])
PY2
expect_eq "$(grep -c "^/landing" "$T/recv/requests" || true)" 0 "requests that followed a redirect"
alive "$(cat "$T/w.pid")" || fail "the worker died"
kill -TERM "$(cat "$T/w.pid")"
wait_until 30 eval "! alive $(cat "$T/w.pid")"
echo ok

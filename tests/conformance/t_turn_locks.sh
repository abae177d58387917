# Turn locks (issue 10): two workers, 20 tasks over 3 lock keys. The handlers record their
# own start/end stamps: no two tasks of one key overlap, each key's tasks run in the order
# they were enqueued, and tasks of different keys do overlap. Then an external holder
# blocks its key until it releases it, and a holder that never releases blocks only until
# its lease expires; tasks of other keys run meanwhile.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
CONCURRENCY=4 config "$T/w.ini" <<EOF
lease = 15s
[kind.turn]
command = sh $HANDLERS/turn-handler.sh
[kind.free]
command = sh $HANDLERS/handler.sh ok
EOF

i=0
while [ $i -lt 20 ]; do
	k=agent$((i % 3))
	wq enqueue turn --lock "$k" --payload "{\"key\":\"$k\"}" >/dev/null
	i=$((i + 1))
done
start_worker a "$T/w.ini"
start_worker b "$T/w.ini"
wait_all_succeeded 20 120

python3 - "$T/turns" <<'PY' || fail "turn order (see $T/turns)"
import sys
ev = [l.split() for l in open(sys.argv[1])]
start, end = {}, {}
for kind, key, task, ns in ev:
    (start if kind == "start" else end)[int(task)] = (key, int(ns))
assert len(start) == 20 and len(end) == 20, (len(start), len(end))
by_key = {}
for t, (k, s) in start.items():
    by_key.setdefault(k, []).append((s, end[t][1], t))
for k, iv in by_key.items():
    iv.sort()
    for a, b in zip(iv, iv[1:]):
        assert b[0] >= a[1], "key %s: task %d started before task %d ended" % (k, b[2], a[2])
    ids = [t for _, _, t in iv]
    assert ids == sorted(ids), "key %s ran out of order: %s" % (k, ids)
over = 0
for k1, iv1 in by_key.items():
    for k2, iv2 in by_key.items():
        if k1 < k2:
            over += sum(1 for a in iv1 for b in iv2 if a[0] < b[1] and b[0] < a[1])
assert over > 0, "tasks of different keys never ran at the same time"
print("overlaps across keys:", over)
PY

# Every attempt took and released its key on its timeline.
tl=$(wq timeline 1 --json)
json_field "$tl" '[e["type"] for e in d["events"] if e["type"].startswith("lock-")] == ["lock-acquired", "lock-released"]' | grep -qx True || fail "lock events of task 1: $tl"
expect_eq "$(wq lock list)" "no lock is held" "locks after the run"

# An external holder blocks its key until it releases it.
expect_exit 0 wq lock acquire chat:x --holder chat-turn --ttl 60s
expect_exit 5 wq lock acquire chat:x --holder other --ttl 60s
grep -q "held by 'chat-turn' until" "$T/last.err" || fail "exit 5 names the holder: $(cat "$T/last.err")"
held=$(wq enqueue turn --lock chat:x --payload '{"key":"chat:x"}')
# the workers keep claiming other work meanwhile: a task of a free key and an unlocked
# one run while the held key's task waits
other=$(wq enqueue turn --lock agent0 --payload '{"key":"agent0"}')
free=$(wq enqueue free)
wait_until 30 state_is "$other" succeeded
wait_until 30 state_is "$free" succeeded
expect_eq "$(state_of "$held")" pending "task of a held key"
expect_exit 0 wq lock release chat:x --holder chat-turn
wait_until 30 state_is "$held" succeeded

# A holder that never releases blocks its key only until its lease expires.
# The proof is the task's start time (never before the lease's expiry); the state is
# checked as well while the lease is surely still running (a slow build may get there
# only after the expiry: then the start time alone tells).
expect_exit 0 wq lock acquire chat:y --holder crashed --ttl 3s
exp=$(wq lock list --json | python3 -c 'import json,sys; print([l["expires_at"] for l in json.load(sys.stdin) if l["key"]=="chat:y"][0])')
held=$(wq enqueue turn --lock chat:y --payload '{"key":"chat:y"}')
free=$(wq enqueue free)
wait_until 30 state_is "$free" succeeded
before=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
st=$(state_of "$held")
if python3 -c 'import sys; sys.exit(0 if sys.argv[1] < sys.argv[2] else 1)' "$before" "$exp"; then
	expect_eq "$st" pending "task of a leased key"
fi
wait_until 30 state_is "$held" succeeded
# the claim took the key at acquired_at, on the store's clock like the lease's expiry
# (the task's started_at is the worker's clock, read before its claim reached the store)
took=$(json_field "$(wq timeline "$held" --json)" '[e["detail"]["acquired_at"] for e in d["events"] if e["type"] == "lock-acquired"][0]')
python3 -c 'import sys; sys.exit(0 if sys.argv[1] >= sys.argv[2] else 1)' "$took" "$exp" \
	|| fail "the task took its key at $took, before the lease expired at $exp"

kill -TERM "$(cat "$T/a.pid")" "$(cat "$T/b.pid")"
wait_until 30 eval "! alive $(cat "$T/a.pid") && ! alive $(cat "$T/b.pid")"

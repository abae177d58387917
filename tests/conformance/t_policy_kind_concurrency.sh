# Per-kind concurrency (issue 10): [kind.NAME] concurrency = 2 holds across two workers.
# Worker a (one slot) runs one task of the kind, worker b (four slots) may then start only
# one more: b's claims count a's running task, because the store's claim enforces the
# limit (a count under a per-kind lock in the claim's transaction), not a worker's memory.
# A task of another kind enqueued behind them is claimed by b meanwhile, which proves b
# claimed again while the limited tasks waited. Then, with every task let through, the
# handlers' own start/end stamps never show more than 2 of the kind at once.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
kinds() {
	cat <<EOF
[kind.slow]
command = sh $HANDLERS/handler.sh gate
concurrency = 2
[kind.stamp]
command = sh $HANDLERS/turn-handler.sh
concurrency = 2
[kind.free]
command = sh $HANDLERS/handler.sh ok
EOF
}
kinds | CONCURRENCY=1 config "$T/a.ini"
kinds | CONCURRENCY=4 config "$T/b.ini"

i=0
while [ $i -lt 5 ]; do wq enqueue slow >/dev/null; i=$((i + 1)); done
started() { ls "$T" | grep -c '^started\.[0-9]*$' || true; }
start_worker a "$T/a.ini"
wait_until 30 test -f "$T/started.1"
start_worker b "$T/b.ini"
wait_until 30 test -f "$T/started.2"
free=$(wq enqueue free --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
wait_until 30 state_is "$free" succeeded
expect_eq "$(started)" 2 "tasks of kind slow started (concurrency = 2)"
expect_eq "$(json_field "$(wq list --state running --json)" 'len(d)')" 2 "running"
expect_eq "$(json_field "$(wq list --state running --json)" 'len(set(t["instance"] for t in d))')" 2 \
	"instances running the kind"
# let them through, one gate per started task, watching the running count
id=1
while [ $id -le 5 ]; do
	wait_until 30 test -f "$T/started.$id"
	n=$(json_field "$(wq list --state running --kind slow --json)" 'len(d)')
	[ "$n" -le 2 ] || fail "$n tasks of kind slow running at once"
	touch "$T/gate.$id"
	id=$((id + 1))
done
wait_until 60 succeeded_is 6

# 12 tasks that nap, across both workers: their stamps never overlap beyond 2
i=0
while [ $i -lt 12 ]; do wq enqueue stamp --payload '{"key":"k"}' >/dev/null; i=$((i + 1)); done
wait_until 120 succeeded_is 18
python3 - "$T/turns" <<'PY' || fail "per-kind concurrency (see $T/turns)"
import sys
ev = []
for kind, key, task, ns in (l.split() for l in open(sys.argv[1])):
    ev.append((int(ns), 0 if kind == "end" else 1))
assert len(ev) == 24, len(ev)
ev.sort()  # an end before a start at the same instant
now = most = 0
for _, d in ev:
    now += 1 if d else -1
    most = max(most, now)
assert most <= 2, "%d tasks of kind stamp ran at once (concurrency = 2)" % most
PY

# Turn locks, wave 12: a task queued behind an earlier due task of its key is held out
# of the claim's range (statements.h, WQ__HELD) and must come back whenever its reason
# goes. Each way a reason goes is a case here; a held task that outlived its reason
# would stay pending for ever, so every case ends with the tasks run.
# 1. the key's head is cancelled while pending: the next ones run, in order;
# 2. a head not due yet holds nothing back: a due task behind it runs first;
# 3. a task cancelled while held, retried by the operator after its key's queue ran,
#    runs;
# 4. enqueuers racing workers (four processes adding 40 tasks each, each on a key of its
#    own, while two workers claim): every task runs, each key's tasks one at a time in
#    order. (One enqueuer a key: the order is by enqueue time, which only one process
#    makes the same as the id order.)
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF
[kind.turn]
command = sh $HANDLERS/turn-handler.sh
EOF
export TURN_NAP=0.02
# turn KEY [ARGS]: a task of KEY (ARGS after the key: --in, ...)
turn() { k=$1; shift; wq enqueue turn --lock "$k" --payload "{\"key\":\"$k\"}" "$@"; }

# 1: an outside holder keeps the key while the queue is arranged.
expect_exit 0 wq lock acquire q --holder test --ttl 120s
a=$(turn q) b=$(turn q) c=$(turn q)
expect_exit 0 wq cancel "$a"
expect_exit 0 wq lock release q --holder test
# 2: the head is due in an hour; the task behind it is due now.
later=$(turn r --in 1h)
now=$(turn r)
# 3: f waits behind e when it is cancelled.
e=$(turn p) f=$(turn p)
expect_exit 0 wq cancel "$f"

start_worker w1 "$T/w.ini"
for id in "$b" "$c" "$now" "$e"; do
	wait_until 60 state_is "$id" succeeded
done
expect_eq "$(state_of "$a")" cancelled "the cancelled head"
expect_eq "$(state_of "$later")" pending "the head due later"
expect_eq "$(awk '$1 == "start" && $2 == "q" { printf "%s ", $3 }' "$T/turns")" \
	"$b $c " "key q's order"
expect_exit 0 wq retry "$f"
wait_until 60 state_is "$f" succeeded

# 4: enqueuers racing two workers.
: >"$T/turns"
: >"$T/runs"
start_worker w2 "$T/w.ini"
pids=
for p in 1 2 3 4; do
	(
		i=0
		while [ $i -lt 40 ]; do
			turn "k$p" >/dev/null || exit 1
			i=$((i + 1))
		done
	) &
	pids="$pids $!"
done
for p in $pids; do wait "$p" || fail "an enqueuer failed"; done
wait_until 120 runs_reached 160
wait_until 60 succeeded_is 165 # with b, c, now, e and f
python3 - "$T/turns" <<'PY' || fail "turn order (see $T/turns)"
import sys
start, end = {}, {}
for kind, key, task, ns in (l.split() for l in open(sys.argv[1])):
    (start if kind == "start" else end)[int(task)] = (key, int(ns))
assert len(start) == 160 and len(end) == 160, (len(start), len(end))
for k in ("k1", "k2", "k3", "k4"):
    iv = sorted((s, end[t][1], t) for t, (key, s) in start.items() if key == k)
    for x, y in zip(iv, iv[1:]):
        assert y[0] >= x[1], "key %s: task %d started before task %d ended" % (k, y[2], x[2])
    ids = [t for _, _, t in iv]
    assert ids == sorted(ids), "key %s ran out of order: %s" % (k, ids)
PY

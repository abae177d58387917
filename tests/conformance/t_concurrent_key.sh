# SPEC §6, §18 the same key enqueued concurrently: 16 enqueuers in separate processes,
# released together, with the same key and input → exactly one task, all 16 get its id,
# one of them created it and 15 were replays. The unique index decides, not a read.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
N=16
i=1
while [ $i -le $N ]; do
	# each waits for the start signal, so that they race for real
	sh -c 'while [ ! -f "$1/go" ]; do sleep 0.005; done
	       exec "$2" enqueue wake --key agent-7:turn-99 --tenant acme --scope agent-7 \
	            --payload "{\"turn\":99,\"agent\":\"agent-7\"}" --json >"$1/out.$3" 2>"$1/err.$3"
	      ' sh "$T" "$WQ" "$i" &
	eval "pid_$i=$!"
	BG_PIDS="$BG_PIDS $!"
	i=$((i + 1))
done
touch "$T/go"

i=1
while [ $i -le $N ]; do
	eval "p=\$pid_$i"
	wait "$p" || fail "enqueuer $i exited $? ($(cat "$T/err.$i"))"
	i=$((i + 1))
done

python3 - "$T" "$N" <<'EOF' || fail "the enqueuers disagree"
import json, sys
t, n = sys.argv[1], int(sys.argv[2])
outs = [json.load(open(f"{t}/out.{i}")) for i in range(1, n + 1)]
ids = {o["id"] for o in outs}
created = [o for o in outs if not o["replayed"]]
assert len(ids) == 1, f"ids: {sorted(ids)}"
assert len(created) == 1, f"{len(created)} enqueuers created a task"
EOF

tasks=$(wq list --json)
expect_eq "$(json_field "$tasks" 'len(d)')" 1 "tasks"
id=$(json_field "$tasks" 'd[0]["id"]')
expect_eq "$(json_field "$(cat "$T/out.1")" 'd["id"]')" "$id" "id every enqueuer got"
events=$(wq timeline "$id" --json)
expect_eq "$(json_field "$events" 'sum(e["type"] == "accepted" for e in d["events"])')" 1 "accepted events"
expect_eq "$(json_field "$events" 'sum(e["type"] == "replayed" for e in d["events"])')" $((N - 1)) "replayed events"

# Issue 14: `wakeq retry ID` gives a failed (or cancelled) task a new round of attempts
# under the same operation, its budget counted from the attempts used; the key still
# replays to it; a `retried` event names who and why. Bulk forms: --dry-run changes
# nothing; the real run touches exactly the tasks it prints.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
# The handler fails while $T/broken exists; every start is a line in $T/runs.
cat >"$T/h.sh" <<EOF2
echo "\$WAKEQ_TASK_ID \$WAKEQ_ATTEMPT_ID" >>"$T/runs"
cat >/dev/null
[ -f "$T/broken.\$WAKEQ_TASK_ID" ] && exit 75
echo "done \$WAKEQ_TASK_ID"
EOF2
config "$T/w.ini" <<EOF2
[kind.flaky]
command = sh $T/h.sh
max_attempts = 2
retry_backoff = 0s
EOF2

id=$(wq enqueue flaky --key k1 --payload '{"n":1}')
touch "$T/broken.$id"
run_worker "$T/w.ini"
expect_eq "$(state_of "$id")" failed "state after two failing attempts"
expect_eq "$(lines "$T/runs")" 2 "runs before the retry"

# Refusals change nothing: a task id with a filter, an unknown task, a pending one.
expect_exit 2 wq retry "$id" --state failed
expect_exit 4 wq retry 999999

rm "$T/broken.$id"
wq retry "$id" --note "upstream fixed" --by alice >"$T/out" || fail "retry: $(cat "$T/last.err" 2>/dev/null)"
grep -q "task $id retried" "$T/out" || fail "retry output: $(cat "$T/out")"
expect_eq "$(state_of "$id")" pending "state after retry"
expect_eq "$(field_of "$id" max_attempts)" 4 "max_attempts after retry (2 used + 2)"
run_worker "$T/w.ini"
expect_eq "$(state_of "$id")" succeeded "state after the retried round"
expect_eq "$(lines "$T/runs")" 3 "the retried task ran exactly once more"
grep -q "^$id $id.3\$" "$T/runs" || fail "the new attempt is not $id.3: $(cat "$T/runs")"
wq timeline "$id" --json | python3 -c '
import json,sys
ev=[e for e in json.load(sys.stdin)["events"] if e["type"]=="retried"]
assert len(ev)==1, ev
d=ev[0]["detail"]
d=json.loads(d) if isinstance(d,str) else d
assert d["by"]=="alice" and d["note"]=="upstream fixed" and d["from"]=="failed", d
assert d["attempts"]==2 and d["max_attempts"]==4, d' || fail "retried event"

# The key still names the same task: enqueueing it again replays, nothing runs.
again=$(wq enqueue flaky --key k1 --payload '{"n":1}')
expect_eq "$again" "$id" "re-enqueue of the key after the retry"
run_worker "$T/w.ini"
expect_eq "$(lines "$T/runs")" 3 "a replay ran nothing"
expect_exit 6 wq retry "$id"
grep -q "succeeded" "$T/last.err" || fail "refusal does not name the state"

# The budget of a new round: a task that keeps failing fails again after 2 more.
id2=$(wq enqueue flaky)
touch "$T/broken.$id2"
run_worker "$T/w.ini"
expect_eq "$(state_of "$id2")" failed "second task failed"
USER=bob wq retry "$id2" >/dev/null
run_worker "$T/w.ini"
expect_eq "$(state_of "$id2")" failed "second task after its new round"
expect_eq "$(field_of "$id2" attempts)" 4 "attempts after two rounds"
wq timeline "$id2" --json | python3 -c '
import json,sys
ev=[e for e in json.load(sys.stdin)["events"] if e["type"]=="retried"]
d=ev[0]["detail"]; d=json.loads(d) if isinstance(d,str) else d
assert d["by"], d' || fail "retried event has no by"

# `wakeq dead` lists the failed task with the command that acts on it.
wq dead | grep "task $id2 " | grep -q "wakeq retry $id2\$" || fail "dead: $(wq dead)"
wq dead --json | python3 -c '
import json,sys
a=json.load(sys.stdin)
assert isinstance(a,list), a
t=[x for x in a if x["type"]=="task"]
assert [x["id"] for x in t]==[int(sys.argv[1])] and t[0]["command"]=="wakeq retry "+sys.argv[1], a' "$id2" || fail "dead --json"

# Bulk: --dry-run lists and changes nothing; the real run retries exactly those.
id3=$(wq enqueue flaky --tenant t1)
touch "$T/broken.$id3"
run_worker "$T/w.ini"
runs=$(lines "$T/runs")
wq retry --state failed --kind flaky --dry-run >"$T/out" || fail "bulk dry-run"
grep -q "would be retried 2 task(s): $id2 $id3" "$T/out" || fail "dry-run output: $(cat "$T/out")"
expect_eq "$(state_of "$id2")" failed "dry-run changed task $id2"
expect_eq "$(state_of "$id3")" failed "dry-run changed task $id3"
wq retry --state failed --kind flaky --tenant t1 --json >"$T/out" || fail "bulk retry"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["tasks"]==[int(sys.argv[2])] and not d["dry_run"], d' "$T/out" "$id3" || fail "bulk json: $(cat "$T/out")"
expect_eq "$(state_of "$id3")" pending "bulk retry of tenant t1"
expect_eq "$(state_of "$id2")" failed "bulk retry touched another tenant"
expect_exit 2 wq retry --state pending --kind flaky
expect_exit 2 wq retry --state failed

# Bulk cancel of pending tasks, with --dry-run first.
p1=$(wq enqueue flaky --in 1h)
wq cancel --state pending --kind flaky --dry-run >"$T/out" || fail "cancel dry-run"
grep -q "would be cancelled 2 task(s): $id3 $p1" "$T/out" || fail "cancel dry-run output: $(cat "$T/out")"
expect_eq "$(state_of "$p1")" pending "cancel --dry-run changed a task"
wq cancel --state pending --kind flaky --since 1h >"$T/out" || fail "bulk cancel"
grep -q "cancelled 2 task(s): $id3 $p1" "$T/out" || fail "bulk cancel output: $(cat "$T/out")"
expect_eq "$(state_of "$p1")" cancelled "bulk cancel"
expect_eq "$(lines "$T/runs")" "$runs" "nothing ran"
# A cancelled task can be retried too.
wq retry "$p1" >/dev/null || fail "retry of a cancelled task"
expect_eq "$(state_of "$p1")" pending "retried cancelled task"
exit 0

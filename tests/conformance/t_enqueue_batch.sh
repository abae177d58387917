# `wakeq enqueue --batch FILE.jsonl` (issue 11): one transaction for many tasks, each item
# with its own operation key. A replayed batch creates nothing new; a conflicting item is
# reported (exit 3) while the others are accepted; a bad line names its line number and
# nothing at all is written.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
count() { wq list --limit 1000 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }

cat >"$T/a.jsonl" <<'J'
{"kind":"mail","payload":{"to":"ann"},"key":"m-1","tenant":"t1","scope":"agent-1"}

{"kind":"mail","payload":{"to":"bob"},"key":"m-2","priority":5,"notify":["inbox:ops"],"lock":"agent-1"}
{"kind":"mail","payload":[1,2,3],"in":"1h","max_attempts":2}
J
wq enqueue --batch "$T/a.jsonl" --json >"$T/first.json"
python3 - "$T/first.json" <<'PY' || fail "first batch: $(cat "$T/first.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert [x["line"] for x in r] == [1, 3, 4], r
assert [x["status"] for x in r] == ["accepted"] * 3, r
assert len({x["id"] for x in r}) == 3 and all(x["state"] == "pending" for x in r), r
assert r[0]["operation"] == "m-1" and r[1]["operation"] == "m-2", r
PY
expect_eq "$(count)" 3 "tasks after the first batch"
id1=$(json_field "$(cat "$T/first.json")" 'd[0]["id"]')
id3=$(json_field "$(cat "$T/first.json")" 'd[2]["id"]')
expect_eq "$(json_field "$(wq show "$id1" --json)" 'd["tenant"]+"/"+d["scope"]')" "t1/agent-1" "tenant and scope from the line"
expect_eq "$(json_field "$(wq show "$id3" --json)" 'd["max_attempts"]')" 2 "max_attempts from the line"
[ "$(json_field "$(wq show "$id3" --json)" 'd["due_at"] > d["created_at"]')" = True ] || fail "'in' delays the task"

# the keyed lines again (from stdin): replays, nothing new
grep '"key"' "$T/a.jsonl" | wq enqueue --batch - >"$T/replay.out"
expect_eq "$(awk '{print $3}' "$T/replay.out" | tr '\n' ' ')" "replayed replayed " "replayed batch"
expect_eq "$(count)" 3 "a replayed batch creates nothing new"

# m-1 with other input conflicts; the new line beside it is accepted
printf '%s\n' '{"kind":"mail","payload":{"to":"eve"},"key":"m-1","tenant":"t1","scope":"agent-1"}' \
	'{"kind":"mail","payload":{"to":"cat"},"key":"m-3"}' >"$T/c.jsonl"
expect_exit 3 wq enqueue --batch "$T/c.jsonl"
grep -q '^1 - conflict: ' "$T/last.out" || fail "the conflicting line is reported: $(cat "$T/last.out")"
grep -q '^2 [0-9]* accepted$' "$T/last.out" || fail "the other line is accepted: $(cat "$T/last.out")"
grep -q "line 1" "$T/last.err" || fail "the error names the line: $(cat "$T/last.err")"
expect_eq "$(count)" 4 "the non-conflicting item was enqueued"
[ "$(wq timeline "$id1" --json | python3 -c 'import json,sys; print(sum(e["type"]=="conflict" for e in json.load(sys.stdin)["events"]))')" = 1 ] ||
	fail "the conflict is on the existing task's timeline"

# a bad line anywhere: usage error naming it, nothing written (not even the good lines)
printf '%s\n' '{"kind":"mail","key":"n-1"}' '{"kind":"mail","key":"n-2"}' '{"kind":"mail",' >"$T/bad.jsonl"
expect_exit 2 wq enqueue --batch "$T/bad.jsonl"
grep -q "line 3" "$T/last.err" || fail "bad JSON names line 3: $(cat "$T/last.err")"
printf '%s\n' '{"kind":"mail"}' '' '{"kind":"bad kind"}' >"$T/bad2.jsonl"
expect_exit 2 wq enqueue --batch "$T/bad2.jsonl"
grep -q "line 3" "$T/last.err" || fail "an invalid kind names line 3: $(cat "$T/last.err")"
printf '%s\n' '{"kind":"mail","colour":"red"}' >"$T/bad3.jsonl"
expect_exit 2 wq enqueue --batch "$T/bad3.jsonl"
grep -q "unknown field colour" "$T/last.err" || fail "an unknown field is named: $(cat "$T/last.err")"
expect_eq "$(count)" 4 "rejected batches wrote nothing"
expect_exit 2 wq enqueue --batch "$T/missing.jsonl"

# a [limits] reached by one line rolls the whole batch back: exit 5 naming that line
config "$T/w.ini" <<CFG
[kind.mail]
command = /bin/true
[limits.capped]
max_active = 2
CFG
printf '%s\n' '{"kind":"mail","tenant":"capped"}' '{"kind":"mail","tenant":"capped"}' \
	'{"kind":"mail","tenant":"capped"}' >"$T/limit.jsonl"
expect_exit 5 wq enqueue --batch "$T/limit.jsonl" --config "$T/w.ini"
grep -q "line 3" "$T/last.err" || fail "the limit names line 3: $(cat "$T/last.err")"
expect_eq "$(count)" 4 "a batch over the limit wrote nothing"

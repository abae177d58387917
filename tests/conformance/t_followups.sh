# Follow-ups (issue 10, SPEC §4): a command handler's $WAKEQ_FOLLOWUPS array becomes tasks
# in the transaction that records its success, once: keys derived from the parent, so a
# worker killed mid-run leaves none (the interrupted attempt) and the retried parent
# creates each exactly once. max_followups and max_followup_depth reject them as a whole
# (followups-rejected), as does a malformed file; the parent's outcome is recorded all the
# same. `show` names parent and children; the timeline has followup-created events; the
# worker removes each attempt's file.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
mkdir "$T/tmp"
export TMPDIR="$T/tmp"
config "$T/w.ini" <<EOF
lease = 15s
[kind.fan]
command = sh $HANDLERS/followup-handler.sh fan 3
[kind.toomany]
command = sh $HANDLERS/followup-handler.sh fan 4
[kind.chain]
command = sh $HANDLERS/followup-handler.sh chain
[kind.bad]
command = sh $HANDLERS/followup-handler.sh bad
[kind.gated]
command = sh $HANDLERS/followup-handler.sh gate
[kind.leaf]
command = sh $HANDLERS/handler.sh ok
[limits]
max_followups = 3
max_followup_depth = 2
EOF
idof() { json_field "$1" 'd["id"]'; }
children() { json_field "$(wq show "$1" --json)" '" ".join(str(c) for c in d["children"])'; }
nchildren() { json_field "$(wq show "$1" --json)" 'len(d["children"])'; }
events() { wq timeline "$1" --json | python3 -c 'import json,sys; print(sum(1 for e in json.load(sys.stdin)["events"] if e["type"] == sys.argv[1]))' "$2"; }
detail_of() { wq timeline "$1" --json | python3 -c 'import json,sys; print([e["detail"] for e in json.load(sys.stdin)["events"] if e["type"] == sys.argv[1]][0])' "$2"; }

fan=$(idof "$(wq enqueue fan --json)")
many=$(idof "$(wq enqueue toomany --json)")
chain=$(idof "$(wq enqueue chain --json)")
bad=$(idof "$(wq enqueue bad --json)")
run_worker "$T/w.ini"

# created once, with the success, in the parent's tenant and scope, linked both ways
expect_eq "$(state_of "$fan")" succeeded "parent"
expect_eq "$(nchildren "$fan")" 3 "follow-ups of the fan"
expect_eq "$(events "$fan" followup-created)" 3 "followup-created events"
for c in $(children "$fan"); do
	expect_eq "$(state_of "$c")" succeeded "follow-up $c"
	expect_eq "$(field_of "$c" parent_id)" "$fan" "parent of $c"
	expect_eq "$(field_of "$c" kind)" leaf "kind of $c"
	field_of "$c" operation | grep -q "^fan/" || fail "operation of $c: $(field_of "$c" operation)"
	wq show "$c" | grep -q "^parent: *$fan" || fail "show $c does not name its parent"
done
wq show "$fan" | grep -q "^followups: " || fail "show does not list the follow-ups"

# beyond max_followups: rejected as a whole, the parent succeeded
expect_eq "$(state_of "$many")" succeeded "parent with too many follow-ups"
expect_eq "$(nchildren "$many")" 0 "follow-ups beyond max_followups"
detail_of "$many" followups-rejected | grep -q "max_followups = 3 (\[limits\]): the handler asked for 4" \
	|| fail "rejection: $(detail_of "$many" followups-rejected)"

# depth: chain (0) -> 1 -> 2, and the follow-up of depth 3 is rejected
expect_eq "$(json_field "$(wq list --kind chain --json)" 'len(d)')" 3 "tasks of the chain"
last=$(json_field "$(wq list --kind chain --json)" 'd[-1]["id"]')
expect_eq "$(state_of "$last")" succeeded "the chain's last task"
detail_of "$last" followups-rejected | grep -q "max_followup_depth = 2" \
	|| fail "depth rejection: $(detail_of "$last" followups-rejected)"

# a malformed file: rejected with a clear detail (a position, never its text)
expect_eq "$(state_of "$bad")" succeeded "parent with a malformed file"
detail_of "$bad" followups-rejected | grep -q "malformed" || fail "malformed: $(detail_of "$bad" followups-rejected)"

# the worker removed every attempt's file
expect_eq "$(ls "$T/tmp" | grep -c wakeq-followups || true)" 0 "follow-ups files left"
# safe evidence: a follow-up's payload is in no event
for id in $(json_field "$(wq list --json --limit 1000)" '" ".join(str(t["id"]) for t in d)'); do
	wq timeline "$id" --json | grep -q s3cr3t-fu && fail "a payload reached the timeline of $id"
done

# a parent killed mid-run (its worker killed) leaves no follow-ups; retried, it creates
# each exactly once
gated=$(idof "$(wq enqueue gated --json)")
start_worker a "$T/w.ini"
wait_until 30 test -f "$T/started.$gated"
kill -KILL "$(cat "$T/a.pid")"
# reaped before the next worker looks (a dying sanitizer build takes a while to exit)
wait "$(cat "$T/a.pid")" 2>/dev/null || true
run_worker "$T/w.ini"
expect_eq "$(state_of "$gated")" interrupted "parent after its worker was killed"
expect_eq "$(nchildren "$gated")" 0 "follow-ups of an interrupted attempt"
touch "$T/gate.$gated"
wq resolve "$gated" --retry >/dev/null
run_worker "$T/w.ini"
expect_eq "$(state_of "$gated")" succeeded "retried parent"
expect_eq "$(nchildren "$gated")" 3 "follow-ups after the retry"
expect_eq "$(events "$gated" followup-created)" 3 "followup-created events after the retry"
expect_eq "$(json_field "$(wq list --kind leaf --json --limit 1000)" 'len(d)')" 6 "leaf tasks in all"

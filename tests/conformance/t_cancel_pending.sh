# SPEC §18.4: cancel a pending task → `cancelled`, never claimed; cancelling again, or
# a finished task, is refused with exit 6 and changes nothing.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF
[kind.wake]
command = sh $HANDLERS/handler.sh ok
EOF
id=$(wq enqueue wake)
keep=$(wq enqueue wake)
wq cancel "$id" >/dev/null
expect_eq "$(state_of "$id")" cancelled "state after cancel"

run_worker "$T/w.ini"
expect_eq "$(state_of "$id")" cancelled "state after a worker ran"
expect_eq "$(state_of "$keep")" succeeded "the other task"
grep -q "^$id " "$T/runs" 2>/dev/null && fail "cancelled task $id was run"
wq timeline "$id" --json | python3 -c '
import json,sys
types=[e["type"] for e in json.load(sys.stdin)["events"]]
assert "claimed" not in types, types
assert types == ["accepted","cancelled"], types' || fail "cancelled task has a claim on its timeline"

expect_exit 6 wq cancel "$id"
grep -q "cancelled" "$T/last.err" || fail "error does not name the current state"
expect_exit 6 wq cancel "$keep"
expect_eq "$(state_of "$keep")" succeeded "a refused cancel changed the task"
expect_exit 4 wq cancel 999999

# Issue 14: prune never deletes a task whose notification is still owed (a delivery
# pending or sending): its delivery would go with it. Delivered (or dead) ones no longer
# hold the task. prune --dry-run reports the same counts and deletes nothing.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF2
[kind.report]
command = sh $HANDLERS/handler.sh ok
EOF2
owed=$(wq enqueue report --notify webhook:nosuch)   # no such channel: stays pending
sent=$(wq enqueue report --notify inbox:bob)        # delivered to the inbox
plain=$(wq enqueue report)
run_worker "$T/w.ini"
for t in $owed $sent $plain; do expect_eq "$(state_of "$t")" succeeded "task $t"; done
dstate() { wq deliveries --json | python3 -c 'import json,sys; print([d["state"] for d in json.load(sys.stdin) if d["task_id"]==int(sys.argv[1])][0])' "$1"; }
expect_eq "$(dstate "$owed")" pending "delivery of the owed task"
expect_eq "$(dstate "$sent")" delivered "delivery of the sent task"

out=$(wq prune --task-retention 1ms --operation-retention 1h --dry-run --json)
expect_eq "$(json_field "$out" '(d["tasks"], d["dry_run"])')" "(2, True)" "dry-run counts"
for t in $owed $sent $plain; do expect_eq "$(state_of "$t")" succeeded "task $t after the dry-run"; done
wq prune --task-retention 1ms --operation-retention 1h --dry-run | grep -q "^would prune 2 task(s)" || fail "dry-run text"

out=$(wq prune --task-retention 1ms --operation-retention 1h --json)
expect_eq "$(json_field "$out" 'd["tasks"]')" 2 "tasks pruned"
expect_eq "$(state_of "$owed")" succeeded "the task whose delivery is owed is kept"
expect_eq "$(dstate "$owed")" pending "its delivery is kept"
expect_exit 4 wq show "$sent"
expect_exit 4 wq show "$plain"
exit 0

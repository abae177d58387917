# SPEC §15, §18 prune keeps operation protection. Pruning a finished task keeps its
# operation record: inside the operation window the same key and input is still a replay
# (exit 0, "replayed": true, the original id, no new task) and other input still exit 3;
# once the operation retention has passed, the key is free again. Operations of tasks
# that are not finished are never pruned. Operation retention shorter than task
# retention is refused, on the command line and in the config.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/ok.ini" <<EOF
[kind.report]
command = sh $HANDLERS/handler.sh ok
EOF
count() { json_field "$(wq list --json --limit 1000)" 'len(d)'; }
expect_exit 0 wq doctor
grep -q "^clean" "$T/last.out" || fail "doctor on an empty store: $(cat "$T/last.out")"

held=$(wq enqueue report --key held-1 --payload '{"week":13}' --at 2999-01-01T00:00:00Z)
id=$(wq enqueue report --key weekly-12 --payload '{"week":12}')
run_worker "$T/ok.ini"
expect_eq "$(state_of "$id")" succeeded "state before the prune"

# defaults keep everything this young
out=$(wq prune --json)
expect_eq "$(json_field "$out" 'd["tasks"]')" 0 "tasks pruned with the defaults"
expect_eq "$(json_field "$out" '(d["task_retention"], d["operation_retention"])')" "('3d', '7d')" "default retentions"

# task rows go, the operation record stays
out=$(wq prune --task-retention 1ms --operation-retention 1h --json)
expect_eq "$(json_field "$out" 'd["tasks"]')" 1 "tasks pruned"
expect_eq "$(json_field "$out" 'd["operations"]')" 0 "operations pruned inside their window"
expect_exit 4 wq show "$id"
expect_eq "$(count)" 1 "tasks left (the pending one)"
# the pruned task had the highest id: it is never handed out again
other=$(wq enqueue report --payload '{"week":12}' --at 2999-01-01T00:00:00Z)
[ "$other" -gt "$id" ] || fail "task id $other handed out again after $id was pruned"

expect_exit 0 wq enqueue report --key weekly-12 --payload '{ "week": 12.0 }' --json
out=$(cat "$T/last.out")
expect_eq "$(json_field "$out" 'd["replayed"]')" True "replay after the task was pruned"
expect_eq "$(json_field "$out" 'd["id"]')" "$id" "the original id"
expect_eq "$(count)" 2 "tasks after the replay"
expect_exit 3 wq enqueue report --key weekly-12 --payload '{"week":13}'
grep -q "weekly-12" "$T/last.err" || fail "conflict message: $(cat "$T/last.err")"
expect_eq "$(count)" 2 "tasks after the conflict"
expect_exit 4 wq timeline weekly-12
grep -q "pruned" "$T/last.err" || fail "timeline of a pruned task: $(cat "$T/last.err")"

# past the operation window the protection is gone: the key is free
out=$(wq prune --task-retention 1ms --operation-retention 1ms --json)
expect_eq "$(json_field "$out" 'd["operations"]')" 1 "operations pruned after their window"
out=$(wq enqueue report --key weekly-12 --payload '{"week":13}' --json)
expect_eq "$(json_field "$out" 'd["replayed"]')" False "replayed after the operation expired"
[ "$(json_field "$out" 'd["id"]')" != "$id" ] || fail "the expired operation's id came back"

# a task that is not finished keeps its operation, whatever the retention
expect_eq "$(state_of "$held")" pending "the held task"
expect_eq "$(json_field "$(wq enqueue report --key held-1 --payload '{"week":13}' --json)" 'd["replayed"]')" True "replay of a pending task after prunes"

# refused: operation retention shorter than task retention
expect_exit 2 wq prune --task-retention 2d --operation-retention 1d
grep -q "shorter than task retention" "$T/last.err" || fail "refusal message: $(cat "$T/last.err")"
expect_exit 2 wq prune --task-retention 10d
expect_exit 2 wq prune --task-retention 0s
expect_exit 2 wq prune --task-retention soon

# the config's [retention] section, overridden by the command line
config "$T/ret.ini" <<EOF
[retention]
tasks = 1ms
operations = 1h
[kind.report]
command = sh $HANDLERS/handler.sh ok
EOF
out=$(wq prune --config "$T/ret.ini" --json)
expect_eq "$(json_field "$out" '(d["task_retention"], d["operation_retention"])')" "('1ms', '1h')" "retentions from the config"
out=$(wq prune --config "$T/ret.ini" --operation-retention 2h --json)
expect_eq "$(json_field "$out" 'd["operation_retention"]')" 2h "command line over the config"
config "$T/bad.ini" <<EOF
[retention]
tasks = 2d
operations = 1d
[kind.report]
command = sh $HANDLERS/handler.sh ok
EOF
expect_exit 2 wq prune --config "$T/bad.ini"
grep -q "retention" "$T/last.err" || fail "config refusal: $(cat "$T/last.err")"

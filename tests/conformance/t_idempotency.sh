# SPEC §6 operations: identity (tenant, scope, kind, key), fingerprint over the canonical
# payload and its version. Same key and input (keys in another order, other white space,
# 1.0 for 1) → exit 0, the same task, "replayed": true, a `replayed` event, nothing new.
# Other input or payload version → exit 3 with one line naming the key, nothing new.
# The same key under another tenant, scope or kind is another operation. The timeline
# finds an operation by its key and never merges two of them.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
count() { json_field "$(wq list --json --limit 1000)" 'len(d)'; }
enq() { wq enqueue "$@" --json; }

out=$(enq mail --key order-7 --tenant acme --scope agent-1 \
	--payload '{"to":"a@example.org","items":[1,2.0,{"b":true,"a":null}],"n":1}')
id=$(json_field "$out" 'd["id"]')
expect_eq "$(json_field "$out" 'd["replayed"]')" False "first enqueue replayed"
expect_eq "$(json_field "$out" 'd["operation"]')" order-7 "operation"
fp=$(json_field "$out" 'd["fingerprint"]')

# the same input written differently
printf '{ "n" : 1.0,\n  "items": [1, 2, {"a": null, "b": true}],\n  "to": "a@example.org" }\n' >"$T/same.json"
expect_exit 0 wq enqueue mail --key order-7 --tenant acme --scope agent-1 --payload @"$T/same.json" --json
out=$(cat "$T/last.out")
expect_eq "$(json_field "$out" 'd["id"]')" "$id" "replayed id"
expect_eq "$(json_field "$out" 'd["replayed"]')" True "replayed flag"
expect_eq "$(json_field "$out" 'd["fingerprint"]')" "$fp" "fingerprint of the replay"
expect_eq "$(json_field "$out" 'd["state"]')" pending "state of the replayed task"
expect_eq "$(wq enqueue mail --key order-7 --tenant acme --scope agent-1 --payload @"$T/same.json")" "$id" "plain output of a replay"
expect_eq "$(count)" 1 "tasks after two replays"
expect_eq "$(wq timeline "$id" --json | python3 -c 'import json,sys; print(sum(e["type"]=="replayed" for e in json.load(sys.stdin)["events"]))')" 2 "replayed events"

# changed input: refused, one line naming the key, nothing created
expect_exit 3 wq enqueue mail --key order-7 --tenant acme --scope agent-1 --payload '{"to":"b@example.org","items":[1,2,{"a":null,"b":true}],"n":1}'
expect_eq "$(wc -l <"$T/last.err" | tr -d ' ')" 1 "lines of the conflict message"
grep -q "operation key 'order-7'" "$T/last.err" || fail "conflict message does not name the key: $(cat "$T/last.err")"
grep -q "different input" "$T/last.err" || fail "conflict message does not say the input differs: $(cat "$T/last.err")"
grep -q "b@example.org" "$T/last.err" && fail "conflict message shows the payload"
expect_eq "$(cat "$T/last.out")" "" "stdout of a conflict"
# the same payload under another payload version is other input too
expect_exit 3 wq enqueue mail --key order-7 --tenant acme --scope agent-1 --payload @"$T/same.json" --payload-version 2
expect_eq "$(count)" 1 "tasks after two conflicts"
wq timeline "$id" | grep -q "conflict " || fail "no conflict event on the timeline"
wq show "$id" --json >"$T/show.json"
expect_eq "$(json_field "$(cat "$T/show.json")" 'd["keyed"]')" True "keyed"
expect_eq "$(json_field "$(cat "$T/show.json")" 'd["fingerprint"]')" "$fp" "fingerprint in show"

# another tenant, scope or kind: other operations
for args in "mail --tenant other --scope agent-1" "mail --tenant acme --scope agent-2" \
	"sms --tenant acme --scope agent-1" "mail"; do
	# shellcheck disable=SC2086
	out=$(wq enqueue $args --key order-7 --payload '{"other":"input"}' --json)
	expect_eq "$(json_field "$out" 'd["replayed"]')" False "replayed for $args"
	[ "$(json_field "$out" 'd["id"]')" != "$id" ] || fail "$args reused task $id"
done
expect_eq "$(count)" 5 "tasks after four other identities"

# without a key: a generated operation id each time, never a replay
g1=$(enq mail --payload '{"x":1}'); g2=$(enq mail --payload '{"x":1}')
[ "$(json_field "$g1" 'd["id"]')" != "$(json_field "$g2" 'd["id"]')" ] || fail "unkeyed enqueues share a task"
[ "$(json_field "$g1" 'd["operation"]')" != "$(json_field "$g2" 'd["operation"]')" ] || fail "unkeyed enqueues share an operation id"
case "$(json_field "$g1" 'd["operation"]')" in op_*) ;; *) fail "generated operation id: $g1" ;; esac
expect_eq "$(json_field "$(wq show "$(json_field "$g1" 'd["id"]')" --json)" 'd["keyed"]')" False "keyed of a generated operation"

# the timeline by key: the operation's identity, never a similar one
wq timeline order-7 --tenant acme --scope agent-1 --kind mail --json >"$T/tl.json"
tl=$(cat "$T/tl.json")
expect_eq "$(json_field "$tl" 'd["task"]["id"]')" "$id" "timeline by key"
expect_eq "$(json_field "$tl" 'd["operation"]["id"]')" order-7 "operation id in the timeline"
expect_eq "$(json_field "$tl" 'd["operation"]["fingerprint"]')" "$fp" "fingerprint in the timeline"
expect_eq "$(json_field "$tl" 'd["operation"]["tenant"]')" acme "tenant in the timeline"
expect_eq "$(json_field "$tl" 'd["operation"]["scope"]')" agent-1 "scope in the timeline"
expect_eq "$(json_field "$tl" 'd["operation"]["payload_version"]')" 1 "payload version in the timeline"
wq timeline order-7 --tenant acme --scope agent-1 --kind mail >"$T/tl.txt"
grep -q "^operation: *order-7 (key)" "$T/tl.txt" || fail "timeline header: $(head -n 3 "$T/tl.txt")"
grep -q "^fingerprint: *$fp, payload version 1" "$T/tl.txt" || fail "timeline fingerprint line"
# in the default tenant and scope, order-7 exists for one kind only
expect_eq "$(json_field "$(wq timeline order-7 --json)" 'd["operation"]["tenant"]')" "" "default tenant"
# several kinds: ambiguous without --kind (exit 2, naming them)
wq enqueue sms --key order-7 --payload '{}' >/dev/null
expect_exit 2 wq timeline order-7
grep -q "mail, sms" "$T/last.err" || fail "ambiguity message does not list the kinds: $(cat "$T/last.err")"
expect_exit 0 wq timeline order-7 --kind sms
expect_exit 4 wq timeline order-8
expect_exit 4 wq timeline order-7 --tenant nobody

# similar names are different operations; a numeric key is found with --kind
r1=$(wq enqueue mail --key report --payload '{}'); r2=$(wq enqueue mail --key Report --payload '{}')
r3=$(wq enqueue mail --key "report " --payload '{}'); n1=$(wq enqueue mail --key 42 --payload '{}')
expect_eq "$(json_field "$(wq timeline report --json)" 'd["task"]["id"]')" "$r1" "timeline of 'report'"
expect_eq "$(json_field "$(wq timeline Report --json)" 'd["task"]["id"]')" "$r2" "timeline of 'Report'"
expect_eq "$(json_field "$(wq timeline 'report ' --json)" 'd["task"]["id"]')" "$r3" "timeline of 'report '"
expect_eq "$(json_field "$(wq timeline 42 --kind mail --json)" 'd["task"]["id"]')" "$n1" "timeline of key 42"
expect_eq "$(json_field "$(wq timeline "$r1" --json)" 'd["operation"]["id"]')" report "timeline by id"
exit 0

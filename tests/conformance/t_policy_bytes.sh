# [limits] max_payload_bytes and max_result_bytes per (tenant, scope) (issue 10).
# t_payload_limit.sh covers the fixed 1 MiB ceiling (bad input, exit 2); this is the
# configured limit: an enqueue beyond it exits 5 naming the limit, its value, its section,
# the tenant and the scope, and writes nothing; a result beyond the tenant's
# max_result_bytes fails the attempt (result-too-large, the limit named) and is not
# stored, never cut.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF
[kind.big]
command = sh $HANDLERS/handler.sh big 300
[limits]
max_payload_bytes = 100
[limits.acme]
max_payload_bytes = 20
max_result_bytes = 200
EOF
count() { json_field "$(wq list --json --limit 1000)" 'len(d)'; }
# json_string BYTES: a JSON document of exactly BYTES bytes
json_string() { printf '"'; head -c $(($1 - 2)) /dev/zero | tr '\0' a; printf '"'; }

expect_exit 0 wq enqueue big --config "$T/w.ini" --payload "$(json_string 100)"
expect_exit 5 wq enqueue big --config "$T/w.ini" --payload "$(json_string 101)" --key k1
grep -q "max_payload_bytes = 100 (\[limits\]) for tenant '' scope '': the payload is 101 bytes" \
	"$T/last.err" || fail "message: $(cat "$T/last.err")"
expect_exit 5 wq enqueue big --config "$T/w.ini" --tenant acme --scope s1 \
	--payload "$(json_string 21)"
grep -q "max_payload_bytes = 20 (\[limits.acme\]) for tenant 'acme' scope 's1'" \
	"$T/last.err" || fail "message: $(cat "$T/last.err")"
expect_eq "$(count)" 1 "tasks after the refused enqueues (nothing written)"
# the refused key was not taken: the same key with a payload in bounds is a new task
expect_exit 0 wq enqueue big --config "$T/w.ini" --key k1 --payload '"small"'
expect_exit 0 wq enqueue big --config "$T/w.ini" --tenant acme --payload "$(json_string 20)"
# without the configuration there is no configured limit
expect_exit 0 wq enqueue big --tenant acme --payload "$(json_string 500)"

run_worker "$T/w.ini"
# acme's results (300 bytes) are beyond its max_result_bytes = 200: failed, not stored
expect_eq "$(json_field "$(wq list --state failed --json)" 'len(d)')" 2 "acme tasks failed"
for id in $(json_field "$(wq list --state failed --json)" '" ".join(str(t["id"]) for t in d)'); do
	expect_eq "$(field_of "$id" reason)" result-too-large "reason"
	field_of "$id" reason_detail | grep -q 'stdout was 300 bytes; max_result_bytes (\[limits.acme\]) is 200 bytes' \
		|| fail "detail: $(field_of "$id" reason_detail)"
	expect_eq "$(field_of "$id" result)" None "a refused result is not stored"
	wq timeline "$id" | grep -q 'result-too-large' || fail "timeline lacks the limit"
done
# the default tenant has no max_result_bytes, only result_max: stored in full
expect_eq "$(json_field "$(wq list --state succeeded --json)" 'len(d)')" 2 "default tenant succeeded"

# An oversize payload is bad input (exit 2, one line with the limit) however large it is
# and however it is given (@FILE or stdin): just above the 1 MiB limit and just above
# 64 MiB (where the CLI used to stop reading with exit 1). Exactly the limit is accepted.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
LIMIT=1048576
# json_string FILE BYTES: a valid JSON document of exactly BYTES bytes (one long string)
json_string() { { printf '"'; head -c $(($2 - 2)) /dev/zero | tr '\0' a; printf '"'; } >"$1"; }
count() { json_field "$(wq list --json --limit 1000)" 'len(d)'; }
names_limit() {
	[ "$(wc -l <"$T/last.err")" -eq 1 ] || fail "error is not one line: $(cat "$T/last.err")"
	grep -q "$LIMIT" "$T/last.err" || fail "error does not give the limit: $(cat "$T/last.err")"
}

json_string "$T/limit.json" $LIMIT
expect_exit 0 wq enqueue wake --payload @"$T/limit.json"

json_string "$T/over.json" $((LIMIT + 1))
expect_exit 2 wq enqueue wake --payload @"$T/over.json"
names_limit
grep -q "over.json" "$T/last.err" || fail "error does not name the file: $(cat "$T/last.err")"
expect_exit 2 sh -c "exec '$WQ' enqueue wake --payload - <'$T/over.json'"
names_limit

json_string "$T/huge.json" $((64 * 1024 * 1024 + 1))
expect_exit 2 wq enqueue wake --payload @"$T/huge.json"
names_limit
expect_exit 2 sh -c "exec '$WQ' enqueue wake --payload - <'$T/huge.json'"
names_limit
rm -f "$T/huge.json"

expect_eq "$(count)" 1 "tasks after the oversize payloads"

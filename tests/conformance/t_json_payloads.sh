# Every RFC 8259 document is a payload (SPEC §6): integers beyond 64 bits keep all their
# digits in the fingerprint (two payloads that differ only in a digit beyond 2^64 are
# other input), "\u0000" in a string is accepted, and the handler receives the payload
# exactly as given. Invalid JSON is still refused with its position.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
big='{"n":123456789012345678901234567890,"m":[18446744073709551616]}'

expect_exit 0 wq enqueue wake --key big --payload "$big" --json
out=$(cat "$T/last.out")
id=$(json_field "$out" 'd["id"]')
fp=$(json_field "$out" 'd["fingerprint"]')
# the same numbers written otherwise: a replay
expect_exit 0 wq enqueue wake --key big --payload '{ "m" : [ 18446744073709551616 ], "n" : 123456789012345678901234567890 }' --json
expect_eq "$(json_field "$(cat "$T/last.out")" 'd["replayed"]')" True "replay of a big-integer payload"
expect_eq "$(json_field "$(cat "$T/last.out")" 'd["fingerprint"]')" "$fp" "fingerprint of the replay"
# one digit beyond 2^64 differs: another input (a double would have hidden it)
expect_exit 3 wq enqueue wake --key big --payload '{"n":123456789012345678901234567891,"m":[18446744073709551616]}'
expect_exit 3 wq enqueue wake --key big --payload '{"n":123456789012345678901234567890,"m":[18446744073709551617]}'

expect_exit 0 wq enqueue wake --key nul --payload '{"s":"a\u0000b"}' --json
nul_id=$(json_field "$(cat "$T/last.out")" 'd["id"]')
expect_exit 0 wq enqueue wake --payload '[1e400, "\udc00"]'

# the handler gets the bytes as given, digits and escapes included
config "$T/w.ini" <<EOF2
[kind.wake]
command = $HANDLERS/handler.sh echo
EOF2
run_worker "$T/w.ini"
expect_eq "$(wq result "$id")" "$big" "payload seen by the handler"
expect_eq "$(wq result "$nul_id")" '{"s":"a\u0000b"}' "payload with \\u0000 seen by the handler"

# still refused: invalid JSON, with its position; duplicate names
expect_exit 2 wq enqueue wake --payload '{"n":1e}'
grep -q "line 1, column" "$T/last.err" || fail "no position: $(cat "$T/last.err")"
expect_exit 2 wq enqueue wake --payload '{"a":1,"\u0061":2}'
grep -q "duplicate" "$T/last.err" || fail "duplicate names not named: $(cat "$T/last.err")"

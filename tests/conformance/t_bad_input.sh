# Bad input gets a one-line error naming what was wrong and the documented exit code
# (§17: 2 usage, 4 not found, 6 transition not allowed), and changes nothing.
. "$WAKEQ_TESTS/conformance/lib.sh"

# before init: a clear error that names `wakeq init`
expect_exit 1 wq list
grep -q "wakeq init" "$T/last.err" || fail "uninitialised store error does not mention wakeq init: $(cat "$T/last.err")"

wq init >/dev/null
one_line() { [ "$(wc -l <"$T/last.err")" -eq 1 ] || fail "error is not one line: $(cat "$T/last.err")"; }
nothing_created() { expect_eq "$(wq list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 0 "tasks after rejected input"; }

expect_exit 2 wq enqueue wake --payload '{"a": 1,}'
one_line; grep -q "line 1, column" "$T/last.err" || fail "JSON error lacks its position: $(cat "$T/last.err")"
printf '{\n  "a": [1, 2\n}\n' >"$T/bad.json"
expect_exit 2 wq enqueue wake --payload @"$T/bad.json"
grep -q "line 3" "$T/last.err" || fail "JSON error lacks its line: $(cat "$T/last.err")"
expect_exit 2 sh -c "printf 'nope' | '$WQ' enqueue wake --payload -"
expect_exit 2 wq enqueue wake --payload @"$T/missing.json"
grep -q "missing.json" "$T/last.err" || fail "error does not name the file"
expect_exit 2 wq enqueue wake --in 5x
grep -q "5x" "$T/last.err" || fail "bad duration not named"
expect_exit 2 wq enqueue wake --at tomorrow
expect_exit 2 wq enqueue wake --at 2026-01-01T00:00:00Z --in 5m
expect_exit 2 wq enqueue wake --priority high
expect_exit 2 wq enqueue wake --priority 5000
expect_exit 2 wq enqueue wake --max-attempts 0
expect_exit 2 wq enqueue "bad kind!"
expect_exit 2 wq enqueue
expect_exit 2 wq enqueue wake --frobnicate
nothing_created

expect_exit 2 wq list --state done
one_line; grep -q "unknown state 'done'" "$T/last.err" || fail "unknown state not named"
expect_exit 2 wq list --limit -3
expect_exit 2 wq frobnicate
expect_exit 2 wq show abc
expect_exit 4 wq show 424242
one_line
expect_exit 4 wq timeline 424242
expect_exit 4 wq resolve 424242 --retry

id=$(wq enqueue wake)
expect_exit 4 wq result "$id"
expect_exit 2 wq resolve "$id"
expect_exit 2 wq resolve "$id" --retry --failed
expect_exit 6 wq resolve "$id" --succeeded
one_line; grep -q "pending" "$T/last.err" || fail "refused transition does not name the current state"
expect_eq "$(state_of "$id")" pending "state after a refused resolve"

# worker configuration errors name the file and line, and nothing runs
expect_exit 2 wq worker --until-idle
printf '[worker]\nconcurrency = 2\nspeed = fast\n[kind.wake]\ncommand = /bin/true\n' >"$T/bad.ini"
expect_exit 2 wq worker --config "$T/bad.ini" --until-idle
grep -q "bad.ini:3" "$T/last.err" || fail "config error does not name the line: $(cat "$T/last.err")"
expect_eq "$(state_of "$id")" pending "state after a refused worker start"

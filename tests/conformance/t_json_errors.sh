# Issue 14: a command given --json reports an error as one JSON object on stderr,
# {"error", "message", "exit"}, the exit status the same as without --json.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
check() { # check EXIT NAME CMD...
	want=$1; name=$2; shift 2
	expect_exit "$want" "$@"
	python3 - "$T/last.err" "$want" "$name" <<'EOF2' || fail "stderr of $*: $(cat "$T/last.err")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
o = json.loads(lines[0])
assert set(o) == {"error", "message", "exit"}, o
assert o["exit"] == int(sys.argv[2]) and o["error"] == sys.argv[3] and o["message"], o
EOF2
}
check 4 not-found wq show 999 --json
check 2 usage wq list --state nosuch --json
check 2 usage wq retry --json
id=$(wq enqueue mail)
check 6 state wq retry "$id" --json
wq enqueue mail --key k --payload '{"a":1}' >/dev/null
check 3 conflict wq enqueue mail --key k --payload '{"a":2}' --json
# without --json: the plain line
expect_exit 4 wq show 999
expect_eq "$(cat "$T/last.err")" "wakeq: no task 999" "plain error line"
exit 0

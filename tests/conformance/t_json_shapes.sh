# Issue 14: one JSON convention. A listing's --json is an array at the top level (empty:
# []), a report or a single thing is an object; documented in the README ("JSON output").
# Checked on an empty store and on one with a task, a lock, a paused kind and a schedule.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
# top KIND CMD...: the top-level JSON type of CMD's stdout is KIND (list or dict)
top() {
	want=$1; shift
	out=$("$WQ" "$@") || fail "$* exited $?"
	got=$(printf '%s' "$out" | python3 -c 'import json,sys; print(type(json.load(sys.stdin)).__name__)') \
		|| fail "$*: not JSON: $out"
	[ "$got" = "$want" ] || fail "$*: top level is $got, the convention says $want: $out"
}
check_all() {
	for c in list workers dead deliveries "inbox ops" "lock list" kinds "schedule list"; do
		# shellcheck disable=SC2086
		top list $c --json
	done
	top dict stats --json
	top dict doctor --json
	top dict prune --dry-run --json
}
check_all
id=$(wq enqueue k --key a)
wq lock acquire turn:1 --holder me --ttl 1h >/dev/null
wq pause k >/dev/null
wq schedule add nightly --every 1h k >/dev/null
check_all
top dict show "$id" --json
top dict timeline "$id" --json
top dict schedule show nightly --json
top dict enqueue k --key a --json
# the listings carry their rows
expect_eq "$(wq lock list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["key"])')" turn:1 "lock list row"
expect_eq "$(wq kinds --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["kind"])')" k "kinds row"
expect_eq "$(wq schedule list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["name"])')" nightly "schedule list row"
exit 0

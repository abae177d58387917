# Issue 14: list --tenant/--scope/--since/--until; a repeated --state or --kind means any
# of them.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
a=$(wq enqueue mail --tenant acme --scope eu)
b=$(wq enqueue mail --tenant acme --scope us)
c=$(wq enqueue sms --tenant other)
d=$(wq enqueue push)
wq cancel "$d" >/dev/null
ids() { wq list "$@" --json | python3 -c 'import json,sys; print(" ".join(str(t["id"]) for t in json.load(sys.stdin)))'; }
expect_eq "$(ids --tenant acme)" "$a $b" "--tenant"
expect_eq "$(ids --tenant acme --scope us)" "$b" "--tenant --scope"
expect_eq "$(ids --kind mail --kind push)" "$a $b $d" "two kinds"
expect_eq "$(ids --state cancelled --state pending --kind push --kind sms)" "$c $d" "two states, two kinds"
expect_eq "$(ids --state cancelled)" "$d" "one state"
expect_eq "$(ids --since 1h)" "$a $b $c $d" "--since a duration ago"
expect_eq "$(ids --until 1h)" "" "--until an hour ago"
expect_eq "$(ids --since 2000-01-01T00:00:00Z --until 2999-01-01T00:00:00Z --tenant other)" "$c" "--since/--until times"
expect_exit 2 wq list --since yesterday
expect_exit 2 wq list --state nosuch
expect_exit 2 wq list --since 2999-01-01T00:00:00Z --until 2000-01-01T00:00:00Z
wq list --tenant acme | grep -c "mail" | grep -q 2 || fail "text listing: $(wq list --tenant acme)"
exit 0

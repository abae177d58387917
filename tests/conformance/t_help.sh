# Issue 14: `wakeq help COMMAND`, `wakeq COMMAND --help` and `-h` print that command's
# usage, options, an example and its exit statuses, from one table. Every command's help
# differs from every other's, and every option it names is one its parser knows (the
# help and the parser cannot drift apart silently).
. "$WAKEQ_TESTS/conformance/lib.sh"

cmds="init enqueue list show result cancel resolve retry timeline effect prune doctor worker deliveries inbox dead bench stats workers help version"
for c in $cmds; do
	wq help "$c" >"$T/help.$c" || fail "help $c exited $?"
	wq "$c" --help >"$T/h2.$c" 2>&1 || [ "$c" = help ] || [ "$c" = version ] || fail "$c --help exited $?"
	case "$c" in help|version) ;; *)
		cmp -s "$T/help.$c" "$T/h2.$c" || fail "$c --help differs from help $c"
		wq "$c" -h >"$T/h3.$c" && cmp -s "$T/help.$c" "$T/h3.$c" || fail "$c -h";;
	esac
	grep -q "^usage: wakeq $c" "$T/help.$c" || fail "help $c: no usage line"
	grep -q "^example:" "$T/help.$c" || fail "help $c: no example"
	grep -q "^exit status: " "$T/help.$c" || fail "help $c: no exit statuses"
done
# all different
n=$(for c in $cmds; do md5sum <"$T/help.$c"; done | sort -u | wc -l)
expect_eq "$n" "$(echo $cmds | wc -w)" "distinct help texts"

# The options each parser accepts are named in its help...
need() { c=$1; shift; for o in "$@"; do grep -q -- "^  $o\\b" "$T/help.$c" || fail "help $c does not name $o"; done; }
need enqueue --payload --payload-version --tenant --scope --key --priority --at --in --max-attempts --notify --json
need list --state --kind --tenant --scope --since --until --limit --json
need retry --note --by --state --kind --tenant --since --dry-run --json
need resolve --retry --succeeded --failed --cancel --note --by --state --kind --tenant --since --dry-run
need cancel --state --kind --tenant --since --dry-run
need prune --task-retention --operation-retention --config --dry-run --json
need stats --json
need workers --json
need doctor --stuck-after --json
need worker --config --until-idle
need dead --json
# ... and every option a help names is known to that command's parser.
for c in $cmds; do
	grep -o '^  --[a-z-]*' "$T/help.$c" | sort -u | while read -r o; do
		[ "$o" = --help ] && continue
		"$WQ" --db "$T/no/such/dir/x.db" "$c" "$o" </dev/null >/dev/null 2>"$T/err" || true
		! grep -q "unknown option" "$T/err" || fail "help $c names $o, which $c does not know: $(cat "$T/err")"
	done
done
expect_exit 2 wq help nosuchcommand
wq help | grep -q "^  retry ID" || fail "the overview does not list retry"
exit 0

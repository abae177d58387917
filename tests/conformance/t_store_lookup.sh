# Issue 14: every command finds the store the same way (cli_store_url): --db URL, then
# $WAKEQ_DB, then the `db =` of --config FILE (else $WAKEQ_CONFIG), then ./wakeq.db.
# --config is common to every command, before or after the command word.
. "$WAKEQ_TESTS/conformance/lib.sh"

STORE=$WAKEQ_DB   # this backend's store, named only through the config below
cat >"$T/w.ini" <<CFG
[worker]
db = $STORE
[kind.k]
CFG
printf '[worker]\ndb = %s\n' "$T/other.db" >"$T/other.ini"
printf '[worker]\nconcurrency = 0\n' >"$T/bad.ini"
unset WAKEQ_DB
mkdir "$T/cwd"; cd "$T/cwd"   # ./wakeq.db would land here

wq --config "$T/w.ini" init >/dev/null
id=$(wq --config "$T/w.ini" enqueue k --payload '{"n":1}')
[ ! -e "$T/cwd/wakeq.db" ] || fail "the config's db was not used: ./wakeq.db was created"
# every reading and changing command through the config, flag after the command word
for c in list stats workers dead doctor kinds deliveries "lock list" "schedule list"; do
	# shellcheck disable=SC2086
	wq $c --config "$T/w.ini" >/dev/null || fail "$c --config exited $?"
done
expect_eq "$(json_field "$(wq show "$id" --config "$T/w.ini" --json)" 'd["state"]')" pending "show via --config"
# $WAKEQ_CONFIG
expect_eq "$(WAKEQ_CONFIG="$T/w.ini" wq show "$id" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')" "$id" "show via \$WAKEQ_CONFIG"
WAKEQ_CONFIG="$T/w.ini" wq cancel "$id" >/dev/null
expect_eq "$(WAKEQ_CONFIG="$T/w.ini" wq show "$id" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" cancelled "cancel via \$WAKEQ_CONFIG"
[ ! -e "$T/cwd/wakeq.db" ] || fail "\$WAKEQ_CONFIG's db was not used"
# --config beats $WAKEQ_CONFIG
WAKEQ_CONFIG="$T/w.ini" wq --config "$T/other.ini" init >/dev/null
[ -e "$T/other.db" ] || fail "--config did not win over \$WAKEQ_CONFIG"
# $WAKEQ_DB beats the config, --db beats $WAKEQ_DB
WAKEQ_DB="$T/env.db" wq --config "$T/w.ini" init >/dev/null
[ -e "$T/env.db" ] || fail "\$WAKEQ_DB did not win over the config"
WAKEQ_DB="$T/env.db" wq --db "$T/flag.db" --config "$T/w.ini" init >/dev/null
[ -e "$T/flag.db" ] || fail "--db did not win over \$WAKEQ_DB"
# neither: ./wakeq.db
wq init >/dev/null
[ -e "$T/cwd/wakeq.db" ] || fail "no ./wakeq.db by default"
# a broken config is a usage error naming it, unless --db or $WAKEQ_DB decides alone
expect_exit 2 wq --config "$T/bad.ini" list
grep -q "bad.ini" "$T/last.err" || fail "the error does not name the config: $(cat "$T/last.err")"
expect_exit 0 wq --config "$T/bad.ini" --db "$T/flag.db" list
expect_exit 2 wq --config "$T/nosuch.ini" list
exit 0

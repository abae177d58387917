# A store whose schema is newer than this binary is refused with a clear message naming
# both versions, by every command, including `init` (which never migrates backwards) and
# the worker; nothing is changed.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
id=$(wq enqueue wake)
case "$BACKEND" in
sqlite) python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("INSERT INTO schema_version (version) VALUES (999)"); c.commit()' "$WAKEQ_DB" ;;
postgres) psql -q "$WAKEQ_DB" -c "INSERT INTO schema_version (version) VALUES (999)" >/dev/null ;;
esac
for cmd in "list" "show $id" "init" "enqueue wake"; do
	# shellcheck disable=SC2086
	expect_exit 1 wq $cmd
	grep -q "999" "$T/last.err" || fail "'$cmd' does not name the store's version: $(cat "$T/last.err")"
	grep -q "newer" "$T/last.err" || fail "'$cmd' does not say the schema is newer: $(cat "$T/last.err")"
done
config "$T/w.ini" <<EOF
[kind.wake]
command = sh $HANDLERS/handler.sh ok
EOF
expect_exit 1 wq worker --config "$T/w.ini" --until-idle
grep -q "newer" "$T/last.err" || fail "the worker does not refuse the newer schema: $(cat "$T/last.err")"
expect_eq "$(lines "$T/runs")" 0 "handler starts"

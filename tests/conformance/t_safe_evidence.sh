# SPEC §14 safe evidence: a secret planted in a payload (and echoed into a result, and
# into an effect's recorded result) appears in no event, log line, list, show, timeline,
# doctor output or error message; sizes and fingerprints do. Only `wakeq result`, the
# explicit way to the body, shows it.
. "$WAKEQ_TESTS/conformance/lib.sh"

SECRET="sk-live-PLANTED-7f3a9c"
EFFECT_SECRET="receipt-PLANTED-51b2e0"
wq init >/dev/null
config "$T/echo.ini" <<EOF
[kind.summarize]
command = sh $HANDLERS/handler.sh echo
[kind.charge]
command = sh -c "\$WAKEQ_BIN effect begin charge >/dev/null; \$WAKEQ_BIN effect done charge --result $EFFECT_SECRET; cat"
EOF
config "$T/block.ini" <<EOF
[kind.summarize]
command = sh $HANDLERS/handler.sh block
EOF

payload="{\"api_key\":\"$SECRET\",\"headers\":{\"Authorization\":\"Bearer $SECRET\"},\"text\":\"hello\"}"
a=$(wq enqueue summarize --key doc-1 --payload "$payload")
c=$(wq enqueue charge --key charge-1 --payload "$payload")
run_worker "$T/echo.ini"
expect_eq "$(state_of "$a")" succeeded "state of the echo task"
expect_eq "$(state_of "$c")" succeeded "state of the effect task"
# the test is not vacuous: the bodies hold the secret
wq result "$a" 2>/dev/null | grep -q "$SECRET" || fail "the result does not hold the secret"

# a replay, a conflict, and an interrupted attempt (doctor lists it)
wq enqueue summarize --key doc-1 --payload "$payload" >/dev/null
expect_exit 3 wq enqueue summarize --key doc-1 --payload "{\"api_key\":\"$SECRET-2\"}"
cp "$T/last.err" "$T/conflict.err"
b=$(wq enqueue summarize --key doc-2 --payload "$payload")
start_worker w1 "$T/block.ini"
wait_until 30 test -f "$T/started.$b"
kill -KILL "$(cat "$T/started.$b")"
wait_until 30 state_is "$b" interrupted
kill -TERM "$(cat "$T/w1.pid")"
wait "$(cat "$T/w1.pid")" 2>/dev/null || true

{
	cat "$T/conflict.err" "$T/worker.log" "$T/w1.log"
	wq list; wq list --json; wq list --state interrupted
	for id in "$a" "$b" "$c"; do
		wq show "$id"; wq show "$id" --json; wq timeline "$id"; wq timeline "$id" --json
	done
	wq timeline doc-1; wq timeline charge-1 --json
	wq doctor || true; wq doctor --json || true
} >"$T/evidence.txt" 2>&1

for s in "$SECRET" "$EFFECT_SECRET" "Bearer" "hello"; do
	if grep -n "$s" "$T/evidence.txt" >"$T/leak.txt"; then
		fail "'$s' leaked: $(head -n 3 "$T/leak.txt")"
	fi
done
grep -q "payload_sha256" "$T/evidence.txt" || fail "no payload hash in the evidence"
grep -q "result_size" "$T/evidence.txt" || fail "no result size in the evidence"
grep -q "^interrupted task $b " "$T/evidence.txt" || fail "doctor did not list the interrupted task"

# every event row in the store, read directly
case "$BACKEND" in
sqlite)
	python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); [print(*r) for r in c.execute("SELECT type, detail FROM events")]' "$WAKEQ_DB" ;;
postgres)
	psql -qAt "$WAKEQ_DB" -c "SELECT type, detail FROM events" ;;
esac >"$T/events.txt"
[ -s "$T/events.txt" ] || fail "no events read from the store"
for s in "$SECRET" "$EFFECT_SECRET" "hello"; do
	grep -q "$s" "$T/events.txt" && fail "'$s' is in the events table"
done
grep -q "effect-done" "$T/events.txt" || fail "no effect-done event"
exit 0

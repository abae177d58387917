# A webhook URL's credentials (user:password) and query token never reach an error
# message, the worker's log, a delivery's last_error, the events or `doctor`: URLs are
# shown as scheme, host, port and path only.
. "$WAKEQ_TESTS/conformance/lib.sh"
. "$WAKEQ_TESTS/conformance/outbox-lib.sh"

wq init >/dev/null
URL="http://user:secret@127.0.0.1:9/hook?token=abc"  # port 9: nothing listens there
no_secret() { # FILE WHAT
	if grep -q -e secret -e "token=abc" -e "user:" "$1"; then
		fail "$2 shows the URL's credentials: $(cat "$1")"
	fi
}

# a configuration error next to the url, and in the url itself
config "$T/bad1.ini" <<EOF2
[channel.hook]
type = webhook
url = $URL
timeout = soon
[kind.wake]
command = /bin/true
EOF2
expect_exit 2 wq worker --config "$T/bad1.ini" --until-idle
grep -q "bad1.ini:10" "$T/last.err" || fail "config error does not name the line: $(cat "$T/last.err")"
no_secret "$T/last.err" "a config error next to the url"
for bad in "ftp://user:secret@127.0.0.1:9/hook?token=abc" "http://user:secret@127.0.0.1:9/a b?token=abc"; do
	config "$T/bad2.ini" <<EOF2
[channel.hook]
type = webhook
url = $bad
[kind.wake]
command = /bin/true
EOF2
	expect_exit 2 wq worker --config "$T/bad2.ini" --until-idle
	grep -q "bad2.ini:9: url:" "$T/last.err" || fail "url error not on its line: $(cat "$T/last.err")"
	no_secret "$T/last.err" "the error about a bad url"
done

# a delivery to that URL fails (nothing listens) and is dead after one attempt
config "$T/w.ini" <<EOF2
[channel.hook]
type = webhook
url = $URL
timeout = 2s
max_attempts = 1
[kind.wake]
command = sh $HANDLERS/handler.sh ok
EOF2
id=$(wq enqueue wake --notify webhook:hook)
run_worker "$T/w.ini"
expect_eq "$(delivery "$id" webhook:hook 'd["state"]')" dead "delivery state"
err=$(delivery "$id" webhook:hook 'd["last_error"]')
[ -n "$err" ] && [ "$err" != None ] || fail "the failed delivery has no last_error"
wq deliveries --json >"$T/deliveries.json"
no_secret "$T/deliveries.json" "wakeq deliveries"
wq dead --json >"$T/dead.json"
no_secret "$T/dead.json" "wakeq dead"
wq timeline "$id" --json >"$T/timeline.json"
no_secret "$T/timeline.json" "the timeline's events"
wq timeline "$id" >"$T/timeline.txt"
no_secret "$T/timeline.txt" "the timeline"
expect_exit 1 wq doctor
grep -q dead-delivery "$T/last.out" || fail "doctor does not report the dead delivery: $(cat "$T/last.out")"
no_secret "$T/last.out" "doctor"
no_secret "$T/last.err" "doctor's stderr"
expect_exit 1 wq doctor --json
no_secret "$T/last.out" "doctor --json"
no_secret "$T/worker.log" "the worker's log"

# Webhook receivers that misbehave (issue 15, faults): one that hangs, one that resets
# the connection, one that redirects (to another path, and to itself), one that answers
# bytes that are not HTTP. Each delivery is an honest failed attempt (the receiver saw
# exactly as many requests as the store counts attempts; the last error names what
# happened), retried with backoff up to max_attempts, then `dead`; a redirect is never
# followed (the landing path is never reached, a redirect to itself never loops); the
# tasks' results stay as they were (succeeded, stored, each handler started once); and
# while a delivery hangs the worker goes on running other tasks.
. "$WAKEQ_TESTS/conformance/lib.sh"
. "$WAKEQ_TESTS/conformance/outbox-lib.sh"

wq init >/dev/null
mkdir "$T/recv"
python3 "$HANDLERS/bad-receiver.py" "$T/recv" >"$T/recv.log" 2>&1 &
BG_PIDS="$BG_PIDS $!"
wait_until 30 test -s "$T/recv/port"
base="http://127.0.0.1:$(cat "$T/recv/port")"
{
	# the hang channel times out after 1 s; the others have time to see the answer even
	# on a loaded machine (a timeout there would hide what the receiver did)
	for m in hang reset redirect loop garbage; do
		to=10s; [ $m = hang ] && to=1s
		printf '[channel.%s]\ntype = webhook\nurl = %s/hooks/%s\ntimeout = %s\nmax_attempts = 3\nretry_backoff = 100ms\n' \
			"$m" "$base" "$m" "$to"
	done
	# a receiver that hangs for longer than this test waits on it
	printf '[channel.stuck]\ntype = webhook\nurl = %s/hooks/stuck/hang\ntimeout = 60s\nmax_attempts = 1\n' "$base"
} >"$T/channels.ini"
CONCURRENCY=2 config "$T/w.ini" <<EOF
$(cat "$T/channels.ini")
[kind.notify]
command = sh $HANDLERS/handler.sh ok
EOF
start_worker w "$T/w.ini"

# while a delivery hangs, other tasks run
stuck=$(wq enqueue notify --notify webhook:stuck)
seen() { grep -qx "$1" "$T/recv/requests"; }
wait_until 30 seen /hooks/stuck/hang
ids=""
for i in 1 2 3 4 5 6; do ids="$ids $(wq enqueue notify)"; done
for i in $ids; do wait_until 30 state_is "$i" succeeded; done
expect_eq "$(delivery "$stuck" webhook:stuck 'd["state"]')" sending "the hanging delivery while the other tasks ran"

for m in hang reset redirect loop garbage; do
	eval "t_$m=\$(wq enqueue notify --notify webhook:$m)"
done
dead_is() { delivery_state_is "$1" "webhook:$2" dead; }
for m in hang reset redirect loop garbage; do
	eval "id=\$t_$m"
	wait_until 40 dead_is "$id" "$m"
done

requests() { grep -c "^/hooks/$1\$" "$T/recv/requests" || true; }
for m in hang reset redirect loop garbage; do
	eval "id=\$t_$m"
	expect_eq "$(delivery "$id" "webhook:$m" 'd["attempts"]')" 3 "attempts of webhook:$m"
	expect_eq "$(requests "$m")" 3 "requests the $m receiver saw"
	expect_eq "$(event_count "$id" delivery-attempt)" 3 "delivery-attempt events of webhook:$m"
	expect_eq "$(event_count "$id" delivery-failed)" 2 "delivery-failed events of webhook:$m"
	expect_eq "$(event_count "$id" dead)" 1 "dead events of webhook:$m"
	expect_eq "$(state_of "$id")" succeeded "the task notifying webhook:$m"
	expect_eq "$(wq result "$id" 2>/dev/null)" "result of task $id" "the result of the task notifying webhook:$m"
	expect_eq "$(grep -c "^$id " "$T/runs")" 1 "handler starts of the task notifying webhook:$m"
	err=$(delivery "$id" "webhook:$m" 'd["last_error"]')
	echo "webhook:$m: $err" >&2
	case "$m:$err" in
	hang:*imeout* | hang:*imed\ out*) ;;
	reset:curl:*) ;;
	redirect:"HTTP 302" | loop:"HTTP 302") ;;
	garbage:curl:*) ;;
	*) fail "last error of webhook:$m does not say what happened: $err" ;;
	esac
done
expect_eq "$(grep -c "^/landing" "$T/recv/requests" || true)" 0 "requests that followed a redirect"
alive "$(cat "$T/w.pid")" || fail "the worker died"
kill -TERM "$(cat "$T/w.pid")"
wait_until 30 eval "! alive $(cat "$T/w.pid")"
echo ok

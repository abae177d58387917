# A handler started while a webhook delivery is in flight inherits none of the worker's
# sockets: libcurl does not open its sockets close-on-exec, so the worker makes it do so
# (issue 9, item 14). The receiver holds the request unanswered ("hang") while a handler
# lists its own descriptors; only 0, 1 and 2 may be sockets (libuv's stdio socketpairs).
. "$WAKEQ_TESTS/conformance/lib.sh"
. "$WAKEQ_TESTS/conformance/outbox-lib.sh"

wq init >/dev/null
start_hook "hang"
cat >"$T/fds.sh" <<'SH'
# lists this shell's descriptors as "<fd> <target>"
cat >/dev/null
# (no redirection around the loop: the shell would keep a copy of fd 1 meanwhile)
list=$(for f in /proc/$$/fd/*; do printf '%s %s\n' "${f##*/}" "$(readlink "$f")"; done)
printf '%s\n' "$list" >"$WAKEQ_TEST_DIR/fds.$WAKEQ_TASK_ID.tmp"
mv "$WAKEQ_TEST_DIR/fds.$WAKEQ_TASK_ID.tmp" "$WAKEQ_TEST_DIR/fds.$WAKEQ_TASK_ID"
echo listed
SH
config "$T/w.ini" <<EOF
[channel.ops]
type = webhook
url = $HOOK_URL
timeout = 60s
[kind.notifying]
command = sh $HANDLERS/handler.sh ok
[kind.fds]
command = sh $T/fds.sh
EOF

id=$(wq enqueue notifying --notify webhook:ops)
start_worker w "$T/w.ini"
wait_until 30 state_is "$id" succeeded
# the receiver got the POST and holds it: the worker's socket to it is open now
wait_until 30 has_requests 1
id2=$(wq enqueue fds)
wait_until 30 state_is "$id2" succeeded
expect_eq "$(delivery "$id" webhook:ops 'd["state"]')" sending "delivery still in flight"

cat "$T/fds.$id2" >&2
leaked=$(awk '$1 > 2 && $2 ~ /^socket:/' "$T/fds.$id2")
[ -z "$leaked" ] || fail "the handler inherited socket descriptor(s): $leaked"
# the listing itself is sound: stdin/stdout/stderr are there
grep -q "^1 " "$T/fds.$id2" || fail "no fd 1 in the handler's listing"

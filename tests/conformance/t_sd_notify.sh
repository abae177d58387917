# Issue 14: a worker under systemd (Type=notify) tells the service manager through
# $NOTIFY_SOCKET: READY=1 once registered and claiming, WATCHDOG=1 on each heartbeat
# when $WATCHDOG_USEC asks for it, STOPPING=1 when SIGTERM starts the drain. The test
# listens on the socket itself (a path, then an abstract name) instead of systemd.
. "$WAKEQ_TESTS/conformance/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is needed to listen on the socket"

wq init >/dev/null

# listen ADDRESS OUT: receives datagrams on ADDRESS (a path, or @name), appends each to
# OUT (one line per KEY=VALUE), touches OUT.up once bound.
listen() {
	python3 - "$1" "$2" <<'PY' &
import os, socket, sys
addr, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
open(out + ".up", "w").close()
while True:
    data = s.recv(4096).decode()
    with open(out, "a") as f:
        f.write(data.rstrip("\n") + "\n")
PY
	BG_PIDS="$BG_PIDS $!"
	wait_until 10 test -e "$2.up"
}
has() { grep -qx "$2" "$1" 2>/dev/null; }

run_case() {
	addr=$1; out=$2
	listen "$addr" "$out"
	id=$(wq enqueue slow)
	NOTIFY_SOCKET=$addr WATCHDOG_USEC=2000000 "$WQ" worker --config "$T/w.ini" >"$T/w.log" 2>&1 &
	wpid=$!
	BG_PIDS="$BG_PIDS $wpid"
	wait_until 20 has "$out" READY=1
	wait_until 20 test -e "$T/started.$id"     # claims after READY
	wait_until 20 has "$out" WATCHDOG=1
	! has "$out" STOPPING=1 || fail "STOPPING=1 before any stop request"
	kill -TERM "$wpid"
	wait_until 20 has "$out" STOPPING=1
	wait "$wpid" || true
	# READY came first, STOPPING last (watchdog pings go on while the drain lasts)
	expect_eq "$(head -n 1 "$out")" READY=1 "first notification"
	expect_eq "$(grep -v '^WATCHDOG=1$' "$out" | tail -n 1)" STOPPING=1 "last notification"
	expect_eq "$(state_of "$id")" interrupted "the blocked task after the drain"
}
DRAIN=200ms
config "$T/w.ini" <<EOF
[kind.slow]
command = sh $HANDLERS/handler.sh block
EOF
run_case "$T/notify.sock" "$T/n1"
run_case "@wakeq-test-$$-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')" "$T/n2"

# without $NOTIFY_SOCKET nothing is sent and nothing fails
env -u NOTIFY_SOCKET "$WQ" worker --config "$T/w.ini" --until-idle >/dev/null 2>&1 || true
exit 0

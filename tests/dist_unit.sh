# dist_unit.sh UNIT (issue 14): the systemd unit as configured for this build. It is a
# notify service whose stop timeout outlasts the worker's drain (drain_timeout + kill_grace
# at their defaults, 10s + 5s, plus bookkeeping), which signals the worker only
# (KillMode=mixed), and systemd-analyze finds nothing wrong with it beyond the binary not
# being installed yet.
set -eu
U=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
key() { sed -n "s/^$1=//p" "$U"; }
secs() { case $1 in *min) echo $(( ${1%min} * 60 )) ;; *s) echo "${1%s}" ;; *) echo "$1" ;; esac; }

[ "$(key Type)" = notify ] || fail "Type is '$(key Type)', not notify"
[ "$(key KillMode)" = mixed ] || fail "KillMode is '$(key KillMode)', not mixed"
[ "$(key NotifyAccess)" = main ] || fail "NotifyAccess is not main"
stop=$(secs "$(key TimeoutStopSec)")
[ "$stop" -gt $((10 + 5 + 5)) ] || fail "TimeoutStopSec=${stop}s does not outlast drain_timeout 10s + kill_grace 5s + 5s"
dog=$(secs "$(key WatchdogSec)")
[ "$dog" -ge 10 ] || fail "WatchdogSec=${dog}s is too close to the 2s heartbeat"
key ExecStart | grep -q '^/.*/wakeq worker --config /etc/wakeq/%i.ini$' || fail "ExecStart: $(key ExecStart)"
if command -v systemd-analyze >/dev/null 2>&1; then
	out=$(systemd-analyze verify "$U" 2>&1 || true)
	# An uninstalled build: the binary and the man pages are not in place yet.
	rest=$(printf '%s\n' "$out" | grep -v -e 'is not executable' -e "Command 'man " -e '^$' || true)
	[ -z "$rest" ] || fail "systemd-analyze verify: $rest"
fi
exit 0

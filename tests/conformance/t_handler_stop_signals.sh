# A handler that sends itself a terminal stop signal (SIGTSTP, SIGTTIN, SIGTTOU) runs on:
# it leads a session of its own, and the kernel discards those signals for a process
# group that no process outside it in its session could resume (an orphaned group).
# Regression (review): a handler kept in the worker's session (setpgid without setsid)
# was stopped, held its slot `running` until its runtime limit, and was recorded
# interrupted instead of succeeded.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
cat >"$T/selfstop.sh" <<'SH'
kill -"$1" $$
echo resumed
SH
CONCURRENCY=3 config "$T/w.ini" <<EOF
[kind.tstp]
command = sh $T/selfstop.sh TSTP
timeout = 120s
[kind.ttin]
command = sh $T/selfstop.sh TTIN
timeout = 120s
[kind.ttou]
command = sh $T/selfstop.sh TTOU
timeout = 120s
EOF
start_worker w "$T/w.ini"
wpid=$(cat "$T/w.pid")
for k in tstp ttin ttou; do
	id=$(wq enqueue "$k")
	wait_until 60 eval "state_is $id succeeded || state_is $id interrupted"
	expect_eq "$(field_of "$id" state)" succeeded "state of the $k handler"
done
alive "$wpid" || fail "the worker died"
kill -TERM "$wpid"
wait_until 30 eval "! alive $wpid"
echo ok

#!/bin/sh
# handler.sh MODE [ARG]: a command handler for the tests. Every start appends one line
# "<task id> <attempt id>" to $WAKEQ_TEST_DIR/runs: the handler's own side effect, which
# the tests count (never the database's claims).
#   ok          print a result naming the task, exit 0
#   exit N      exit with status N
#   block       write its pid to $WAKEQ_TEST_DIR/started.<task>, then block until killed
#   ignore-term like block, but ignore SIGTERM (only SIGKILL stops it)
#   echo        copy the payload from stdin to stdout
#   gate        mark started (pid) like block, wait for $WAKEQ_TEST_DIR/gate.<task>,
#               then print a result and exit 0
#   big N       print N bytes of result
#   nap SECONDS sleep that long, then print a result and exit 0
set -eu
dir=${WAKEQ_TEST_DIR:?}
echo "$WAKEQ_TASK_ID $WAKEQ_ATTEMPT_ID" >>"$dir/runs"
case "$1" in
ok)
	cat >/dev/null
	echo "result of task $WAKEQ_TASK_ID" ;;
exit)
	cat >/dev/null
	exit "$2" ;;
echo)
	cat ;;
gate)
	cat >/dev/null
	echo $$ >"$dir/started.$WAKEQ_TASK_ID"
	while [ ! -f "$dir/gate.$WAKEQ_TASK_ID" ]; do sleep 0.02; done
	echo "late result of task $WAKEQ_TASK_ID" ;;
nap)
	cat >/dev/null
	sleep "$2"
	echo "result of task $WAKEQ_TASK_ID" ;;
big)
	cat >/dev/null
	head -c "$2" /dev/zero | tr '\0' x ;;
block)
	cat >/dev/null
	echo $$ >"$dir/started.$WAKEQ_TASK_ID.tmp"
	mv "$dir/started.$WAKEQ_TASK_ID.tmp" "$dir/started.$WAKEQ_TASK_ID"
	exec sleep 600 ;;
ignore-term)
	cat >/dev/null
	trap '' TERM
	echo $$ >"$dir/started.$WAKEQ_TASK_ID.tmp"
	mv "$dir/started.$WAKEQ_TASK_ID.tmp" "$dir/started.$WAKEQ_TASK_ID"
	# a loop of short sleeps so that the ignored SIGTERM cannot end it
	while :; do sleep 1; done ;;
*)
	echo "handler.sh: unknown mode $1" >&2
	exit 2 ;;
esac

#!/bin/sh
# handler.sh MODE: the crash workload's command handler. Its evidence, appended by the
# handler itself (the checker trusts these, not the store):
#   $WAKEQ_TEST_DIR/runs     "<task> <attempt id>" at every start
#   $WAKEQ_TEST_DIR/effects  "<task> <attempt id> <name>" when the outside effect is done
#   fx     journaled effect: `wakeq effect begin mail`; only when new: the effect, then
#          `wakeq effect done`; prints a result
#   plain  a short piece of work (0.2 s); prints a result
#   quick  the same without the wait
#   mail   a Maildir source's message: "<task> <attempt id> <key>" into $WAKEQ_TEST_DIR/mail
set -u
dir=${WAKEQ_TEST_DIR:?}
echo "$WAKEQ_TASK_ID $WAKEQ_ATTEMPT_ID" >>"$dir/runs"
payload=$(cat)
case "$1" in
fx)
	out=$("${WAKEQ_BIN:?}" effect begin mail 2>/dev/null)
	st=$?
	if [ $st -eq 0 ]; then
		echo "$WAKEQ_TASK_ID $WAKEQ_ATTEMPT_ID mail" >>"$dir/effects"
		"$WAKEQ_BIN" effect done mail --result "sent by $WAKEQ_ATTEMPT_ID" >/dev/null 2>&1 || exit 1
		echo "sent"
	else
		# 10: done by an earlier attempt; 11: uncertain (the store keeps this attempt
		# from succeeding); anything else: the journal was not reached
		echo "not sent: $(echo "$out" | head -n 1) ($st)"
		[ $st -eq 10 ] || [ $st -eq 11 ] || exit 1
	fi ;;
quick)
	echo "done $WAKEQ_TASK_ID" ;;
mail)
	# a source message: its key (the Maildir unique name) into $dir/mail
	key=$(printf '%s' "$payload" | sed -n 's/.*"key": *"\([^"]*\)".*/\1/p')
	echo "$WAKEQ_TASK_ID $WAKEQ_ATTEMPT_ID ${key:-?}" >>"$dir/mail"
	echo "handled $key" ;;
plain)
	sleep 0.2 # long enough for a stop to find it running
	echo "done $WAKEQ_TASK_ID" ;;
*)
	echo "handler.sh: unknown mode $1" >&2
	exit 2 ;;
esac

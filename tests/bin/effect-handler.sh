#!/bin/sh
# effect-handler.sh MODE NAME: a command handler that performs one external effect NAME
# through the effect journal (`wakeq effect begin/done`). The effect itself is one line
# "<idempotency key> <attempt id>" appended to $WAKEQ_TEST_DIR/effects: the file the test
# owns and counts. Every start appends "<task> <attempt>" to $WAKEQ_TEST_DIR/runs, and the
# journal's answer to `begin` goes to $WAKEQ_TEST_DIR/answers ("<attempt id> <answer>").
#   send        the shell idiom: begin; only when new, do the effect and confirm it
#               (result "sent by <attempt id>"); print what happened, exit 0 — also after
#               `uncertain`, so the store alone must keep the attempt from succeeding
#   begin-block begin, do the effect, then block (killed before `done`)
#   done-block  begin, do the effect, confirm it, then block (killed after `done`)
#   begin-term  begin, do the effect, then wait; on SIGTERM exit 75 ("stopped cleanly"),
#               leaving the effect unconfirmed
# Blocking modes write their pid to $WAKEQ_TEST_DIR/started.<task> first.
set -u
dir=${WAKEQ_TEST_DIR:?}
wq=${WAKEQ_BIN:?}
mode=$1
name=$2
key="$WAKEQ_OPERATION:$name" # what an outside API would get as its idempotency key
echo "$WAKEQ_TASK_ID $WAKEQ_ATTEMPT_ID" >>"$dir/runs"
cat >/dev/null

begin() {
	out=$("$wq" effect begin "$name")
	status=$?
	echo "$WAKEQ_ATTEMPT_ID $(echo "$out" | head -n 1) $status" >>"$dir/answers"
	return $status
}

effect() { echo "$key $WAKEQ_ATTEMPT_ID" >>"$dir/effects"; }

block() {
	echo $$ >"$dir/started.$WAKEQ_TASK_ID.tmp"
	mv "$dir/started.$WAKEQ_TASK_ID.tmp" "$dir/started.$WAKEQ_TASK_ID"
	exec sleep 600
}

case "$mode" in
send)
	if begin; then
		effect
		"$wq" effect done "$name" --result "sent by $WAKEQ_ATTEMPT_ID" || exit 1
		echo "sent"
	else
		echo "not sent: $(echo "$out" | head -n 1)"
	fi ;;
begin-block)
	begin || exit 1
	effect
	block ;;
done-block)
	begin || exit 1
	effect
	"$wq" effect done "$name" --result "sent by $WAKEQ_ATTEMPT_ID" || exit 1
	block ;;
begin-term)
	begin || exit 1
	effect
	trap 'exit 75' TERM
	echo $$ >"$dir/started.$WAKEQ_TASK_ID.tmp"
	mv "$dir/started.$WAKEQ_TASK_ID.tmp" "$dir/started.$WAKEQ_TASK_ID"
	# short sleeps: the trap runs when the current one ends
	while :; do sleep 0.1; done ;;
*)
	echo "effect-handler.sh: unknown mode $mode" >&2
	exit 2 ;;
esac

#!/bin/sh
# turn-handler.sh: a handler for the turn-lock tests. The payload is {"key":"K"}; each run
# appends "start K TASK NANOS" and, after a short nap, "end K TASK NANOS" to
# $WAKEQ_TEST_DIR/turns (one short line per write: O_APPEND keeps lines whole).
set -eu
dir=${WAKEQ_TEST_DIR:?}
key=$(sed -n 's/.*"key" *: *"\([^"]*\)".*/\1/p')
echo "$WAKEQ_TASK_ID $WAKEQ_ATTEMPT_ID" >>"$dir/runs"
echo "start $key $WAKEQ_TASK_ID $(date +%s%N)" >>"$dir/turns"
sleep "${TURN_NAP:-0.15}"
echo "end $key $WAKEQ_TASK_ID $(date +%s%N)" >>"$dir/turns"
echo "turn of $key"

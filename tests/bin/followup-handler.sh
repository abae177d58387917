#!/bin/sh
# followup-handler.sh MODE [N]: a handler that asks for follow-ups (issue 10) by writing a
# JSON array to $WAKEQ_FOLLOWUPS. Every start appends "<task id> <attempt id>" to
# $WAKEQ_TEST_DIR/runs and its follow-ups file's path to $WAKEQ_TEST_DIR/fu-paths.
#   fan N   N follow-ups of kind leaf, keys k1..kN, payload {"i":I}
#   chain   one follow-up of kind chain (a chain that grows until the depth limit)
#   bad     a truncated array (malformed)
#   gate    like fan 3, then write its pid to started.<task> and wait for gate.<task>
set -eu
dir=${WAKEQ_TEST_DIR:?}
cat >/dev/null
echo "$WAKEQ_TASK_ID $WAKEQ_ATTEMPT_ID" >>"$dir/runs"
echo "$WAKEQ_FOLLOWUPS" >>"$dir/fu-paths"
fan() {
	i=1; out="["
	while [ "$i" -le "$1" ]; do
		[ "$i" -gt 1 ] && out="$out,"
		out="$out{\"kind\":\"leaf\",\"key\":\"k$i\",\"payload\":{\"i\":$i}}"
		i=$((i + 1))
	done
	printf '%s]\n' "$out" >"$WAKEQ_FOLLOWUPS"
}
case "$1" in
fan) fan "$2" ;;
chain) printf '[{"kind":"chain","payload":{"secret":"s3cr3t-fu"}}]' >"$WAKEQ_FOLLOWUPS" ;;
bad) printf '[{"kind":"leaf",' >"$WAKEQ_FOLLOWUPS" ;;
gate)
	fan 3
	echo $$ >"$dir/started.$WAKEQ_TASK_ID"
	while [ ! -f "$dir/gate.$WAKEQ_TASK_ID" ]; do sleep 0.02; done ;;
*) echo "followup-handler.sh: unknown mode $1" >&2; exit 2 ;;
esac
echo "done $WAKEQ_TASK_ID"

#!/bin/sh
# channel.sh fail-first N: a command channel for the tests. Each call appends
# "<delivery id> <channel> <WAKEQ_DB set?>" to $WAKEQ_TEST_DIR/pages.<channel name> and
# copies the notification (stdin) to $WAKEQ_TEST_DIR/page.<channel name>.<call>.json; the
# first N calls exit 1, later ones exit 0.
set -eu
dir=${WAKEQ_TEST_DIR:?}
name=${WAKEQ_CHANNEL#*:}
log="$dir/pages.$name"
n=0
[ -f "$log" ] && n=$(wc -l <"$log" | tr -d ' ')
n=$((n + 1))
cat >"$dir/page.$name.$n.json"
echo "$WAKEQ_DELIVERY_ID $WAKEQ_CHANNEL ${WAKEQ_DB:+db-set}" >>"$log"
case "$1" in
fail-first) [ "$n" -gt "$2" ] || exit 1 ;;
*) echo "channel.sh: unknown mode $1" >&2; exit 2 ;;
esac

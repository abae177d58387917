#!/bin/sh
# intake-handler.sh MODE: a command handler for the intake tests (issue 13). Every start
# appends "<task id> <attempt id> <unseen>" to $WAKEQ_TEST_DIR/runs, where <unseen> is
# whether the message was still unacknowledged at the source when this handout began
# (Maildir: its file is where the payload says; IMAP: its UID is in UID SEARCH UNSEEN,
# asked with the curl CLI, an independent client).
#   ok        exit 0
#   byhead    exit 3 (discarded) when the subject contains "discard", else 0
#   retry     exit 75 (try again later)
#   mixed     exit 75 on odd handouts, 1 on even ones (any failure comes back)
set -eu
dir=${WAKEQ_TEST_DIR:?}
payload=$(cat)
field() { printf '%s' "$payload" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
unseen=no
if [ "$(field 'd.get("path", "")')" != "" ]; then
	[ -f "$(field 'd["path"]')" ] && unseen=yes
else
	uid=$(field 'd["uid"]')
	printf 'user = "%s:%s"\n' "$INTAKE_IMAP_USER" "$(cat "$INTAKE_IMAP_SECRET")" >"$dir/handler-curl.$$"
	if curl -s --max-time 20 -K "$dir/handler-curl.$$" "$INTAKE_IMAP_URL" -X "UID SEARCH UNSEEN" |
		tr -d '\r' | sed -n 's/^\* SEARCH//p' | tr ' ' '\n' | grep -qx "$uid"; then
		unseen=yes
	fi
	rm -f "$dir/handler-curl.$$"
fi
echo "$WAKEQ_TASK_ID $WAKEQ_ATTEMPT_ID $unseen" >>"$dir/runs"
case "$1" in
ok) exit 0 ;;
byhead)
	case "$(field 'd["headers"]["subject"]')" in
	*discard*) exit 3 ;;
	*) exit 0 ;;
	esac ;;
retry) exit 75 ;;
mixed) [ $(($(wc -l <"$dir/runs") % 2)) -eq 1 ] && exit 75 || exit 1 ;;
*) echo "unknown mode $1" >&2; exit 2 ;;
esac

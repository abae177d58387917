# Command handlers are exec'd directly, without a helper program (issue 11): the handler
# process is the worker's own child, leads its own session and process group, inherits
# only stdin, stdout and stderr, and starts with no signal blocked or ignored — not even
# glibc's reserved 32 and 33 when the worker itself was started with them ignored (as
# under a CI runner: tests/bin/ignore_reserved.c). A handler
# whose exec fails (its interpreter is missing) still ends failed, spawn-failed, with the
# program and the reason in the detail, and nothing runs. The payload reaches stdin whole,
# then EOF, both when it is small enough to be written before the handler starts
# (<= PIPE_BUF) and when the loop writes it (larger, here 200 KB: more than a pipe holds).
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
printf '#!/nonexistent/interpreter\n' >"$T/unstartable"
chmod +x "$T/unstartable"
config "$T/w.ini" <<EOF
[kind.fds]
command = ls /proc/self/fd
[kind.ids]
command = cut -d " " -f 1,4-6 /proc/self/stat
[kind.mask]
command = grep -E "^Sig(Blk|Ign)" /proc/self/status
[kind.unstartable]
command = $T/unstartable
[kind.stdin]
command = sha256sum
[kind.fupath]
command = printenv WAKEQ_FOLLOWUPS
EOF
python3 -c 'import json; print(json.dumps({"s": "x" * 4000}), end="")' >"$T/small.json"
python3 -c 'import json; print(json.dumps({"s": "y" * 200000}), end="")' >"$T/large.json"
small=$(wq enqueue stdin --payload @"$T/small.json")
large=$(wq enqueue stdin --payload @"$T/large.json")
empty=$(wq enqueue stdin --payload '""')
fupath=$(wq enqueue fupath)
fds=$(wq enqueue fds)
ids=$(wq enqueue ids)
mask=$(wq enqueue mask)
bad=$(wq enqueue unstartable)
# (without TMPDIR: the follow-ups file's default directory)
printf '#!/bin/sh\nunset TMPDIR\nexec "%s" "%s" "$@"\n' "$WAKEQ_TEST_IGNORE_RESERVED" "$WQ" >"$T/wq-ign"
chmod +x "$T/wq-ign"
WQ="$T/wq-ign" start_worker w "$T/w.ini"
wpid=$(cat "$T/w.pid")
for id in $fds $ids $mask $small $large $empty $fupath; do wait_until 30 state_is "$id" succeeded; done
wait_until 30 state_is "$bad" failed

# ls's own descriptors: the three pipes and the directory it reads, nothing else
expect_eq "$(wq result "$fds" 2>/dev/null | tr '\n' ' ')" "0 1 2 3 " "descriptors of the handler"
# pid, parent, process group, session
set -- $(wq result "$ids" 2>/dev/null)
expect_eq "$2" "$wpid" "the handler's parent (no process in between)"
expect_eq "$3" "$1" "the handler's process group (its own)"
expect_eq "$4" "$1" "the handler's session (its own)"
blocked=$(wq result "$mask" 2>/dev/null)
echo "$blocked" | grep -q "^SigBlk:[[:space:]]*0*$" || fail "signals blocked in the handler: $blocked"
echo "$blocked" | grep -q "^SigIgn:[[:space:]]*0*$" || fail "signals ignored in the handler: $blocked"

# stdin: exactly the payload, then EOF (sha256sum returned), on either path
for f in small large; do
	id=$(eval echo "\$$f")
	expect_eq "$(wq result "$id" 2>/dev/null | cut -d " " -f 1)" \
		"$(sha256sum <"$T/$f.json" | cut -d " " -f 1)" "the $f payload on stdin"
done
expect_eq "$(wq result "$empty" 2>/dev/null | cut -d " " -f 1)" \
	"$(printf '""' | sha256sum | cut -d " " -f 1)" "a two-byte payload on stdin"

# the follow-ups file: in /dev/shm when that is a tmpfs (else /tmp), removed afterwards
fu=$(wq result "$fupath" 2>/dev/null)
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then dir=/dev/shm; else dir=/tmp; fi
case "$fu" in
"$dir"/wakeq-followups-"$fupath".1-*) ;;
*) fail "follow-ups file without TMPDIR: $fu (expected in $dir)" ;;
esac
[ ! -e "$fu" ] || fail "the follow-ups file $fu was left behind"

expect_eq "$(field_of "$bad" reason)" spawn-failed "reason of an exec failure"
detail=$(field_of "$bad" reason_detail)
case "$detail" in
*"$T/unstartable: No such file or directory"*) ;;
*) fail "the detail does not name the program and the reason: $detail" ;;
esac
expect_eq "$(field_of "$bad" attempts)" 1 "an exec failure is not retried"
alive "$wpid" || fail "the worker died"

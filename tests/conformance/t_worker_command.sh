# Issue 14: a worker refuses to start when a kind's command does not exist or is not
# executable: one error naming the config file and line, the kind and the command; it
# registers nothing and runs nothing.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF2
[kind.ok]
command = sh $HANDLERS/handler.sh ok
[kind.report]
command = $T/no-such-handler --fast
EOF2
id=$(wq enqueue ok)
line=$(grep -n '^\[kind.report\]' "$T/w.ini" | cut -d: -f1)
expect_exit 2 wq worker --config "$T/w.ini" --until-idle
grep -q "w.ini:$line: \[kind.report\] command: '$T/no-such-handler' does not exist or is not executable" "$T/last.err" ||
	fail "the error does not name the line, kind and command: $(cat "$T/last.err")"
expect_eq "$(state_of "$id")" pending "a refused worker ran a task"
expect_eq "$(wq workers)" "no worker instance is registered" "a refused worker registered"

# present but not executable
printf '#!/bin/sh\nexit 0\n' >"$T/no-such-handler"
chmod -x "$T/no-such-handler"
expect_exit 2 wq worker --config "$T/w.ini" --until-idle
grep -q "\[kind.report\] command: '$T/no-such-handler'" "$T/last.err" || fail "not executable: $(cat "$T/last.err")"
# a program looked up in PATH
config "$T/p.ini" <<EOF2
[kind.report]
command = wakeq-no-such-program
EOF2
expect_exit 2 wq worker --config "$T/p.ini" --until-idle
grep -q "\[kind.report\] command: 'wakeq-no-such-program' does not exist" "$T/last.err" || fail "PATH lookup: $(cat "$T/last.err")"

chmod +x "$T/no-such-handler"
run_worker "$T/w.ini"
expect_eq "$(state_of "$id")" succeeded "once the command is there"
exit 0

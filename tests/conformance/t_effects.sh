# SPEC §7, §18 restart between effect and confirmation. A handler that began its effect
# and was killed (with its worker) before confirming it → after the restart the task is
# `interrupted`, naming the effect; on `resolve --retry` the journal answers `uncertain`
# and the task goes back to `interrupted` (uncertain-effect), even though the handler
# exits 0. A handler whose effect reached `done` and was then killed gets `done` on the
# retry and does not repeat the effect. The effect is counted in a file the test owns.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/begin-block.ini" <<EOF
[kind.mail]
command = sh $HANDLERS/effect-handler.sh begin-block send-mail
EOF
config "$T/done-block.ini" <<EOF
[kind.mail]
command = sh $HANDLERS/effect-handler.sh done-block send-mail
EOF
config "$T/send.ini" <<EOF
[kind.mail]
command = sh $HANDLERS/effect-handler.sh send send-mail
EOF

# effects_of KEY: how often the effect with this idempotency key happened
effects_of() { if [ -f "$T/effects" ]; then grep -c "^$1 " "$T/effects" || true; else echo 0; fi; }
answer_of() { grep "^$1 " "$T/answers" | tail -n 1 | cut -d' ' -f2-; }

# kill_worker_during NAME CONFIG TASK: starts a worker, waits for the handler of TASK to
# block, SIGKILLs the worker and waits for the handler to die with it.
kill_worker_during() {
	start_worker "$1" "$2"
	wait_until 30 test -f "$T/started.$3"
	kill -KILL "$(cat "$T/$1.pid")"
	wait "$(cat "$T/$1.pid")" 2>/dev/null || true
	wait_until 10 eval "! alive $(cat "$T/started.$3")"
}

# --- killed between the effect and its confirmation ---------------------------------
a=$(wq enqueue mail --key mail-a --payload '{"to":"a@example.org"}')
kill_worker_during w1 "$T/begin-block.ini" "$a"
expect_eq "$(effects_of mail-a:send-mail)" 1 "effects after the first attempt"

run_worker "$T/send.ini" # recovery only: the task is not re-run
expect_eq "$(state_of "$a")" interrupted "state after the restart"
expect_eq "$(field_of "$a" reason)" worker-lost "reason after the restart"
expect_eq "$(field_of "$a" reason_detail)" "effect send-mail begun, not confirmed" "reason detail"
expect_eq "$(lines "$T/runs")" 1 "handler starts before the retry"

expect_exit 1 wq doctor
grep -q "^uncertain-effect task $a operation mail-a: effect send-mail begun by attempt $a.1" "$T/last.out" ||
	fail "doctor does not report the uncertain effect: $(cat "$T/last.out")"
grep -q "^interrupted task $a " "$T/last.out" || fail "doctor does not report the interrupted task"

wq resolve "$a" --retry --note "checking the outbox" >/dev/null
run_worker "$T/send.ini"
expect_eq "$(answer_of "$a.2")" "uncertain 11" "the journal's answer to the retry"
expect_eq "$(state_of "$a")" interrupted "state after the retry (the handler exited 0)"
expect_eq "$(field_of "$a" reason)" uncertain-effect "reason after the retry"
expect_eq "$(field_of "$a" reason_detail)" send-mail "reason detail after the retry"
expect_eq "$(effects_of mail-a:send-mail)" 1 "effects after the retry"
expect_eq "$(field_of "$a" result)" None "no result stored for an uncertain attempt"
grep -q "task $a attempt $a.2 interrupted: uncertain-effect send-mail" "$T/worker.log" ||
	fail "the worker log does not say what was recorded: $(tail -n 5 "$T/worker.log")"

# the policy on uncertain holds on every retry until a person decides otherwise
wq resolve "$a" --retry >/dev/null
run_worker "$T/send.ini"
expect_eq "$(field_of "$a" reason)" uncertain-effect "reason after a second retry"
expect_eq "$(effects_of mail-a:send-mail)" 1 "effects after a second retry"

wq timeline "$a" >"$T/tl-a.txt"
for line in "attempt $a.1  instance " "attempt $a.2  instance " "effect-begun " "effect-uncertain " \
	"claimed " "started " "interrupted "; do
	grep -q -- "$line" "$T/tl-a.txt" || fail "timeline of $a lacks '$line': $(cat "$T/tl-a.txt")"
done
grep "effect-uncertain" "$T/tl-a.txt" | grep -q "\"begun_in\":\"$a.1\"" || fail "effect-uncertain does not name the attempt that began it"
grep " interrupted " "$T/tl-a.txt" | grep -q '"handler_outcome":"succeeded"' || fail "the overridden outcome is not on the timeline"
# the retries got `uncertain`: they did not begin the effect, so it was begun once
expect_exit 1 wq doctor
grep -q "^effect-begun-twice task $a " "$T/last.out" &&
	fail "doctor reports an effect begun once as begun twice: $(cat "$T/last.out")"
grep -q "^uncertain-effect task $a operation mail-a: effect send-mail begun by attempt $a.1" "$T/last.out" ||
	fail "doctor does not report the uncertain effect after the retries: $(cat "$T/last.out")"

# an operator's decision answers the findings: doctor is clean again (exit 0)
wq resolve "$a" --succeeded --note "the mail is in the sent folder" >/dev/null
expect_exit 0 wq doctor
grep -q "^clean" "$T/last.out" || fail "doctor after the resolution: $(cat "$T/last.out")"

# --- killed after the confirmation --------------------------------------------------
b=$(wq enqueue mail --key mail-b --payload '{"to":"b@example.org"}')
kill_worker_during w2 "$T/done-block.ini" "$b"
run_worker "$T/send.ini"
expect_eq "$(state_of "$b")" interrupted "state of b after the restart"
expect_eq "$(field_of "$b" reason_detail)" None "reason detail of b (its effect was confirmed)"
wq resolve "$b" --retry >/dev/null
run_worker "$T/send.ini"
expect_eq "$(answer_of "$b.2")" "done 10" "the journal's answer for a confirmed effect"
expect_eq "$(state_of "$b")" succeeded "state of b after the retry"
expect_eq "$(effects_of mail-b:send-mail)" 1 "effects of b: not repeated"
wq result "$b" 2>/dev/null | grep -q "not sent: done" || fail "handler of b did not see 'done'"
wq timeline "$b" | grep -q "effect-skipped .*\"done_in\":\"$b.1\"" || fail "no effect-skipped event naming $b.1"

# --- a fresh effect: new, confirmed, succeeded ---------------------------------------
c=$(wq enqueue mail --key mail-c --payload '{"to":"c@example.org"}')
run_worker "$T/send.ini"
expect_eq "$(state_of "$c")" succeeded "state of c"
expect_eq "$(answer_of "$c.1")" "new 0" "the journal's answer for a new effect"
expect_eq "$(effects_of mail-c:send-mail)" 1 "effects of c"
wq timeline "$c" >"$T/tl-c.txt"
grep "effect-done" "$T/tl-c.txt" | grep -q '"result_size":' || fail "effect-done without its size"
grep -q "sent by" "$T/tl-c.txt" && fail "the effect's result text is on the timeline"

# --- the command outside a live attempt ----------------------------------------------
expect_exit 2 env -u WAKEQ_TASK_ID WAKEQ_ATTEMPT_ID="$c.1" "$WQ" effect begin x
grep -q "WAKEQ_TASK_ID" "$T/last.err" || fail "missing-variable message: $(cat "$T/last.err")"
expect_exit 2 env WAKEQ_TASK_ID="$c" WAKEQ_ATTEMPT_ID="$a.1" "$WQ" effect begin x
expect_exit 6 env WAKEQ_TASK_ID="$c" WAKEQ_ATTEMPT_ID="$c.1" "$WQ" effect begin x
grep -q "no longer owns task $c" "$T/last.err" || fail "stale message: $(cat "$T/last.err")"
expect_exit 6 env WAKEQ_TASK_ID="$c" WAKEQ_ATTEMPT_ID="$c.1" "$WQ" effect done send-mail
expect_exit 2 env WAKEQ_TASK_ID="$c" WAKEQ_ATTEMPT_ID="$c.1" "$WQ" effect begin 'bad name'
exit 0

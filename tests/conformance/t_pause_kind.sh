# wakeq pause KIND / resume KIND (issue 10): stored, obeyed by every worker's claim. A
# paused kind's tasks stay pending while other kinds run; resumed, they run.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF
[kind.slow]
command = sh $HANDLERS/handler.sh ok
[kind.fast]
command = sh $HANDLERS/handler.sh ok
EOF

expect_exit 0 wq pause slow
expect_eq "$(cat "$T/last.out")" "kind slow paused" "pause output"
expect_exit 0 wq kinds
grep -q "^slow paused since " "$T/last.out" || fail "kinds: $(cat "$T/last.out")"
expect_exit 2 wq pause "bad kind"

held=$(wq enqueue slow)
start_worker a "$T/w.ini"
start_worker b "$T/w.ini"
# the workers run other kinds meanwhile: two fast tasks enqueued after the paused one
f1=$(wq enqueue fast)
f2=$(wq enqueue fast)
wait_until 30 state_is "$f1" succeeded
wait_until 30 state_is "$f2" succeeded
expect_eq "$(state_of "$held")" pending "task of a paused kind"

expect_exit 0 wq resume slow
expect_eq "$(wq kinds)" "no kind is paused" "kinds after resume"
wait_until 30 state_is "$held" succeeded

kill -TERM "$(cat "$T/a.pid")" "$(cat "$T/b.pid")"
wait_until 30 eval "! alive $(cat "$T/a.pid") && ! alive $(cat "$T/b.pid")"

# a worker run --until-idle stops although a paused kind's task is pending: it is not due
# for anyone while the kind is paused
expect_exit 0 wq pause slow
held=$(wq enqueue slow)
run_worker "$T/w.ini"
expect_eq "$(state_of "$held")" pending "paused kind's task after an idle run"

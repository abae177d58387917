# Priorities (SPEC: a higher priority runs first; a priority is a head start of a minute
# per step, -1000..1000). Tasks due now with priorities -1000, 0 and 1000 run highest
# first on one slot, the lowest included: the claim bounds its walk by the lowest
# priority's head start (statements.h, WQ__ORDER_AFTER_DUE_MAX), which must not leave a
# due task of priority -1000 out. Tasks due in 10 and 20 hours stay pending.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
CONCURRENCY=1 config "$T/w.ini" <<EOF
[kind.wake]
command = sh $HANDLERS/handler.sh ok
EOF
soon=$(wq enqueue wake --in 10h --priority 1000)
far=$(wq enqueue wake --in 20h)
low=$(wq enqueue wake --priority -1000)
mid=$(wq enqueue wake)
high=$(wq enqueue wake --priority 1000)

start_worker w "$T/w.ini"
wait_until 60 state_is "$low" succeeded
expect_eq "$(awk '{ printf "%s ", $1 }' "$T/runs")" "$high $mid $low " "run order"
expect_eq "$(state_of "$soon")" pending "the task due in 10 hours"
expect_eq "$(state_of "$far")" pending "the task due in 20 hours"

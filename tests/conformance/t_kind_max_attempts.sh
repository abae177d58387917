# A kind's max_attempts overrides the task's (--max-attempts); `show` and `list` print the
# limit that applies once a worker claimed the task (before that, the task's own).
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF2
[kind.flaky]
command = sh $HANDLERS/handler.sh exit 75
max_attempts = 2
retry_backoff = 0s
EOF2

id=$(wq enqueue flaky --max-attempts 3)
wq show "$id" | grep -q "^max_attempts: *3$" || fail "before the first claim: $(wq show "$id")"
run_worker "$T/w.ini"
expect_eq "$(lines "$T/runs")" 2 "handler runs (the kind's limit)"
expect_eq "$(state_of "$id")" failed "state after two exits 75"
wq show "$id" | grep -q "^attempts: *2$" || fail "show: attempts: $(wq show "$id")"
wq show "$id" | grep -q "^max_attempts: *2$" || fail "show does not print the applied limit: $(wq show "$id")"
wq timeline "$id" | grep -q "^attempts: *2/2$" || fail "timeline does not print 2/2: $(wq timeline "$id")"
expect_eq "$(field_of "$id" max_attempts)" 2 "max_attempts in show --json"
wq list | grep "^ *$id " | grep -q " 2/2 " || fail "list does not print the applied limit: $(wq list)"
exit 0

# Issue 14: a kind with `keep_stderr = SIZE` stores the tail of a failed attempt's
# stderr with the attempt, shown only by `show|timeline ID --stderr` (labelled untrusted),
# never in listings or events (the log has its last line, as before); other kinds and
# successful attempts keep nothing; bytes that are not UTF-8 are stored as '?'.
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
cat >"$T/h.sh" <<'EOF'
cat >/dev/null
[ "$1" = ok ] && { echo fine >&2; exit 0; }
printf 'early noise that is not kept\n' >&2
printf 'the end: \377 (%s)\n' "$WAKEQ_ATTEMPT_ID" >&2
exit "$1"
EOF
config "$T/w.ini" <<EOF
[kind.bad]
command = sh $T/h.sh 1
max_attempts = 1
keep_stderr = 24
[kind.again]
command = sh $T/h.sh 75
max_attempts = 2
retry_backoff = 0s
keep_stderr = 1KiB
[kind.good]
command = sh $T/h.sh ok
keep_stderr = 1KiB
[kind.quiet]
command = sh $T/h.sh 1
max_attempts = 1
EOF
bad=$(wq enqueue bad --payload '{"secret":"s3cr3t-payload"}')
again=$(wq enqueue again)
good=$(wq enqueue good)
quiet=$(wq enqueue quiet)
run_worker "$T/w.ini"
expect_eq "$(state_of "$bad")" failed "bad"
expect_eq "$(state_of "$again")" failed "again"

# the tail: the last 24 bytes, the invalid byte as '?'
wq show "$bad" --stderr >"$T/show.out"
grep -q "stderr of attempt $bad.1 (kept tail; untrusted handler output)" "$T/show.out" || fail "no header: $(cat "$T/show.out")"
tail -n 1 "$T/show.out" | grep -qx "the end: ? ($bad.1)" || fail "tail: $(tail -n 2 "$T/show.out")"
! grep -q "early noise" "$T/show.out" || fail "more than keep_stderr was kept"
# every failed attempt keeps its own
expect_eq "$(wq timeline "$again" --json --stderr | python3 -c 'import json,sys; print([s["attempt"] for s in json.load(sys.stdin)["stderr"]])')" "[1, 2]" "again's tails"
wq timeline "$again" --stderr | grep -q "end: ? ($again.2)" || fail "timeline --stderr text"
# on request only: not without --stderr, not in listings, logs or events
! wq show "$bad" | grep -q "end:" || fail "show without --stderr printed it"
! wq show "$bad" --json | grep -q "end:" || fail "show --json without --stderr printed it"
! wq list --json | grep -q "end:" || fail "list printed it"
! wq timeline "$bad" --json | grep -q "end:" || fail "timeline without --stderr printed it"
expect_eq "$(wq show "$bad" --json --stderr | python3 -c 'import json,sys; print(repr(json.load(sys.stdin)["stderr"][0]["stderr"]))')" "'t kept\\nthe end: ? ($bad.1)\\n'" "show --json --stderr (the last 24 bytes)"
# nothing kept for a success or a kind without keep_stderr
wq show "$good" --stderr | grep -q "^no stderr kept" || fail "good kept something"
wq show "$quiet" --stderr | grep -q "^no stderr kept" || fail "quiet kept something"
expect_eq "$(wq show "$quiet" --json --stderr | python3 -c 'import json,sys; print(json.load(sys.stdin)["stderr"])')" "[]" "quiet --json --stderr"

printf '[kind.x]\ncommand = true\nkeep_stderr = 1MiB\n' >"$T/big.ini"
expect_exit 2 wq worker --config "$T/big.ini" --until-idle
grep -q "keep_stderr" "$T/last.err" || fail "message: $(cat "$T/last.err")"
exit 0

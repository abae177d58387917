# Strings that are not UTF-8 are bad input (exit 2, one line naming the field) and
# nothing is written: an operation key, tenant, scope, kind or --notify channel with an
# invalid byte. (They used to be committed, and then either silently dropped from the
# notification list or reported as "out of memory" by `enqueue --json`, exit 1.)
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
BAD=$(printf 'x\377y')        # 0xFF is never UTF-8
SURR=$(printf 'x\355\240\200') # an encoded surrogate (U+D800) is not UTF-8 either
count() { json_field "$(wq list --json --limit 1000)" 'len(d)'; }

# rejected FIELD-WORD ARGS...: exit 2, one line, naming the field; with and without --json
rejected() {
	word=$1; shift
	for json in "" --json; do
		# shellcheck disable=SC2086
		expect_exit 2 wq enqueue "$@" $json
		[ "$(wc -l <"$T/last.err")" -eq 1 ] || fail "$*: error is not one line: $(cat "$T/last.err")"
		grep -qai "$word" "$T/last.err" || fail "$*: error does not name the $word: $(cat "$T/last.err")"
		[ -s "$T/last.out" ] && fail "$*: printed on stdout: $(cat "$T/last.out")"
		expect_eq "$(count)" 0 "tasks after: wakeq enqueue $*"
	done
}

for v in "$BAD" "$SURR"; do
	rejected key wake --key "$v"
	rejected tenant wake --tenant "$v"
	rejected scope wake --scope "$v"
	rejected kind "wake$v"
	rejected "notify\\|channel" wake --notify "inbox:$v"
	rejected "notify\\|channel" wake --notify inbox:ok --notify "webhook:$v"
done
expect_eq "$(json_field "$(wq deliveries --json)" 'len(d)')" 0 "deliveries after the rejected input"

# valid UTF-8 in the same places is fine
expect_exit 0 wq enqueue wake --key "clé-✓" --tenant "ténant" --scope "🙂" --notify "inbox:zoë" --json
expect_eq "$(json_field "$(cat "$T/last.out")" 'd["operation"]')" "clé-✓" "operation key in the output"
expect_eq "$(count)" 1 "tasks after valid UTF-8"

# Issue 14: every worker log line carries an RFC 3339 timestamp and a level; with
# `[worker] log_format = json` each line is one JSON object {ts, level, msg, fields}
# whose fields name the task, attempt and instance; never the payload in either form.
. "$WAKEQ_TESTS/conformance/lib.sh"

secret="payload-secret-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
wq init >/dev/null
kinds="[kind.ok]
command = sh $HANDLERS/handler.sh ok
[kind.bad]
command = sh $HANDLERS/handler.sh exit 1
max_attempts = 1"
echo "$kinds" | config "$T/text.ini"
printf 'log_format = json\n%s\n' "$kinds" | config "$T/json.ini"

a=$(wq enqueue ok --payload "{\"s\":\"$secret\"}")
wq enqueue bad --payload "{\"s\":\"$secret\"}" >/dev/null
"$WQ" worker --config "$T/text.ini" --until-idle 2>"$T/text.log" || fail "text worker exited $?"
[ -s "$T/text.log" ] || fail "no log lines"
bad=$(grep -Evc '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z wakeq: (info|warning|error): ' "$T/text.log" || true)
expect_eq "$bad" 0 "text lines without timestamp and level: $(cat "$T/text.log")"
grep -q "task $a attempt $a.1 started" "$T/text.log" || fail "text: no start line"

b=$(wq enqueue ok --payload "{\"s\":\"$secret\"}")
wq enqueue bad --payload "{\"s\":\"$secret\"}" >/dev/null
"$WQ" worker --config "$T/json.ini" --until-idle 2>"$T/json.log" || fail "json worker exited $?"
python3 - "$T/json.log" "$b" <<'PY' || fail "json log: $(cat "$T/json.log")"
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
task = int(sys.argv[2])
assert lines, "no lines"
started = None
for l in lines:
    o = json.loads(l)                       # every line is one JSON object
    assert list(o) == ["ts", "level", "msg", "fields"], o
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", o["ts"]), o
    assert o["level"] in ("info", "warning", "error"), o
    assert isinstance(o["fields"], dict), o
    if o["msg"].startswith("task %d attempt %d.1 started" % (task, task)):
        started = o
assert started, "no start line"
assert started["fields"]["task"] == task, started
assert started["fields"]["attempt"] == "%d.1" % task, started
PY
grep -q '"instance":' "$T/json.log" || fail "no instance field"
! grep -q "$secret" "$T/text.log" "$T/json.log" || fail "the payload reached the log"

printf '[worker]\nlog_format = yaml\n' >"$T/badfmt.ini"
expect_exit 2 wq worker --config "$T/badfmt.ini" --until-idle
grep -q "log_format: 'yaml' is not text or json" "$T/last.err" || fail "message: $(cat "$T/last.err")"
exit 0

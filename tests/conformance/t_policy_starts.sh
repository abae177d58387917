# [limits] max_starts_per_day per (tenant, scope) (issue 10): claims beyond the day's
# starts defer the task to the next UTC day's 00:00 with a `deferred` event naming the
# limit; the task stays pending (never lost, never failed), is deferred once, and a later
# worker run the same day starts nothing more of that (tenant, scope). Other scopes and
# tenants count on their own; [limits.TENANT] replaces [limits].
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
config "$T/w.ini" <<EOF
[kind.job]
command = sh $HANDLERS/handler.sh ok
[limits]
max_starts_per_day = 2
[limits.acme]
max_starts_per_day = 1
EOF
i=0
while [ $i -lt 5 ]; do wq enqueue job >/dev/null; i=$((i + 1)); done
wq enqueue job --scope other >/dev/null
wq enqueue job --tenant acme >/dev/null
wq enqueue job --tenant acme >/dev/null
run_worker "$T/w.ini"

count() { json_field "$(wq list --json --limit 1000 "$@")" 'len(d)'; }
expect_eq "$(count --state succeeded)" 4 "started: 2 of scope '', 1 of scope other, 1 of acme"
expect_eq "$(count --state pending)" 4 "deferred tasks are pending"
expect_eq "$(count --state failed)" 0 "none failed"
tomorrow=$(python3 -c 'import datetime as d; t=d.datetime.now(d.timezone.utc).date()+d.timedelta(days=1); print(t.isoformat()+"T00:00:00")')
for id in $(json_field "$(wq list --state pending --json)" '" ".join(str(t["id"]) for t in d)'); do
	field_of "$id" due_at | grep -q "^$tomorrow" || fail "task $id due $(field_of "$id" due_at), not $tomorrow"
	expect_eq "$(field_of "$id" attempts)" 0 "a deferred task's attempts"
	wq timeline "$id" >"$T/tl"
	expect_eq "$(grep -c '  deferred  ' "$T/tl")" 1 "deferred events of task $id"
	grep -q 'max_starts_per_day' "$T/tl" || fail "the event does not name the limit: $(cat "$T/tl")"
	wq show "$id" | grep -q 'max_starts_per_day' || fail "show does not say why"
done
json_field "$(wq timeline 8 --json)" '[e for e in d["events"] if e["type"] == "deferred"][0]["detail"]' >"$T/detail"
grep -q "'value': 1" "$T/detail" && grep -q "limits.acme" "$T/detail" || fail "acme's event: $(cat "$T/detail")"
# a second run the same day starts nothing more and defers nothing again
run_worker "$T/w.ini"
expect_eq "$(count --state succeeded)" 4 "succeeded after a second run"
expect_eq "$(lines "$T/runs")" 4 "handler runs"

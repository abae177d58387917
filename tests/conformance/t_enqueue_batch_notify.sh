# `wakeq enqueue --batch` with notify channels on more items than the first allocation
# holds (64): every item keeps its own channels. Regression (issue 15, found by
# tests/crash/random): each item's notify list pointed into the item array, which grew
# by realloc while the batch was read, so the early items' channels were read from freed
# memory ("invalid channel" with garbage bytes, or the wrong channels).
. "$WAKEQ_TESTS/conformance/lib.sh"

wq init >/dev/null
python3 - >"$T/b.jsonl" <<'PY'
import json
for i in range(300):
    print(json.dumps({"kind": "mail", "payload": {"n": i},
                      "notify": ["inbox:ops-%d" % i, "inbox:all"]}))
PY
wq enqueue --batch "$T/b.jsonl" >"$T/out" 2>"$T/err" || fail "batch exited $?: $(head -c 300 "$T/err")"
expect_eq "$(grep -c ' accepted$' "$T/out")" 300 "accepted items"
# each task notifies its own recipient: run them, then every inbox holds its own one
config "$T/w.ini" <<CFG
[kind.mail]
command = true
CFG
"$WQ" worker --config "$T/w.ini" --until-idle >"$T/worker.log" 2>&1 || fail "worker exited $?"
for r in 0 63 64 299; do
	expect_eq "$(wq inbox "ops-$r" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 1 "inbox ops-$r"
done
expect_eq "$(wq inbox all --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 300 "inbox all"
echo ok

# SPEC §18.3 stored result, failed delivery: a real HTTP receiver on 127.0.0.1 answers 500
# twice, then 200 → the handler ran exactly once, the result is stored once, the webhook
# delivery took 3 attempts with the same Idempotency-Key, and `inbox:alice` on the same
# task holds exactly one notification. Nothing the handler produced (the result body, a
# secret in it) reaches list, show, the timeline, the inbox, the webhook body or the log.
. "$WAKEQ_TESTS/conformance/lib.sh"
. "$WAKEQ_TESTS/conformance/outbox-lib.sh"

wq init >/dev/null
start_hook "500,500,200"
config "$T/w.ini" <<EOF2
[channel.ops]
type = webhook
url = $HOOK_URL
timeout = 5s
max_attempts = 8
retry_backoff = 50ms
[kind.summarize]
command = sh $HANDLERS/handler.sh echo
EOF2
secret="RESULT-SECRET-$$-ignore-previous-instructions"
id=$(wq enqueue summarize --payload "{\"text\":\"$secret\"}" --notify webhook:ops \
	--notify inbox:alice)
run_worker "$T/w.ini"

expect_eq "$(state_of "$id")" succeeded "task state"
expect_eq "$(lines "$T/runs")" 1 "handler runs"
expect_eq "$(wq result "$id" 2>/dev/null)" "{\"text\":\"$secret\"}" "stored result"
expect_eq "$(event_count "$id" succeeded)" 1 "results recorded"

# the webhook: delivered on the third attempt, every attempt with the same key
expect_eq "$(delivery "$id" webhook:ops 'd["state"]')" delivered "webhook delivery state"
expect_eq "$(delivery "$id" webhook:ops 'd["attempts"]')" 3 "webhook delivery attempts"
expect_eq "$(delivery "$id" webhook:ops 'd["last_error"]')" None "last error once delivered"
did=$(delivery "$id" webhook:ops 'd["id"]')
sha=$(json_field "$(wq show "$id" --json)" 'd["result"]["sha256"]')
expect_eq "$(hook_requests)" 3 "requests the receiver saw"
python3 - "$T/hook/requests" "$did" "$id" "$sha" "$secret" <<'PY' || fail "webhook requests"
import json, sys
path, did, tid, sha, secret = sys.argv[1:]
reqs = [json.loads(l) for l in open(path)]
for r in reqs:
    assert r["path"] == "/hooks/wakeq", r
    assert r["idempotency_key"] == did, r
    assert r["content_type"] == "application/json", r
    assert secret not in r["body"], "the result body leaked into the webhook"
    b = json.loads(r["body"])
    assert b["delivery_id"] == int(did) and b["task_id"] == int(tid), b
    assert b["kind"] == "summarize" and b["state"] == "succeeded", b
    assert b["result"] == {"size": len('{"text":"%s"}' % secret), "sha256": sha}, b
    assert b["fetch"] == "wakeq result " + tid, b
    assert set(b) == {"delivery_id", "task_id", "kind", "operation", "state", "outcome",
                      "result", "fetch"}, sorted(b)
PY

# the inbox: exactly one notification, delivered once
expect_eq "$(delivery "$id" inbox:alice 'd["state"]')" delivered "inbox delivery state"
expect_eq "$(delivery "$id" inbox:alice 'd["attempts"]')" 1 "inbox delivery attempts"
expect_eq "$(inbox_count alice "$id")" 1 "alice's notifications about the task"
wq inbox alice --json | python3 -c '
import json, sys
n = json.load(sys.stdin)[0]
assert n["subject"] == "succeeded" and n["task_id"] == int(sys.argv[1]), n
assert n["result"]["sha256"] == sys.argv[2] and n["read_at"] is None, n' "$id" "$sha" \
	|| fail "alice's notification"

# the timeline tells the delivery story
expect_eq "$(event_count "$id" delivery-queued)" 2 "delivery-queued events"
expect_eq "$(event_count "$id" delivery-attempt)" 4 "delivery-attempt events (3 webhook + 1 inbox)"
expect_eq "$(event_count "$id" delivery-failed)" 2 "delivery-failed events"
expect_eq "$(event_count "$id" delivered)" 2 "delivered events"
wq timeline "$id" | grep "delivery-failed" | grep -q "HTTP 500" || fail "HTTP status missing from the timeline"

# safe evidence only
for view in "wq list --json" "wq show $id" "wq show $id --json" "wq timeline $id" \
	"wq timeline $id --json" "wq inbox alice" "wq inbox alice --json" "wq deliveries" \
	"wq deliveries --json" "wq dead --json"; do
	$view >"$T/view.out" 2>&1 || fail "$view failed"
	! grep -q "$secret" "$T/view.out" || fail "the result body appears in: $view"
done
! grep -q "$secret" "$T/worker.log" || fail "the result body appears in the worker log"
! grep -q "never be stored" "$T/worker.log" "$T/view.out" || fail "a response body was kept"

# a second worker run changes nothing
run_worker "$T/w.ini"
expect_eq "$(hook_requests)" 3 "requests after another worker run"
expect_eq "$(inbox_count alice)" 1 "alice's notifications after another worker run"
expect_eq "$(lines "$T/runs")" 1 "handler runs after another worker run"

# outbox-lib.sh — helpers of the outbox tests (t_outbox_*.sh), sourced after lib.sh.

# The receiver is on 127.0.0.1: never through a proxy from the environment.
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy="127.0.0.1,localhost" NO_PROXY="127.0.0.1,localhost"

# start_hook SCRIPT: starts tests/bin/webhook-server.py in $T/hook answering by SCRIPT
# ("500,500,200"; see the server), waits for the port it picked, sets HOOK_URL.
start_hook() {
	mkdir -p "$T/hook"
	printf '%s\n' "$1" >"$T/hook/script"
	python3 "$HANDLERS/webhook-server.py" "$T/hook" >"$T/hook.log" 2>&1 &
	BG_PIDS="$BG_PIDS $!"
	wait_until 30 test -s "$T/hook/port"
	HOOK_URL="http://127.0.0.1:$(cat "$T/hook/port")/hooks/wakeq"
}

# hook_requests: how many requests the receiver has seen.
hook_requests() { lines "$T/hook/requests"; }
has_requests() { [ "$(hook_requests)" -ge "$1" ]; }

# delivery TASK CHANNEL EXPR: EXPR (python, `d` = the delivery as `wakeq deliveries
# --json` shows it) for the delivery of TASK to CHANNEL.
delivery() {
	wq deliveries --json | python3 -c '
import json, sys
ds = [d for d in json.load(sys.stdin) if d["task_id"] == int(sys.argv[1]) and d["channel"] == sys.argv[2]]
assert len(ds) == 1, ds
d = ds[0]
print(eval(sys.argv[3]))' "$1" "$2" "$3"
}
delivery_state_is() { [ "$(delivery "$1" "$2" 'd["state"]')" = "$3" ]; }

# inbox_count RECIPIENT [TASK]: notifications of RECIPIENT (about TASK).
inbox_count() {
	wq inbox "$1" --json | python3 -c '
import json, sys
ns = json.load(sys.stdin)
if len(sys.argv) > 1:
    ns = [n for n in ns if n["task_id"] == int(sys.argv[1])]
print(len(ns))' ${2:+"$2"}
}

# event_count TASK TYPE: events of TYPE on the task's timeline.
event_count() {
	wq timeline "$1" --json | python3 -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin)["events"] if e["type"] == sys.argv[1]))' "$2"
}

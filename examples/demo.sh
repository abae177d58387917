#!/bin/sh
# demo.sh [WAKEQ]: the narrated end-to-end scenario behind `make demo`, on a SQLite file
# under demo/. Each step says what it shows; the script stops at the first surprise.
set -eu
cd "$(dirname "$0")/.."
WQ=$(realpath "${1:-build/wakeq}")
DEMO_DIR=$(pwd)/demo
export DEMO_DIR
export WAKEQ_DB="$DEMO_DIR/wakeq.db"

rm -rf "$DEMO_DIR"
mkdir -p "$DEMO_DIR"
cat >"$DEMO_DIR/worker.ini" <<EOF
[worker]
concurrency = 2
drain_timeout = 5s
heartbeat = 500ms
poll_interval = 100ms

[kind.agent-wake]
command = $(pwd)/examples/agent-wake
timeout = 1m
max_attempts = 3
retry_backoff = 1s
EOF

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
say() { printf '   %s\n' "$*"; }
run() { printf '   $ wakeq %s\n' "$*"; "$WQ" "$@" 2>&1 | sed 's/^/     /'; }
surprise() { printf '\ndemo: unexpected: %s\n' "$*" >&2; exit 1; }
state() { "$WQ" show "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])'; }
worker_idle() { "$WQ" worker --config "$DEMO_DIR/worker.ini" --until-idle >>"$DEMO_DIR/worker.log" 2>&1; }

step "1. A store: one SQLite file"
run init

step "2. An agent's scheduled wake that calls a model"
wake=$("$WQ" enqueue agent-wake --payload '{"agent":"ada","why":"morning check-in"}' --tenant acme --scope ada)
say "enqueued wake $wake; a worker runs it until nothing is due:"
worker_idle
run show "$wake"
say "the result is stored; listings show only its size and SHA-256. The body, on request:"
run result "$wake"

step "3. A restart before the claim: the wake is durable and runs once"
wake2=$("$WQ" enqueue agent-wake --payload '{"agent":"ada","why":"follow-up"}')
say "a worker starts and is killed (SIGKILL) right before it claims wake $wake2 …"
WAKEQ_FAILPOINT=claim "$WQ" worker --config "$DEMO_DIR/worker.ini" --until-idle >>"$DEMO_DIR/worker.log" 2>&1 && surprise "the worker was not killed"
say "wake $wake2 is still $(state "$wake2"); a restarted worker claims it once:"
worker_idle
[ "$(state "$wake2")" = succeeded ] || surprise "wake $wake2 is $(state "$wake2")"
run list

step "4. A worker killed mid-run: the wake becomes interrupted, never silently re-run"
wake3=$("$WQ" enqueue agent-wake --payload '{"agent":"ada","why":"hang on purpose"}')
"$WQ" worker --config "$DEMO_DIR/worker.ini" >>"$DEMO_DIR/worker.log" 2>&1 &
wpid=$!
i=0
until [ -f "$DEMO_DIR/hanging.pid" ]; do
	i=$((i + 1)); [ $i -lt 500 ] || surprise "the handler never started"; sleep 0.02
done
say "the handler is calling the model; kill -9 the worker (pid $wpid) now"
kill -KILL "$wpid"
wait "$wpid" 2>/dev/null || true
say "a restarted worker recovers: the attempt's outcome is unknown, so it is held"
worker_idle
run list --state interrupted
say "an operator checks and decides: retry (the model call had no outside effect)"
run resolve "$wake3" --retry --note "model call had no side effects; safe to repeat"
worker_idle
[ "$(state "$wake3")" = succeeded ] || surprise "wake $wake3 is $(state "$wake3")"
say "the retry ran exactly once more; the timeline keeps both attempts and the decision:"
run show "$wake3"

step "5. A pending wake cancelled before any worker saw it"
wake4=$("$WQ" enqueue agent-wake --in 1h --payload '{"agent":"bob"}')
run cancel "$wake4"
worker_idle
[ "$(state "$wake4")" = cancelled ] || surprise "wake $wake4 is $(state "$wake4")"

step "6. Timelines: every step is an event, safe evidence only (no payload, no result)"
for id in "$wake" "$wake3" "$wake4"; do run timeline "$id"; done

step "Run the worker yourself"
say "export WAKEQ_DB=$WAKEQ_DB"
say "$WQ enqueue agent-wake --payload '{\"agent\":\"you\"}'"
say "$WQ worker --config $DEMO_DIR/worker.ini          # Ctrl-C drains and stops"
say "$WQ list; $WQ timeline ID"

#!/bin/sh
# versioned-handler.sh: one handler for both payload versions of kind wake (issue 10):
# v1 {"agent": ID, "text": T}, v2 {"agent": {"id": ID}, "message": {"text": T}}. Prints
# "agent ID: T (vN)"; another version is a bug the worker must never let reach here.
set -eu
dir=${WAKEQ_TEST_DIR:?}
echo "$WAKEQ_TASK_ID $WAKEQ_ATTEMPT_ID v$WAKEQ_PAYLOAD_VERSION" >>"$dir/runs"
exec python3 -c '
import json, sys, os
v = int(os.environ["WAKEQ_PAYLOAD_VERSION"])
d = json.load(sys.stdin)
if v == 1:
    agent, text = d["agent"], d["text"]
elif v == 2:
    agent, text = d["agent"]["id"], d["message"]["text"]
else:
    sys.exit("unknown payload version %d" % v)
print("agent %s: %s (v%d)" % (agent, text, v))
'

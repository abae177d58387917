#!/bin/sh
# Large messages through the IMAP source, each fetched whole and unaltered: one of
# 400 KB (over the 300 KiB libcurl 7.88 lets a custom FETCH's answer reach the header
# callback: it failed every poll, "Too large response headers", and stayed unseen),
# one with a single 40 KB line (over the 16 KiB libcurl reads a line into), and a small
# one. intake_imap.c fetches in pieces (BODY.PEEK[]<offset.length>); the handler gets
# each message's exact bytes (raw_base64: size and SHA-256 as written into the
# mailbox), and every message is acknowledged.
. "$(dirname "$0")/lib.sh"
. "$TESTS/conformance/intake-lib.sh"

setup_source imap
python3 - "$MBOX" "$T/want" <<'PY'
import hashlib, os, sys
d, want = sys.argv[1], sys.argv[2]
bodies = {
    1: "".join("line %06d of a long message, padded to be big enough\r\n" % i for i in range(7300)),
    2: "x" * 40000 + "\r\n",
    3: "short\r\n",
}
with open(want, "w") as w:
    for n, body in bodies.items():
        text = "From: a@example.org\r\nTo: b@example.org\r\nSubject: big %d\r\n\r\n%s" % (n, body)
        name = "1700000000.M%dP1.large" % n
        with open(os.path.join(d, "tmp", name), "w", newline="") as f:
            f.write(text)
        os.rename(os.path.join(d, "tmp", name), os.path.join(d, "new", name))
        b = text.encode()
        w.write("%d %s\n" % (len(b), hashlib.sha256(b).hexdigest()))
PY
if [ "$(id -u)" -eq 0 ] && [ -n "${mail_uid:-}" ]; then chown -R "$mail_uid:$mail_gid" "$MBOX"; fi
cat >"$T/h.py" <<'PY'
import base64, hashlib, json, sys
p = json.load(sys.stdin)
raw = base64.b64decode(p["raw_base64"])
with open(sys.argv[1], "a") as f:
    f.write("%d %s\n" % (len(raw), hashlib.sha256(raw).hexdigest()))
PY
CONCURRENCY=1 config "$T/w.ini" <<CFG
[kind.mail]
command = python3 $T/h.py $T/got
$(source_section mail)
CFG
run_intake_worker "$T/w.ini"
grep -q "Too large\|no complete message" "$T/worker.log" && fail "a fetch failed: $(grep -m1 'Too large\|no complete' "$T/worker.log")"
expect_eq "$(sort "$T/got" | tr '\n' ' ')" "$(sort "$T/want" | tr '\n' ' ')" "the messages' sizes and SHA-256"
expect_eq "$(intake_count_state acknowledged)" 3 "acknowledged"
expect_eq "$(unseen_now imap)" 0 "unseen after"
stop_dovecot
echo ok

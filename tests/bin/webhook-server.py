#!/usr/bin/env python3
"""webhook-server.py DIR: a webhook receiver for the conformance tests.

It binds 127.0.0.1 on a port the kernel picks and, once it accepts connections, writes the
port to DIR/port (atomically: write, then rename), which the test waits for.

The answer to each POST comes from DIR/script, read at every request so that a test may
change it: a comma-separated list such as "500,500,200"; request n (from 0) gets item n,
the last item repeats. An item is an HTTP status, or "hang": hold the request unanswered
(until the client goes away or the server is killed).

Before answering, each request is appended to DIR/requests as one JSON line: n, path,
idempotency_key, content_type and body (the text the worker sent), so the test can count
attempts and check what a notification contains.
"""
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR = sys.argv[1]
LOCK = threading.Lock()
COUNT = [0]


def script_item(n):
    try:
        with open(os.path.join(DIR, "script")) as f:
            items = [x.strip() for x in f.read().split(",") if x.strip()]
    except FileNotFoundError:
        items = []
    if not items:
        return "200"
    return items[min(n, len(items) - 1)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet: the test reads DIR/requests
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace")
        with LOCK:
            n = COUNT[0]
            COUNT[0] += 1
            item = script_item(n)
            rec = {
                "n": n,
                "path": self.path,
                "idempotency_key": self.headers.get("Idempotency-Key"),
                "content_type": self.headers.get("Content-Type"),
                "body": body,
            }
            with open(os.path.join(DIR, "requests"), "a") as f:
                f.write(json.dumps(rec) + "\n")
        if item == "hang":
            threading.Event().wait()
        status = int(item)
        reply = b"reply body that must never be stored\n"
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = os.path.join(DIR, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(tmp, os.path.join(DIR, "port"))
    server.serve_forever()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""bad-receiver.py DIR: a misbehaving webhook receiver for t_webhook_bad_receivers.

Binds 127.0.0.1 on a port the kernel picks, writes it to DIR/port (atomically). Reads each
request (headers and Content-Length body), appends its path to DIR/requests (one line),
then behaves by the path's last segment:
  /hang      never answers (until the client goes away)
  /reset     closes with SO_LINGER 0: the client sees a connection reset
  /redirect  302 to /landing on this server (a client following redirects would POST there)
  /loop      302 to itself
  /garbage   bytes that are not HTTP, then closes
  /landing   200 (must never be reached)
"""
import os
import socket
import struct
import sys
import threading

DIR = sys.argv[1]
LOCK = threading.Lock()


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for h in lines[1:]:
        k, _, v = h.partition(":")
        if k.strip().lower() == "content-length":
            length = int(v.strip())
    while len(body) < length:
        chunk = conn.recv(4096)
        if not chunk:
            break
        body += chunk
    return lines[0].split(" ")[1]


def serve(conn, port):
    try:
        path = read_request(conn)
        if path is None:
            return
        with LOCK:
            with open(os.path.join(DIR, "requests"), "a") as f:
                f.write(path + "\n")
        mode = path.rstrip("/").rsplit("/", 1)[-1]
        if mode == "hang":
            conn.recv(1)  # until the client closes
            return
        if mode == "reset":
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        if mode in ("redirect", "loop"):
            target = "/landing" if mode == "redirect" else path
            conn.sendall(("HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:%d%s\r\n"
                          "Content-Length: 0\r\nConnection: close\r\n\r\n" % (port, target)).encode())
            return
        if mode == "garbage":
            conn.sendall(b"\x00\xffSSH-2.0-not-http \x1b[2J\r\n\r\n" + os.urandom(512))
            return
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    except OSError:
        pass
    finally:
        conn.close()


def main():
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    port = srv.getsockname()[1]
    tmp = os.path.join(DIR, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, os.path.join(DIR, "port"))
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn, port), daemon=True).start()


if __name__ == "__main__":
    main()

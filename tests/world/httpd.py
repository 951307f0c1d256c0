#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Tiny HTTP server for the roam test world.

Serves fixed bodies on fixed paths, dual stack (binds [::] with IPV6_V6ONLY off), one thread
per request. Started by world.sh inside a world namespace, e.g.

    httpd.py --port 80 --route '/roam-probe=roam-online\\n' --pidfile F

With --tls-port, --cert and --key it also serves the same routes over HTTPS.

The cafe's captive portal adds: --html-route (a page served as text/html), --redirect URL
(every other path answers 302 to URL instead of 404) and --capport PATH=FILE (an RFC 8908
API: FILE, read at every request, served as application/captive+json).

Middleboxes of tests/world/test_connectivity.py: --header NAME:VALUE adds a header to every
answer (a cache that ignores no-cache: "Age: 3600"), --allow-host HOST serves the routes only
to requests for that Host (a walled garden's proxy; the others get --redirect), and
--log-header NAME adds that request header's value to each log line, --fail-status N answers
every request with status N (a proxy whose upstream is gone: 504).
"""
import argparse
import http.server
import os
import socket
import ssl
import sys
import threading
import time


def parse_route(s):
    path, sep, body = s.partition("=")
    if not sep or not path.startswith("/"):
        raise argparse.ArgumentTypeError("route must be /PATH=BODY")
    return path, body.encode().decode("unicode_escape").encode()


def parse_file_route(s):
    path, sep, file = s.partition("=")
    if not sep or not path.startswith("/") or not file:
        raise argparse.ArgumentTypeError("must be /PATH=FILE")
    return path, file


class Handler(http.server.BaseHTTPRequestHandler):
    routes = {}       # path -> (content type, body)
    capport = {}      # path -> file
    redirect = None
    extra_headers = []  # (name, value) added to every answer
    allow_hosts = None
    log_headers = []
    fail_status = None
    server_version = "roam-world-httpd/1"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    date_offset = 0.0  # seconds added to the Date header (a server whose clock lies)

    def date_time_string(self, timestamp=None):
        return super().date_time_string((time.time() if timestamp is None else timestamp)
                                        + self.date_offset)

    def _send(self, code, ctype, body, head_only, extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache")
        for k, v in list(self.extra_headers) + list(extra):
            self.send_header(k, v)
        self.end_headers()
        if not head_only:
            self.wfile.write(body)

    def _answer(self, head_only):
        path = self.path.split("?", 1)[0]
        host = self.headers.get("Host") or ""
        if host.count(":") == 1:
            host = host.split(":")[0]
        if self.fail_status:
            return self._send(self.fail_status, "text/plain", b"upstream unreachable\n",
                              head_only)
        if self.allow_hosts is not None and host not in self.allow_hosts:
            return self._send(302, "text/plain", b"", head_only, [("Location", self.redirect)])
        if path in self.capport:
            try:
                with open(self.capport[path], "rb") as f:
                    body = f.read()
            except OSError:
                return self._send(503, "text/plain", b"no capport state\n", head_only)
            return self._send(200, "application/captive+json", body, head_only)
        route = self.routes.get(path)
        if route is not None:
            return self._send(200, route[0], route[1], head_only)
        if self.redirect:
            return self._send(302, "text/plain", b"", head_only,
                              [("Location", self.redirect)])
        return self._send(404, "text/plain", b"not found\n", head_only)

    def do_GET(self):
        self._answer(False)

    def do_HEAD(self):
        self._answer(True)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        if 0 < n <= 65536:
            self.rfile.read(n)
        self._answer(False)

    def log_message(self, fmt, *args):
        extra = "".join(" %s=%s" % (h, self.headers.get(h, "-")) for h in self.log_headers
                        if hasattr(self, "headers"))
        sys.stderr.write("%s %s%s\n" % (self.client_address[0], fmt % args, extra))
        sys.stderr.flush()


class Server(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6
    allow_reuse_address = True
    daemon_threads = True

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=80)
    ap.add_argument("--bind", default="::")
    ap.add_argument("--route", type=parse_route, action="append", default=[])
    ap.add_argument("--html-route", type=parse_route, action="append", default=[])
    ap.add_argument("--redirect")
    ap.add_argument("--capport", type=parse_file_route, action="append", default=[])
    ap.add_argument("--pidfile")
    ap.add_argument("--tls-port", type=int)
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--date-offset", type=float, default=0.0)
    ap.add_argument("--header", action="append", default=[])
    ap.add_argument("--allow-host", action="append")
    ap.add_argument("--log-header", action="append", default=[])
    ap.add_argument("--fail-status", type=int)
    a = ap.parse_args()
    Handler.extra_headers = [tuple(x.strip() for x in h.split(":", 1)) for h in a.header]
    Handler.allow_hosts = a.allow_host
    Handler.log_headers = a.log_header
    Handler.fail_status = a.fail_status
    Handler.routes = {p: ("text/plain", b) for p, b in a.route}
    Handler.routes.update({p: ("text/html; charset=utf-8", b) for p, b in a.html_route})
    Handler.capport = dict(a.capport)
    Handler.redirect = a.redirect
    Handler.date_offset = a.date_offset
    srv = Server((a.bind, a.port), Handler)
    if a.tls_port:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.cert, a.key)
        tls = Server((a.bind, a.tls_port), Handler)
        # the handshake happens in the request's thread, not in the accept loop
        tls.socket = ctx.wrap_socket(tls.socket, server_side=True,
                                     do_handshake_on_connect=False)
        threading.Thread(target=tls.serve_forever, daemon=True).start()
    if a.pidfile:
        tmp = a.pidfile + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(tmp, a.pidfile)
    srv.serve_forever()


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""HTTP/HTTPS servers for roam's tests: a check server, a captive portal, an RFC 8908 API,
and hostile answers. Listens on the addresses given (inside a test namespace).

  roam_testserver.py --listen ADDR:PORT[,ADDR:PORT...] [--tls CERT KEY] --mode MODE [...]

Modes:
  probe     GET /roam-probe -> 200 "roam-online\\n"; anything else 404
  portal    every request -> 302 to --portal-url, except /login (200, the login page) and
            --capport-path (the RFC 8908 JSON from --capport-json, or a hostile variant)
  huge      50 MB chunked body                     loop      302 to itself
  drip      the probe body, one byte a second      garbage   200, random bytes
  close     closes the connection without answering
  login     every request -> 200, the login page (a portal that answers in place)
  slowlogin every request -> 200, a 100 kB login page of which only the first part is sent;
            the rest never comes (the connection stays open until the client leaves)
  tickets   the probe's answer as many servers send it: TLS 1.3 session tickets first (with
            --tls), then the headers and the body in two writes, without TCP_NODELAY, and
            the connection left open until the client leaves: Nagle holds the body until the
            client acknowledges the headers (and the headers until it acknowledged tickets)
The capport variants (--capport-mode): good, garbage, wrongtype.
"""
import argparse
import json
import os
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROBE_BODY = b"roam-online\n"


TCPI_OPT_SYN_DATA = 0x20  # linux/tcp.h: the SYN carried data this side accepted


def syn_kind(sock):
    """'syn-data' when the client's SYN carried data that was accepted (TCP Fast Open with a
    valid cookie: the first flight came with the SYN), else 'syn'."""
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    return "syn-data" if info[5] & TCPI_OPT_SYN_DATA else "syn"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "roam-testserver"

    def log_message(self, fmt, *args):
        if self.server.args.verbose:
            sys.stderr.write("%s %s\n" % (self.address_string(), fmt % args))

    def send_body(self, status, body, ctype="text/plain", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        a = self.server.args
        self.close_connection = True
        if a.report_sessions and isinstance(self.connection, ssl.SSLSocket):
            # one line per request: did the client resume a TLS session?
            print("tls " + ("resumed" if self.connection.session_reused else "full")
                  + " " + syn_kind(self.connection), flush=True)
        if a.mode == "portal" and a.capport_path and self.path == a.capport_path:
            return self.capport()
        if a.mode == "probe":
            # like a static file server (nmcheck.gnome.org), the query is not looked at:
            # roamd's HTTP probe adds one against caches (docs/connectivity.md)
            if self.path.split("?", 1)[0] == "/roam-probe":
                return self.send_body(200, PROBE_BODY)
            return self.send_body(404, b"not here\n")
        if a.mode == "tickets":
            return self.answer_in_pieces()
        if a.mode == "portal":
            if self.path.startswith("/login"):
                return self.send_body(200, b"<html><body><form>Log in to the cafe WiFi"
                                      b"</form></body></html>\n", "text/html")
            return self.send_body(302, b"", extra=[("Location", a.portal_url)])
        if a.mode == "login":
            return self.send_body(200, b"<html><body><form>Log in to the cafe WiFi"
                                  b"</form></body></html>\n", "text/html")
        if a.mode == "loop":
            return self.send_body(302, b"", extra=[("Location", self.path)])
        if a.mode == "huge":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"x" * 65536
            try:
                for _ in range(50 * 16):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.write(b"0\r\n\r\n")
            except OSError:
                pass
            return
        if a.mode == "drip":
            # the right answer, too slowly: only a timeout can end it
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(PROBE_BODY)))
            self.end_headers()
            try:
                for i in range(len(PROBE_BODY)):
                    self.wfile.write(PROBE_BODY[i:i + 1])
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass
            return
        if a.mode == "slowlogin":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            try:
                self.wfile.write(b"<html><body><form>Log in to the cafe WiFi</form>")
                self.wfile.flush()
                # the rest never comes: wait for the client to hang up
                self.connection.settimeout(120)
                self.connection.recv(1)
            except OSError:
                pass
            return
        if a.mode == "garbage":
            return self.send_body(200, os.urandom(4096), "application/octet-stream")
        if a.mode == "close":
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        return self.send_body(500, b"unknown mode\n")

    def answer_in_pieces(self):
        # Nagle (the kernel's default; asserted, as a test relies on it) holds a small write
        # while an earlier small segment (the session tickets, the headers) is unacknowledged.
        assert not self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        ok = self.path.split("?", 1)[0] == "/roam-probe"
        body = PROBE_BODY if ok else b"not here\n"
        self.connection.sendall(b"HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
                                b"Content-Length: %d\r\nConnection: close\r\n\r\n"
                                % (200 if ok else 404, b"OK" if ok else b"Not Found", len(body)))
        self.connection.sendall(body)
        # A server that keeps its connection open (keep-alive) does not push the held body
        # out with its FIN: wait for the client, which has its Content-Length, to hang up.
        try:
            self.connection.settimeout(10)
            self.connection.recv(1)
        except OSError:
            pass

    def capport(self):
        a = self.server.args
        if a.capport_mode == "garbage":
            return self.send_body(200, b"{\"captive\": tru", "application/captive+json")
        body = open(a.capport_json, "rb").read() if a.capport_json else b'{"captive": true}'
        ctype = "text/html" if a.capport_mode == "wrongtype" else "application/captive+json"
        return self.send_body(200, body, ctype)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, args):
        self.address_family = socket.AF_INET6 if ":" in addr[0] else socket.AF_INET
        self.args = args
        super().__init__(addr, Handler)

    def handle_error(self, request, client_address):
        # A client that leaves before the answer ends (roamd, once a portal page proved
        # what it is) is a normal end here, not a traceback on the test's output.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def parse_listen(s):
    out = []
    for item in s.split(","):
        host, port = item.rsplit(":", 1)
        out.append((host.strip("[]"), int(port)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True)
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--mode", default="probe")
    ap.add_argument("--portal-url", default="http://portal.test/login")
    ap.add_argument("--capport-path")
    ap.add_argument("--capport-json")
    ap.add_argument("--capport-mode", default="good")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--report-sessions", action="store_true",
                    help="print 'tls full|resumed syn|syn-data' for each HTTPS request: "
                    "whether the client resumed a TLS session, and whether its SYN carried "
                    "data (TCP Fast Open)")
    ap.add_argument("--fastopen", action="store_true",
                    help="accept data in SYNs (TCP Fast Open with cookies; the namespace's "
                    "net.ipv4.tcp_fastopen must have the server bit, 2)")
    args = ap.parse_args()

    servers = []
    for addr in parse_listen(args.listen):
        srv = Server(addr, args)
        if args.fastopen:
            srv.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
        if args.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(args.tls[0], args.tls[1])
            if args.mode == "tickets":
                ctx.minimum_version = ssl.TLSVersion.TLSv1_3
                ctx.num_tickets = 2  # OpenSSL's default, sent right after the handshake
            srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
        servers.append(srv)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    print("ready", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

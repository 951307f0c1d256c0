#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A WISPr 1.0 captive portal for the test world's cafe (tests/world/test_portal.py).

Runs inside the cafe's namespace, HTTP on --port and HTTPS on --tls-port (the cafe's
certificate); the test redirects the LAN's port 80/443 traffic to the router here.

  GET  anything else   302 to http://cafe.test/wispr/portal (the interception)
  GET  /wispr/portal   the login page: HTML with the WISPr Redirect (100/0) in a comment,
                       LoginURL https://cafe.test/wispr/login
  POST /wispr/login    UserName/Password right: AuthenticationReply 120/50 with a LogoffURL
                       (or 120/201 with a LoginResultsURL in mode "pending"), and --on-login
                       runs (opens the cafe); wrong: 120/100 "Invalid password"
  GET  /wispr/results  AuthenticationPollReply 140/50 (opens the cafe)
  GET  /wispr/logoff   LogoffReply 130/150, and --on-logoff runs
  GET  /capport        the RFC 8908 JSON from --capport-file

Every request is appended to --log as one JSON line (method, path, host, form fields).
--mode-file names a file read at each request whose content picks a hostile variant of the
login page: xxe, laughs, big (10 MB), loop (the page redirects to itself), badcode
(Redirect with ResponseCode 50), otherhost (LoginURL on evil.test), plainhttp (LoginURL over
http), nowispr (a plain HTML form for people: POST /login with a table number opens the cafe),
pending, muteN (the first N interceptions a WISPr client asks for are closed unanswered,
as a portal too busy to answer: counted per mode, each one logged with "muted"),
redirect=URL (every interception redirects to URL, e.g. the client's own loopback); anything
else: the normal portal.

The demo's cafe (world.sh cafe-portal NAME wispr) adds --people-form: the login page's form is
one for people, "Room or table" (POST /login with a table opens the cafe in every mode, as a
browser submits it), beside the WISPr XML for clients; and --session SECONDS: a login opens the
cafe for that long (the RFC 8908 API's seconds-remaining counts down, can-extend-session is
true), a login during the session extends it to SECONDS from then, and at its end --on-logoff
runs (the cafe is captive again). --session-unannounced: the same session, but the RFC 8908
API does not say how long it has left (many portals' APIs do not; test_portal.py's expiry
with nobody talking).
"""
import argparse
import html
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = ('<?xml version="1.0" encoding="UTF-8"?>\n<WISPAccessGatewayParam '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:noNamespaceSchemaLocation="http://www.acmewisp.com/WISPAccessGatewayParam.xsd">'
        '%s</WISPAccessGatewayParam>')


def redirect_xml(login_url, code=0):
    return ROOT % ("<Redirect><AccessProcedure>1.0</AccessProcedure>"
                   "<AccessLocation>cafe-1</AccessLocation><LocationName>Cafe Roam</LocationName>"
                   "<LoginURL>%s</LoginURL><AbortLoginURL>https://cafe.test/wispr/abort"
                   "</AbortLoginURL><MessageType>100</MessageType><ResponseCode>%d"
                   "</ResponseCode></Redirect>" % (login_url, code))


PEOPLE_FORM = ('<form method="post" action="/login"><label>Room or table '
               '<input name="table"></label><button>Log in</button></form>\n')


def page(xml, people=False):
    form = PEOPLE_FORM if people else (
        '<form method="post" action="/wispr/login"><input name="UserName">'
        '<input name="Password" type="password"><button>Log in</button></form>\n')
    return ("<!DOCTYPE html>\n<html><head><title>Cafe Roam WiFi</title></head><body>\n"
            "<h1>Welcome to Cafe Roam</h1>\n<!--\n%s\n-->\n%s"
            "</body></html>\n" % (xml, form))


class Session:
    """--session: how long a login opens the cafe; a login within it extends it."""

    def __init__(self, seconds, on_logoff):
        self.seconds, self.on_logoff = seconds, on_logoff
        self.lock = threading.Lock()
        self.timer, self.ends = None, None

    def login(self):
        with self.lock:
            if self.timer:
                self.timer.cancel()
            self.ends = time.monotonic() + self.seconds
            self.timer = threading.Timer(self.seconds, self.expire)
            self.timer.daemon = True
            self.timer.start()

    def expire(self):
        with self.lock:
            self.timer, self.ends = None, None
        if self.on_logoff:
            subprocess.run(self.on_logoff, shell=True, check=False, timeout=60)

    def logoff(self):
        with self.lock:
            if self.timer:
                self.timer.cancel()
            self.timer, self.ends = None, None

    def remaining(self):
        with self.lock:
            return None if self.ends is None else max(0, int(self.ends - time.monotonic()))


LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n'
          + "".join('<!ENTITY lol%d "%s">\n' % (i, ("&lol%s;" % (i - 1 if i > 1 else "")) * 10)
                    for i in range(1, 10))
          + ']>\n<WISPAccessGatewayParam><Redirect><LocationName>&lol9;</LocationName>'
          '<LoginURL>https://cafe.test/wispr/login</LoginURL><MessageType>100</MessageType>'
          '<ResponseCode>0</ResponseCode></Redirect></WISPAccessGatewayParam>')
XXE = ('<?xml version="1.0"?>\n<!DOCTYPE WISPAccessGatewayParam [<!ENTITY x SYSTEM '
       '"file:///etc/shadow">]>\n<WISPAccessGatewayParam><Redirect><LocationName>&x;'
       '</LocationName><LoginURL>https://cafe.test/wispr/login</LoginURL><MessageType>100'
       '</MessageType><ResponseCode>0</ResponseCode></Redirect></WISPAccessGatewayParam>')


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "wispr-cafe/1"
    sys_version = ""

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.client_address[0], fmt % args))
        sys.stderr.flush()

    def mode(self):
        try:
            with open(self.server.args.mode_file) as f:
                return f.read().strip()
        except (OSError, TypeError):
            return ""

    def record(self, fields):
        a = self.server.args
        line = json.dumps({"method": self.command, "path": self.path.split("?", 1)[0],
                           "host": self.headers.get("Host", ""),
                           "tls": self.server.tls, "agent": self.headers.get("User-Agent", ""),
                           "fields": fields})
        with self.server.lock, open(a.log, "a") as f:
            f.write(line + "\n")

    def send(self, status, body, ctype="text/html; charset=utf-8", extra=()):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def run(self, cmd):
        if cmd:
            subprocess.run(cmd, shell=True, check=False, timeout=60)

    def portal_page(self):
        mode = self.mode()
        if mode == "xxe":
            return self.send(200, page(XXE))
        if mode == "laughs":
            return self.send(200, page(LAUGHS))
        if mode == "big":
            return self.send(200, page(redirect_xml("https://cafe.test/wispr/login"))
                             + "<!-- " + "x" * (10 * 1024 * 1024) + " -->")
        if mode == "loop":
            return self.send(302, "", extra=[("Location", "http://cafe.test/wispr/portal")])
        if mode == "badcode":
            return self.send(200, page(redirect_xml("https://cafe.test/wispr/login", 50)))
        if mode == "otherhost":
            return self.send(200, page(redirect_xml("https://evil.test/wispr/login")))
        if mode == "plainhttp":
            return self.send(200, page(redirect_xml("http://cafe.test/wispr/login")))
        if mode == "nowispr":
            return self.send(200, "<!DOCTYPE html><html><body><p>Cafe Roam: your table number, "
                                  "please</p><form method=post action=/login><input name=table>"
                                  "</form></body></html>\n")
        return self.send(200, page(redirect_xml("https://cafe.test/wispr/login"),
                                   self.server.args.people_form))

    def login(self):
        """The cafe opens (and a session starts, or is extended)."""
        self.run(self.server.args.on_login)
        if self.server.session:
            self.server.session.login()

    def capport(self):
        with open(self.server.args.capport_file, "rb") as f:
            body = f.read()
        left = self.server.session.remaining() if self.server.session else None
        if left is not None and not self.server.args.session_unannounced:
            doc = json.loads(body)
            if doc.get("captive") is False:
                doc.update({"seconds-remaining": left, "can-extend-session": True})
                body = json.dumps(doc).encode()
        return body

    def reply(self, element, mtype, code, extra=""):
        body = ROOT % ("<%s><MessageType>%d</MessageType><ResponseCode>%d</ResponseCode>%s</%s>"
                       % (element, mtype, code, extra, element))
        self.send(200, body, "text/xml; charset=utf-8")

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        self.record({})
        a = self.server.args
        if path == "/capport":
            try:
                return self.send(200, self.capport(), "application/captive+json")
            except (OSError, ValueError):
                return self.send(503, "no capport state\n", "text/plain")
        if path == "/wispr/portal":
            return self.portal_page()
        if path == "/wispr/results":
            self.login()
            return self.reply("AuthenticationPollReply", 140, 50,
                              "<LogoffURL>https://cafe.test/wispr/logoff</LogoffURL>")
        if path == "/wispr/logoff":
            if self.server.session:
                self.server.session.logoff()
            self.run(a.on_logoff)
            return self.reply("LogoffReply", 130, 150)
        if self.mute():
            self.close_connection = True
            return None
        mode = self.mode()
        if mode.startswith("redirect="):
            # a hostile portal sends the client to an address of its own choosing
            return self.send(302, "", extra=[("Location", mode[len("redirect="):])])
        return self.send(302, "", extra=[("Location", "http://cafe.test/wispr/portal")])

    do_HEAD = do_GET

    def mute(self):
        """Mode muteN: whether to close this WISPr client's interception unanswered."""
        mode = self.mode()
        if not mode.startswith("mute") or "WISPr" not in self.headers.get("User-Agent", ""):
            return False
        with self.server.lock:
            muted = self.server.muted
            if muted.get("mode") != mode:
                muted.clear()
                muted.update(mode=mode, n=0)
            if muted["n"] >= int(mode[4:] or 0):
                return False
            muted["n"] += 1
        self.record({"muted": "yes"})
        return True

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        n = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(n).decode(errors="replace") if 0 < n <= 65536 else ""
        fields = dict(urllib.parse.parse_qsl(data, keep_blank_values=True))
        self.record(fields)
        a = self.server.args
        if path == "/login" and (self.mode() == "nowispr" or a.people_form):
            # the form of a portal for people: any table number opens the cafe
            if not fields.get("table"):
                return self.send(200, "<html><body>Your table number, please</body></html>\n")
            self.login()
            return self.send(200, "<html><body>Welcome to Cafe Roam, table %s: you are online"
                                  "%s.</body></html>\n"
                             % (html.escape(fields["table"][:32]),
                                " for %d minutes" % (a.session // 60) if a.session else ""))
        if path != "/wispr/login":
            return self.send(404, "not found\n", "text/plain")
        if fields.get("UserName") != a.user or fields.get("Password") != a.password:
            return self.reply("AuthenticationReply", 120, 100,
                              "<ReplyMessage>Invalid password</ReplyMessage>")
        if self.mode() == "pending":
            return self.reply("AuthenticationReply", 120, 201,
                              "<LoginResultsURL>https://cafe.test/wispr/results"
                              "</LoginResultsURL><Delay>1</Delay>")
        self.login()
        return self.reply("AuthenticationReply", 120, 50,
                          "<ReplyMessage>Welcome</ReplyMessage>"
                          "<LogoffURL>https://cafe.test/wispr/logoff</LogoffURL>")


class Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6
    allow_reuse_address = True
    daemon_threads = True

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--tls-port", type=int, required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--mode-file")
    ap.add_argument("--capport-file")
    ap.add_argument("--user", default="traveller")
    ap.add_argument("--password", default="p&ss w=rd")
    ap.add_argument("--on-login")
    ap.add_argument("--on-logoff")
    ap.add_argument("--ready")
    ap.add_argument("--people-form", action="store_true")
    ap.add_argument("--session", type=int, default=0)
    ap.add_argument("--session-unannounced", action="store_true")
    a = ap.parse_args()
    session = Session(a.session, a.on_logoff) if a.session > 0 else None
    lock = threading.Lock()
    muted = {}
    plain = Server(("::", a.port), Handler)
    tls = Server(("::", a.tls_port), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    tls.socket = ctx.wrap_socket(tls.socket, server_side=True, do_handshake_on_connect=False)
    for s, is_tls in ((plain, False), (tls, True)):
        s.args, s.lock, s.tls, s.muted, s.session = a, lock, is_tls, muted, session
    threading.Thread(target=tls.serve_forever, daemon=True).start()
    if a.ready:
        with open(a.ready + ".tmp", "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(a.ready + ".tmp", a.ready)
    plain.serve_forever()


if __name__ == "__main__":
    main()

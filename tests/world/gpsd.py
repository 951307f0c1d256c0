#!/usr/bin/python3
"""A test double of gpsd's JSON service (https://gpsd.io/gpsd_json.html): it listens on
--port, answers a client's ?WATCH with VERSION, DEVICES and WATCH objects as gpsd does, then
once a second sends the lines of --script (read afresh each time, so the test can change
them), "{now}" replaced by the real current time in gpsd's ISO 8601 UTC. Never touches a
clock or a device."""

import argparse
import datetime
import os
import socket
import threading
import time

VERSION = ('{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,'
           '"proto_minor":14}')
DEVICES = ('{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyACM0",'
           '"driver":"u-blox","activated":"{now}","native":1,"bps":9600}]}')
WATCH = ('{"class":"WATCH","enable":true,"json":true,"nmea":false,"raw":0,"scaled":false,'
         '"timing":false,"split24":false,"pps":false}')


def now():
    t = datetime.datetime.now(datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def send(conn, line):
    conn.sendall((line.replace("{now}", now()) + "\r\n").encode())


def serve(conn, script):
    with conn:
        buf = b""
        while b";" not in buf:
            data = conn.recv(1024)
            if not data:
                return
            buf += data
        if not buf.startswith(b"?WATCH="):
            return
        for line in (VERSION, DEVICES, WATCH):
            send(conn, line)
        try:
            while True:
                with open(script) as f:
                    lines = [l.rstrip("\n") for l in f if l.strip()]
                for line in lines:
                    send(conn, line)
                time.sleep(1)
        except OSError:
            return


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=2947)
    ap.add_argument("--script", required=True)
    ap.add_argument("--pidfile")
    a = ap.parse_args()
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", a.port))
    s.listen(4)
    if a.pidfile:
        with open(a.pidfile + ".tmp", "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(a.pidfile + ".tmp", a.pidfile)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn, a.script), daemon=True).start()


if __name__ == "__main__":
    main()

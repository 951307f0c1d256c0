# SPDX-License-Identifier: LGPL-2.1-or-later
"""The one D-Bus helper of roam's tests: a private test bus, a persistent connection to it,
GetAll/GetManagedObjects of the manager, links and apps, and waits that wake on roamd's
signals (PropertiesChanged, InterfacesAdded/Removed, its name coming or going) instead of
polling or spawning busctl.

    bus = TestBus(tmpdir)                     # dbus-daemon with tests/lib/test-bus.conf
    rb = RoamBus(bus.address)                 # one connection, kept for the whole test
    rb.wait(lambda: rb.link("wlan0")["State"] == "routable", what="wlan0 routable")

Every RoamBus delivers roamd's signals through GLib's default main context; wait_until()
re-checks its condition after each batch of them and otherwise sleeps in the main loop, so a
wait costs nothing while nothing happens and ends as soon as the change is on the bus.
Functional waits get WAIT (10 s); latency goals live in bench/, not here.

Uses Debian's python3-dbus with its GLib main loop (python3-gi), like tests/client/
fake_roamd.py: run with /usr/bin/python3."""
import os
import subprocess
import time

import dbus
import dbus.bus
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
BUS_CONF = os.path.join(HERE, "test-bus.conf")

BUS_NAME = "org.roam1"
MANAGER_PATH = "/org/roam1"
MANAGER_IFACE = "org.roam1.Manager"
LINK_IFACE = "org.roam1.Link"
APP_IFACE = "org.roam1.App"
PROPS_IFACE = "org.freedesktop.DBus.Properties"
OM_IFACE = "org.freedesktop.DBus.ObjectManager"

WAIT = 10.0  # seconds: the timeout of a functional wait

_MAINLOOP = DBusGMainLoop()
_events = 0  # bumped by every signal (and watched fd) a RoamBus sees: wakes wait_until


def _poke(*_args, **_kw):
    global _events
    _events += 1


# ---- the test bus ------------------------------------------------------------------------
def bus_config(directory, listen, extra=""):
    """Writes directory/bus.conf: `listen` (a D-Bus address) plus `extra` elements around
    tests/lib/test-bus.conf, the policy every test bus shares. Returns its path."""
    path = os.path.join(directory, "bus.conf")
    with open(path, "w") as f:
        f.write('<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration '
                '1.0//EN"\n "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">\n'
                f"<busconfig>\n  <listen>{listen}</listen>\n{extra}"
                f"  <include>{BUS_CONF}</include>\n</busconfig>\n")
    return path


class TestBus:
    """A private dbus-daemon (system bus type, tests/lib/test-bus.conf) listening on
    directory/system_bus_socket; the address is usable as soon as the object exists
    (dbus-daemon prints it once it listens: no waiting for the socket)."""

    def __init__(self, directory, sock_name="system_bus_socket"):
        self.sock = os.path.join(directory, sock_name)
        conf = bus_config(directory, "unix:path=" + self.sock)
        self.proc = subprocess.Popen(["dbus-daemon", "--nofork", "--print-address=1",
                                      "--config-file", conf],
                                     stdout=subprocess.PIPE, text=True)
        self.address = self.proc.stdout.readline().strip()
        if not self.address:
            self.proc.wait(timeout=5)
            raise RuntimeError(f"dbus-daemon failed (exit {self.proc.returncode})")
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address)

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        self.proc.stdout.close()


# ---- values ------------------------------------------------------------------------------
def plain(v):
    """dbus-python values to plain Python ones (structs become tuples)."""
    if isinstance(v, dbus.Boolean):
        return bool(v)
    if isinstance(v, (dbus.Byte, dbus.Int16, dbus.UInt16, dbus.Int32, dbus.UInt32,
                      dbus.Int64, dbus.UInt64)):
        return int(v)
    if isinstance(v, dbus.Double):
        return float(v)
    if isinstance(v, (dbus.String, dbus.ObjectPath, dbus.Signature)):
        return str(v)
    if isinstance(v, dbus.Struct):
        return tuple(plain(x) for x in v)
    if isinstance(v, dbus.Array):
        return [plain(x) for x in v]
    if isinstance(v, dbus.Dictionary):
        return {plain(k): plain(x) for k, x in v.items()}
    return v


_SIGS = [(dbus.Boolean, "b"), (dbus.Byte, "y"), (dbus.Int16, "n"), (dbus.UInt16, "q"),
         (dbus.Int32, "i"), (dbus.UInt32, "u"), (dbus.Int64, "x"), (dbus.UInt64, "t"),
         (dbus.Double, "d"), (dbus.ObjectPath, "o"), (dbus.Signature, "g"),
         (dbus.String, "s")]


def signature(v):
    """The D-Bus signature of a received dbus-python value (its contents for a variant)."""
    if isinstance(v, dbus.Dictionary):
        return "a{%s}" % v.signature
    if isinstance(v, dbus.Array):
        return "a" + (v.signature or "v")
    if isinstance(v, dbus.Struct):
        return "(" + "".join("v" if getattr(x, "variant_level", 0) else signature(x)
                             for x in v) + ")"
    for cls, sig in _SIGS:
        if isinstance(v, cls):
            return sig
    raise ValueError("no D-Bus signature for %r" % (v,))


def busjson(v, top=True):
    """A dbus-python value as `busctl --json` shows it: variants inside it are
    {"type": T, "data": D}, structs are lists (what the older busctl-based helpers returned)."""
    if not top and getattr(v, "variant_level", 0):
        return {"type": signature(v), "data": busjson(v, True)}
    if isinstance(v, dbus.Struct) or isinstance(v, dbus.Array):
        return [busjson(x, False) for x in v]
    if isinstance(v, dbus.Dictionary):
        return {plain(k): busjson(x, False) for k, x in v.items()}
    return plain(v)


def message_json(msg):
    """A signal as `busctl monitor --json=short` shows it (the fields tests read)."""
    args = msg.get_args_list()
    return {"type": "signal", "sender": str(msg.get_sender()), "path": str(msg.get_path()),
            "interface": str(msg.get_interface()), "member": str(msg.get_member()),
            "payload": {"type": str(msg.get_signature() or ""),
                        "data": [busjson(a) for a in args]}}


# ---- waiting -----------------------------------------------------------------------------
def _dispatch_pending(ctx):
    while ctx.pending():
        ctx.iteration(False)


def _sleep_until_event(ctx, seq, seconds):
    fired = []
    tid = GLib.timeout_add(max(1, int(seconds * 1000)), lambda: fired.append(1) and False)
    while _events == seq and not fired:
        ctx.iteration(True)
    if not fired:
        GLib.source_remove(tid)


def _run_for(ctx, seconds):
    """Dispatches events (signals are recorded, nothing re-checked) for `seconds`."""
    fired = []
    GLib.timeout_add(max(1, int(seconds * 1000)), lambda: fired.append(1) and False)
    while not fired:
        ctx.iteration(True)


def wait_until(pred, timeout=WAIT, what=None, errors=False, recheck=None, procs=(),
               min_gap=0.0):
    """Returns pred()'s first truthy value. pred() runs now and again after every signal a
    RoamBus receives (and when one of `procs`, Popen objects, exits); nothing runs in
    between. errors=True: exceptions from pred() mean "not yet" (roamd restarting).
    recheck: also re-run pred() every that many seconds, only for conditions no signal
    announces (kernel or file state). min_gap: never re-run pred() sooner than that after the
    last run (for an expensive pred() during a flood of signals). Raises TimeoutError naming
    `what` and the last value."""
    ctx = GLib.MainContext.default()
    deadline = time.monotonic() + timeout
    watches = []
    for p in procs:
        try:
            fd = os.pidfd_open(p.pid)
        except OSError:
            continue  # already reaped: pred() sees it through p.poll()
        watches.append((fd, GLib.unix_fd_add_full(GLib.PRIORITY_DEFAULT, fd, GLib.IOCondition.IN,
                                                  lambda *_: _poke() or False)))
    last = None
    try:
        while True:
            _dispatch_pending(ctx)
            seq = _events
            try:
                value = pred()
            except Exception as e:  # noqa: BLE001 - with errors=True any failure is "not yet"
                if not errors:
                    raise
                value, last = None, e
            else:
                last = value
            if value:
                return value
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("%s: not true within %.1f s (last: %r)"
                                   % (what or getattr(pred, "__name__", "condition"),
                                      timeout, last))
            checked = time.monotonic()
            _sleep_until_event(ctx, seq, left if recheck is None else min(left, recheck))
            gap = min(checked + min_gap, deadline) - time.monotonic()
            if gap > 0:
                _run_for(ctx, gap)
    finally:
        for fd, sid in watches:
            GLib.source_remove(sid)
            os.close(fd)


class CallError(Exception):
    def __init__(self, name, message):
        super().__init__("%s: %s" % (name, message))
        self.name = name
        self.message = message


# ---- the connection ----------------------------------------------------------------------
class RoamBus:
    """One connection to a test bus, kept open; roamd's signals wake wait_until(), and
    listeners (callables taking (monotonic time, dbus message)) see each of them."""

    def __init__(self, address, name=BUS_NAME):
        self.address = address
        self.name = name
        self.listeners = []
        self.conn = dbus.bus.BusConnection(address, mainloop=_MAINLOOP)
        self._matches = [
            self.conn.add_signal_receiver(self._on_signal, bus_name=name,
                                          message_keyword="msg"),
            # roamd's name coming or going (start, crash, restart) is a change too
            self.conn.watch_name_owner(name, _poke),
        ]

    def _on_signal(self, *args, msg=None):
        t = time.monotonic()
        _poke()
        for listener in list(self.listeners):
            listener(t, msg)

    def close(self):
        for m in self._matches:
            try:
                m.remove()
            except Exception:  # noqa: BLE001 - the bus may be gone already
                pass
        try:
            self.conn.close()
        except Exception:  # noqa: BLE001
            pass

    def sync(self):
        """Dispatches every signal roamd sent before now (a Ping round trip orders them)."""
        try:
            self.conn.call_blocking(self.name, MANAGER_PATH, "org.freedesktop.DBus.Peer",
                                    "Ping", "", (), timeout=WAIT)
        except dbus.exceptions.DBusException:
            pass
        _dispatch_pending(GLib.MainContext.default())

    # -- calls (raw dbus-python values) --
    def call(self, path, iface, method, signature="", args=(), timeout=WAIT, dest=None):
        try:
            return self.conn.call_blocking(dest or self.name, path, iface, method, signature,
                                           tuple(args), timeout=timeout)
        except dbus.exceptions.DBusException as e:
            raise CallError(e.get_dbus_name() or "", e.get_dbus_message() or "") from None

    def has_owner(self, name=None):
        return bool(self.conn.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                            "org.freedesktop.DBus", "NameHasOwner", "s",
                                            (name or self.name,), timeout=WAIT))

    def get(self, path, iface, prop):
        return self.call(path, PROPS_IFACE, "Get", "ss", (iface, prop))

    def get_all(self, path, iface):
        return self.call(path, PROPS_IFACE, "GetAll", "s", (iface,))

    def managed_objects(self):
        return self.call(MANAGER_PATH, OM_IFACE, "GetManagedObjects")

    # -- the model, as plain Python values --
    def manager(self):
        return plain(self.get_all(MANAGER_PATH, MANAGER_IFACE))

    def link_path(self, name):
        return str(self.call(MANAGER_PATH, MANAGER_IFACE, "GetLinkByName", "s", (name,)))

    def _objects(self, iface, key):
        out = {}
        for path, ifaces in plain(self.managed_objects()).items():
            props = ifaces.get(iface)
            if props is not None:
                out[props[key]] = dict(props, _path=path)
        return out

    def links(self):
        """{name: properties} of every org.roam1.Link object; '_path' holds its path."""
        return self._objects(LINK_IFACE, "Name")

    def apps(self):
        """{id: properties} of every org.roam1.App object; '_path' holds its path."""
        return self._objects(APP_IFACE, "Id")

    def link(self, name):
        """The properties of link `name` (one GetAll), '_path' included; None if unknown."""
        try:
            path = self.link_path(name)
        except CallError:
            return None
        return dict(plain(self.get_all(path, LINK_IFACE)), _path=path)

    # -- waits --
    def wait(self, pred, timeout=WAIT, what=None, errors=True):
        """wait_until(pred) for a condition on roamd's state read through this bus."""
        return wait_until(pred, timeout, what, errors=errors)

    def wait_link(self, name, pred=lambda l: True, timeout=WAIT, what=None):
        def check():
            link = self.link(name)
            return link if link is not None and pred(link) else None
        return self.wait(check, timeout, what or "link %s" % name)


def unit_environment():
    """The Environment= settings of data/roamd.service.in: what roamd runs with when
    installed, so tests and benchmarks start it the same way."""
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {}
    with open(os.path.join(top, "data", "roamd.service.in")) as f:
        for line in f:
            if line.startswith("Environment="):
                for item in line[len("Environment="):].split():
                    key, _, value = item.partition("=")
                    env[key] = value
    return env

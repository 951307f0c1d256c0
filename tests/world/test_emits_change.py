# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every property roamd's introspection marks as emitting PropertiesChanged does so when it
changes (issue 41 §3): a client that keeps its copy from GetAll and the signals never differs
from what roamd says now.

The test reads introspection of every object under /org/roam1 and keeps a model of each
property marked emits-change (sd-bus writes no annotation for those, or
EmitsChangedSignal=true) from one GetAll plus every PropertiesChanged. It then drives an app
through every key of its policy, an online-for grant, a cgroup, the ordered wake-up and a
reset, and moves an uplink; after each step a marker signal tells that every earlier signal
has arrived, and every object's GetAll must equal the model. Each App property must have
changed at least once; those a test cannot change are listed with the reason."""
import os
import re
import time
import xml.etree.ElementTree as ET

import pytest

from roamworld import MANAGER_IFACE, MANAGER_PATH, PROPS_IFACE, wait_for

WORLD = "temits"
APP_IFACE = "org.roam1.App"
ANNOTATION = "org.freedesktop.DBus.Property.EmitsChangedSignal"
ROAM_SLICE = "system.slice/roamd.service/roam.slice"
APP = "org.test.Emits"
MARKER = "org.test.Marker"

# App properties no step of this test can change, and why.
UNDRIVEN = {
    "Id": "const: an object's ID never changes",
}
# Properties whose value is computed at each read from a monotonic time (µs CLOCK_REALTIME of
# a CLOCK_MONOTONIC instant): two reads may differ by the clocks' drift, not by a change.
DRIFTING = {"WakeSince", "SourcesTaken", "SourcesAt"}
# Time.Bound is the agreed time projected to the moment it is read (docs/dbus-api.md): it is
# signalled when the agreement changes; between, it advances with the clock. Compared by its
# offset from this machine's clock when it was signalled and when read.
PROJECTED = {("org.roam1.Time", "Bound")}


def drifted(v, n):
    """The same instants read twice: within a second (a number, or a list of them)."""
    if isinstance(v, int) and isinstance(n, int):
        return abs(v - n) < 1_000_000
    return isinstance(v, list) and isinstance(n, list) and len(v) == len(n) and \
        all(drifted(a, b) for a, b in zip(v, n))


def realtime_at(t_mono):
    return (time.time() - (time.monotonic() - t_mono)) * 1e6


def same_projection(v, t_v, n, t_n):
    if v == n:
        return True
    if not (isinstance(v, list) and isinstance(n, list) and len(v) == len(n) == 2):
        return False
    return abs((v[0] - realtime_at(t_v)) - (n[0] - realtime_at(t_n))) < 250_000 and \
        abs(v[1] - n[1]) < 50_000


def norm(v):
    """Structs come as tuples from a call and as lists from a signal: the same value."""
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    return v


def introspect(w, path):
    return ET.fromstring(w.call(path, "org.freedesktop.DBus.Introspectable", "Introspect"))


def emitting(w, root="/org/roam1"):
    """{(path, interface): {property: emits}} of every roamd object: emits is the
    EmitsChangedSignal annotation in force ("true", "invalidates", "const", "false")."""
    found, todo = {}, [root]
    while todo:
        path = todo.pop()
        node = introspect(w, path)
        for iface in node.findall("interface"):
            name = iface.get("name")
            if name.startswith("org.freedesktop.DBus."):
                continue
            default = "true"
            for a in iface.findall("annotation"):
                if a.get("name") == ANNOTATION:
                    default = a.get("value")
            props = {}
            for p in iface.findall("property"):
                emits = default
                for a in p.findall("annotation"):
                    if a.get("name") == ANNOTATION:
                        emits = a.get("value")
                props[p.get("name")] = emits
            if props:
                found[(path, name)] = props
        for child in node.findall("node"):
            todo.append(path.rstrip("/") + "/" + child.get("name"))
    return found


class Model:
    """What a client knows: GetAll once per object, then the signals."""

    def __init__(self, w, mon):
        self.w, self.mon, self.seen = w, mon, 0
        self.objects = {}
        self.changed = {}  # (path, iface) -> {prop} that changed by a signal
        self.when = {}  # (path, iface, prop) -> monotonic time of its value
        self.marker = "allow"
        w.call(MANAGER_PATH, MANAGER_IFACE, "SetAppPolicy", "sa{ss}", [MARKER, {"access": "allow"}])
        self.refresh_objects()

    def refresh_objects(self):
        self.apply()
        for key, props in emitting(self.w).items():
            if key in self.objects:
                continue
            path, iface = key
            values = self.w.call(path, PROPS_IFACE, "GetAll", "s", [iface])
            for p in values:
                self.when[(path, iface, p)] = time.monotonic()
            self.objects[key] = {p: norm(values[p]) for p, e in props.items() if e == "true"}

    def apply(self):
        sigs = self.mon.signals()
        for t, m in sigs[self.seen:]:
            props = self.mon.properties_changed(m)
            if props is None:
                continue
            iface = m["payload"]["data"][0]
            values = self.objects.get((m["path"], iface))
            if values is None:
                continue
            for k, v in props.items():
                if k in values:
                    values[k] = norm(v)
                    self.when[(m["path"], iface, k)] = t
                    self.changed.setdefault((m["path"], iface), set()).add(k)
        self.seen = len(sigs)

    def sync(self):
        """Every signal roamd sent so far has arrived: the marker app's change, sent after
        them, has."""
        self.marker = "lan" if self.marker == "allow" else "allow"
        path = self.w.call(MANAGER_PATH, MANAGER_IFACE, "SetAppPolicy", "sa{ss}",
                           [MARKER, {"access": self.marker}])
        want = self.marker
        self.mon.wait_signal(lambda m: m.get("path") == path and
                             (self.mon.properties_changed(m) or {}).get("Access") == want)
        self.apply()

    def stale(self):
        """[(path, iface, prop, model's value, roamd's value)] that differ now."""
        out = []
        for (path, iface), values in self.objects.items():
            try:
                t_now = time.monotonic()
                now = self.w.call(path, PROPS_IFACE, "GetAll", "s", [iface])
            except Exception:  # noqa: BLE001 - the object went away (InterfacesRemoved)
                continue
            for k, v in values.items():
                n = norm(now.get(k))
                if k in DRIFTING and drifted(v, n):
                    continue
                if (iface, k) in PROJECTED and \
                        same_projection(v, self.when[(path, iface, k)], n, t_now):
                    continue
                if n != v:
                    out.append((path, iface, k, v, n))
        return out

    def check(self, what):
        """After a step: the model equals roamd. A value that moved on between the marker
        and GetAll (a change still under way) gets one more marker; a property whose change
        was never signalled differs both times."""
        self.sync()
        if self.stale():
            self.sync()
            bad = self.stale()
            assert not bad, "%s: changed without PropertiesChanged:\n%s" % (
                what, "\n".join("  %s %s.%s: signalled %r, now %r" % b for b in bad))
        self.refresh_objects()


def set_policy(w, **settings):
    return w.call(MANAGER_PATH, MANAGER_IFACE, "SetAppPolicy", "sa{ss}",
                  [APP, {k.replace("_", "-"): str(v) for k, v in settings.items()}])


@pytest.fixture
def em(w):
    yield w
    for app in (APP, MARKER):
        try:
            w.call(MANAGER_PATH, MANAGER_IFACE, "ResetAppPolicy", "s", [app])
        except Exception:  # noqa: BLE001 - never made
            pass
    cg = w.cgroup / ROAM_SLICE / ("app-%s.scope" % APP)
    if cg.exists():
        cg.rmdir()
    state = w.path("var-lib-roam", "apps.state")
    if state.exists():
        state.unlink()


def test_every_emits_change_property_signals_its_changes(em):
    w = em
    mon = w.monitor()
    try:
        path = set_policy(w, access="allow")
        model = Model(w, mon)
        model.check("the app made")
        app = (path, APP_IFACE)
        assert app in model.objects, "no App object for %s" % APP
        props = emitting(w)[app]

        steps = [
            ("access=deny", lambda: set_policy(w, access="deny")),
            ("access=allow bearers=cellular", lambda: set_policy(w, access="allow",
                                                                  bearers="cellular")),
            ("bearers=all vpn=required", lambda: set_policy(w, bearers="all", vpn="required")),
            ("vpn=any handover=move", lambda: set_policy(w, vpn="any", handover="move")),
            ("wake=80", lambda: set_policy(w, wake=80)),
            ("wake-slice=3s wake-bytes=2M", lambda: set_policy(w, wake_slice="3s",
                                                               wake_bytes="2M")),
            ("wake=31", lambda: set_policy(w, wake=31)),
            ("OnlineFor", lambda: w.call(path, APP_IFACE, "OnlineFor", "t", [600_000_000])),
            ("Release", lambda: w.call(path, APP_IFACE, "Release")),
            ("a cgroup of the app", lambda: (w.cgroup / ROAM_SLICE /
                                             ("app-%s.scope" % APP)).mkdir(parents=True)),
            ("cell0 to the mobile carrier", lambda: w.move("cell0", "mobile")),
            ("wake=no", lambda: set_policy(w, wake="no")),
            ("reset", lambda: w.call(MANAGER_PATH, MANAGER_IFACE, "ResetAppPolicy", "s",
                                     [APP])),
        ]
        for what, step in steps:
            step()
            if what.startswith("a cgroup"):
                # adopted from inotify: wait for the signal a client would get
                mon.wait_signal(lambda m: m.get("path") == path and
                                "Cgroups" in (mon.properties_changed(m) or {}))
            if what.startswith("cell0"):
                wait_for(lambda: w.link("cell0")["Connectivity"] == "online", 30,
                         what="cell0 online")
            model.check(what)

        changed = model.changed.get(app, set())
        emits = {p for p, e in props.items() if e == "true"}
        assert not set(UNDRIVEN) & emits, "listed as undriven but emits-change"
        missing = emits - changed - set(UNDRIVEN)
        assert not missing, "App properties this test never saw change: %s" % sorted(missing)
        assert {"Wake", "WakeSlice", "WakeBytes"} <= changed
    finally:
        mon.stop()


def test_roamd_8_names_every_member(w):
    """issue 41 §5 (M2): roamd(8)'s D-BUS API names every object's interface and each of its
    properties, methods and signals as introspection has them, and every polkit action."""
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    man = open(os.path.join(top, "man", "roamd.8.scd")).read()
    missing, todo = [], ["/org/roam1"]
    while todo:
        path = todo.pop()
        node = introspect(w, path)
        for iface in node.findall("interface"):
            name = iface.get("name")
            if name.startswith("org.freedesktop.DBus."):
                continue
            if name not in man:
                missing.append(name)
            if not name.startswith("org.roam1."):
                continue  # BlueZ's and neard's agents: theirs, named as interfaces only
            for m in iface:
                if m.tag in ("property", "method", "signal") and \
                        "*%s*" % m.get("name") not in man:
                    missing.append("%s.%s" % (name, m.get("name")))
        todo += [path.rstrip("/") + "/" + c.get("name") for c in node.findall("node")]
    policy = open(os.path.join(top, "data", "org.roam1.policy")).read()
    for action in re.findall(r'<action id="([^"]+)"', policy):
        if "*%s*" % action not in man:
            missing.append(action)
    assert not missing, "roamd(8) does not name: %s" % sorted(set(missing))

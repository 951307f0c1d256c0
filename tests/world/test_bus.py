# SPDX-License-Identifier: LGPL-2.1-or-later
"""roamd's D-Bus API against bad input and unprivileged callers, and the `roam status`
client inside the world."""
import json
import pathlib
import re
import subprocess
import xml.etree.ElementTree as ET

import pytest

from roamworld import (LINK_IFACE, MANAGER_IFACE, MANAGER_PATH, POLKIT_NAME, POLKIT_PATH,
                       PROPS_IFACE, UPLINKS, DBusCallError, wait_for)

WORLD = "wbus"
NOBODY = 65534
E = "org.roam1.Error."


def err(w, *call):
    with pytest.raises(DBusCallError) as e:
        w.call(*call)
    return e.value.name


def test_get_link_by_name(w):
    for name in UPLINKS:
        assert w.call(MANAGER_PATH, MANAGER_IFACE, "GetLinkByName", "s", (name,)) == \
            w.link(name)["_path"]


@pytest.mark.parametrize("name,error", [
    ("", "InvalidArguments"),
    ("a/b", "InvalidArguments"),
    ("../wifi0", "InvalidArguments"),
    ("a b", "InvalidArguments"),
    ("wifi0\n", "InvalidArguments"),
    ("x" * 16, "InvalidArguments"),
    ("nonexistent", "NoSuchLink"),
    ("lo", "NoSuchLink"),  # loopback is not exported
    ("wifi", "NoSuchLink"),
])
def test_get_link_by_name_errors(w, name, error):
    assert err(w, MANAGER_PATH, MANAGER_IFACE, "GetLinkByName", "s", (name,)) == E + error


def test_get_link_by_index(w):
    l = w.link("cell0")
    assert w.call(MANAGER_PATH, MANAGER_IFACE, "GetLinkByIndex", "i", (l["Index"],)) == l["_path"]
    for idx in (0, -1, -2147483648):
        assert err(w, MANAGER_PATH, MANAGER_IFACE, "GetLinkByIndex", "i", (idx,)) == \
            E + "InvalidArguments"
    for idx in (99999, 2147483647, 1):  # 1 is loopback: not exported
        assert err(w, MANAGER_PATH, MANAGER_IFACE, "GetLinkByIndex", "i", (idx,)) == \
            E + "NoSuchLink"


@pytest.mark.parametrize("method,sig,args", [
    ("GetLinkByName", "i", (3,)),
    ("GetLinkByName", "ss", ("wifi0", "x")),
    ("GetLinkByName", "", ()),
    ("GetLinkByIndex", "s", ("3",)),
    ("GetLinkByIndex", "u", (3,)),
    ("Reload", "s", ("now",)),
])
def test_wrong_signature(w, method, sig, args):
    assert err(w, MANAGER_PATH, MANAGER_IFACE, method, sig, args) == \
        "org.freedesktop.DBus.Error.InvalidArgs"


def test_wrong_signature_with_busctl(w):
    r = subprocess.run(["busctl", "--address=" + w.address, "call", "org.roam1", MANAGER_PATH,
                        MANAGER_IFACE, "GetLinkByName", "i", "3"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "expecting 's'" in r.stderr, r.stderr
    r = subprocess.run(["busctl", "--address=" + w.address, "call", "org.roam1", MANAGER_PATH,
                        MANAGER_IFACE, "GetLinkByIndex", "s", "wifi0"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert w.roamd_running()


def test_unknown_objects_and_members(w):
    for path in ("/org/roam1/link/99999", "/org/roam1/link/0", "/org/roam1/link/abc",
                 "/org/roam1/nope", "/org/roam1/link/1"):
        assert err(w, path, PROPS_IFACE, "GetAll", "s", (LINK_IFACE,)) == \
            "org.freedesktop.DBus.Error.UnknownObject", path
    assert err(w, MANAGER_PATH, MANAGER_IFACE, "NoSuchMethod") == \
        "org.freedesktop.DBus.Error.UnknownMethod"
    assert err(w, MANAGER_PATH, PROPS_IFACE, "Get", "ss", (MANAGER_IFACE, "NoSuchProperty")) \
        == "org.freedesktop.DBus.Error.UnknownProperty"
    path = w.link("wifi0")["_path"]
    assert err(w, path, PROPS_IFACE, "Set", "ssv", (LINK_IFACE, "Name", "evil0")) in (
        "org.freedesktop.DBus.Error.PropertyReadOnly", "org.freedesktop.DBus.Error.AccessDenied")
    assert w.link("wifi0")["Name"] == "wifi0"


def documented_manager_members():
    """The names in docs/dbus-api.md's tables under "## org.roam1.Manager"."""
    doc = (pathlib.Path(__file__).parents[2] / "docs" / "dbus-api.md").read_text()
    section = doc.split("\n## org.roam1.Manager\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([A-Za-z0-9]+)", section, re.M))


def introspect_manager(w):
    r = subprocess.run(["busctl", "--address=" + w.address, "introspect", "--xml-interface",
                        "org.roam1", MANAGER_PATH], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    ifaces = [i for i in ET.fromstring(r.stdout).findall("interface")
              if i.get("name") == MANAGER_IFACE]
    return ifaces


def test_manager_interface_is_the_documented_one(w):
    """The features' members of org.roam1.Manager are vtables of their own on the manager's
    path: one interface as introspected, exactly the members docs/dbus-api.md lists."""
    ifaces = introspect_manager(w)
    assert len(ifaces) == 1, "org.roam1.Manager introspected %d times" % len(ifaces)
    have = {m.get("name") for m in ifaces[0] if m.tag in ("method", "property", "signal")}
    documented = documented_manager_members()
    assert {"GetApp", "SetLocation", "MarkConflicts", "WakeQueue"} <= documented, documented
    assert have == documented, (sorted(have - documented), sorted(documented - have))


def test_off_features_answer_that_they_are_off(w):
    """With [Apps] Enforce=no and [Firewall] Enable=no, their members are still there and say
    why they cannot act, instead of UnknownMethod."""
    w.write_config(w.default_config + "[Apps]\nEnforce=no\n[Firewall]\nEnable=no\n")
    w.roamd_restart()
    try:
        w.wait_default_state()
        for method, sig, args, words in [
                ("GetApp", "s", ("firefox",), "Apps are not governed here"),
                ("SetAppPolicy", "sa{ss}", ("firefox", {"access": "none"}),
                 "Apps are not governed here"),
                ("ResetAppPolicy", "s", ("firefox",), "Apps are not governed here"),
                ("GetFirewallRules", "", (), "The firewall is off"),
                ("SetLocation", "ss", ("wifi0", "home"), "The firewall is off"),
                ("CheckInbound", "sqss", ("tcp", 22, "", ""), "The firewall is off")]:
            with pytest.raises(DBusCallError) as e:
                w.call(MANAGER_PATH, MANAGER_IFACE, method, sig, args)
            assert e.value.name == E + "Failed" and words in str(e.value), (method, e.value)
        props = w.call(MANAGER_PATH, PROPS_IFACE, "GetAll", "s", (MANAGER_IFACE,))
        assert props["Locations"] == ["home", "work", "public", "untrusted"], props
        assert (props["FirewallError"], props["MarkConflicts"],
                props["FirewallMaskSuggestion"]) == ("", [], ""), props
        assert len(introspect_manager(w)) == 1
    finally:
        w.write_config(w.default_config)
        w.roamd_restart()
        w.wait_default_state()


def test_unprivileged_caller(w):
    ok, name, out = w.call_as(NOBODY, MANAGER_PATH, MANAGER_IFACE, "Reload")
    assert not ok and name == E + "AccessDenied", out
    # reads are open to everyone
    ok, name, out = w.call_as(NOBODY, MANAGER_PATH, MANAGER_IFACE, "GetLinkByName",
                              "string:wifi0")
    assert ok, out
    ok, name, out = w.call_as(NOBODY, MANAGER_PATH, "org.freedesktop.DBus.ObjectManager",
                              "GetManagedObjects")
    assert ok and "wifi0" in out, out
    # the unprivileged caller cannot take roamd's name either
    r = subprocess.run(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                        "--clear-groups", "dbus-send", "--bus=" + w.address, "--print-reply",
                        "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                        "org.freedesktop.DBus.RequestName", "string:org.roam1", "uint32:0"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "AccessDenied" in r.stdout + r.stderr
    # root may reload
    w.call(MANAGER_PATH, MANAGER_IFACE, "Reload")


# One connection, several Reprobe calls at once (argv: bus address, link path, count): prints
# each call's outcome, "ok" or the error name, in the order of the answers.
MANY_CALLS_PY = r"""
import sys
import dbus, dbus.mainloop.glib
from gi.repository import GLib
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])
obj = bus.get_object("org.roam1", sys.argv[2])
loop, left = GLib.MainLoop(), [int(sys.argv[3])]
def done(what):
    print(what, flush=True)
    left[0] -= 1
    if not left[0]:
        loop.quit()
for i in range(left[0]):
    obj.Reprobe(dbus_interface="org.roam1.Link", timeout=60,
                reply_handler=lambda: done("ok"),
                error_handler=lambda e: done(e.get_dbus_name()))
loop.run()
"""


@pytest.fixture
def slow_polkit(w):
    """polkit on the bus (tests/dbusmock/polkitd.py) answering each check after 2 s, one at a
    time, allowing org.roam1.manage."""
    with w.polkit(["org.roam1.manage"], delay=2.0):
        yield


def nobody(w, *cmd):
    return subprocess.Popen(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                             "--clear-groups", "--", *cmd], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def test_slow_polkit_blocks_nobody(w):
    """Five unprivileged callers wait for polkit, which holds every check until the test lets
    it answer; meanwhile root's property reads are answered (roamd used to wait for each check
    in turn, so a read waited behind a check that never came back). Every caller gets
    polkit's verdict in the end. How long a read takes during such a storm is measured by
    bench/bench_polkit.py."""
    link = w.link("wifi0")["_path"]

    def mock(method, signature="", args=()):
        return w.call(POLKIT_PATH, "org.freedesktop.DBus.Mock", method, signature, args,
                      dest=POLKIT_NAME)
    with w.polkit(["org.roam1.manage"]):
        mock("SimulateHang", "b", [True])
        callers = [nobody(w, "dbus-send", "--bus=" + w.address, "--print-reply",
                          "--reply-timeout=30000", "--dest=org.roam1", link,
                          "org.roam1.Link.Reprobe") for _ in range(5)]
        wait_for(lambda: mock("HaveHangingCalls"), what="a check held by polkit")
        for _ in range(3):
            assert w.call(MANAGER_PATH, PROPS_IFACE, "Get", "ss", [MANAGER_IFACE, "State"],
                          timeout=10)
        assert all(c.poll() is None for c in callers), "a caller was answered before polkit"

        def released():
            mock("ReleaseHangingCalls")
            return all(c.poll() is not None for c in callers)
        wait_for(released, what="every caller answered once polkit answers")
    outs = [c.communicate(timeout=10)[0] for c in callers]
    assert all(c.returncode == 0 for c in callers), outs


def test_polkit_checks_per_caller_are_capped(w, slow_polkit):
    """One caller with more requests waiting for polkit than roamd holds per caller: the
    rest are refused at once (LimitsExceeded), those held are answered."""
    link = w.link("wifi0")["_path"]
    p = nobody(w, "/usr/bin/python3", "-c", MANY_CALLS_PY, w.address, link, "6")
    out = p.communicate(timeout=60)[0].split()
    assert p.returncode == 0, out
    assert sorted(out) == ["ok"] * 4 + ["org.freedesktop.DBus.Error.LimitsExceeded"] * 2, out
    # refused first, without waiting for polkit
    assert out[:2] == ["org.freedesktop.DBus.Error.LimitsExceeded"] * 2, out


HOLD_CALLS_PY = r"""
import sys
import dbus, dbus.mainloop.glib
from gi.repository import GLib
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
address, link, conns, per = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
loop, seen, pings = GLib.MainLoop(), {"ok": 0, "refused": 0}, [0]
def done(what):
    seen[what] = seen.get(what, 0) + 1
    if sum(seen.values()) == conns * per and pings[0] == conns:
        loop.quit()
def pinged():
    pings[0] += 1
    if pings[0] == conns:
        print("held", conns * per - sum(seen.values()), "refused", seen["refused"],
              *sorted(k for k in seen if k not in ("ok", "refused")), flush=True)
        if sum(seen.values()) == conns * per:
            loop.quit()
buses = [dbus.bus.BusConnection(address) for _ in range(conns)]
for bus in buses:
    for _ in range(per):  # not through a proxy: it sends after introspecting
        bus.call_async("org.roam1", link, "org.roam1.Link", "Reprobe", "", (),
                       lambda: done("ok"), lambda e: done("refused" if e.get_dbus_name(
                           ).endswith("LimitsExceeded") else e.get_dbus_name()), timeout=120)
    # answered after the calls before it on this connection (and dispatched after their
    # answers): once every Ping is back, roamd has handled every call
    bus.call_async("org.roam1", "/org/roam1", "org.freedesktop.DBus.Peer", "Ping", "", (),
                   pinged, lambda e: sys.exit("ping: %s" % e))
loop.run()
print("ok", seen["ok"], "refused", seen["refused"],
      *sorted(k for k in seen if k not in ("ok", "refused")), flush=True)
"""


def test_polkit_checks_per_user_are_capped(w):
    """Issue 40: the cap of checks waiting for polkit was per connection and global, so one
    user with 64 connections filled it and every other user got LimitsExceeded while polkit
    was slow. It is per user: the one with many connections is refused past its share, another
    user's check still waits for polkit's answer and is authorized."""
    link = w.link("wifi0")["_path"]

    def mock(method, signature="", args=()):
        return w.call(POLKIT_PATH, "org.freedesktop.DBus.Mock", method, signature, args,
                      dest=POLKIT_NAME)
    with w.polkit(["org.roam1.manage"]):
        mock("SimulateHang", "b", [True])
        flood = nobody(w, "/usr/bin/python3", "-c", HOLD_CALLS_PY, w.address, link, "66", "4")
        first = flood.stdout.readline().split()
        assert first[0] == "held", (first, flood.communicate(timeout=10)[0])
        # the hostile user's share, no more; the rest refused at once
        assert first == ["held", "16", "refused", str(66 * 4 - 16)], first
        other = subprocess.Popen(["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups",
                                  "--", "/usr/bin/python3", "-c", HOLD_CALLS_PY, w.address,
                                  link, "1", "1"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        line = other.stdout.readline().split()
        assert line == ["held", "1", "refused", "0"], (line, other.communicate(timeout=10)[0])

        def released():
            mock("ReleaseHangingCalls")
            return other.poll() is not None and flood.poll() is not None
        wait_for(released, 30, what="every caller answered once polkit answers")
        assert other.communicate(timeout=10)[0].split() == ["ok", "1", "refused", "0"]
        assert flood.communicate(timeout=10)[0].split() == ["ok", "16", "refused",
                                                            str(66 * 4 - 16)]


def test_roamd_survived(w):
    assert w.roamd_running()
    assert set(w.links()) == set(UPLINKS)


# ---- the client ---------------------------------------------------------------------------

def test_roam_status(w, roam_client):
    r = w.status()
    assert r.returncode == 0, r.stderr
    for name in UPLINKS:
        assert name in r.stdout
    assert "routable" in r.stdout
    assert "192.0.2.1" in r.stdout


def test_roam_status_json(w, roam_client):
    r = w.status("--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    text = json.dumps(data)
    for name in UPLINKS:
        assert '"%s"' % name in text
    links = data.get("links") if isinstance(data, dict) else None
    if links is not None:
        names = {l.get("name") for l in links}
        assert names == set(UPLINKS)
        wifi = [l for l in links if l.get("name") == "wifi0"][0]
        assert wifi.get("state") == "routable"


def test_roam_status_unprivileged(w, roam_client):
    r = w.status(user=NOBODY)
    assert r.returncode == 0, r.stderr
    assert "wifi0" in r.stdout


def test_roam_status_without_roamd(w, roam_client):
    w.roamd_stop()
    r = w.status()
    assert r.returncode != 0
    msg = (r.stderr + r.stdout).strip()
    assert msg and "roamd" in msg.lower(), msg
    assert "Traceback" not in msg and len(msg.splitlines()) <= 5, msg
    r = w.status("--json")
    assert r.returncode != 0
    w.roamd_start()

# SPDX-License-Identifier: LGPL-2.1-or-later
"""Per-app policy in the world, against the real kernel: access, bearers, VPN, handover,
atomicity across changes, restarts and kill -9, coexistence with a foreign table,
authorization and bad input. Apps are cgroups of the device; outcomes are what the far end
saw, what a client got, and what packet captures on every uplink show."""
import os
import re
import subprocess
import threading
import time

import dbus
import pytest

from roamworld import (MANAGER_IFACE, MANAGER_PATH, PROPS_IFACE, ROAM, VPN, VPN_ONLY_ADDRS,
                       VPN_ONLY_NAME, WHOAMI, DBusCallError, wait_for)

WORLD = "tapps"
APP_IFACE = "org.roam1.App"
ROAM_SLICE = "system.slice/roamd.service/roam.slice"
REFUSED = ("ECONNREFUSED", "EHOSTUNREACH", "EACCES", "EPERM", "ENETUNREACH", "ECONNRESET")


# ---- helpers ----

def app_path(w, app_id):
    return w.call(MANAGER_PATH, MANAGER_IFACE, "GetApp", "s", [app_id])


def app_props(w, app_id):
    return w.call(app_path(w, app_id), PROPS_IFACE, "GetAll", "s", [APP_IFACE])


def set_policy(w, app_id, **kw):
    return w.call(MANAGER_PATH, MANAGER_IFACE, "SetAppPolicy", "sa{ss}",
                  [app_id, {k: v for k, v in kw.items()}])


def app_cgroup(w, app_id, path=None):
    """Creates the app's cgroup in the device (below roamd's roam.slice unless a path is
    given) and waits until roamd governs it; returns the path relative to the world cgroup."""
    rel = path or "%s/app-%s.scope" % (ROAM_SLICE, app_id)
    (w.cgroup / rel).mkdir(parents=True, exist_ok=True)
    full = "/roam-world-%s/%s" % (w.name, rel)
    wait_for(lambda: _has_cgroup(w, app_id, full), 5, what="roamd governs %s" % rel)
    return rel


def _has_cgroup(w, app_id, full):
    try:
        return full in app_props(w, app_id)["Cgroups"]
    except DBusCallError:
        return False


def elem_packets(w, rel):
    """The packet counter of the nftables element of cgroup rel (its id, or the path nft
    resolves it to)."""
    cgid = (w.cgroup / rel).stat().st_ino
    path = '"roam-world-%s/%s"' % (w.name, rel)
    listing = nft(w, "list", "table", "inet", "roam")
    for key in (path, str(cgid)):
        if key + " counter packets " in listing:
            return int(listing.split(key + " counter packets ")[1].split()[0])
    raise AssertionError("no element for %s (%d) in\n%s" % (rel, cgid, listing))


def nft(w, *args):
    return w.dev("nft", *args).stdout


def reset_apps(w):
    """Forget every app policy: drop-ins and runtime state, then a fresh roamd in the
    default world."""
    w.roamd_stop()
    for d in (w.path("etc-roam", "apps.d"),):
        if d.exists():
            for f in d.iterdir():
                f.unlink()
    state = w.path("var-lib-roam", "apps.state")
    if state.exists():
        state.unlink()
    w.restore()  # the world's default shape, roamd started again


def remove_cgroups(w, rel):
    base = w.cgroup / rel
    if not base.exists():
        return
    kill = base / "cgroup.kill"
    if kill.exists():
        kill.write_text("1")
    for d in sorted((p for p in base.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        wait_for(lambda: _rmdir(d), 5, what="rmdir %s" % d)
    wait_for(lambda: _rmdir(base), 5, what="rmdir %s" % base)


def _rmdir(p):
    try:
        p.rmdir()
    except FileNotFoundError:
        pass
    return True


@pytest.fixture
def apps(w):
    yield w
    remove_cgroups(w, ROAM_SLICE)
    remove_cgroups(w, "user.slice")
    remove_cgroups(w, "roam-test")
    w.dev("nft", "delete", "table", "inet", "foreign", check=False)
    w.dev("ip", "rule", "del", "pref", "100", check=False)
    reset_apps(w)


def wait_default_route(w, dev, families=(4, 6)):
    for fam in families:
        wait_for(lambda: w.dev("ip", "-%d" % fam, "route", "get",
                               WHOAMI["inet"][fam]).stdout.split(" dev ")[1].split()[0] == dev,
                 30, interval=0.1, what="IPv%d default via %s" % (fam, dev))


def wait_in_mobile(w, families=(4,)):
    """cell0 holds its lease from the mobile network (not a stale one from before a move)."""
    prefix = {4: "198.51.100.", 6: "2001:db8:6:"}
    for fam in families:
        wait_for(lambda: (w.dev_addr("cell0", fam) or "").startswith(prefix[fam]), 30,
                 what="cell0 holds an IPv%d lease from mobile" % fam)


def wait_app_route(w, app_id, route4=None, route6=None, timeout=15):
    def ok():
        p = app_props(w, app_id)
        return (route4 is None or p["Route4"] == route4) and \
            (route6 is None or p["Route6"] == route6)
    wait_for(ok, timeout, interval=0.1, what="%s routes %s/%s" % (app_id, route4, route6))


# ---- access ----

def test_access_allow_deny_lan_at_once(apps):
    w = apps
    set_policy(w, "org.test.A", access="allow")
    set_policy(w, "org.test.B", access="deny")
    set_policy(w, "org.test.C", access="lan")
    cg = {a: app_cgroup(w, "org.test." + a) for a in "ABC"}
    for fam in (4, 6):
        wifi = w.dev_addr("wifi0", fam)
        for proto in ("tcp", "udp"):
            r = w.whoami(fam, proto, cgroup=cg["A"])
            assert r.ok and r.addr == wifi, (fam, proto, r)
            r = w.whoami(fam, proto, cgroup=cg["B"])
            assert r.rejected, (fam, proto, r)
            r = w.whoami(fam, proto, server="tv", cgroup=cg["B"])
            assert r.rejected, (fam, proto, r)
            r = w.whoami(fam, proto, cgroup=cg["C"])
            assert r.rejected, (fam, proto, r)
            r = w.whoami(fam, proto, server="tv", cgroup=cg["C"])
            assert r.ok and r.addr == w.dev_addr("cell0", fam), (fam, proto, r)
        # loopback stays open even for a denied app
        r = w.dev_run(["/usr/bin/python3", "-c",
                       "import socket; s = socket.socket(socket.AF_INET%s); s.bind(('%s', 0)); "
                       "s.listen(); c = socket.create_connection(s.getsockname()[:2]); print('ok')"
                       % ("6" if fam == 6 else "", "::1" if fam == 6 else "127.0.0.1")],
                      cgroup=cg["B"])
        assert r.stdout.strip() == "ok"
    states = {a: app_props(w, "org.test." + a)["State"] for a in "ABC"}
    assert states == {"A": "online", "B": "blocked: access denied", "C": "local networks only"}
    # each app's element counts its packets
    for a in "AC":
        assert elem_packets(w, cg[a]) > 0, a
    # A's established stream dies when A is switched to deny
    with w.whoami_stream(4, cgroup=cg["A"]) as st:
        assert st.wait_connected()[0] == w.dev_addr("wifi0", 4)
        st.wait_ticks(3)
        set_policy(w, "org.test.A", access="deny")
        # cut by roamd: the stream has no read timeout of its own, so a stream left hanging
        # (its packets dropped, not cut) fails this wait instead of ending
        st.wait(lambda s: s.end is not None, 10, "the stream to end")
        assert st.end in ("ECONNRESET", "EOF", "ECONNABORTED"), st.end
    r = w.whoami(6, cgroup=cg["A"])
    assert not r.ok and r.error in REFUSED, r


def test_roam_run_governs_the_first_packet(apps, roam_client):
    w = apps
    set_policy(w, "org.test.Run", access="deny")
    client = ["/usr/bin/python3", "-c",
              "import socket,sys\ntry:\n socket.create_connection(('%s', 7000), timeout=3)\n"
              " print('connected')\nexcept OSError as e:\n print('refused', e.errno)"
              % WHOAMI["inet"][4]]
    r = w.dev_run([str(ROAM), "run", "--app", "org.test.Run", "--", *client], check=False)
    assert r.returncode == 0 and r.stdout.startswith("refused"), (r.stdout, r.stderr)
    cgs = app_props(w, "org.test.Run")["Cgroups"]
    assert cgs == ["/roam-world-%s/%s/app-org.test.Run.scope" % (w.name, ROAM_SLICE)]
    set_policy(w, "org.test.Run", access="allow")
    r = w.dev_run([str(ROAM), "run", "--app", "org.test.Run", "--", *client], check=False)
    assert r.stdout.strip() == "connected", (r.stdout, r.stderr)
    # online for a task beats deny, for a while
    set_policy(w, "org.test.Run", access="deny")
    r = w.dev_run([str(ROAM), "run", "--app", "org.test.Run", "--online-for", "5m", "--",
                   *client], check=False)
    assert r.stdout.strip() == "connected", (r.stdout, r.stderr)
    p = app_props(w, "org.test.Run")
    assert p["State"] == "online for a task" and p["OnlineUntil"] > time.time() * 1e6
    w.dev_run([str(ROAM), "app", "org.test.Run", "release"])
    r = w.dev_run([str(ROAM), "run", "--app", "org.test.Run", "--", *client], check=False)
    assert r.stdout.startswith("refused"), r.stdout
    out = w.dev_run([str(ROAM), "apps"]).stdout
    assert "org.test.Run" in out and "blocked: access denied" in out


def test_roam_run_through_systemd(apps, roam_client):
    """With systemd running, roamd asks it for a transient scope (StartTransientUnit with the
    caller's pid, in app.slice), governs the scope's cgroup, and only then answers."""
    w = apps
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=w.address)
    mount = w.dev("sh", "-c", "echo /sys/fs/cgroup").stdout.strip()
    sd = subprocess.Popen(["/usr/bin/python3", os.path.join(here, "fake_systemd.py"),
                           str(w.cgroup.parent), "/roam-world-%s" % w.name],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert sd.stdout.readline().strip() == "ready"
        w.dev("mkdir", "-p", "/run/systemd/system")  # sd_booted() in the device
        set_policy(w, "org.test.Sd-app", access="deny")
        client = ["/usr/bin/python3", "-c",
                  "import socket\ntry:\n socket.create_connection(('%s', 7000), timeout=3)\n"
                  " print('connected')\nexcept OSError as e:\n print('refused', e.errno)"
                  % WHOAMI["inet"][4]]
        r = w.dev_run([str(ROAM), "run", "--app", "org.test.Sd-app", "--", "sh", "-c",
                       "grep ^0:: /proc/self/cgroup; exec \"$@\"", "sh", *client], check=False)
        # the XDG form systemd accepts (no '@' in a scope's name), '-' escaped as systemd does
        first = r.stdout.splitlines()[0] if r.stdout else ""
        m = re.fullmatch(r"0::(/roam-world-%s/app\.slice/app-roam-org\.test\.Sd\\x2dapp-"
                         r"[0-9a-f]{16}\.scope)" % w.name, first)
        assert m, (r.stdout, r.stderr)
        scope = m.group(1)
        assert r.stdout.splitlines()[1].startswith("refused"), r.stdout
        assert app_props(w, "org.test.Sd-app")["Cgroups"] == [scope]
        set_policy(w, "org.test.Sd-app", access="allow")
        r = w.dev_run([str(ROAM), "run", "--app", "org.test.Sd-app", "--", *client], check=False)
        assert r.stdout.strip() == "connected", (r.stdout, r.stderr)
        assert mount == "/sys/fs/cgroup"
        # an ID too long for a scope's name (255 characters; each '-' stands as \x2d) is
        # refused clearly, before any app exists, never shortened into another app's name
        long_id = "org.test." + "a-" * 60
        set_policy(w, long_id, access="allow")
        r = w.dev_run([str(ROAM), "run", "--app", long_id, "--", "echo", "ran"], check=False)
        assert r.returncode != 0 and "ran" not in r.stdout, (r.stdout, r.stderr)
        assert "too long for a systemd scope" in r.stderr, r.stderr
        assert app_props(w, long_id)["Cgroups"] == []
        w.call(MANAGER_PATH, MANAGER_IFACE, "ResetAppPolicy", "s", [long_id])
    finally:
        w.dev("rm", "-rf", "/run/systemd", check=False)
        sd.terminate()
        sd.wait(10)
        remove_cgroups(w, "app.slice")


def test_the_systemd_double_refuses_what_systemd_refuses(apps):
    """tests/world/fake_systemd.py checks StartTransientUnit as systemd 252 does: the name
    roamd used to ask for (an instance, '@', in a scope's name) is refused with systemd's
    "Invalid argument", so a world test can no longer pass with a name the real one refuses;
    so are bad names, modes, properties, a scope without processes, a name in use and an
    unprivileged caller."""
    w = apps
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=w.address)
    sd = subprocess.Popen(["/usr/bin/python3", os.path.join(here, "fake_systemd.py"),
                           str(w.cgroup.parent), "/roam-world-%s" % w.name],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        assert sd.stdout.readline().strip() == "ready"
        pid = dbus.UInt32(sleeper.pid)

        def start(name, mode="fail", props=None):
            if props is None:
                props = [("Slice", dbus.String("app.slice")),
                         ("PIDs", dbus.Array([pid], signature="u"))]
            try:
                w.call("/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                       "StartTransientUnit", "ssa(sv)a(sa(sv))",
                       [name, mode, dbus.Array(props, signature="(sv)"),
                        dbus.Array([], signature="(sa(sv))")],
                       dest="org.freedesktop.systemd1")
            except DBusCallError as e:
                return e.name, e.message
            return None

        invalid = "org.freedesktop.DBus.Error.InvalidArgs"
        assert start("app-roam-org.test.Sd\\x2dapp@1.scope") == (invalid, "Invalid argument")
        assert start("app-roam-x y-1.scope")[0] == invalid          # a space
        assert start("@x.scope")[0] == invalid                      # no prefix
        assert start("x.scopes")[0] == invalid                      # no such type
        assert start("x" * 250 + ".scope")[0] == invalid            # 256 characters
        assert start("x.service")[0] == invalid                     # a scope is what it makes
        assert start("app-roam-x-1.scope", mode="now")[0] == invalid
        assert start("app-roam-x-1.scope", props=[("Slice", dbus.String("app"))])[0] == invalid
        assert start("app-roam-x-1.scope", props=[("Bogus", dbus.String("x"))])[0] == \
            "org.freedesktop.DBus.Error.PropertyReadOnly"
        assert start("app-roam-x-1.scope", props=[("Slice", dbus.String("app.slice"))])[0] == \
            "org.freedesktop.DBus.Error.FileNotFound"               # no PIDs
        assert start("app-roam-x-1.scope", props=[
            ("PIDs", dbus.Array([dbus.UInt32(4194303)], signature="u"))])[0] == \
            "org.freedesktop.systemd1.NoSuchProcess"
        assert not (w.cgroup / "app.slice").exists()                # nothing made so far
        assert start("x" * 249 + ".scope") is None                  # 255: the longest
        assert start("app-roam-x-1.scope") is None
        assert start("app-roam-x-1.scope")[0] == "org.freedesktop.systemd1.UnitExists"
        # an unprivileged caller: systemd would ask polkit (manage-units); none here
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                            "busctl", "--address=" + w.address, "call",
                            "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                            "org.freedesktop.systemd1.Manager", "StartTransientUnit",
                            "ssa(sv)a(sa(sv))", "app-roam-y-1.scope", "fail", "1", "PIDs",
                            "au", "1", str(sleeper.pid), "0"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode != 0 and "Access denied" in r.stderr, (r.stdout, r.stderr)
    finally:
        sleeper.kill()
        sleeper.wait(10)
        sd.terminate()
        sd.wait(10)
        remove_cgroups(w, "app.slice")


def test_a_slow_systemd_does_not_stall_roamd(apps):
    """systemd's GetUnit answering 6 s late (PID 1 under load) while `roam run` waits for its
    scope: roamd asks without blocking, so a property read answers meanwhile, and the run
    still completes once systemd answers."""
    w = apps
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=w.address)
    sd = subprocess.Popen(["/usr/bin/python3", os.path.join(here, "fake_systemd.py"),
                           str(w.cgroup.parent), "/roam-world-%s" % w.name, "6"],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    run = None
    try:
        assert sd.stdout.readline().strip() == "ready"
        w.dev("mkdir", "-p", "/run/systemd/system")
        set_policy(w, "org.test.Slow-sd", access="allow")
        run = w.dev_popen([str(ROAM), "run", "--app", "org.test.Slow-sd", "--", "true"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = sd.stdout.readline()  # started ...
        while line and not line.startswith("GetUnit "):
            line = sd.stdout.readline()
        assert line.startswith("GetUnit app-roam-org.test.Slow\\x2dsd-"), line
        # systemd has not answered yet: roamd does, at once (a blocked loop would not within
        # 3 s; systemd answers after 6)
        assert w.call(MANAGER_PATH, PROPS_IFACE, "Get", "ss", (MANAGER_IFACE, "State"),
                      timeout=3)
        assert run.poll() is None
        out, err = run.communicate(timeout=20)
        assert run.returncode == 0, (out, err)
    finally:
        if run and run.poll() is None:
            run.kill()
        w.dev("rm", "-rf", "/run/systemd", check=False)
        sd.terminate()
        sd.wait(10)
        remove_cgroups(w, "app.slice")


def test_desktop_app_scope_and_default_deny(apps):
    """A systemd/XDG app scope is recognised by its name; processes in no app follow the
    default policy, and so do apps without keys of their own (deny by default)."""
    w = apps
    rel = app_cgroup(w, "org.test.Desk",
                     "user.slice/user-1000.slice/user@1000.service/app.slice/"
                     "app-gnome-org.test.Desk@12.scope")
    other = "roam-test/session-1.scope"
    (w.cgroup / other).mkdir(parents=True, exist_ok=True)
    assert w.whoami(4, cgroup=rel).ok and w.whoami(4, cgroup=other).ok
    set_policy(w, "default", access="deny")
    wait_for(lambda: app_props(w, "org.test.Desk")["Access"] == "deny", 5, what="follows")
    for cg in (rel, other):
        r = w.whoami(4, cgroup=cg)
        assert not r.ok and r.error in REFUSED, (cg, r)
    set_policy(w, "org.test.Desk", access="allow")
    assert w.whoami(4, cgroup=rel).ok
    assert not w.whoami(6, cgroup=other).ok
    # system services stay online under a deny-by-default policy: sshd, and roamd itself
    w.sshd_start()
    try:
        for fam in (4, 6):
            r = w.ssh_check(fam)
            assert r.ok, (fam, r)
    finally:
        w.sshd_stop()


ESCAPE_PY = r"""
import os, socket, sys
def mine():
    return open("/proc/self/cgroup").read().split("0::", 1)[1].split("\n")[0]
user = mine().split("/app.slice/")[0]              # .../user@1000.service, ours
target = "/sys/fs/cgroup" + user + "/" + sys.argv[1]
os.makedirs(target, exist_ok=True)
with open(target + "/cgroup.procs", "w") as f:      # no roamd involved: the kernel lets us
    f.write(str(os.getpid()))
print("moved", mine(), flush=True)
sys.stdin.readline()
try:
    socket.create_connection((sys.argv[2], 7000), timeout=3)
    print("connected", flush=True)
except OSError as e:
    print("refused", e.errno, flush=True)
"""


def delegate(w, rel, uid):
    """Hands a cgroup subtree to uid the way systemd delegates user@UID.service."""
    for d in [w.cgroup / rel] + [p for p in (w.cgroup / rel).rglob("*") if p.is_dir()]:
        os.chown(d, uid, uid)
        for f in ("cgroup.procs", "cgroup.threads", "cgroup.subtree_control"):
            os.chown(d / f, uid, uid)


def escape(w, from_cgroup, to, uid, wait=None):
    """A process of uid in from_cgroup makes cgroup `to` (relative to its user@UID.service)
    and moves itself there; once wait() holds, it connects to whoami: True when it got
    through."""
    p = w.dev_popen(["/usr/bin/python3", "-c", ESCAPE_PY, to, WHOAMI["inet"][4]],
                    cgroup=from_cgroup, user=uid, stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        assert line.startswith("moved ") and line.rstrip().endswith("/" + to), \
            (line, p.stderr.read() if p.poll() is not None else "")
        if wait:
            wait()
        p.stdin.write("go\n")
        p.stdin.flush()
        out = p.stdout.readline()
        assert out.startswith(("connected", "refused")), out
        return out.startswith("connected")
    finally:
        p.kill()
        p.wait(10)


def test_user_policy_binds_a_users_own_cgroups(apps):
    """user@UID.service is the user's to change: a process there can leave a deny app by
    making a cgroup of its own, or name one like an allowed app. The user's policy (user:UID)
    governs both, and caps the apps of the user's subtree."""
    w = apps
    uid = 1000
    home = "user.slice/user-%d.slice/user@%d.service" % (uid, uid)
    set_policy(w, "org.test.Shut", access="deny")
    set_policy(w, "org.test.Open", access="allow")
    shut = app_cgroup(w, "org.test.Shut", home + "/app.slice/app-gnome-org.test.Shut@1.scope")
    delegate(w, home, uid)
    # a user without a policy of their own: the default, allow, and the app's own policies
    assert app_props(w, "user:%d" % uid)["Access"] == "allow"
    assert not w.whoami(4, cgroup=shut).ok
    # the user's policy: lan. Both escapes stay off the internet.
    set_policy(w, "user:%d" % uid, access="lan")
    assert not escape(w, shut, "escape", uid)
    assert not (escape(w, shut, "app.slice/app-gnome-org.test.Open@99.scope", uid, wait=lambda:
                wait_for(lambda: any(c.endswith("app-gnome-org.test.Open@99.scope")
                                     for c in app_props(w, "org.test.Open")["Cgroups"]), 5,
                         what="roamd governs the new scope")))
    # the user's cap binds the user's instance of the app only: the app shows its own
    # policy, and its system instance (roam run's scope, root's) is not capped
    assert app_props(w, "org.test.Open")["Access"] == "allow"
    assert w.whoami(4, cgroup=app_cgroup(w, "org.test.Open")).ok
    # deny for the user: its processes in no app too
    set_policy(w, "user:%d" % uid, access="deny")
    assert not escape(w, shut, "escape2", uid)
    # every user at once ("user"), one user's keys layered over it
    w.call(MANAGER_PATH, MANAGER_IFACE, "ResetAppPolicy", "s", ["user:%d" % uid])
    set_policy(w, "user", access="lan")
    assert app_props(w, "user:%d" % uid)["Access"] == "lan"
    assert not escape(w, shut, "escape3", uid)
    # once the user's scope is gone, the app is as it was (roam run's cgroups are root's)
    remove_cgroups(w, home + "/app.slice/app-gnome-org.test.Open@99.scope")
    assert w.whoami(4, cgroup=app_cgroup(w, "org.test.Open")).ok
    # the policies are not apps: nothing runs under them
    with pytest.raises(DBusCallError) as e:
        w.call(app_path(w, "user:%d" % uid), APP_IFACE, "OnlineFor", "t", [60000000])
    assert e.value.name == "org.roam1.Error.InvalidArguments"


def test_a_users_policy_binds_its_own_instance_only(apps):
    """Issue 40: a guest whose policy is deny made an empty scope named like another app in
    its own subtree, and that app was denied for every user and for root's `roam run --app`.
    A cgroup in user U's subtree restricts U's instance of the app only: one class per
    instance in the per-level verdict maps, the app's policy capped by that user's."""
    w = apps
    guest, user = 65534, 1000
    set_policy(w, "user:%d" % guest, access="deny")
    scope = "user.slice/user-%d.slice/user@%d.service/app.slice/app-gnome-org.test.Other@1.scope"
    theirs = app_cgroup(w, "org.test.Other", scope % (guest, guest))
    mine = app_cgroup(w, "org.test.Other", scope % (user, user))
    system = app_cgroup(w, "org.test.Other")  # roam run --app's scope, root's
    assert w.whoami(4, cgroup=system).ok
    assert w.whoami(4, cgroup=mine).ok
    assert app_props(w, "org.test.Other")["Access"] == "allow"
    r = w.whoami(4, cgroup=theirs)
    assert not r.ok and r.error in REFUSED, r
    # the app's own policy still binds every instance; a user's allow never loosens it
    set_policy(w, "org.test.Other", access="lan")
    for rel in (system, mine, theirs):
        r = w.whoami(4, cgroup=rel)
        assert not r.ok and r.error in REFUSED, (rel, r)
    # the guest's scope gone, its instance's class goes with it
    remove_cgroups(w, scope % (guest, guest))
    wait_for(lambda: len(app_props(w, "org.test.Other")["Cgroups"]) == 2, 5,
             what="the guest's scope gone")
    set_policy(w, "org.test.Other", access="allow")
    assert w.whoami(4, cgroup=mine).ok


# ---- unused apps are forgotten, apps per user are capped ----

SCOPES_PY = r"""
import os, sys
base, verb, first, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for i in range(first, first + n):
    d = "%s/app-gnome-org.test.Churn%d@%d.scope" % (base, i, i)
    os.mkdir(d) if verb == "make" else os.rmdir(d)
"""


def app_objects(w):
    return sorted(p for p in w.managed_objects() if p.startswith("/org/roam1/app/"))


def user_scopes(w, uid, verb, first, n):
    """uid itself makes (or removes) n app scopes in its delegated app.slice."""
    base = "/sys/fs/cgroup/roam-world-%s/user.slice/user-%d.slice/user@%d.service/app.slice" \
        % (w.name, uid, uid)
    w.dev_run(["/usr/bin/python3", "-c", SCOPES_PY, base, verb, first, n], user=uid)


def user_home(w, uid):
    home = "user.slice/user-%d.slice/user@%d.service" % (uid, uid)
    (w.cgroup / home / "app.slice").mkdir(parents=True, exist_ok=True)
    delegate(w, home, uid)
    wait_for(lambda: "/org/roam1/app/user_3a%d" % uid in app_objects(w), 5,
             what="roamd governs user %d's subtree" % uid)
    return home


def roamd_rss_kib(w):
    for line in open("/proc/%d/status" % w.roamd_pid()):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_unused_apps_are_forgotten(apps):
    """A user making and removing app scopes over and over (each a new app without a policy)
    leaves no App objects behind: the count returns to where it was, and so does roamd's
    memory, within a bound that does not grow with the number of rounds."""
    w = apps
    uid = 1000
    user_home(w, uid)
    set_policy(w, "org.test.Kept", access="lan")  # a policy of its own: it stays
    baseline = app_objects(w)
    rss = []
    for rnd in range(4):
        user_scopes(w, uid, "make", rnd * 50, 50)
        wait_for(lambda: len(app_objects(w)) == len(baseline) + 50, 10,
                 what="round %d: 50 new app objects" % rnd)
        user_scopes(w, uid, "remove", rnd * 50, 50)
        wait_for(lambda: app_objects(w) == baseline, 10,
                 what="round %d: back to the %d objects before" % (rnd, len(baseline)))
        rss.append(roamd_rss_kib(w))
    assert "/org/roam1/app/org_2etest_2eKept" in baseline
    # the class chains of the forgotten apps left the kernel too: one per policy in use
    chains = [l for l in nft(w, "list", "table", "inet", "roam").splitlines()
              if l.strip().startswith("chain class_")]
    assert len(chains) <= len(baseline) + 2, chains
    # 200 apps made and forgotten: the last rounds cost no more than the first did
    assert rss[-1] - rss[0] < 2048, rss


def test_a_typo_app_goes_on_reset(apps, roam_client):
    """`roam app org.typo set access=deny` makes an app; `reset` takes away the only thing
    that kept it, so its object goes at once (InterfacesRemoved) and `roam apps` no longer
    lists it, with no restart. An app a drop-in keeps stays after a reset."""
    w = apps
    d = w.path("etc-roam", "apps.d")
    d.mkdir(exist_ok=True)
    (d / "10-kept.conf").write_text("[App]\nID=org.test.Dropin\nAccess=lan\n")
    w.call(MANAGER_PATH, MANAGER_IFACE, "Reload")
    r = w.dev(roam_client, "app", "org.typo", "set", "access=deny", check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    path = app_path(w, "org.typo")
    assert "org.typo" in w.dev(roam_client, "apps").stdout
    set_policy(w, "org.test.Dropin", access="deny")
    with w.monitor() as mon:
        t0 = time.monotonic()
        r = w.dev(roam_client, "app", "org.typo", "reset", check=False)
        assert r.returncode == 0, r.stdout + r.stderr
        mon.wait_signal(lambda m: m.get("member") == "InterfacesRemoved"
                        and m["payload"]["data"][0] == path, 10, since=t0 - 0.5)
    assert path not in app_objects(w)
    with pytest.raises(DBusCallError) as e:
        app_path(w, "org.typo")
    assert e.value.name == "org.roam1.Error.NoSuchApp"
    listing = w.dev(roam_client, "apps").stdout
    assert "org.typo" not in listing, listing
    # the drop-in keeps its app: reset returns it to the file's policy
    w.dev(roam_client, "app", "org.test.Dropin", "reset")
    props = app_props(w, "org.test.Dropin")
    assert props["Access"] == "lan" and props["Source"] == "config"
    assert "org.test.Dropin" in w.dev(roam_client, "apps").stdout


def test_apps_per_user_are_capped(apps):
    """Past [Apps] MaxAppsPerUser= a user's new scopes get no object: they meet the user's
    policy (governed, never looser), roamd logs why, and an app with a policy of its own still
    gets its object and its own (stricter) policy."""
    w = apps
    uid = 1000
    w.write_config(w.default_config + "[Apps]\nMaxAppsPerUser=3\n")
    w.roamd_restart()
    home = user_home(w, uid)
    set_policy(w, "org.test.Strict", access="deny")
    baseline = len(app_objects(w))
    user_scopes(w, uid, "make", 0, 5)
    over = ["/roam-world-%s/%s/app.slice/app-gnome-org.test.Churn%d@%d.scope"
            % (w.name, home, i, i) for i in range(5)]
    # every scope is governed: three as apps, the rest as the user's own processes
    wait_for(lambda: sum(c in over for c in app_props(w, "user:%d" % uid)["Cgroups"]) == 2, 10,
             what="two scopes past the cap meet the user's policy")
    assert len(app_objects(w)) == baseline + 3
    assert "MaxAppsPerUser=" in w.roamd_log()
    # the user's policy governs them: deny for the user stops them
    past = [c for c in over if c in app_props(w, "user:%d" % uid)["Cgroups"]][0]
    rel = past.split("/", 2)[2]
    assert w.whoami(4, cgroup=rel).ok
    set_policy(w, "user:%d" % uid, access="deny")
    r = w.whoami(4, cgroup=rel)
    assert not r.ok and r.error in REFUSED, r
    w.call(MANAGER_PATH, MANAGER_IFACE, "ResetAppPolicy", "s", ["user:%d" % uid])
    # an app with a policy of its own past the cap: its object, its deny (the user's allow
    # would be looser)
    strict = app_cgroup(w, "org.test.Strict", home + "/app.slice/app-gnome-org.test.Strict@1.scope")
    assert app_props(w, "org.test.Strict")["Access"] == "deny"
    r = w.whoami(4, cgroup=strict)
    assert not r.ok and r.error in REFUSED, r
    # GetManagedObjects stays bounded however many scopes the user makes
    user_scopes(w, uid, "make", 5, 20)
    wait_for(lambda: sum(c.endswith(".scope") for c in
                         app_props(w, "user:%d" % uid)["Cgroups"]) == 22, 10,
             what="the 20 new scopes meet the user's policy")
    assert len(app_objects(w)) == baseline + 3
    user_scopes(w, uid, "remove", 0, 25)


# ---- names a user chooses are outside text ----

HOSTILE_PY = r"""
import os, sys
base = os.fsencode(sys.argv[1])
for name in (b"app-gnome-org.example.Other@1\xff.scope",          # not UTF-8
             b"app-gnome-org.example.Other@2\x1b]0;pwned\x07.scope",  # OSC
             b"app-gnome-org.example.Other@3\xe2\x80\xae.scope",   # U+202E, bidi override
             b"x\xff.slice"):
    os.mkdir(base + b"/" + name)
os.makedirs(base + b"/x\xff.slice/app.slice/app-gnome-org.example.Other@4.scope")
os.mkdir(base + b"/app-gnome-org.example.Other@5.scope")               # clean, made last
"""


def test_hostile_cgroup_names_keep_the_bus_up(apps, roam_client):
    """Issue 40: a user's directory named like an app scope with a byte that is not UTF-8 was
    exported in App.Cgroups, and sd-bus refused every reply carrying it: GetManagedObjects
    failed for everyone. Paths that are not clean text (not UTF-8, controls, bidi) are not
    adopted (the user's policy governs what runs there), roamd says so once, escaped, and
    every client keeps working."""
    w = apps
    uid = 1000
    home = user_home(w, uid)
    base = "/sys/fs/cgroup/roam-world-%s/%s/app.slice" % (w.name, home)
    w.dev_run(["/usr/bin/python3", "-c", HOSTILE_PY, base], user=uid)
    good = "/roam-world-%s/%s/app.slice/app-gnome-org.example.Other@5.scope" % (w.name, home)
    # inotify keeps the order: once the clean one is governed, the others were seen
    wait_for(lambda: _has_cgroup(w, "org.example.Other", good), 10,
             what="roamd governs the clean scope")
    assert app_props(w, "org.example.Other")["Cgroups"] == [good]
    objects = w.managed_objects()
    for props in objects.values():
        for c in props.get(APP_IFACE, {}).get("Cgroups", []):
            assert "\x1b" not in c and "\u202e" not in c, c
    ok, err, out = w.call_as(uid, MANAGER_PATH, "org.freedesktop.DBus.ObjectManager",
                             "GetManagedObjects")
    assert ok, out
    for user in (None, uid):
        r = w.status(user=user)
        assert r.returncode == 0, (user, r.stdout, r.stderr)
        r = w.dev(roam_client, "apps", check=False, user=user)
        assert r.returncode == 0 and "org.example.Other" in r.stdout, (user, r.stdout, r.stderr)
    # said once (the rest suppressed), escaped: no raw byte or ESC reaches the log
    log = w.roamd_log()
    assert log.count("is not UTF-8 text without controls") == 1, log
    assert "app-gnome-org.example.Other@1\\xff.scope" in log, log
    assert "\x1b]0;pwned" not in log and "\u202e" not in log
    remove_cgroups(w, home + "/app.slice")


# ---- bearers ----

def test_bearer_choice(apps):
    w = apps
    w.move("cell0", "mobile")
    wait_in_mobile(w, (4, 6))
    set_policy(w, "org.test.W", bearers="wifi")
    set_policy(w, "org.test.Cell", bearers="cellular")
    cw, cc = app_cgroup(w, "org.test.W"), app_cgroup(w, "org.test.Cell")
    wait_app_route(w, "org.test.Cell", "cell0", "cell0")
    wait_app_route(w, "org.test.W", "wifi0", "wifi0")
    for fam in (4, 6):
        for proto in ("tcp", "udp"):
            rw, rc = w.whoami(fam, proto, cgroup=cw), w.whoami(fam, proto, cgroup=cc)
            assert rw.ok and rw.addr == w.dev_addr("wifi0", fam), (fam, proto, rw)
            assert rc.ok and rc.addr == w.dev_addr("cell0", fam), (fam, proto, rc)
    # both at the same time, on two long streams
    with w.whoami_stream(4, cgroup=cw) as s1, w.whoami_stream(4, cgroup=cc) as s2:
        assert s1.wait_connected()[0] == w.dev_addr("wifi0", 4)
        assert s2.wait_connected()[0] == w.dev_addr("cell0", 4)
        s1.wait_ticks(2)
        s2.wait_ticks(2)
    # no cellular: the cellular-only app has nowhere to go, and says so
    w.carrier("cell0", False)
    wait_app_route(w, "org.test.Cell", "", "")
    assert app_props(w, "org.test.Cell")["State"] == "blocked: no allowed link"
    r = w.whoami(4, cgroup=cc)
    assert r.rejected, r
    assert w.whoami(4, cgroup=cw).ok


def test_cellular_only_app_on_a_local_network_is_not_online(apps):
    """issue 32: an app that may use cellular only, routed through cell0 whose verdict is
    local (the living room has no way out), never reads "online": its state names cell0."""
    w = apps
    set_policy(w, "org.test.CellOnly", bearers="cellular")
    cc = app_cgroup(w, "org.test.CellOnly")
    wait_app_route(w, "org.test.CellOnly", "cell0", "cell0")
    w.wait_link("cell0", lambda l: l["Connectivity4"] == "local", timeout=30)
    wait_for(lambda: app_props(w, "org.test.CellOnly")["State"] == "local via cell0: no internet",
             10, what="the state names cell0 and its verdict")
    # what it says is what its packets meet: the TV answers, the internet does not
    r = w.whoami(4, server="tv", cgroup=cc)
    assert r.ok and r.addr == w.dev_addr("cell0", 4), r
    # the living room's router has no way out: "unreachable" at once, not a silence
    r = w.whoami(4, cgroup=cc)
    assert not r.ok and r.error in ("EHOSTUNREACH", "ENETUNREACH"), r


def silent_eth0(w, families=(4, 6)):
    """eth0 into the silent network: its lease wins main's default routes (metric 100), and
    its verdict is offline in both families."""
    w.move("eth0", "silent")
    wait_default_route(w, "eth0", families)
    w.wait_link("eth0", lambda l: l["Connectivity4"] == "offline" and
                l["Connectivity6"] == "offline" and l["Gateways"], timeout=40)


def test_main_traffic_leaves_by_an_online_link(apps):
    """issue 32: eth0 behind the silent gateway holds the kernel's default routes and reaches
    nothing; wifi0 is online. Traffic that follows the main table (the default policy, and an
    app of its own without bearer keys) goes out of wifi0, as the app's Route and State say.
    With [Routing] PreferOnline=no it stays on eth0, and the state says eth0 is offline."""
    w = apps
    other = "roam-test/session-1.scope"  # in no app: the default policy
    (w.cgroup / other).mkdir(parents=True, exist_ok=True)
    w.write_config(w.default_config + "\n[Routing]\nPreferOnline=yes\n")
    w.call(MANAGER_PATH, MANAGER_IFACE, "Reload")
    set_policy(w, "org.test.Plain", handover="move")
    plain = app_cgroup(w, "org.test.Plain")
    silent_eth0(w)
    for app in ("default", "org.test.Plain"):
        wait_app_route(w, app, "wifi0", "wifi0", timeout=20)
        assert app_props(w, app)["State"] == "online"
    for fam in (4, 6):
        for cg in (other, plain):
            for proto in ("tcp", "udp"):
                r = w.whoami(fam, proto, cgroup=cg)
                assert r.ok and r.addr == w.dev_addr("wifi0", fam), (fam, cg, proto, r)
    # eth0's own LAN stays on eth0: the silent router sees the device's eth0 address (its
    # DHCP server answers, the rest it drops, so a capture on eth0 is the proof)
    with w.capture(["eth0", "wifi0"]) as cap:
        w.dev_connect("192.0.2.193", 7000, proto="udp", cgroup=other, timeout=1)
    seen = {p.iface for p in cap.packets if p.dst == "192.0.2.193"}
    assert seen == {"eth0"}, seen
    # the system policy (sshd, roamd's probes) still follows main: never steered
    assert app_props(w, "system")["State"] == "offline: eth0 does not reach the internet"

    # opted out: main's choice stands, and nobody claims it works
    w.write_config(w.default_config + "\n[Routing]\nPreferOnline=no\n")
    w.call(MANAGER_PATH, MANAGER_IFACE, "Reload")
    for app in ("default", "org.test.Plain"):
        wait_app_route(w, app, "eth0", "eth0")
        wait_for(lambda: app_props(w, app)["State"] ==
                 "offline: eth0 does not reach the internet", 10, what="%s names eth0" % app)
    w.whoami_dropped_by_silent(4, cgroup=other)


# ---- VPN ----

def dns_from(w, cgroup, server, name, qtype, sport=40053):
    """A DNS query from an app's cgroup, from a known source port (to tell it in captures;
    apps never share a port, or conntrack would take one's query for the other's)."""
    from roamworld import DNS_QUERY_PY
    script = DNS_QUERY_PY.replace(
        "s.settimeout(3)",
        "s.bind(('::' if fam == socket.AF_INET6 else '0.0.0.0', %d)); s.settimeout(3)" % sport)
    assert script != DNS_QUERY_PY
    r = w.dev_run(["/usr/bin/python3", "-c", script, server, name, qtype],
                  cgroup=cgroup, check=False)
    lines = r.stdout.split()
    return (int(lines[1]), lines[2:]) if len(lines) >= 2 else (None, r.stderr.strip()[-300:])


def test_vpn_required_and_forbidden(apps):
    w = apps
    set_policy(w, "org.test.Vpn", vpn="required")
    set_policy(w, "org.test.NoVpn", vpn="forbidden")
    cv, cn = app_cgroup(w, "org.test.Vpn"), app_cgroup(w, "org.test.NoVpn")
    assert app_props(w, "org.test.Vpn")["State"] == "blocked: VPN down"
    r = w.whoami(4, cgroup=cv)
    assert r.rejected, r
    w.vpn_up()
    wait_app_route(w, "org.test.Vpn", "vpn0", "vpn0")
    for fam in (4, 6):
        for proto in ("tcp", "udp"):
            r = w.whoami(fam, proto, cgroup=cv)
            assert r.ok and r.addr == VPN["client"][fam], (fam, proto, r)
            r = w.whoami(fam, proto, cgroup=cn)
            assert r.ok and r.addr == w.dev_addr("wifi0", fam), (fam, proto, r)
    # its DNS goes through the VPN: the LAN's resolver is asked, the VPN's answers
    assert dns_from(w, cv, "192.0.2.1", VPN_ONLY_NAME, "A") == (0, [VPN_ONLY_ADDRS[4]])
    assert dns_from(w, cv, "2001:db8:1::1", VPN_ONLY_NAME, "AAAA") == (0, [VPN_ONLY_ADDRS[6]])
    r = dns_from(w, cn, "192.0.2.1", VPN_ONLY_NAME, "A", sport=40054)
    assert r[0] == 3, r
    # forbidden: even a route into the VPN is avoided
    w.dev("ip", "-6", "route", "add", WHOAMI["inet"][6] + "/128", "dev", "vpn0")
    try:
        r = w.whoami(6, cgroup=cn)
        assert r.ok and r.addr == w.dev_addr("wifi0", 6), r
    finally:
        w.dev("ip", "-6", "route", "del", WHOAMI["inet"][6] + "/128", "dev", "vpn0")
    # the VPN goes down under an open stream: blocked, never leaked
    st = w.whoami_stream(4, cgroup=cv)
    try:
        assert st.wait_connected()[0] == VPN["client"][4]
        st.wait_ticks(2)
        with w.capture(["wifi0", "cell0", "eth0"]) as cap:
            w.vpn_down()
            wait_for(lambda: app_props(w, "org.test.Vpn")["State"] == "blocked: VPN down", 5,
                     what="roamd sees the VPN gone")
            # the open stream is cut off: nothing more arrives, nothing of it leaves. The
            # window is the app's own refused traffic, not a wait: while the kernel refuses
            # its four new connections and its DNS query, not one tick (one every 100 ms)
            # arrives on the old stream
            n = len(st.ticks)
            for fam in (4, 6):
                for proto in ("tcp", "udp"):
                    r = w.whoami(fam, proto, cgroup=cv)
                    assert r.rejected, (fam, proto, r)
            assert dns_from(w, cv, "192.0.2.1", VPN_ONLY_NAME, "A")[0] is None
            assert len(st.ticks) == n, st.ticks[n:]
            time.sleep(0.5)
    finally:
        st.stop()
    # (roamd's own probes keep asking each link's DNS: those come from other ports)
    # A leak leaves the machine: what arrives is the server's late retransmission of an earlier
    # stream's end (the no-VPN app's, to wifi0's own address), which the firewall may drop.
    leaks = [p for p in cap.packets if p.direction == "out" and
             (7000 in (p.sport, p.dport) or 40053 in (p.sport, p.dport))]
    assert leaks == [], leaks
    assert app_props(w, "org.test.Vpn")["State"] == "blocked: VPN down"
    assert w.whoami(4, cgroup=cn).ok


def test_local_dns_stub_is_not_a_way_out(apps):
    """A DNS forwarder on loopback (dnsmasq, like systemd-resolved's stub) forwards by its own
    routes: apps the policy keeps off the internet (vpn=required with the VPN down, lan,
    deny) are refused at loopback and their queries never reach the upstream server; an
    allow app's still do."""
    w = apps
    log = w.path("stub-dnsmasq.log")
    stub = w.dev_popen(["dnsmasq", "-k", "--conf-file=/dev/null", "--user=root",
                        "--listen-address=127.0.0.1,::1", "--bind-interfaces", "--port=53",
                        "--no-resolv", "--no-hosts", "--server=192.0.2.1", "--cache-size=0",
                        "--log-queries", "--log-facility=%s" % log,
                        "--pid-file=%s" % w.path("stub-dnsmasq.pid")],
                       cgroup="system.slice/stub-dns.service",
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    upstream = w.path("home-dnsmasq.log")
    try:
        set_policy(w, "org.test.StubVpn", vpn="required")
        set_policy(w, "org.test.StubLan", access="lan")
        set_policy(w, "org.test.StubDeny", access="deny")
        set_policy(w, "org.test.StubAllow", access="allow")
        cg = {a: app_cgroup(w, "org.test.Stub" + a) for a in ("Vpn", "Lan", "Deny", "Allow")}
        assert app_props(w, "org.test.StubVpn")["State"] == "blocked: VPN down"
        tag = "%d" % os.getpid()
        # the allow app goes through the stub, and that reaches the upstream server
        name = "allow-%s.stub.roam.test" % tag
        wait_for(lambda: dns_from(w, cg["Allow"], "127.0.0.1", name, "A", sport=40061)[0]
                 is not None, 10, what="the stub answers an allow app")
        wait_for(lambda: name in upstream.read_text(), 5, what="the query upstream")
        assert dns_from(w, cg["Allow"], "::1", "v6" + name, "AAAA", sport=40061)[0] is not None
        port = 40062
        for app in ("Vpn", "Lan", "Deny"):
            for server in ("127.0.0.1", "::1"):
                name = "%s-%s.stub.roam.test" % (app.lower(), tag)
                r = dns_from(w, cg[app], server, name, "A", sport=port)
                assert r[0] is None, (app, server, r)
                port += 1
            # TCP too: refused at once
            r = w.dev_run(["/usr/bin/python3", "-c",
                           "import socket\ntry:\n socket.create_connection(('127.0.0.1', 53), "
                           "timeout=3)\n print('connected')\nexcept OSError as e:\n "
                           "print('refused', e.errno)"], cgroup=cg[app], check=False)
            assert r.stdout.startswith("refused"), (app, r.stdout, r.stderr)
        # the stub never even saw them, so nothing could reach the upstream server
        text = log.read_text()
        for app in ("vpn", "lan", "deny"):
            assert "%s-%s" % (app, tag) not in text, text
            assert "%s-%s" % (app, tag) not in upstream.read_text()
        # other loopback traffic stays open to every app
        r = w.dev_run(["/usr/bin/python3", "-c",
                       "import socket\nl = socket.socket(); l.bind(('127.0.0.1', 0)); "
                       "l.listen()\nsocket.create_connection(l.getsockname(), timeout=3)\n"
                       "print('connected')"], cgroup=cg["Deny"], check=False)
        assert r.stdout.strip() == "connected", (r.stdout, r.stderr)
    finally:
        stub.terminate()
        stub.wait(10)
        remove_cgroups(w, "system.slice/stub-dns.service")


# ---- handover ----

def test_handover_sticky_and_move(apps):
    w = apps
    w.carrier("wifi0", False)
    w.move("cell0", "mobile")
    wait_in_mobile(w)
    wait_default_route(w, "cell0", (4,))
    set_policy(w, "org.test.Sticky", handover="sticky")
    set_policy(w, "org.test.Move", handover="move")
    cs, cm = app_cgroup(w, "org.test.Sticky"), app_cgroup(w, "org.test.Move")
    wait_app_route(w, "org.test.Sticky", route4="cell0")
    with w.whoami_stream(4, cgroup=cs) as st:
        cell = w.dev_addr("cell0", 4)
        assert st.wait_connected()[0] == cell
        st.wait_ticks(3)
        w.carrier("wifi0", True)
        wait_default_route(w, "wifi0", (4,))
        wait_app_route(w, "org.test.Sticky", route4="wifi0")
        with w.capture(["wifi0", "cell0"]) as cap:
            st.wait_ticks(10)
            r = w.whoami(4, cgroup=cs)
            assert r.ok and r.addr == w.dev_addr("wifi0", 4), r
            r = w.whoami(4, cgroup=cm)
            assert r.ok and r.addr == w.dev_addr("wifi0", 4), r
        assert st.end is None, st.end
        # never interrupted: the server did not have to send anything again (a drop on the
        # way, however short, shows as a retransmission on its side)
        port = st.peer[1]
        out = w.exec("inet", "ss", "-tinH", "state", "established",
                     "( sport = :7000 and dport = :%d )" % port).stdout
        assert str(port) in out and "retrans:" not in out, out
        ticks = {p.iface for p in cap.packets if p.sport == 7000 and p.dst == cell}
        assert ticks == {"cell0"}, ticks


# ---- atomicity ----

SENDER_PY = r'''
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 40123))
n = 0
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    try:
        s.sendto(b"leak?", (sys.argv[1], 7000))
    except OSError:
        pass
    n += 1
    time.sleep(0.001)
print(n)
'''


def test_atomic_changes_restart_and_kill9(apps):
    w = apps
    set_policy(w, "org.test.Denied", access="deny")
    cd = app_cgroup(w, "org.test.Denied")
    others = ["org.test.O%d" % i for i in range(5)]
    for o in others:
        app_cgroup(w, o)
    w.sshd_start()
    ssh_fail = []

    def ssh_loop(stop):
        while not stop.is_set():
            r = w.ssh_check(4)
            if not r.ok:
                ssh_fail.append(r)
            time.sleep(0.2)

    stop = threading.Event()
    t = threading.Thread(target=ssh_loop, args=(stop,), daemon=True)
    try:
        with w.capture(["wifi0", "cell0", "eth0"]) as cap:
            sender = w.dev_popen(["/usr/bin/python3", "-c", SENDER_PY, WHOAMI["inet"][4], "25"],
                                 cgroup=cd, stdout=subprocess.PIPE, text=True)
            t.start()
            for i in range(200):
                set_policy(w, others[i % len(others)],
                           access=("allow", "lan", "deny")[i % 3],
                           bearers=("all", "wifi", "cellular,wifi")[i % 3],
                           handover=("sticky", "move")[i % 2])
            w.roamd_restart()
            wait_for(lambda: w.roamd_running(), 10, what="roamd back")
            w.roamd_kill9()
            time.sleep(0.5)  # nobody home: the table stays in force
            w.roamd_start()
            for i in range(20):
                set_policy(w, others[i % len(others)], access=("deny", "allow")[i % 2])
            sent = int(sender.communicate(timeout=60)[0])
        stop.set()
        t.join(5)
    finally:
        stop.set()
        w.sshd_stop()
    assert sent > 1000, sent
    leaked = [p for p in cap.packets if p.sport == 40123 or p.dport == 40123]
    assert leaked == [], leaked[:5]
    assert ssh_fail == [], ssh_fail[:3]
    # still one table, and the denied app is still denied
    assert nft(w, "list", "tables").count("inet roam") == 1
    r = w.whoami(4, cgroup=cd)
    assert not r.ok and r.error in REFUSED, r



def test_damaged_state_file_keeps_good_sections_and_fails_closed(apps):
    """A damaged apps.state at start: the good sections stay in force (a deny stays a deny),
    the damaged section's app is denied, the file as it was is kept as apps.state.damaged,
    and the log says so in words. Before, one bad section dropped every runtime policy."""
    w = apps
    set_policy(w, "org.test.Denied", access="deny")
    set_policy(w, "org.test.Lost", access="allow")
    set_policy(w, "org.test.Fine", access="allow")
    w.roamd_stop()
    state = w.path("var-lib-roam", "apps.state")
    text = state.read_text()
    assert "ID=org.test.Lost\nAccess=allow" in text, text
    damaged = text.replace("ID=org.test.Lost\nAccess=allow", "ID=org.test.Lost\nAcc\x7fss=allow")
    state.write_text(damaged)
    w.roamd_start()
    w.wait_default_state()
    cg = {a: app_cgroup(w, "org.test." + a) for a in ("Denied", "Lost", "Fine")}
    for a in ("Denied", "Lost"):
        assert app_props(w, "org.test." + a)["Access"] == "deny", a
        r = w.whoami(4, cgroup=cg[a])
        assert not r.ok and r.error in REFUSED, (a, r)
    r = w.whoami(4, cgroup=cg["Fine"])
    assert r.ok, r
    assert w.path("var-lib-roam", "apps.state.damaged").read_text() == damaged
    log = w.roamd_log()
    assert "the runtime policy of org.test.Lost is damaged; org.test.Lost is denied until " \
        "\"roam app org.test.Lost set\" or \"roam app org.test.Lost reset\"" in log
    assert "1 damaged part(s); the rest is in force, the file as it was is kept as " \
        "/var/lib/roam/apps.state.damaged" in log
    w.path("var-lib-roam", "apps.state.damaged").unlink()


# ---- coexistence ----

FOREIGN = """table inet foreign {
    chain out {
        type route hook output priority -151; policy accept;
        meta mark set meta mark | 0x00000001
    }
    chain post {
        type filter hook postrouting priority 0; policy accept;
        meta mark & 0x00000001 == 0x00000001 meta mark & 0x7f000000 != 0x00000000 counter packets 0 bytes 0
        tcp dport 7000 counter packets 0 bytes 0
    }
}
"""


def test_foreign_table_and_mark_bits_survive(apps):
    w = apps
    w.dev("nft", "-f", "-", input=FOREIGN)
    w.dev("ip", "rule", "add", "pref", "100", "fwmark", "0x2/0x2", "lookup", "main")
    before = nft(w, "-s", "list", "table", "inet", "foreign")
    w.roamd_restart()
    w.wait_default_state()
    # an app that roamd routes away from the main table's choice carries roamd's mark bits
    w.move("cell0", "mobile")
    set_policy(w, "org.test.Marked", bearers="cellular")
    cg = app_cgroup(w, "org.test.Marked")
    wait_in_mobile(w)
    wait_app_route(w, "org.test.Marked", route4="cell0")
    for _ in range(3):
        r = w.whoami(4, cgroup=cg)
        assert r.ok and r.addr == w.dev_addr("cell0", 4), r
    listing = nft(w, "list", "table", "inet", "foreign")
    both = listing.split("0x7f000000 != 0x00000000 counter packets ")[1].split()[0]
    assert int(both) > 0, listing  # roamd's bits and the foreign bit on the same packets
    assert nft(w, "-s", "list", "table", "inet", "foreign") == before
    w.roamd_stop()
    assert nft(w, "-s", "list", "table", "inet", "foreign") == before
    assert "inet roam" in nft(w, "list", "tables")  # fail closed: roamd's table stays
    assert "100:\tfrom all fwmark 0x2/0x2 lookup main" in w.dev("ip", "rule").stdout
    w.roamd_start()


# ---- authorization ----

def test_unprivileged_callers_and_polkit(apps, roam_client):
    w = apps
    path = set_policy(w, "org.test.Auth", access="allow")
    args = ["string:org.test.Auth", "dict:string:string:access,deny"]
    ok, err, out = w.call_as(65534, MANAGER_PATH, MANAGER_IFACE, "SetAppPolicy", *args)
    assert not ok and err == "org.roam1.Error.AccessDenied", out
    ok, err, out = w.call_as(65534, path, APP_IFACE, "OnlineFor", "uint64:60000000")
    assert not ok and err == "org.roam1.Error.AccessDenied", out
    assert app_props(w, "org.test.Auth")["Access"] == "allow"
    # reads are open
    ok, err, out = w.call_as(65534, MANAGER_PATH, MANAGER_IFACE, "GetApp", "string:org.test.Auth")
    assert ok, out
    # roam run as nobody: refused, and the command never runs
    r = w.dev_run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                   str(ROAM), "run", "--app", "org.test.Auth", "--", "echo", "ran"], check=False)
    assert r.returncode != 0 and "ran" not in r.stdout, (r.stdout, r.stderr)
    # polkit on the bus decides for non-root callers: an administrator's password, which a
    # call that does not allow interaction cannot be asked for (as systemd's daemons say)
    with w.polkit() as allow:
        ok, err, out = w.call_as(65534, MANAGER_PATH, MANAGER_IFACE, "SetAppPolicy", *args)
        assert not ok and err == "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired" and "polkit" in out, out
        allow(["org.roam1.change-app-policy"])
        ok, err, out = w.call_as(65534, MANAGER_PATH, MANAGER_IFACE, "SetAppPolicy", *args)
        assert ok, out
        assert app_props(w, "org.test.Auth")["Access"] == "deny"
        # running an app is a separate action
        r = w.dev_run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                       str(ROAM), "run", "--app", "org.test.Auth", "--", "echo", "ran"],
                      check=False)
        assert "ran" not in r.stdout, r.stdout


def run_app_call(w, app_id, online_for, target, user=None):
    """RunApp through tests/world/run_app_call.py, in the device: (ok, error name, text)."""
    here = os.path.dirname(os.path.abspath(__file__))
    r = w.dev_run(["/usr/bin/python3", os.path.join(here, "run_app_call.py"), app_id,
                   str(online_for), str(target)], user=user, check=False)
    words = r.stdout.split()
    assert r.returncode == 0 and words, (r.stdout, r.stderr)
    return words[0] == "ok", (words[1] if words[0] == "error" else None), r.stdout


def no_app(w, app_id):
    with pytest.raises(DBusCallError) as e:
        app_path(w, app_id)
    return e.value.name == "org.roam1.Error.NoSuchApp"


def test_run_app_checks_before_it_creates(apps):
    """RunApp checks the pidfd against the caller and a grant against change-app-policy
    before it makes any app, cgroup or grant, with systemd and without."""
    w = apps
    victim = w.dev_popen(["sleep", "60"], cgroup="roam-test/victim.scope")
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=w.address)
    sd = None
    try:
        procs = w.cgroup / "roam-test/victim.scope" / "cgroup.procs"
        wait_for(lambda: procs.read_text() == "%d\n" % victim.pid, 5, what="victim in place")
        for online_for in (0, 300000000):
            ok, err, out = run_app_call(w, "org.test.Pidfd", online_for, victim.pid)
            assert not ok and err == "org.roam1.Error.InvalidArguments", out
            assert no_app(w, "org.test.Pidfd")
        assert not (w.cgroup / ROAM_SLICE / "app-org.test.Pidfd.scope").exists()
        # the same through systemd: it is never asked to move another process
        sd = subprocess.Popen(["/usr/bin/python3", os.path.join(here, "fake_systemd.py"),
                               str(w.cgroup.parent), "/roam-world-%s" % w.name],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        assert sd.stdout.readline().strip() == "ready"
        w.dev("mkdir", "-p", "/run/systemd/system")
        ok, err, out = run_app_call(w, "org.test.Pidfd", 0, victim.pid)
        assert not ok and err == "org.roam1.Error.InvalidArguments", out
        assert no_app(w, "org.test.Pidfd")
        assert not (w.cgroup / "app.slice").exists() or \
            not any((w.cgroup / "app.slice").iterdir())
        assert procs.read_text() == "%d\n" % victim.pid  # never moved
    finally:
        w.dev("rm", "-rf", "/run/systemd", check=False)
        if sd:
            sd.terminate()
            sd.wait(10)
        victim.kill()
        victim.wait(10)
        remove_cgroups(w, "app.slice")
    # run-app alone does not grant "online for a task": that is change-app-policy
    set_policy(w, "default", access="deny")
    with w.polkit(["org.roam1.run-app"]):
        ok, err, out = run_app_call(w, "org.test.Grant", 300000000, "self", user=65534)
        assert not ok and err == "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired", out
        assert "change-app-policy" in out, out
        assert no_app(w, "org.test.Grant")
        ok, err, out = run_app_call(w, "org.test.Grant", 0, "self", user=65534)
        assert ok, out
        p = app_props(w, "org.test.Grant")
        assert p["OnlineUntil"] == 0 and p["Access"] == "deny", p


# ---- bad input ----

def test_bad_input(apps, roam_client):
    w = apps
    with pytest.raises(DBusCallError) as e:
        app_path(w, "org.test.Nobody")
    assert e.value.name == "org.roam1.Error.NoSuchApp"
    for bad in ("../etc", "a/b", "", ".hidden", "x" * 256, "a b"):
        with pytest.raises(DBusCallError) as e:
            set_policy(w, bad, access="deny")
        assert e.value.name == "org.roam1.Error.InvalidArguments", bad
    for key, value in (("colour", "blue"), ("access", "maybe"), ("bearers", "carrier-pigeon"),
                       ("vpn", "sometimes")):
        with pytest.raises(DBusCallError) as e:
            set_policy(w, "org.test.Bad", **{key: value})
        assert e.value.name == "org.roam1.Error.InvalidArguments", key
        assert value in e.value.message or key in e.value.message
    with pytest.raises(DBusCallError):
        app_path(w, "org.test.Bad")  # nothing was created by the refused calls
    r = w.dev_run([str(ROAM), "run", "--app", "../evil", "--", "echo", "ran"], check=False)
    assert r.returncode != 0 and "ran" not in r.stdout
    r = w.dev_run([str(ROAM), "app", "org.test.Nobody", "online-for", "10m"], check=False)
    assert r.returncode != 0
    # a malformed drop-in: a reload is refused as a whole, its caller told file:line
    d = w.path("etc-roam", "apps.d")
    d.mkdir(exist_ok=True)
    (d / "10-good.conf").write_text("[App]\nID=org.test.Good\nAccess=deny\n")
    (d / "20-bad.conf").write_text("[App]\nID=org.test.Broken\nAccess=maybe\n")
    with pytest.raises(DBusCallError) as e:
        w.call(MANAGER_PATH, MANAGER_IFACE, "Reload")
    assert e.value.name == "org.roam1.Error.ConfigInvalid" and "20-bad.conf:3" in e.value.message
    with pytest.raises(DBusCallError):
        app_path(w, "org.test.Good")  # nothing of the refused reload applied
    # at start it cannot be refused: file:line in the log, the good ones still load
    w.roamd_restart()
    wait_for(lambda: "20-bad.conf:3" in w.roamd_log(), 5, what="file:line in the log")
    assert app_props(w, "org.test.Good")["Access"] == "deny"
    assert app_props(w, "org.test.Good")["Source"] == "config"
    with pytest.raises(DBusCallError):
        app_path(w, "org.test.Broken")
    # a cgroup deleted in the middle of changes
    rel = app_cgroup(w, "org.test.Gone")
    full = w.cgroup / rel
    done = threading.Event()

    def flap():
        i = 0
        while not done.is_set():
            try:
                set_policy(w, "org.test.Gone", access=("deny", "allow")[i % 2])
            except DBusCallError:
                pass
            i += 1

    t = threading.Thread(target=flap, daemon=True)
    t.start()
    try:
        time.sleep(0.2)
        full.rmdir()
        time.sleep(0.3)
    finally:
        done.set()
        t.join(10)
    assert w.roamd_running()
    wait_for(lambda: app_props(w, "org.test.Gone")["Cgroups"] == [], 5, what="cgroup gone")
    assert w.whoami(4).ok  # roamd still governs and the default still goes out

# SPDX-License-Identifier: LGPL-2.1-or-later
"""roamd restarts, crashes and configuration reloads."""
import re
import subprocess

import pytest

from roamworld import (MANAGER_IFACE, MANAGER_PATH, UPLINKS, WAIT, DBusCallError, wait_for,
                       wait_until)

WORLD = "wlife"
# Functional waits (woken by roamd's signals): how fast is a question for bench/.
WITHIN = WAIT

# Properties that describe the world, not roamd's own history.
STATE_KEYS = ("Index", "Name", "Bearer", "BearerSource", "Kind", "HardwareAddress", "MTU",
              "AdminUp", "Carrier", "OperState", "State", "Gateways", "DNS", "DNSSource",
              "Domains", "CaptivePortalURL")
# Connectivity verdicts, where this roamd has them (probes run again after a restart).
OPTIONAL_KEYS = ("Connectivity", "ConnectivityReason", "Connectivity4", "Connectivity6",
                 "ConnectivityReason4", "ConnectivityReason6", "PortalURL")


def snapshot(w):
    out = {}
    for name, l in w.links().items():
        d = {k: l[k] for k in STATE_KEYS + OPTIONAL_KEYS if k in l}
        d["Addresses"] = sorted(map(tuple, l["Addresses"]))
        d["Gateways"] = sorted(map(tuple, l["Gateways"]))
        d["DNS"] = sorted(map(tuple, l["DNS"]))
        d["_path"] = l["_path"]
        out[name] = d
    m = w.manager()
    out["@manager"] = {k: m[k] for k in ("State", "BestLink", "ConfigFile")}
    return out


def bus_has_roamd(w):
    return w.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", "s",
                  ("org.roam1",), dest="org.freedesktop.DBus")


def settled_snapshot(w):
    """The state once every uplink has a verdict and two reads agree (a probe round may still
    be running right after the world came up)."""
    def stable():
        a = snapshot(w)
        if any(v.get(r) == "not-probed" for k, v in a.items() if k != "@manager"
               for r in ("ConnectivityReason4", "ConnectivityReason6")):
            return None
        return a if snapshot(w) == a else None
    return w.wait(stable, 20, what="a settled state")


@pytest.mark.parametrize("how", ["TERM", "INT", "KILL"])
def test_restart_recovers_state(w, how):
    before = settled_snapshot(w)
    assert set(before) == set(UPLINKS) | {"@manager"}
    old = w.roamd_pid()
    if how == "KILL":
        w.roamd_kill9()
    else:
        w.roamd_stop(how)
    assert not bus_has_roamd(w)
    # let the world change while roamd is away: it must see the present, not the past
    w.carrier("eth0", False)
    new = w.roamd_start()
    assert new != old
    w.wait_link("eth0", lambda l: l["State"] == "no-carrier", timeout=WITHIN)
    w.carrier("eth0", True)
    try:
        w.wait(lambda: snapshot(w) == before, what="state after restart == before")
    except TimeoutError:
        after = snapshot(w)
        diff = {(k, f): (before.get(k, {}).get(f), after.get(k, {}).get(f))
                for k in set(before) | set(after)
                for f in set(before.get(k, {})) | set(after.get(k, {}))
                if before.get(k, {}).get(f) != after.get(k, {}).get(f)}
        raise AssertionError(f"state after restart differs: {diff}")


def test_clean_exit_code(w):
    """SIGTERM: roamd exits 0 (checked by running it in the foreground)."""
    w.roamd_stop()
    cmd = ["timeout", "-s", "KILL", "30", "nsenter", "--mount=%s" % w.path("mnt"),
           "--uts=%s" % w.path("uts"), "--net=/run/netns/roam-%s-dev" % w.name, "--wd=/",
           "env", "DBUS_SYSTEM_BUS_ADDRESS=" + w.address, str(w.roamd),
           "--config", "/etc/roam/roamd.conf"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # woken by the name's owner changing, or roamd exiting
        w.rb  # connected first: its signals wake the wait
        wait_until(lambda: bus_has_roamd(w) or p.poll() is not None, 20, "roamd on the bus",
                   procs=[p])
        assert p.poll() is None, p.communicate()
        w.wait_link("wifi0")
        p.terminate()
        out, err = p.communicate(timeout=20)
        assert p.returncode == 0, err
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_sighup_reclassifies(w):
    eth0 = w.link("eth0")
    assert eth0["Bearer"] == "ethernet" and eth0["BearerSource"] == "config"
    pid = w.roamd_pid()
    w.write_config(w.default_config.replace("eth0=ethernet", "eth0=cellular"))
    w.roamd_signal("HUP")
    w.wait_link("eth0", lambda l: l["Bearer"] == "cellular" and l["BearerSource"] == "config",
                timeout=WITHIN, what="eth0 reclassified as cellular")
    assert w.link("wifi0")["Bearer"] == "wifi"
    # without an override, sysfs decides
    w.write_config(w.default_config.replace("eth0=ethernet\n", ""))
    w.roamd_signal("HUP")
    w.wait_link("eth0", lambda l: l["BearerSource"] == "sysfs", timeout=WITHIN,
                what="eth0 classified from sysfs")
    assert w.roamd_pid() == pid


def test_reload_method(w):
    w.write_config(w.default_config.replace("cell0=cellular", "cell0=wifi"))
    w.call(MANAGER_PATH, MANAGER_IFACE, "Reload")
    w.wait_link("cell0", lambda l: l["Bearer"] == "wifi", timeout=WITHIN)


def _broken(default, line):
    """The default config plus one bad line; returns (text, line number of the bad line)."""
    text = default + line + "\n"
    return text, text.count("\n")


@pytest.mark.parametrize("bad", ["this is not a key value line", "eth0=warpdrive", "[Daemon",
                                 "LogLevel=loud"])
def test_broken_config_on_sighup_keeps_old(w, bad):
    pid = w.roamd_pid()
    w.write_config(w.default_config.replace("eth0=ethernet", "eth0=cellular"))
    w.roamd_signal("HUP")
    w.wait_link("eth0", lambda l: l["Bearer"] == "cellular", timeout=WITHIN)
    log_before = len(w.roamd_log())
    if bad == "LogLevel=loud":
        text = w.default_config.replace("LogLevel=debug", bad)
        lineno = 2
    else:
        text, lineno = _broken(w.default_config, bad)
    text = text.replace("eth0=ethernet", "eth0=wifi")  # would change eth0 if accepted
    w.write_config(text)
    w.roamd_signal("HUP")
    where = "/etc/roam/roamd.conf:%d" % lineno
    wait_for(lambda: where in w.roamd_log()[log_before:], 5, what="%s in roamd's log" % where)
    assert w.roamd_pid() == pid, "roamd died on a broken configuration"
    assert w.link("eth0")["Bearer"] == "cellular", "the broken configuration was applied"
    # Reload() answers ConfigInvalid for the same file
    with pytest.raises(DBusCallError) as e:
        w.call(MANAGER_PATH, MANAGER_IFACE, "Reload")
    assert e.value.name == "org.roam1.Error.ConfigInvalid"
    assert w.link("eth0")["Bearer"] == "cellular"
    assert w.manager()["ConfigFile"] == "/etc/roam/roamd.conf"


def test_broken_config_at_start(w):
    text, lineno = _broken(w.default_config, "eth0 cellular")
    w.write_config(text, name="broken.conf")
    w.roamd_stop()
    r = w.dev("timeout", "-s", "KILL", "20", w.roamd, "--config", "/etc/roam/broken.conf",
              check=False, timeout=60)
    assert r.returncode == 1, "not refused with exit 1: %d" % r.returncode
    assert "/etc/roam/broken.conf:%d" % lineno in r.stderr, r.stderr
    assert not bus_has_roamd(w)
    # a missing file given explicitly is an error too
    r = w.dev("timeout", "-s", "KILL", "20", w.roamd, "--config", "/etc/roam/missing.conf",
              check=False, timeout=60)
    assert r.returncode == 1, r.returncode
    assert "missing.conf" in r.stderr
    w.roamd_start()


def test_check_config(w):
    """roamd --check-config checks a file without starting (docs/configuration.md)."""
    r = w.dev(w.roamd, "--check-config", "--config", "/etc/roam/roamd.conf", check=False)
    if r.returncode != 0 and re.search(r"unrecognized|unknown|invalid option", r.stderr):
        pytest.skip("this roamd has no --check-config")
    assert r.returncode == 0, r.stderr
    text, lineno = _broken(w.default_config, "= no key")
    w.write_config(text, name="broken.conf")
    r = w.dev(w.roamd, "--check-config", "--config", "/etc/roam/broken.conf", check=False)
    assert r.returncode != 0
    assert "/etc/roam/broken.conf:%d" % lineno in r.stderr


# A broken drop-in of each kind roamd reads, and the line its error names.
BROKEN_DROPINS = [
    ("apps.d", "[App]\nID=org.test.Broken\nAccess=sometimes\n", 3),
    ("networks.d", "[Network]\nLocation=home\nSSID=x\nColour=blue\n", 4),
    ("firewall.d", "[Profile]\nLocation=home\n[Rule]\nProtocol=tcp\nPort=70000\n", 5),
]


def _remove_dropin(w, d):
    try:
        w.path("etc-roam", d, "bad.conf").unlink()
    except FileNotFoundError:
        pass


@pytest.mark.parametrize("d,text,lineno", BROKEN_DROPINS, ids=[b[0] for b in BROKEN_DROPINS])
def test_check_config_reads_dropins(w, d, text, lineno):
    """issue 39: --check-config checks every file roamd reads, not roamd.conf alone."""
    w.path("etc-roam", d).mkdir(exist_ok=True)
    try:
        w.write_config(text, name="%s/bad.conf" % d)
        r = w.dev(w.roamd, "--check-config", "--config", "/etc/roam/roamd.conf", check=False)
        assert r.returncode == 1, (r.stdout, r.stderr)
        assert "/etc/roam/%s/bad.conf:%d" % (d, lineno) in r.stderr, r.stderr
        assert "OK" not in r.stdout, r.stdout
    finally:
        _remove_dropin(w, d)
    r = w.dev(w.roamd, "--check-config", "--config", "/etc/roam/roamd.conf", check=False)
    assert r.returncode == 0, r.stderr
    assert "/etc/roam/%s: OK" % d in r.stdout, r.stdout


@pytest.mark.parametrize("d,text,lineno", BROKEN_DROPINS, ids=[b[0] for b in BROKEN_DROPINS])
def test_refused_reload_fails_the_caller(w, d, text, lineno):
    """issue 39: `roamd --reload` (systemctl reload's ExecReload) fails with roamd's reason when
    a drop-in is broken, and nothing of the new configuration applies: roamd.conf's change
    waits too. Fixed, the same command succeeds and the change applies."""
    w.path("etc-roam", d).mkdir(exist_ok=True)
    where = "/etc/roam/%s/bad.conf:%d" % (d, lineno)
    try:
        w.write_config(w.default_config.replace("eth0=ethernet", "eth0=cellular"))
        w.write_config(text, name="%s/bad.conf" % d)
        r = w.dev(w.roamd, "--reload", check=False)
        assert r.returncode == 1, (r.stdout, r.stderr)
        assert "reload refused: " + where in r.stderr, r.stderr
        with pytest.raises(DBusCallError) as e:
            w.call(MANAGER_PATH, MANAGER_IFACE, "Reload")
        assert e.value.name == "org.roam1.Error.ConfigInvalid"
        assert where in str(e.value), str(e.value)
        assert w.link("eth0")["Bearer"] == "ethernet", "a refused reload applied roamd.conf"
    finally:
        _remove_dropin(w, d)
    r = w.dev(w.roamd, "--reload", check=False)
    assert r.returncode == 0, r.stderr
    w.wait_link("eth0", lambda l: l["Bearer"] == "cellular", timeout=WITHIN)


def test_stop_with_world_changing(w):
    """Stopping roamd while links come and go does not hang or crash it."""
    w.add_link("churn0")
    w.wait_link("churn0", timeout=WITHIN)
    w.dev("ip", "link", "del", "churn0")
    w.roamd_stop()
    assert not bus_has_roamd(w)

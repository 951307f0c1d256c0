# SPDX-License-Identifier: LGPL-2.1-or-later
"""The global state is the default route's (issue 41 §1): Manager.State, `roam status
--json` and `roam wait-online` say what an app with the default policy reaches, not what the
best link reaches.

The world: wifi0 online at home; eth0 holds the kernel's default routes (dhcpcd gives the
wired link the lower metric) and is moved to the silent gateway (dead), the living room
(local only) or the cafe (portal); `home` for the recovery. Outcomes are what the internet's
whoami server saw (the source address), what the client printed and its exit code."""
import json

import pytest

from roamworld import MANAGER_IFACE, MANAGER_PATH, ROAM, WHOAMI, wait_for

WORLD = "tdflt"
LINK_IFACE = "org.roam1.Link"
OTHER = "roam-test/session-1.scope"  # in no app: the default policy
ROAM_SLICE = "system.slice/roamd.service/roam.slice"


@pytest.fixture(autouse=True)
def needs_probes(world):
    if not world.probes:
        pytest.skip("this roamd has no connectivity probes")


@pytest.fixture
def dw(w):
    (w.cgroup / OTHER).mkdir(parents=True, exist_ok=True)
    yield w
    for rel in (OTHER, "roam-test", ROAM_SLICE + "/app-org.test.Sticky.scope"):
        p = w.cgroup / rel
        if p.exists():
            (p / "cgroup.kill").write_text("1")
            wait_for(lambda: _rmdir(p), 5, what="rmdir %s" % p)


def _rmdir(p):
    try:
        p.rmdir()
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def follows(w, how):
    w.write_config(w.default_config + "\n[Routing]\nPreferOnline=%s\n" %
                   ("yes" if how == "verdict" else "no"))
    w.call(MANAGER_PATH, MANAGER_IFACE, "Reload")


def kernel_default(w, fam=4):
    out = w.dev("ip", "-%d" % fam, "route", "get", WHOAMI["inet"][fam]).stdout
    return out.split(" dev ")[1].split()[0]


def eth0_in(w, network, verdict):
    """eth0 joins `network` and holds the kernel's default route; its verdict is known."""
    w.move("eth0", network)
    wait_for(lambda: kernel_default(w) == "eth0", 30, interval=0.1,
             what="the kernel's default via eth0")
    w.wait_link("eth0", lambda l: l["Connectivity4"] == verdict and
                l["Connectivity6"] == verdict and l["Gateways"], timeout=40)


def manager_is(w, state, link, reason_has=None):
    path = w.links()[link]["_path"] if link else "/"

    def ok():
        m = w.manager()
        return (m["State"] == state and m["DefaultLink"] == path and
                (reason_has is None and m["StateReason"] == "" or
                 reason_has is not None and reason_has in m["StateReason"])) and m
    return w.wait(ok, 20, what="State %s via %s (%s)" % (state, link, reason_has))


def roam(w, *args):
    return w.dev(str(ROAM), *args, check=False)


def status_json(w):
    r = roam(w, "status", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def wait_online_rc(w):
    return roam(w, "wait-online", "--timeout", "2").returncode


def test_truth_dead_default_link_with_default_follows_kernel(dw):
    """DefaultFollows=kernel: eth0 behind the silent gateway holds the default route, wifi0 is
    online. Every surface says offline and names eth0; wait-online does not return 0."""
    w = dw
    follows(w, "kernel")
    eth0_in(w, "silent", "offline")
    m = manager_is(w, "offline", "eth0",
                   "wifi0 is online, but the default route goes through eth0, which reaches "
                   "nothing")
    assert m["BestLink"] == w.links()["wifi0"]["_path"]  # the best link is still the best link
    s = status_json(w)
    assert (s["state"], s["default_link"], s["best_link"]) == ("offline", "eth0", "wifi0"), s
    assert "default route goes through eth0" in s["state_reason"], s
    r = roam(w, "status")
    assert ("State: Offline: wifi0 is online, but the default route goes through eth0, which "
            "reaches nothing") in " ".join(r.stdout.split()), r.stdout
    assert wait_online_rc(w) != 0
    # and it is true: a default app's connection to the internet fails
    assert not w.whoami(4, cgroup=OTHER, timeout=2).ok

# SPDX-License-Identifier: LGPL-2.1-or-later
"""Kernel state under failure: what roamd does when the kernel refuses it (no CAP_NET_ADMIN,
an nftables commit or a route that fails: `roamd --test-faults=FILE`, docs/ARCHITECTURE.md),
that nothing leaks while it does, and that it says so on the bus (Manager.Degraded) and
recovers. Outcomes are what captures on every uplink saw and what clients got."""
import subprocess

import pytest

from roamworld import CG_ROAMD, ROAMD, WHOAMI
from test_apps import ROAM_SLICE, app_cgroup, remove_cgroups, reset_apps, set_policy

WORLD = "trecon"


def test_no_cap_net_admin_exits_with_the_cause(w):
    """The kernel refuses the whole first transaction (with the batch-begin's sequence number):
    roamd must stop with a message naming the cause, not wait for an ACK that never comes."""
    w.roamd_stop()
    try:
        r = w.dev_run(["setpriv", "--bounding-set=-net_admin", "--inh-caps=-net_admin",
                       str(ROAMD), "--config", "/etc/roam/roamd.conf"],
                      cgroup=CG_ROAMD, check=False, timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail("roamd without CAP_NET_ADMIN hangs instead of exiting")
    assert r.returncode != 0, r
    assert "CAP_NET_ADMIN" in r.stderr and "Operation not permitted" in r.stderr, r.stderr


@pytest.fixture
def apps(w):
    yield w
    remove_cgroups(w, ROAM_SLICE)
    remove_cgroups(w, "roam-test")
    reset_apps(w)


def ping(w, host, fam, cgroup=None, ns="dev"):
    cmd = ["ping", "-%d" % fam, "-n", "-c", "1", "-W", "3", host]
    if ns == "dev":
        return w.dev_run(cmd, cgroup=cgroup, check=False, timeout=20).returncode == 0
    return w.exec(ns, *cmd, check=False, timeout=20).returncode == 0


def test_icmp_passes_only_for_the_kernels_own_packets(apps):
    """Under default=deny a process in no app cannot ping (nor tunnel over ICMP); the kernel's
    own answers (echo replies to the LAN's pings) still leave."""
    w = apps
    other = "roam-test/session-1.scope"
    for fam in (4, 6):
        assert ping(w, WHOAMI["inet"][fam], fam, cgroup=other), fam
    set_policy(w, "default", access="deny")
    for fam in (4, 6):
        assert not ping(w, WHOAMI["inet"][fam], fam, cgroup=other), fam
        assert not w.whoami(fam, "udp", cgroup=other).ok, fam
        # the kernel answers a ping from the home network: its echo reply has no process
        assert ping(w, w.dev_addr("wifi0", fam), fam, ns="home"), fam
    # an app allowed online may ping; the default's deny stays for the rest
    set_policy(w, "org.test.Ping", access="allow")
    cg = app_cgroup(w, "org.test.Ping")
    for fam in (4, 6):
        assert ping(w, WHOAMI["inet"][fam], fam, cgroup=cg), fam
        assert not ping(w, WHOAMI["inet"][fam], fam, cgroup=other), fam

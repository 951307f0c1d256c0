# SPDX-License-Identifier: LGPL-2.1-or-later
"""Kernel state under failure: what roamd does when the kernel refuses it (no CAP_NET_ADMIN,
an nftables commit or a route that fails: `roamd --test-faults=FILE`, docs/ARCHITECTURE.md),
that nothing leaks while it does, and that it says so on the bus (Manager.Degraded) and
recovers. Outcomes are what captures on every uplink saw and what clients got."""
import subprocess

import pytest

from roamworld import CG_ROAMD, MANAGER_IFACE, MANAGER_PATH, PROPS_IFACE, ROAMD, wait_for

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

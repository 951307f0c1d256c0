# SPDX-License-Identifier: LGPL-2.1-or-later
"""The demo's roamd governs the demo's cgroups only (issue 41 §4, M7): ./roam-demo brings its
world up with `world.sh up NAME --cgroupns`, so the device has a cgroup namespace rooted at
the world's cgroup and its cgroup2 mount shows that subtree alone. An app scope of another
session on the host (a decoy outside the world's subtree) is never adopted; one inside the
world is, under its path in the device's view."""
import os
import subprocess

import pytest

from roamworld import (MANAGER_IFACE, MANAGER_PATH, REPO, ROAM, ROAMD, DBusCallError, World,
                       WorldBusy, cgroup2_mount, wait_for)

APP = "org.example.Decoy"
INSIDE = "org.example.Inside"
SCOPE = "user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-%s@2.scope"


def claim():
    base = (os.environ.get("ROAM_WORLD_PREFIX", "") + "tdemocg")[:16]
    for i in range(10):
        try:
            return World(base if i == 0 else base[:14] + "_%d" % i).lock()
        except WorldBusy:
            continue
    pytest.fail("no free world name")


def occupy(path):
    """A process in cgroup path (a sleeping child), so it is a live app scope."""
    os.makedirs(path, exist_ok=True)
    p = subprocess.Popen(["sleep", "600"])
    with open(os.path.join(path, "cgroup.procs"), "w") as f:
        f.write(str(p.pid))
    return p


def release(p, path):
    p.kill()
    p.wait()
    try:
        os.rmdir(path)
    except OSError:
        pass


def test_demo_roamd_adopts_no_cgroup_outside_its_world():
    if os.geteuid() != 0:
        pytest.skip("the world needs root")
    if not os.access(ROAMD, os.X_OK):
        pytest.skip("no roamd")
    w = claim()
    # as another session's test slice on the host (the walkthrough's M7)
    decoy_root = cgroup2_mount() / ("roam-decoy-%s.slice" % w.name)
    decoy = str(decoy_root / (SCOPE % APP))
    inside = None
    procs = []
    try:
        w.sh("down", w.name)
        w.sh("up", w.name, "--cgroupns", "--roamd", ROAMD, "--roam", ROAM, timeout=180)
        # a session of the host's own, outside the world: there before roamd starts
        procs.append((occupy(decoy), decoy))
        inside = str(w.cgroup / (SCOPE % INSIDE))
        procs.append((occupy(inside), inside))
        w.roamd_start()
        # the world's own app scope is adopted, named as the device sees it
        path = wait_for(lambda: _app(w, INSIDE), 20, what="the world's app adopted")
        # the decoy is not (both were there when roamd started and scanned the tree): roamd
        # has no object for it, and never logged its cgroup
        assert _app(w, APP) is None
        assert "roam-decoy-" not in w.roamd_log()
        cgroups = w.call(path, "org.freedesktop.DBus.Properties", "Get", "ss",
                         ["org.roam1.App", "Cgroups"])
        assert cgroups == ["/" + SCOPE % INSIDE], cgroups
        # the device's view of cgroups is the world's subtree
        r = w.sh("exec", w.name, "dev", "cat", "/proc/self/cgroup")
        assert "roam-world-" not in r.stdout, r.stdout
    finally:
        for p, d in procs:
            release(p, d)
        for d in (decoy_root,):
            for sub, _, _ in sorted(os.walk(str(d)), key=lambda x: -len(x[0])):
                try:
                    os.rmdir(sub)
                except OSError:
                    pass
        w.down()


def _app(w, app_id):
    try:
        return w.call(MANAGER_PATH, MANAGER_IFACE, "GetApp", "s", [app_id])
    except DBusCallError:
        return None

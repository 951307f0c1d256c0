# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fixtures of the world tests.

Each test module names its own world (module global WORLD, at most 16 characters of
[A-Za-z0-9_]); the module-scoped `world` fixture builds it once, starts roamd (unless the
module sets NEEDS_ROAMD = False) and always tears it down. The function-scoped `w` fixture
hands out the same world and puts it back in its default shape after each test.
ROAM_WORLD_PREFIX (e.g. a CI job id) is put in front of every world name; besides, a world's
name is locked while a run uses it, and a second run on the same machine takes NAME_1 (...).
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from roamworld import ROAMD, ROAM, World, WorldBusy  # noqa: E402


def _world_name(module):
    name = getattr(module, "WORLD", None)
    if not name:
        base = module.__name__.rsplit(".", 1)[-1].replace("test_", "")
        name = "t" + base[:10]
    return (os.environ.get("ROAM_WORLD_PREFIX", "") + name)[:16]


def _claim_world(module):
    """The module's world, its name claimed for this process: when another run of the suite
    holds the name, the next free one of NAME_1 ... NAME_9."""
    base = _world_name(module)
    for i in range(10):
        name = base if i == 0 else base[:14] + "_%d" % i
        try:
            return World(name).lock()
        except WorldBusy:
            continue
    pytest.fail("worlds %s and %s_1..9 are all in use by other processes" % (base, base[:14]))


@pytest.fixture(scope="module")
def world(request):
    if os.geteuid() != 0:
        pytest.skip("the test world needs root")
    needs_roamd = getattr(request.module, "NEEDS_ROAMD", True)
    if needs_roamd and not os.access(ROAMD, os.X_OK):
        pytest.skip("no roamd binary at %s (build it with: meson setup build && ninja -C build)"
                    % ROAMD)
    w = _claim_world(request.module)
    try:
        w.up()
        if needs_roamd:
            w.roamd_start()
            w.wait_default_state()
        yield w
    finally:
        w.down()


@pytest.fixture
def w(world, request):
    """The module's world; restored to its default shape after the test."""
    yield world
    if getattr(request.module, "NEEDS_ROAMD", True):
        world.restore()


@pytest.fixture(scope="session")
def roam_client():
    if not os.access(ROAM, os.X_OK):
        pytest.skip("no roam client at %s" % ROAM)
    return ROAM


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not rep.failed:
        return
    wld = item.funcargs.get("w") or item.funcargs.get("world")
    if not isinstance(wld, World):
        return
    for name in ("roamd.log", "dhcpcd.log"):
        try:
            text = wld.path(name).read_text(errors="replace")
        except OSError:
            continue
        rep.sections.append(("%s of world %s (last 60 lines)" % (name, wld.name),
                             "\n".join(text.splitlines()[-60:])))

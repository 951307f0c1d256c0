"""End to end: the real roam on a real pty against the real roamd, in a network namespace of
its own (tests/integration/minienv.py) with a private system bus."""
import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "integration"))
from minienv import ROAMD, MiniEnv  # noqa: E402
from tuidriver import Tui  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip") or
                                not os.access(ROAMD, os.X_OK),
                                reason="needs root, iproute2 and a built roamd")


@pytest.fixture
def env():
    e = MiniEnv("tui")
    e.netns("ip link add veth0 type veth peer name veth1")
    e.netns("ip link set veth0 up")
    e.netns("ip link set veth1 up")
    e.netns("ip addr add 192.0.2.10/24 dev veth0")
    yield e
    e.close()


def test_real_roamd(env, tmp_path):
    env.start_roamd("")
    # The real clock: roamd's LastProbe is real time. 30 rows: the first-join question's
    # dialog (veth0's network is new) leaves the link rows above and below it in view.
    t = Tui(env.env, tmp_path, rows=30, extra_env={"ROAM_TEST_NOW": ""})
    try:
        t.wait_for(screen="overview", text=["Offline: veth0, no default route", "veth1"])
        assert "no address" in t.text()
        # A change in the kernel reaches the screen without a key.
        env.netns("ip addr add 192.0.2.11/24 dev veth1")
        t.wait_for(screen="overview", text="192.0.2.11/24")
        # Both links are on networks roamd has not seen: the first-join question comes for
        # each, one at a time; "not now" keeps them untrusted for this session.
        pending = {"veth0", "veth1"}

        def asked(t):
            return next((n for n in sorted(pending)
                         if f"{n}: a network roam has not seen" in t.text()), None)
        while pending:
            # the next question may already be on the frame that answered the last one
            if not asked(t):
                t.wait(lambda t: asked(t), what="the first-join question for " +
                       " or ".join(sorted(pending)))
            name = asked(t)
            t.settle()
            t.key("u")
            t.wait_for(screen="overview", text=f"{name} stays untrusted for this session")
            pending.discard(name)
        t.wait(lambda t: "Is this a home, work or public network?" not in t.text(),
               what="no question left")
        # veth0 is the other line of two
        if not t.cursor_line().startswith("> veth0"):
            t.key("j")
            t.wait_cursor("> veth0", screen="overview")
        t.key("\r")
        t.wait_for(screen="link", text=["veth0 (ethernet): offline", "192.0.2.10/24 (global)"])
        t.key("r")
        t.wait_for(screen="link", text="roamd is probing veth0 again.")
        env.stop_roamd()
        t.wait_for(screen="overview", live="not-running", text="roamd is not running")
        env.start_roamd("")
        t.wait_for(screen="overview", text=["Offline: veth", "roamd is back."])
        env.netns("ip link del veth1")
        t.wait(lambda t: "veth1" not in t.text() and t.frame.live == "ready",
               what="veth1 gone")
    finally:
        t.close()
        env.stop_roamd()

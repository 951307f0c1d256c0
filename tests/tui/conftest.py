"""Fixtures for the screenshot tests: a private bus, fake_roamd (tests/client), and the real
roam TUI on a pseudo-terminal read by pyte (tuidriver.py)."""
import difflib
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "client"))

from fakebus import Bus, FakeRoamd, ROAM, TOP  # noqa: E402
from tuidriver import Tui, theme_roles  # noqa: E402

GOLDEN = os.path.join(HERE, "golden")
REGEN = os.environ.get("ROAM_REGEN_GOLDENS") == "1"


@pytest.fixture(scope="session", autouse=True)
def roam_binary():
    if not os.access(ROAM, os.X_OK):
        pytest.exit(f"{ROAM} is not built (ninja -C build, or set ROAM)", returncode=1)


@pytest.fixture
def bus(tmp_path):
    b = Bus(str(tmp_path))
    yield b
    b.close()


@pytest.fixture
def roamd(bus, tmp_path):
    """roamd(scenario) starts fake_roamd; stopped after the test."""
    fakes = []

    def start(scenario):
        fake = FakeRoamd(bus, str(tmp_path), scenario)
        fakes.append(fake)
        return fake

    yield start
    for fake in fakes:
        fake.close()


@pytest.fixture
def tui(bus, tmp_path):
    """tui(**options) starts roam on a pty (options of tuidriver.Tui); closed after."""
    started = []

    def start(**kwargs):
        t = Tui(bus.env, tmp_path, **kwargs)
        started.append(t)
        return t

    yield start
    for t in started:
        t.close()


def normalise(text):
    """Paths of this checkout are volatile; nothing else is (roam's clock is frozen)."""
    return text.replace(TOP, "<top>")


@pytest.fixture
def golden():
    """golden(name, tui, theme) compares the screen with tests/tui/golden/NAME.txt, or writes
    it when ROAM_REGEN_GOLDENS=1 (tests/tui/regen)."""

    def check(name, t, theme="default", note=""):
        # A tab's reason word is part of the header: let the screens still reading roamd's
        # state (Bluetooth's "7:wait") settle, so a golden does not depend on that race.
        if any(":wait" in line for line in t.text_lines()[:1]):
            try:
                t.wait(lambda t: ":wait" not in t.text_lines()[0], timeout=3,
                       what="the header's tabs settled")
            except AssertionError:
                pass
        header = (f"# roam screenshot {name}: {t.cols}x{t.rows}, theme {theme}"
                  f"{', ' + note if note else ''}\n")
        actual = header + normalise(t.dump(theme_roles(theme)))
        path = os.path.join(GOLDEN, name + ".txt")
        if REGEN or not os.path.exists(path):
            if not REGEN:
                pytest.fail(f"no golden {path}: run tests/tui/regen")
            with open(path, "w") as f:
                f.write(actual)
            return
        with open(path) as f:
            expected = f.read()
        if actual != expected:
            diff = "".join(difflib.unified_diff(expected.splitlines(True),
                                                actual.splitlines(True),
                                                f"golden/{name}.txt", "screen now"))
            pytest.fail(f"screen differs from golden/{name}.txt "
                        f"(tests/tui/regen rewrites goldens):\n{diff}", pytrace=False)

    return check

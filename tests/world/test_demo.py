# SPDX-License-Identifier: LGPL-2.1-or-later
"""./roam-demo's mode (issue 32 item 18): only --check or a standard input that is not a
terminal means check mode; a terminal on stdin is interactive even when stdout is a pipe
(`./roam-demo | tee log` used to tear the world down at the first Enter). `--dry-run` says
which mode it would take and stops before anything is built or brought up."""
import os
import pty
import shutil
import subprocess
import sys
import tempfile
import threading

import pytest

from roamworld import REPO, World, WorldBusy

DEMO = str(REPO / "roam-demo")


def demo_mode(args, stdin):
    """Runs ./roam-demo --dry-run ARGS with stdin (a file object or fd) and stdout a pipe:
    (exit status, what it printed)."""
    p = subprocess.run([DEMO, "--dry-run"] + args, stdin=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=30)
    return p.returncode, p.stdout


def with_tty_stdin(args):
    """The demo with a terminal (a pty's end) on stdin and a pipe on stdout."""
    master, slave = pty.openpty()
    try:
        return demo_mode(args, slave)
    finally:
        os.close(slave)
        os.close(master)


def test_terminal_stdin_with_piped_stdout_is_interactive():
    rc, out = with_tty_stdin([])
    assert rc == 0, out
    assert "interactive mode (standard input is a terminal)" in out, out
    assert "check mode" not in out, out


def test_stdin_not_a_terminal_is_check_mode():
    with open(os.devnull) as null:
        rc, out = demo_mode([], null)
    assert rc == 0, out
    assert "check mode (standard input is not a terminal)" in out, out
    rc, out = demo_mode([], subprocess.PIPE)
    assert "check mode (standard input is not a terminal)" in out, out


def test_check_option_is_check_mode_on_a_terminal():
    rc, out = with_tty_stdin(["--check"])
    assert rc == 0, out
    assert "check mode (--check)" in out, out
    assert "interactive" not in out, out


def test_unknown_argument_is_refused():
    with open(os.devnull) as null:
        rc, out = demo_mode(["--frob"], null)
    assert rc == 2 and "unknown argument --frob" in out, out


# ---- the demo live, on a terminal, its output in a pipe (items 18 and 19) ----

sys.path.insert(0, str(REPO / "tests" / "tui"))
sys.path.insert(0, str(REPO / "tests" / "client"))
from tuidriver import ByteStream, Screen, Tui, _controlling_tty, _set_size  # noqa: E402

# The login browser: fetches the page it is given, as a browser would where roam runs it
# (the device's resolver and links, the CA the demo gives it), and keeps it for the test.
FETCH_SH = """#!/bin/sh
printf '%%s\\n' "$1" >%(dir)s/url
curl -sSL --max-time 10 --cacert "$SSL_CERT_FILE" -o %(dir)s/page.tmp "$1" 2>%(dir)s/err &&
        mv %(dir)s/page.tmp %(dir)s/page
"""


class DemoTui(Tui):
    """tuidriver's Tui on ./roam-demo instead of roam: the pty is the demo's stdin (and
    controlling terminal) only; its stdout is a pipe, as in `./roam-demo | tee log`."""

    def __init__(self, args, env, cols=80, rows=24):
        self.cols, self.rows, self.term = cols, rows, "xterm-256color"
        self.screen = Screen(cols, rows)
        self.stream = ByteStream(self.screen)
        self.pending, self.frame, self.frames, self.output = b"", None, 0, []
        self.master, slave = os.openpty()
        _set_size(slave, cols, rows)
        self.proc = subprocess.Popen([DEMO, *args], stdin=slave, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=env,
                                     preexec_fn=_controlling_tty, close_fds=True)
        os.close(slave)
        self.log = []
        self.prompted = threading.Event()
        self.tearing_down = threading.Event()
        threading.Thread(target=self._read_log, daemon=True).start()

    def _read_log(self):
        for line in iter(self.proc.stdout.readline, b""):
            self.log.append(line.decode(errors="replace"))
            if b"Press Enter to start the interface" in line:
                self.prompted.set()
            if b"Tearing the demo world down" in line:
                self.tearing_down.set()


def answer_questions(t, until):
    """"Not now" to the trust questions that pop up (cell0's, wifi0's in the cafe), each once
    its grace period is over, until a frame satisfies until(t)."""
    q = "Is this a home, work or public network?"
    while not (t.frame and until(t)):  # the frame now may be the one wanted already
        t.wait(lambda t: until(t) or (q in t.text() and t.frame.fields.get("settling") == "0"),
               timeout=30, what="a question or the screen wanted")
        if not until(t):
            t.key("u")


def press_until(t, key, until):
    """Presses key until a frame satisfies until(t), answering "not now" to a trust question
    that pops up meanwhile: one that comes just as the key is typed swallows it (keys wait
    while a question settles), so the key is typed again once the question is gone."""
    q = "Is this a home, work or public network?"
    while not (t.frame and until(t)):
        if q in t.text():
            t.wait(lambda t: until(t) or q not in t.text() or
                   t.frame.fields.get("settling") == "0",
                   timeout=30, what="the question to settle")
            if q in t.text() and not until(t):
                t.key("u")  # the next frame may bring the next link's question
            continue
        t.key(key)
        t.wait(lambda t: until(t) or q in t.text(), timeout=10, what="the key's effect")


def test_demo_in_a_pipe_runs_the_interface_and_its_browser_reaches_the_portal():
    """`./roam-demo | cat` on a terminal: interactive (the interface draws on the terminal,
    the world stays up after Enter); wifi0's networks are told apart by their SSIDs (the
    demo's wpa_supplicant); with wifi0 in the cafe, b on the Portal tab starts the login
    browser where roam runs, in the device: the cafe's name resolves and its page arrives.
    q asks before it tears the world down (a y typed at once answers nothing), and y after
    the question's grace period ends the demo and its world (issue 32, items 5, 8, 19)."""
    if os.geteuid() != 0:
        pytest.skip("the demo needs root")
    base = (os.environ.get("ROAM_WORLD_PREFIX", "") + "tdemo")[:16]
    world = None
    for i in range(10):
        try:
            world = World(base if i == 0 else base[:14] + "_%d" % i).lock()
            break
        except WorldBusy:
            continue
    assert world, "no free name for the demo's world"
    d = tempfile.mkdtemp(prefix="roam-demo-browser-")
    os.chmod(d, 0o777)  # the browser runs as the user who ran sudo, when one did
    script = os.path.join(d, "browser")
    with open(script, "w") as f:
        f.write(FETCH_SH % {"dir": d})
    os.chmod(script, 0o755)
    env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8",
               ROAM_TEST_FRAMES="1", ROAM_PORTAL_BROWSER=script, WORLD_QUIET="1")
    t = DemoTui(["--name=" + world.name], env)
    try:
        # install check, build, world up, roamd: setup, not a functional wait
        assert t.prompted.wait(300), "".join(t.log)
        log = "".join(t.log)
        assert "interactive mode (standard input is a terminal)" in log, log
        t.key("\r")
        t.wait_for(screen="overview", live="ready", text="wifi0", timeout=20)
        world.wait_link("wifi0", lambda l: l["NetworkIdentity"].get("ssid") == "roam home",
                        what="wifi0 at home by its SSID")
        world.move("wifi0", "cafe")
        world.wait_link("wifi0", lambda l: l["NetworkIdentity"].get("ssid") == "Cafe Libre"
                        and l["NetworkId"].startswith("wifi:Cafe Libre:"), timeout=30,
                        what="wifi0 in the cafe by its SSID")
        answer_questions(t, lambda t: "Behind a captive portal on wifi0" in t.text())
        # the cafe is a WISPr portal (world.sh cafe-portal): l logs in with the credentials
        # the banner states (issue 41 §4)
        log = "".join(t.log)
        assert "user guest, password espresso" in " ".join(log.split()), log
        press_until(t, "4", lambda t: t.frame.screen == "portal" and "l log in" in t.text())
        t.key("l")
        t.wait_for(screen="portal", text="Log in on wifi0")
        t.key("guest\r")
        t.key("espresso\r")
        t.wait(lambda t: t.frame.screen == "portal" and "e extend" in t.text(), timeout=40,
               what="logged in, the session extendable")
        world.wait_link("wifi0", lambda l: l["Connectivity"] == "online", timeout=40,
                        what="wifi0 online after the WISPr login")
        # e: the login browser on the portal's page, which extends the session
        t.key("e")
        # back from the browser: "Browser closed: checking wifi0 again", then roamd's answer
        t.wait(lambda t: t.frame.screen == "portal" and ("Browser closed" in t.text() or
                                                         "probing wifi0 again" in t.text()),
               timeout=30, what="roam back from the browser")
        assert t.proc.poll() is None, "".join(t.log)  # the demo still runs
        url = open(os.path.join(d, "url")).read().strip()
        assert url.startswith(("http://cafe.test/", "https://cafe.test/")), url
        assert os.path.exists(os.path.join(d, "page")), open(os.path.join(d, "err")).read()
        # the cafe's portal page (world.sh cafe-portal, as the demo starts it): its form for
        # people, beside the WISPr XML (tests/world/test_demo_portal.py logs in through both)
        page = open(os.path.join(d, "page")).read()
        assert "Welcome to Cafe Roam" in page and "Room or table" in page, page
        # Quitting the demo tears its world down: q asks, and the y typed right after it
        # (within the question's grace period) answers nothing.
        t.key("qy")  # one write: roam reads both keys at once
        t.wait(lambda t: "Quit roam? The demo world is torn down." in " ".join(t.text().split())
               and t.frame.fields.get("settling") == "0", timeout=10,
               what="the quit question, its grace period over")
        assert t.proc.poll() is None, "".join(t.log)
        t.key("y")
        # roam quits, and the demo's exit tears the world down
        assert t.tearing_down.wait(30), "".join(t.log)
        assert t.proc.wait(timeout=300) == 0, "".join(t.log)  # teardown, not a functional wait
    finally:
        t.close()
        world.down()
        shutil.rmtree(d, ignore_errors=True)

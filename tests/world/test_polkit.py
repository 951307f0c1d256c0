# SPDX-License-Identifier: LGPL-2.1-or-later
"""Authorization through polkit as a desktop user meets it: roam's calls allow interactive
authorization, roamd passes that on to polkit (AllowUserInteraction), and on a terminal the
real pkttyagent asks for the password. polkit is tests/dbusmock/polkitd.py (as strict as
polkitd: implicit authorizations from data/org.roam1.policy, challenges only through a
registered agent); the setuid polkit-agent-helper-1 (PAM) is tests/world/polkit_agent_helper.py,
bind-mounted over it in the device's own mount namespace."""
import os
import pty
import select
import signal
import termios
import time

import pytest

from roamworld import MANAGER_IFACE, MANAGER_PATH, POLKIT_NAME, POLKIT_PATH, ROAM

WORLD = "tpolkit"
NOBODY = 65534
HELPER = "/usr/lib/polkit-1/polkit-agent-helper-1"
AGENT = "/usr/bin/pkttyagent"
HERE = os.path.dirname(os.path.abspath(__file__))
DENIED = ("org.roam1.Error.AccessDenied",
          "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired")


def mock(w, method, signature="", args=()):
    return w.call(POLKIT_PATH, "org.freedesktop.DBus.Mock", method, signature, args,
                  dest=POLKIT_NAME)


def last_check(w, action):
    checks = [c for c in mock(w, "GetChecks") if c[0] == action]
    assert checks, "polkit was not asked for %s" % action
    return checks[-1]


@pytest.fixture
def trust_back(w):
    """wifi0's location as the world had it, afterwards."""
    yield w
    w.dev("rm", "-f", "/var/lib/roam/locations.state")
    w.call(MANAGER_PATH, MANAGER_IFACE, "Reload")
    w.wait_link("wifi0", lambda l: l["LocationSource"] != "user", what="wifi0's location back")


@pytest.fixture
def helper(w):
    """The helper's stand-in over polkit-agent-helper-1, in the device only."""
    if not os.access(AGENT, os.X_OK) or not os.path.exists(HELPER):
        pytest.skip("pkttyagent and polkit-agent-helper-1 (package polkitd) are not installed")
    w.dev("mount", "--bind", os.path.join(HERE, "polkit_agent_helper.py"), HELPER)
    try:
        yield w
    finally:
        w.dev("umount", HELPER)


def on_terminal(w, cmd, user, answers, timeout=20):
    """cmd in the device as user on a terminal of its own (a pty, its controlling terminal):
    each time the terminal shows answers[i][0] (after what matched before), types
    answers[i][1]; a password (prompt "Password:") once the program turned the terminal's
    echo off (typing earlier would be flushed by its tcsetattr). Returns (exit status,
    everything the terminal showed)."""
    argv = w._dev_argv(cmd, user=user)
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    out, pending, seen = b"", list(answers), 0
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            assert left > 0, "no end on the terminal: %r" % out
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the terminal's last user is gone
                break
            if not chunk:
                break
            out += chunk
            while pending and pending[0][0].encode() in out[seen:]:
                prompt, answer = pending.pop(0)
                seen = out.index(prompt.encode(), seen) + len(prompt)
                # no event says when the echo goes off: look every 10 ms, for 10 s at most
                for _ in range(1000 if prompt == "Password:" else 0):
                    if not termios.tcgetattr(fd)[3] & termios.ECHO:
                        break
                    time.sleep(0.01)
                os.write(fd, answer.encode() + b"\n")
    except BaseException:
        os.killpg(pid, signal.SIGKILL)
        raise
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def test_the_call_allows_interaction_and_roamd_says_so_to_polkit(w, trust_back):
    """roam's calls carry ALLOW_INTERACTIVE_AUTHORIZATION; roamd asks polkit with
    AllowUserInteraction=1 for those and 0 for the others. With no agent, polkit can only
    challenge: a call that allowed interaction is refused saying no agent answered, one that
    did not gets InteractiveAuthorizationRequired (as from systemd's daemons)."""
    with w.polkit():
        r = w.dev_run([str(ROAM), "network", "trust", "home", "wifi0"], user=NOBODY,
                      check=False)
        assert r.returncode != 0, (r.stdout, r.stderr)
        assert last_check(w, "org.roam1.set-location") == ("org.roam1.set-location", 1)
        assert "no authentication agent answered" in r.stderr, r.stderr
        assert "netdev" not in r.stderr, r.stderr
        ok, err, out = w.call_as(NOBODY, MANAGER_PATH, MANAGER_IFACE, "SetLocation",
                                 "string:wifi0", "string:home")
        assert not ok and err == "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired", out
        assert last_check(w, "org.roam1.set-location") == ("org.roam1.set-location", 0)
        assert w.link("wifi0")["LocationSource"] != "user"
        # in an active local session the default answers at once: nobody is asked
        mock(w, "SetActiveUids", "au", [[NOBODY]])
        r = w.dev_run([str(ROAM), "network", "trust", "home", "wifi0"], user=NOBODY,
                      check=False)
        assert r.returncode == 0, (r.stdout, r.stderr)
        assert w.link("wifi0")["LocationWanted"] == "home"


def test_a_user_answers_through_the_agent(w, helper, trust_back):
    """`roam network trust` by a user on a terminal: polkit asks for an administrator's
    password through pkttyagent, which roam started for its own process; the right password
    makes the change, a wrong one refuses it and changes nothing."""
    with w.polkit():
        mock(w, "SetPassword", "us", [0, "admin-secret"])
        cmd = [str(ROAM), "network", "trust", "work", "wifi0"]
        status, out = on_terminal(w, cmd, NOBODY, [("Password:", "wrong")])
        assert status != 0, out
        assert w.link("wifi0")["LocationSource"] != "user", out
        status, out = on_terminal(w, cmd, NOBODY, [("Password:", "admin-secret")])
        assert status == 0, out
        assert "AUTHENTICATING FOR org.roam1.set-location" in out, out
        assert "admin-secret" not in out and "wrong" not in out  # not echoed
        assert last_check(w, "org.roam1.set-location")[1] == 1
        w.wait_link("wifi0", lambda l: l["LocationWanted"] == "work" and
                    l["LocationSource"] == "user", what="wifi0 at work")


def test_reading_commands_start_no_agent(w, helper):
    """As systemctl starts its agent only for verbs that change something: a user's `roam
    status`, `roam apps` or `roam network` on a terminal starts no pkttyagent (no agent
    registers with polkit); `roam network trust` does."""
    with w.polkit():
        for cmd in (["status"], ["apps"], ["network"], ["time"], ["portal"]):
            status, out = on_terminal(w, [str(ROAM)] + cmd, NOBODY, [])
            assert status == 0, (cmd, out)
        assert mock(w, "GetRegistrations") == 0
        status, out = on_terminal(w, [str(ROAM), "network", "trust", "work", "wifi0"], NOBODY,
                                  [("Password:", "wrong")])
        assert status != 0, out
        assert mock(w, "GetRegistrations") == 1


def test_the_tui_gives_the_terminal_to_the_agent_and_takes_it_back(w, helper, trust_back):
    """The TUI's first-join question ("home, work or public?") answered by a user outside any
    session (org.roam1.set-location is an administrator's there): roamd says polkit wants a
    password, the TUI suspends its screen, starts pkttyagent and sends the answer again
    allowing interaction; the agent asks on the terminal, and once answered the TUI's screen
    is back and the answer in force."""
    import pyte
    screen = pyte.Screen(80, 24)
    stream = pyte.ByteStream(screen)
    argv = w._dev_argv(["env", "HOME=/nonexistent", str(ROAM)], user=NOBODY)
    env = dict(os.environ, TERM="xterm", LINES="24", COLUMNS="80")
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    import fcntl
    import struct
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))

    def text():
        return "\n".join(screen.display)

    def until(pred, what, timeout=15):
        deadline = time.monotonic() + timeout
        while not pred():
            left = deadline - time.monotonic()
            assert left > 0, "%s; the screen:\n%s" % (what, text())
            r, _, _ = select.select([fd], [], [], left)
            if r:
                try:
                    stream.feed(os.read(fd, 65536))
                except OSError:
                    assert pred(), "%s; the screen:\n%s" % (what, text())
                    return

    try:
        with w.polkit():
            mock(w, "SetPassword", "us", [0, "admin-secret"])
            until(lambda: "Is this a home, work or public network?" in text(),
                  "the first-join question")
            # a new question ignores keys for its first second (its grace, a timer with no
            # sign outside): answer after it, again if the TUI says it was too early
            for _ in range(5):
                time.sleep(1.5)
                os.write(fd, b"h")
                until(lambda: "Password:" in text() or "keys wait a moment" in text(),
                      "the answer taken or refused as too early")
                if "Password:" in text():
                    break
            until(lambda: "Password:" in text(), "polkit's agent asks")
            assert "polkit asks for a password to allow this change" in text(), text()
            assert "AUTHENTICATING FOR org.roam1.set-location" in text(), text()
            for _ in range(1000):  # the agent turns the echo off after its prompt
                if not termios.tcgetattr(fd)[3] & termios.ECHO:
                    break
                time.sleep(0.01)
            os.write(fd, b"admin-secret\n")
            until(lambda: "Overview" in text() and
                  "wifi0: this network is now home; its rules are in force." in text(),
                  "the TUI back, the answer in force")
            assert "admin-secret" not in text()
            w.wait_link("wifi0", lambda l: l["LocationWanted"] == "home" and
                        l["LocationSource"] == "user", what="wifi0 at home")
            checks = [c for c in mock(w, "GetChecks") if c[0] == "org.roam1.set-location"]
            assert [c[1] for c in checks] == [0, 1], checks  # first without, then with
        os.write(fd, b"q")
        until(lambda: False if os.waitpid(pid, os.WNOHANG)[0] == 0 else True, "roam ends")
    finally:
        try:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)


def test_plain_mode_lends_the_terminal_to_the_agent(w, helper, trust_back):
    """Plain mode (screen readers) answers its first-join question as a user outside any
    session: it stops reading commands, says polkit asks, and the agent asks on the same
    terminal; the answer is in force afterwards and plain mode reads commands again."""
    with w.polkit():
        mock(w, "SetPassword", "us", [0, "admin-secret"])
        status, out = on_terminal(
            w, ["env", "HOME=/nonexistent", str(ROAM), "--plain"], NOBODY,
            [("until you answer: type home 1", "home 1"), ("Password:", "admin-secret"),
             ("its rules are in force.", "quit")], timeout=30)
        assert status == 0, out
        assert "polkit asks for a password to allow this change" in out, out
        assert "AUTHENTICATING FOR org.roam1.set-location" in out, out
        assert "admin-secret" not in out
        w.wait_link("wifi0", lambda l: l["LocationWanted"] == "home" and
                    l["LocationSource"] == "user", what="wifi0 at home")


def test_wifi_actions_and_their_defaults(w):
    """org.roam1.WiFi's methods ask polkit for their own actions (issue 43): scanning is the
    active session's (yes), changing saved networks needs an administrator (auth_admin_keep),
    showing a passphrase needs one every time (auth_admin), whatever the session. wifi0 has
    no Wi-Fi owner in the world: an authorized call is refused in words (NotSupported), an
    unauthorized one never gets that far."""
    path = w.link("wifi0")["_path"]
    wifi = "org.roam1.WiFi"
    ssid = "array:byte:0x68,0x6f,0x6d,0x65"
    with w.polkit():
        ok, err, out = w.call_as(NOBODY, path, wifi, "Scan")
        assert not ok and err in DENIED, out
        assert last_check(w, "org.roam1.wifi-scan") == ("org.roam1.wifi-scan", 0)
        mock(w, "SetActiveUids", "au", [[NOBODY]])
        ok, err, out = w.call_as(NOBODY, path, wifi, "Scan")
        assert not ok and err == "org.roam1.Error.NotSupported", out
        for method, action in (("Forget", "org.roam1.wifi-manage"),
                               ("Share", "org.roam1.wifi-share")):
            ok, err, out = w.call_as(NOBODY, path, wifi, method, ssid)
            assert not ok and err in DENIED, (method, out)
            assert last_check(w, action) == (action, 0)

"""End to end through the real roam (issue 43): a person joins the real PEAP world of
peapworld.py (hostapd's EAP server and the real wpa_supplicant, roamd beside them), a wrong
password first. From the CLI: said in words with its exit status, nothing of it left in
wpa_supplicant; the right one joins, EAP state=SUCCESS in wpa_supplicant's STATUS. From the
TUI on a pty: the wired port shows no network, so the hidden-network dialog with 802.1X; the
refusal said in words and asked again in place; the right one joins. No password reaches
roamd's log, the screen or any process's argv."""
import os
import subprocess
import sys

import pytest

from peapworld import DOMAIN, IDENTITY, PASSWORD, SSID, PeapEnv

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests", "tui"))
sys.path.insert(0, os.path.join(TOP, "tests", "client"))
from tuidriver import Tui  # noqa: E402

ROAM = os.environ.get("ROAM", os.path.join(TOP, "build/tui/roam"))
WRONG = "not-the-password"


@pytest.fixture
def env():
    e = PeapEnv()
    try:
        yield e
    finally:
        e.close()


def argv_with(secret):
    """The command lines of every process on the machine that hold secret."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if secret.encode() in cmd:
            found.append(cmd.replace(b"\0", b" ").decode(errors="replace"))
    return found


def roam(env, *args, stdin=None):
    return subprocess.run([ROAM, "wifi", *args], env=dict(env.env.env, LC_ALL="C.UTF-8"),
                          input=stdin, capture_output=True, text=True, timeout=60)


def test_cli_peap_wrong_then_right(env):
    args = ["join", SSID, "--eap", "peap", "--identity", IDENTITY, "--ca-cert", env.ca,
            "--domain", DOMAIN, "--passphrase-file", "-"]
    p = roam(env, *args, stdin=WRONG + "\n")
    assert p.returncode == 4, p.stdout + p.stderr + env.env.log()[-3000:]
    assert p.stdout == f"Joining {SSID} on wlan0...\n", p.stdout
    assert f"{SSID} refused the user name or password" in p.stderr, p.stderr
    # the network roamd added for the refused join is gone again
    assert env.ctl("LIST_NETWORKS").splitlines()[1:] == []
    p = roam(env, *args, stdin=PASSWORD + "\n")
    assert p.returncode == 0, p.stdout + p.stderr + env.env.log()[-3000:]
    lines = p.stdout.splitlines()
    assert lines[0] == f"Joining {SSID} on wlan0...", lines
    assert lines[1].startswith(f"Joined {SSID} (saved"), lines
    assert lines[2] == "wlan0: offline (no address).", lines
    status = env.ctl("STATUS")
    assert "EAP state=SUCCESS" in status and "selectedMethod=25 (EAP-PEAP)" in status, status
    assert f"ssid={SSID}" in status, status
    [saved] = env.ctl("LIST_NETWORKS").splitlines()[1:]
    assert saved.split("\t")[1] == SSID, saved
    log = env.env.log()
    for secret in (PASSWORD, WRONG):
        assert secret not in log
        assert argv_with(secret) == []


def said(t, *texts, screen="wifi"):
    def ok(t):
        return t.frame.screen == screen and all(x in " ".join(t.text().split()) for x in texts)
    if t.frames and ok(t):
        return t
    return t.wait(ok, 10, f"the {screen} screen saying {texts!r}")


def open_wifi_screen(t):
    t.wait_for(screen="overview", text="wlan0")
    for _ in range(5):  # wlan0 among the links (wlan0-peer, lo)
        if t.cursor_line().startswith("> wlan0 ") or t.cursor_line() == "> wlan0":
            break
        before = t.cursor_line()
        t.key("j")
        t.wait(lambda t: t.cursor_line() != before, what="the selection to move")
    t.key("\r")
    t.wait_for(screen="link", text="wlan0")
    t.key("w")
    said(t, "Wi-Fi on wlan0 through wpa_supplicant")


def hidden_dialog(t):
    t.key("h")
    return said(t, "Join a hidden network", "Nothing in the air names a hidden network")


def test_tui_peap_wrong_then_right(env, tmp_path):
    """The wired port shows no network in the air (wpa_supplicant -Dwired scans nothing): the
    list says so, and a person joins by name from the hidden-network dialog, 802.1X chosen,
    as they would a network whose name they were given. wpa_supplicant ends the join on the
    EAP failure (roamd removes the network it added); the refusal is said in words and the
    dialog asks again in place, with what was typed but the password; the right one joins."""
    t = Tui(env.env.env, tmp_path, extra_env={"ROAM_TEST_NOW": ""})
    try:
        open_wifi_screen(t)
        said(t, "No networks seen (r looks again).", "+ Join a hidden network")
        hidden_dialog(t)
        t.key(SSID + "\t")
        t.key(b"\x1bOD")  # Left: WPA2 -> enterprise
        said(t, "EAP method", "PEAP", "User name", "Password", "CA file", "Server domain")
        t.key(f"\t\t{IDENTITY}\t\t{WRONG}\t{env.ca}\t{DOMAIN}")
        said(t, IDENTITY, env.ca, DOMAIN)
        assert WRONG not in t.text()
        t.key("\r")
        said(t, f"{SSID} refused this user name or password. Check it (it is case-sensitive) "
             "and try again.", "Join a hidden network", "Nothing in the air names",
             f"Network {SSID}", f"User name {IDENTITY}", f"CA file {env.ca}",
             f"Server domain {DOMAIN}", "enterprise (802.1X)")
        assert f"{SSID} refused the user name or password (EAP failure)" in t.text()
        # the password's field is empty and focused
        assert t.cursor_line().split() == [">", "Password"], t.cursor_line()
        # nothing of the refused join stays in wpa_supplicant
        assert env.ctl("LIST_NETWORKS").splitlines()[1:] == []
        t.settle()  # a dialog that came by itself ignores keys for a moment
        t.key(PASSWORD + "\r")
        said(t, f"Joined {SSID}. wlan0: offline.")
        assert PASSWORD not in t.text()
    finally:
        t.close()
    status = env.ctl("STATUS")
    assert "EAP state=SUCCESS" in status and f"ssid={SSID}" in status, status
    [saved] = env.ctl("LIST_NETWORKS").splitlines()[1:]
    assert saved.split("\t")[1] == SSID, saved
    log = env.env.log()
    for secret in (PASSWORD, WRONG):
        assert secret not in log
        assert argv_with(secret) == []

"""End to end through the real roam (issue 43): a person joins the real PEAP world of
peapworld.py (hostapd's EAP server and the real wpa_supplicant, roamd beside them) from the
CLI, a wrong password first: said in words with its exit status and nothing of it left in
wpa_supplicant; the right one joins, EAP state=SUCCESS in wpa_supplicant's STATUS. No password
reaches roamd's log or any process's argv."""
import os
import subprocess

import pytest

from peapworld import DOMAIN, IDENTITY, PASSWORD, SSID, PeapEnv

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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

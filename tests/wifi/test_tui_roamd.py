# SPDX-License-Identifier: LGPL-2.1-or-later
"""End to end (issue 43): the real roam TUI on a pty (tests/tui/tuidriver.py) against the real
roamd, with each Wi-Fi owner on the other side (test_cli_roamd.World: fakewpa, the
NetworkManager double, the iwd double). On the Wi-Fi screen a person joins Home (WPA2) typing a
wrong passphrase, reads the refusal in words, types the right one in place and reads the
link's verdict; joins the hidden Bunker from the hidden-network dialog; forgets Home."""
import os
import sys

import dbus
import pytest

from doubles import NM, NM_PATH
from roambus import plain
from test_cli_roamd import CA_PEM, HIDDEN_PSK, PSK, SAE, WRONG, World, clean_signals, signals_say

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests", "tui"))
sys.path.insert(0, os.path.join(TOP, "tests", "client"))
from tuidriver import Tui  # noqa: E402

OWNER_WORDS = {"wpa": "wpa_supplicant", "nm": "NetworkManager", "iwd": "iwd"}


@pytest.fixture(params=["wpa", "nm", "iwd"])
def world(request):
    w = World(request.param)
    yield w
    w.close()


def said(t, *texts, screen="wifi"):
    def ok(t):
        return t.frame.screen == screen and all(x in " ".join(t.text().split()) for x in texts)
    if t.frames and ok(t):
        return t
    return t.wait(ok, 10, f"the {screen} screen saying {texts!r}")


def select(t, name):
    for _ in range(10):
        if name in t.cursor_line() and t.cursor_line().startswith(">"):
            return
        before = t.cursor_line()
        t.key("j")
        t.wait(lambda t: t.cursor_line() != before, what="the selection to move after j")
    raise AssertionError(f"{name} never selected:\n{t.text()}")


def test_join_wrong_then_right_hidden_and_forget(world, tmp_path):
    # the real clock: roamd's LastProbe is real time
    t = Tui(world.env.env, tmp_path, extra_env={"ROAM_TEST_NOW": ""})
    try:
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
        said(t, "Wi-Fi on wlan0 through " + OWNER_WORDS[world.owner], "Home", "Cafe")
        select(t, "Home")
        t.key("\r")
        # iwd says a PSK network's kind only as "password" (WPA2 and WPA3 alike)
        said(t, "Join Home (WPA2)" if world.owner != "iwd" else "Join Home (password)",
             "Passphrase")
        t.key(WRONG)
        assert WRONG not in t.text()
        t.key("\r")
        said(t, "Home refused this passphrase. Check it (it is case-sensitive) and try again.")
        t.settle()
        t.key(PSK + "\r")
        said(t, "Joined Home. wlan0: offline.")
        assert world.owner_got(WRONG) and world.owner_got(PSK)
        # hidden: the dialog names it, its security and passphrase
        t.key("h")
        said(t, "Join a hidden network", "Nothing in the air names a hidden network")
        t.key("Bunker\t")
        t.key("\t" + HIDDEN_PSK + "\r")
        said(t, "Joined Bunker. wlan0: offline.")
        assert world.owner_got(HIDDEN_PSK)
        # forget Home, once the list was read again after the join (and sorted anew): Bunker
        # known there
        def bunker_known(t):
            return any("Bunker" in line and line.rstrip().endswith("auto")
                       for line in t.text_lines())
        if not bunker_known(t):
            t.wait(bunker_known, what="Bunker known in the list")
        select(t, "Home")
        t.key("f")
        said(t, "Forget Home?")
        t.key("y")
        said(t, "Forgot Home.")
        assert PSK not in t.text() and HIDDEN_PSK not in t.text()
    finally:
        t.close()
    log = world.env.log()
    for secret in (PSK, WRONG, HIDDEN_PSK):
        assert secret not in log
    # the wrong passphrase was retried in place: two joins, each connected
    clean_signals(world, (PSK, WRONG, HIDDEN_PSK), ["connected", "connected"])


def open_wifi_screen(t, owner):
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
    said(t, "Wi-Fi on wlan0 through " + OWNER_WORDS[owner])


def test_peap_through_iwd(tmp_path):
    """802.1X through iwd from the TUI: the dialog's EAP method, user name, password, CA file
    and server domain become iwd's provisioning file in IwdStateDirectory= (0600, without the
    password); a wrong password is said in words and asked again in place; Esc then ends the
    join and the file is gone; the right password joins and the link's verdict follows."""
    ca = tmp_path / "ca.pem"
    ca.write_text(CA_PEM)
    world = World("iwd", extra=[("corp", "enterprise", -52, "alice:s3cret")])
    t = Tui(world.env.env, tmp_path, extra_env={"ROAM_TEST_NOW": ""})
    try:
        open_wifi_screen(t, "iwd")
        select(t, "corp")

        def dialog():
            t.key("\r")
            said(t, "Join corp (enterprise (802.1X))", "EAP method", "PEAP", "CA file")
            t.key("\talice\t\tnot it\t%s\tcorp.example\r" % ca)
            said(t, "corp refused this user name or password. Check it (it is "
                 "case-sensitive) and try again.")
        dialog()
        state = os.listdir(world.state)
        assert state == ["corp.8021x"], state
        assert os.stat(os.path.join(world.state, "corp.8021x")).st_mode & 0o777 == 0o600
        t.settle()  # a dialog roamd opened ignores keys for a moment
        t.key("\x1b")
        said(t, "Nothing joined.")
        done = world.rb.wait(lambda: [a for m, a in world.signals if m == "JoinDone"],
                             what="the join ending")
        assert done[0][1] == "auth-failed", done
        said(t, "The network refused the user name or password")
        assert os.listdir(world.state) == []  # the join did not connect: no file left
        # iwd dropped the KnownNetwork of the removed file: corp is unknown again in the list
        # (Enter on a known network joins it without the dialog)
        def corp_unknown(t):
            rows = [line.rstrip() for line in t.text_lines() if " corp " in line]
            return rows and not any(r.endswith("auto") for r in rows)
        if not corp_unknown(t):
            t.wait(corp_unknown, what="corp unknown again")
        t.settle()
        dialog()
        t.settle()
        t.key("s3cret\r")
        said(t, "Joined corp. wlan0: offline.")
        assert os.listdir(world.state) == ["corp.8021x"]
        text = open(os.path.join(world.state, "corp.8021x")).read()
        assert "EAP-PEAP-CACert=%s\n" % ca in text and "ServerDomainMask=corp.example" in text
        assert [x[1] for x in plain(world.mock("GetSecretsSeen"))] == [
            "alice:not it", "alice:not it", "alice:s3cret"]
    finally:
        t.close()
        try:
            log = world.env.log()
            sigs = world.roamd_signals()
        finally:
            world.close()
    for secret in ("s3cret", "not it"):
        assert secret not in log
    signals_say(sigs, ("s3cret", "not it"), ["auth-failed", "connected"])


def test_hidden_8021x_through_networkmanager(tmp_path):
    """A hidden 802.1X network from the hidden dialog: with 802.1X chosen it asks the EAP
    method, user name, anonymous identity, password, CA file and server domain, as the visible
    network's dialog does, and NetworkManager gets them in the hidden connection roamd adds."""
    ca = tmp_path / "ca.pem"
    ca.write_text(CA_PEM)
    world = World("nm")
    world.mock("AddAccessPoint", "oaysysb", [world.dev, dbus.ByteArray(b"Lab"), "enterprise",
                                             50, "bob:lab secret", True])
    t = Tui(world.env.env, tmp_path, extra_env={"ROAM_TEST_NOW": ""})
    try:
        open_wifi_screen(t, "nm")
        t.key("h")
        said(t, "Join a hidden network", "Nothing in the air names a hidden network")
        t.key("Lab\t")
        t.key(b"\x1bOD")  # Left: WPA2 -> enterprise
        said(t, "EAP method", "User name", "Anonymous ID", "Password", "CA file",
             "Server domain")
        t.key("\t\tbob\tanon@lab.example\tlab secret\t%s\tlab.example\r" % ca)
        said(t, "Joined Lab. wlan0: offline.")
        assert "lab secret" not in t.text()
        conns = plain(world.dbus.call(NM_PATH + "/Settings", NM + ".Settings",
                                      "ListConnections", dest=NM))
        settings = [plain(world.dbus.call(c, NM + ".Settings.Connection", "GetSettings",
                                          dest=NM)) for c in conns]
        [lab] = [c for c in settings if bytes(c["802-11-wireless"]["ssid"]) == b"Lab"]
        assert lab["802-11-wireless"]["hidden"] is True, lab
        assert lab["802-11-wireless-security"]["key-mgmt"] == "wpa-eap", lab
        dot1x = lab["802-1x"]
        assert dot1x["eap"] == ["peap"] and dot1x["identity"] == "bob", dot1x
        assert dot1x["anonymous-identity"] == "anon@lab.example", dot1x
        assert bytes(dot1x["ca-cert"]) == b"file://%s\0" % str(ca).encode(), dot1x
        assert dot1x["domain-suffix-match"] == "lab.example", dot1x
    finally:
        t.close()
        try:
            log = world.env.log()
            sigs = world.roamd_signals()
        finally:
            world.close()
    assert "lab secret" not in log
    signals_say(sigs, ("lab secret",), ["connected"])


@pytest.mark.parametrize("owner", ["wpa", "nm", "iwd"])
def test_wpa3_sae_through_each_owner(owner, tmp_path):
    """WPA3-Personal from the TUI: a wrong password is said in the owner's words
    (wpa_supplicant cannot tell it from a network out of reach: the join ends so; NM and iwd
    ask again in place), then the right one joins and the link's verdict follows."""
    world = World(owner, extra=[("Vault", "wpa3", -55, SAE)])
    t = Tui(world.env.env, tmp_path, extra_env={"ROAM_TEST_NOW": ""})
    try:
        open_wifi_screen(t, owner)
        select(t, "Vault")
        t.key("\r")
        said(t, "Join Vault (WPA3)" if owner != "iwd" else "Join Vault (password)",
             "Passphrase")
        t.key("not the pw\r")
        if owner == "wpa":
            said(t, "Vault did not accept the password, or it is out of reach: WPA3 cannot "
                 "tell these apart")
            assert "Join Vault" not in t.text()  # the join ended: nothing asked in place
            t.key("\r")
            said(t, "Join Vault (WPA3)", "Passphrase")
        else:
            said(t, "Vault refused this passphrase. Check it (it is case-sensitive) and try "
                 "again.")
            t.settle()
        t.key(SAE + "\r")
        said(t, "Joined Vault. wlan0: offline.")
        assert world.owner_got("not the pw") and world.owner_got(SAE)
    finally:
        t.close()
        try:
            log = world.env.log()
            sigs = world.roamd_signals()
        finally:
            world.close()
    assert SAE not in log and "not the pw" not in log
    signals_say(sigs, (SAE, "not the pw"),
                (["wrong-key-or-out-of-range"] if owner == "wpa" else []) + ["connected"])


def test_peap_through_networkmanager(tmp_path):
    """A visible 802.1X network through NetworkManager from the TUI: the dialog's EAP method,
    user name, anonymous identity, password, CA file and server domain become the 802-1x
    setting of the connection roamd adds; NM asks roamd's agent again (REQUEST_NEW) after a
    wrong password, which is said in words and asked again in place: only the password is
    typed again; the right one joins and the link's verdict follows."""
    ca = tmp_path / "ca.pem"
    ca.write_text(CA_PEM)
    world = World("nm", extra=[("corp", "enterprise", -52, "alice:s3cret")])
    t = Tui(world.env.env, tmp_path, extra_env={"ROAM_TEST_NOW": ""})
    try:
        open_wifi_screen(t, "nm")
        said(t, "corp", "enterprise (802.1X)")
        select(t, "corp")
        t.key("\r")
        said(t, "Join corp (enterprise (802.1X))", "EAP method", "PEAP", "User name",
             "Anonymous ID", "Password", "CA file", "Server domain")
        t.key("\talice\tanon@corp.example\tnot it\t%s\tcorp.example\r" % ca)
        said(t, "corp refused this user name or password. Check it (it is case-sensitive) "
             "and try again.", "User name alice", "Password")
        assert "not it" not in t.text()
        # asked again: only the user name (kept) and the password, the password focused
        assert "CA file" not in t.text() and "EAP method" not in t.text()
        assert t.cursor_line().split() == [">", "Password"], t.cursor_line()
        t.settle()  # a dialog roamd opened ignores keys for a moment
        t.key("s3cret\r")
        said(t, "Joined corp. wlan0: offline.")
        assert "s3cret" not in t.text()
        conns = plain(world.dbus.call(NM_PATH + "/Settings", NM + ".Settings",
                                      "ListConnections", dest=NM))
        settings = [plain(world.dbus.call(c, NM + ".Settings.Connection", "GetSettings",
                                          dest=NM)) for c in conns]
        [corp] = [c for c in settings if bytes(c["802-11-wireless"]["ssid"]) == b"corp"]
        assert "hidden" not in corp["802-11-wireless"] or not corp["802-11-wireless"]["hidden"]
        assert corp["802-11-wireless-security"]["key-mgmt"] == "wpa-eap", corp
        dot1x = corp["802-1x"]
        assert dot1x["eap"] == ["peap"] and dot1x["identity"] == "alice", dot1x
        assert dot1x["anonymous-identity"] == "anon@corp.example", dot1x
        assert dot1x["phase2-auth"] == "mschapv2", dot1x
        assert bytes(dot1x["ca-cert"]) == b"file://%s\0" % str(ca).encode(), dot1x
        assert dot1x["domain-suffix-match"] == "corp.example", dot1x
        assert "password" not in dot1x, dot1x  # GetSettings holds no secret
        # the first password came with the connection (the double records its length only),
        # the second from roamd's agent when NM asked again
        [add] = [c for c in plain(world.mock("GetCalls"))
                 if c[0] == "AddAndActivateConnection2"]
        assert "'password': '<secret %d bytes>'" % len("not it") in add[2], add
        assert [tuple(x) for x in plain(world.mock("GetSecretsSeen"))] == [
            ("802-1x.password", "s3cret")]
    finally:
        t.close()
        try:
            log = world.env.log()
            sigs = world.roamd_signals()
        finally:
            world.close()
    for secret in ("s3cret", "not it"):
        assert secret not in log
    signals_say(sigs, ("s3cret", "not it"), ["connected"])

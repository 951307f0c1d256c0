"""Screenshots of every screen against fake_roamd, compared with tests/tui/golden/."""
import os
import pathlib
import shutil
import tempfile

import pytest

from scenarios import ETH1_PORTAL, SEVERAL, WLAN0_ONLINE, verdict_scenario, link, manager
from tuidriver import NOW

ESC = b"\x1b"


@pytest.mark.parametrize("verdict", ["online", "partial", "portal", "local", "offline"])
def test_overview_verdicts(roamd, tui, golden, verdict):
    roamd(verdict_scenario(verdict))
    t = tui()
    t.wait_for(screen="overview", text="wlan0" if verdict != "portal" else "eth1")
    golden(f"overview-{verdict}", t)


def test_overview_sentences(roamd, tui):
    """The first line says the global verdict in words."""
    expected = {
        "online": "Online via wlan0 (wifi)",
        "partial": "HTTPS blocked on wlan0 (partial)",
        "portal": "Behind a captive portal on eth1: log in at "
                  "http://portal.cafe.example/login?next=%2F",
        "local": "Local network only on wlan0: no Internet",
        "offline": "Offline: no usable link",
    }
    for verdict, sentence in expected.items():
        fake = roamd(verdict_scenario(verdict))
        t = tui()
        t.wait_for(screen="overview", text=sentence[:30])
        assert sentence in " ".join(t.text().split()), t.text()
        t.close()
        fake.close()


def default_route_scenario():
    """eth0 holds the kernel's default route and reaches nothing; wlan0 is online: roamd
    says the default route's verdict (issue 41 §1)."""
    eth0 = link(2, "eth0", "ethernet", "offline", "gateway-unreachable", 20,
                Addresses=[[4, "192.0.2.226", 26, "global"]], Gateways=[[4, "192.0.2.193"]])
    m = manager("offline", WLAN0_ONLINE)
    m["DefaultLink"] = "/org/roam1/link/2"
    m["StateReason"] = ("wlan0 is online, but the default route goes through eth0, which "
                        "reaches nothing")
    return {"manager": m, "links": [eth0, WLAN0_ONLINE]}


def test_overview_default_route_reaches_nothing(roamd, tui, golden):
    roamd(default_route_scenario())
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    assert ("Offline: wlan0 is online, but the default route goes through eth0, which "
            "reaches nothing") in " ".join(t.text().split()), t.text()
    golden("overview-default-route", t)


def test_overview_several_links(roamd, tui, golden):
    roamd(SEVERAL)
    t = tui()
    t.wait_for(screen="overview", text="tun0")
    golden("overview-several", t)


def test_link_detail(roamd, tui, golden):
    roamd(verdict_scenario("portal"))
    t = tui()
    t.wait_for(screen="overview", text="eth1")
    t.key("\r")
    t.wait_for(screen="link", text="eth1 (ethernet): portal")
    golden("link-portal", t)
    # Tab jumps between sections; the cursor follows the selected line.
    t.key("\t")
    t.wait_cursor("> Connectivity", screen="link")
    t.key("\t")
    t.wait_cursor("> Link", screen="link")
    t.press("kcbt")  # Shift-Tab
    t.wait_cursor("> Connectivity", screen="link")
    t.key("G")
    t.wait_for(screen="link", text="History (seen by this roam")
    golden("link-portal-end", t)


def test_link_wifi_signal(roamd, tui, golden):
    """wpa_supplicant's signal on the link screen, in words beside the numbers."""
    wlan = dict(WLAN0_ONLINE, WiFiState="COMPLETED", WiFiSSID="Home", WiFiSignal=-58,
                WiFiLinkSpeed=866)
    fake = roamd({"manager": manager("online", wlan), "links": [wlan]})
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    t.key("\r")
    t.wait_for(screen="link", text="Home, signal good, -58 dBm, 866 Mbit/s")
    golden("link-wifi-signal", t)
    # Live: weaker, then the association ends.
    fake.send(op="set", link=3, props={"WiFiSignal": -83, "WiFiLinkSpeed": 6})
    t.wait_for(screen="link", text="Home, signal very weak, -83 dBm, 6 Mbit/s")
    fake.send(op="set", link=3, props={"WiFiState": "SCANNING", "WiFiSSID": "",
                                       "WiFiSignal": 0, "WiFiLinkSpeed": 0})
    t.wait_for(screen="link", text="not associated (SCANNING)")


def test_link_working_mtu(roamd, tui, golden):
    """Behind a path MTU black hole (reason mtu) the link screen says what still passes per
    family, "not known" while roamd searches; the line goes when the hole does."""
    wlan = link(3, "wlan0", "wifi", "partial", "mtu", 5,
                Addresses=[[4, "192.0.2.10", 24, "global"], [6, "2001:db8::10", 64, "global"]],
                Gateways=[[4, "192.0.2.1"], [6, "fe80::1"]], MTU=1500,
                Connectivity6="partial", ConnectivityReason6="mtu", WorkingMTU4=1396)
    fake = roamd({"manager": manager("partial", wlan), "links": [wlan]})
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    t.key("\r")
    t.wait_for(screen="link", text="IPv4 1396 bytes, IPv6 not known")
    golden("link-working-mtu", t)
    fake.send(op="set", link=3, props={"WorkingMTU6": 1392})
    t.wait_for(screen="link", text="IPv4 1396 bytes, IPv6 1392 bytes")
    fake.send(op="set", link=3, props={
        "Connectivity": "online", "ConnectivityReason": "ok", "Connectivity4": "online",
        "ConnectivityReason4": "ok", "Connectivity6": "online", "ConnectivityReason6": "ok",
        "WorkingMTU4": 0, "WorkingMTU6": 0})
    t.wait_for(screen="link", text="wlan0 (wifi): online")
    assert "Path MTU" not in t.text()
    t.close()
    fake.close()
    roamd({"manager": manager("partial", wlan), "links": [wlan]})
    t = tui(cols=40, rows=12)
    t.wait_for(screen="overview", text="wlan0")
    t.key("\r")
    t.wait_for(screen="link", text="wlan0 (wifi)")
    # (the reasons wrap at 40 columns: the line is below them)
    for _ in range(5):
        t.press("kcud1")
    t.wait_cursor("> Path MTU", screen="link")
    golden("small-link-working-mtu", t)


def test_link_history_and_live_change(roamd, tui, golden):
    fake = roamd(verdict_scenario("portal"))
    t = tui()
    t.wait_for(screen="overview", text="eth1")
    t.key("\r")
    t.wait_for(screen="link", text="eth1 (ethernet): portal")
    fake.send(op="set", link=4, props={"Connectivity": "online", "ConnectivityReason": "ok",
                                       "Connectivity4": "online", "ConnectivityReason4": "ok",
                                       "PortalURL": "", "CaptivePortal": {
                                           "Captive": False,
                                           "UserPortalURL": "https://cafe.test/portal"}})
    fake.send(op="set", link=4, props={"LastProbe": NOW - 1_000_000, "ProbeDuration": 80_000})
    t.key("G")
    t.wait_for(screen="link", text=["online   checks answered; probe took 80 ms",
                                    "Captive:        no: the session is open"])
    # past the portal its page manages the session: no "Log in at" (M11 of the report)
    assert "Session page:   https://cafe.test/portal" in t.text()
    assert "Log in at" not in t.text()
    golden("link-history", t)
    # / narrows the history to the lines whose verdict or reason has the text (L8)
    t.key("/")
    t.key("portal")
    t.wait_for(screen="link", text="Filter: portal_ (1 of 2 entries)")
    t.key("\r")
    t.wait_for(screen="link", text="Filter: portal (1 of 2 entries)")
    assert "checks answered; probe took 80 ms" not in t.text(), t.text()
    golden("link-history-filter", t)
    t.key(ESC)
    t.wait_for(screen="link", text="checks answered; probe took 80 ms")
    assert "Filter:" not in t.text()


def test_help(roamd, tui, golden):
    roamd(verdict_scenario("online"))
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    t.key("?")
    t.wait_for(screen="help", text="Keys on this screen")
    golden("help-overview", t)
    t.key(ESC)
    t.wait_for(screen="overview")


@pytest.mark.parametrize("theme", ["high-contrast", "light", "monochrome"])
def test_themes(roamd, tui, golden, theme):
    roamd(verdict_scenario("portal"))
    t = tui(args=("--theme", theme))
    t.wait_for(screen="overview", text="eth1")
    golden(f"theme-{theme}", t, theme=theme)


@pytest.mark.parametrize("how", ["high-contrast", "light", "monochrome", "NO_COLOR",
                                 "vt100"])
def test_themes_without_an_install(roamd, tui, how):
    """Run from a build tree (no theme files anywhere): every shipped theme is built in, and
    the monochrome fallback of NO_COLOR and colourless terminals never fails."""
    roamd(verdict_scenario("portal"))
    args, env, term = (), {"ROAM_THEME_PATH": ""}, "xterm-256color"
    if how == "NO_COLOR":
        env["NO_COLOR"] = "1"
    elif how == "vt100":
        term = "vt100"
    else:
        args = ("--theme", how)
    t = tui(args=args, extra_env=env, term=term)
    t.wait_for(screen="overview", text="Connected to roamd")
    assert "No theme" not in t.text()
    t.key("?")
    t.wait_for(screen="help", text="Keys on this screen")
    t.key("G")
    t.wait_for(screen="help", text="Theme file:")
    text = " ".join(t.text().split())
    assert f"Theme: {how if args else 'monochrome'} Theme file: built in" in text
    assert "At start:" not in text


@pytest.mark.parametrize("theme", ["light", "high-contrast"])
def test_theme_needing_256_colours_on_8(roamd, tui, theme):
    """light and high-contrast read at 4.5:1 only with colours 16-255 (the first 16 differ
    on every terminal: xterm's white is grey, Tango's greyer): on an 8-colour terminal roam
    draws them as monochrome, on the terminal's own colours, and help says so."""
    roamd(verdict_scenario("portal"))
    t = tui(args=("--theme", theme), term="xterm")
    t.wait_for(screen="overview", text="eth1")
    colours = {t.cell_style(y, x)[:2] for y in range(t.rows) for x in range(t.cols)}
    assert colours == {("default", "default")}
    t = tui(args=("--theme", theme))  # 256 colours: its own
    t.wait_for(screen="overview", text="eth1")
    colours = {t.cell_style(y, x)[:2] for y in range(t.rows) for x in range(t.cols)}
    assert ("default", "default") not in colours


def test_theme_from_config_file(roamd, tui, tmp_path):
    roamd(verdict_scenario("online"))
    (tmp_path / "config" / "roam").mkdir(parents=True)
    (tmp_path / "config" / "roam" / "config").write_text("# mine\ntheme = monochrome\n")
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    colours = {t.cell_style(y, x)[:2] for y in range(t.rows) for x in range(t.cols)}
    assert colours == {("default", "default")}


def test_no_color(roamd, tui, golden):
    """NO_COLOR: no colour at all, the monochrome theme's attributes instead."""
    roamd(verdict_scenario("portal"))
    t = tui(extra_env={"NO_COLOR": "1"})
    t.wait_for(screen="overview", text="eth1")
    colours = {t.cell_style(y, x)[:2] for y in range(t.rows) for x in range(t.cols)}
    assert colours == {("default", "default")}
    golden("no-color", t, theme="monochrome")


def test_broken_theme(roamd, tui, golden, tmp_path):
    roamd(verdict_scenario("online"))
    # A short path of fixed length: the message is word-wrapped on the help screen, and
    # pytest's own tmp_path grows with its run counter (pytest-99 -> pytest-100).
    short = tempfile.mkdtemp(prefix="rt", dir="/tmp")
    bad = pathlib.Path(short) / "bad.theme"
    bad.write_text("# a broken theme\nok = green\nwarnign = yellow\nerror = red on\n")
    t = tui(args=("--theme", str(bad)))
    t.wait_for(screen="overview", text="wlan0")
    # The first problem is on the status line, with file:line; the default theme is used.
    assert "bad.theme:3: unknown role" in t.text()
    t.key("?")
    t.wait_for(screen="help", text="Keys on this screen")
    t.key("G")
    t.wait_for(screen="help", text="At start:")
    text = " ".join(t.text().split())
    assert f"{bad}:4: error: 'on' must be followed by a background colour" in text
    assert "Theme: default" in text
    shutil.rmtree(short)


@pytest.mark.parametrize("term", ["vt100", "linux", "screen", "tmux-256color"])
def test_terminals(roamd, tui, golden, term):
    roamd(verdict_scenario("portal"))
    t = tui(term=term)
    t.wait_for(screen="overview", text="eth1")
    if term == "vt100":
        golden("term-vt100", t, theme="monochrome")
    assert "Behind a captive portal on eth1" in t.text()
    t.key("\r")
    t.wait_for(screen="link", text="eth1 (ethernet): portal")
    t.key(ESC)
    t.wait_for(screen="overview")


def test_ascii_fallback(roamd, tui, golden):
    roamd(SEVERAL)
    t = tui(lang="C")
    t.wait_for(screen="overview", text="tun0")
    golden("ascii-overview", t)
    assert all(ord(c) < 128 for c in t.text())
    t.key("\r")
    t.wait_for(screen="link")
    assert all(ord(c) < 128 for c in t.text())


@pytest.mark.parametrize("lang", ["C.UTF-8", "C"])
def test_character_set(roamd, tui, golden, lang):
    """A UTF-8 locale gets UTF-8 glyphs (roam calls setlocale); any other gets ASCII, said in
    the help."""
    roamd(SEVERAL)
    t = tui(lang=lang)
    t.wait_for(screen="overview", text="tun0")
    if lang == "C.UTF-8":
        golden("utf8-overview", t)
        assert "Connected to roamd 0.1.0 \u00b7 7 links" in t.text()
    t.key("?")
    t.wait_for(screen="help", text="Keys on this screen")
    t.key("G")
    t.wait_for(screen="help", text="Characters:")
    line = next(line for line in t.text_lines() if "Characters:" in line)
    assert line.split("Characters:")[1].strip() == (
        "UTF-8" if lang == "C.UTF-8" else "ASCII only (the locale is not UTF-8)")


def test_small_terminal(roamd, tui, golden):
    roamd(SEVERAL)
    t = tui(cols=40, rows=12)
    t.wait_for(screen="overview", text="wlan0")
    golden("small-overview", t)
    t.press("kcud1")
    t.wait_cursor("> eth1")
    t.key("\r")
    t.wait_for(screen="link", text="eth1")
    golden("small-link", t)


def test_resize_without_a_key(roamd, tui, golden):
    roamd(SEVERAL)
    t = tui()
    t.wait_for(screen="overview", text="tun0")
    t.resize(50, 16)
    t.wait(lambda t: t.frame.fields.get("size") == "50x16", what="a frame at 50x16")
    golden("resize-50x16", t)
    t.resize(100, 30)
    t.wait(lambda t: t.frame.fields.get("size") == "100x30", what="a frame at 100x30")
    assert "Behind" not in t.text() and "Online via wlan0 (wifi)" in t.text()


def test_too_small(roamd, tui):
    roamd(SEVERAL)
    t = tui(cols=16, rows=5)
    t.wait(lambda t: "Window too small" in t.text().replace("\n", ""), what="a warning")


def test_too_small_keeps_numbers_whole(roamd, tui):
    """The warning breaks at spaces: "(20x5)" and "20x6" are never split across rows."""
    roamd(SEVERAL)
    t = tui(cols=20, rows=5)
    t.wait(lambda t: "Window too small" in " ".join(l.strip() for l in t.text_lines()),
           what="a warning")
    rows = [line.strip() for line in t.text_lines()]
    assert "(20x5):" in rows[1] and "20x6." in " ".join(rows), rows
    assert " ".join(r for r in rows if r) == "Window too small (20x5): roam needs 20x6."


def test_cursor_follows_selection(roamd, tui):
    roamd(SEVERAL)
    t = tui()
    t.wait_for(screen="overview", text="tun0")
    assert t.cursor_line().startswith("> wlan0")  # the best link is selected first
    t.press("kcud1")
    t.wait_cursor("> eth1")
    t.key("k")
    t.wait_cursor("> wlan0")
    t.key("G")
    t.wait_cursor("> tun0")
    t.key("\t")  # Tab wraps around
    t.wait_cursor("> eth0")
    t.press("kcuu1")  # the arrows stop at the ends
    t.key("j")
    t.wait_cursor("> wlan0")
    assert not t.screen.cursor.hidden


def test_roamd_absent_then_appears(roamd, tui, golden):
    t = tui()
    t.wait_for(screen="overview", live="not-running", text="roamd is not running")
    golden("roamd-absent", t)
    roamd(verdict_scenario("online"))
    t.wait_for(screen="overview", text="Online via wlan0")


def test_roamd_goes_away_and_returns(roamd, tui):
    fake = roamd(verdict_scenario("online"))
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    t.key("\r")
    t.wait_for(screen="link", text="wlan0 (wifi): online")
    fake.close()
    t.wait_for(screen="overview", live="not-running",
               text=["roamd is not running", "roamd went away"])
    roamd(verdict_scenario("portal"))
    t.wait_for(screen="overview", text=["Behind a captive portal on eth1", "roamd is back."])


def test_links_appear_and_vanish(roamd, tui):
    fake = roamd(verdict_scenario("online"))
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    fake.send(op="add", link=ETH1_PORTAL)
    t.wait_for(screen="overview", text="eth1")
    fake.send(op="remove", link=3)
    fake.send(op="manager", props={"State": "portal", "BestLink": "/org/roam1/link/4"})
    t.wait_for(screen="overview", text="Behind a captive portal on eth1")
    assert "wlan0" not in t.text()
    # The selection moved off the vanished link onto a neighbour.
    assert t.text_lines()[t.screen.cursor.y].startswith(">")


def test_link_screen_leaves_when_link_vanishes(roamd, tui):
    fake = roamd(verdict_scenario("online"))
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    t.key("\r")
    t.wait_for(screen="link", text="wlan0 (wifi)")
    fake.send(op="remove", link=3)
    t.wait_for(screen="overview", text="wlan0 vanished.")
    assert "192.0.2.10" not in t.text()


def test_verdict_change_updates_the_row(roamd, tui):
    fake = roamd(verdict_scenario("portal"))
    t = tui()
    t.wait_for(screen="overview", text="eth1")
    fake.send(op="set", link=4, props={"Connectivity": "online", "ConnectivityReason": "ok",
                                       "PortalURL": ""})
    fake.send(op="manager", props={"State": "online"})
    t.wait_for(screen="overview", text="Online via eth1 (ethernet)")
    assert "Log in at" not in t.text()


def test_reprobe(roamd, tui):
    fake = roamd(verdict_scenario("online"))
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    t.key("r")
    t.wait_for(screen="overview", text="roamd is probing wlan0 again.")
    assert fake.send(op="reprobes") == [3]


def test_reprobe_denied(tmp_path):
    """A user outside root and netdev gets AccessDenied, said in words."""
    from fakebus import Bus, FakeRoamd
    from tuidriver import Tui
    # A bus of its own in a directory the unprivileged user can reach.
    d = tempfile.mkdtemp(prefix="roam-tui-")
    os.chmod(d, 0o755)
    bus = Bus(d)
    fake = FakeRoamd(bus, d, verdict_scenario("online"))
    os.chmod(bus.sock, 0o777)

    def drop():
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)

    t = Tui(bus.env, tmp_path, preexec=drop)
    try:
        t.wait_for(screen="overview", text="wlan0")
        t.key("r")
        t.wait_for(screen="overview", text="Not allowed to re-probe wlan0")
        assert "(polkit is not running)." in t.text()
        assert fake.send(op="reprobes") == []
    finally:
        t.close()
        fake.close()
        bus.close()
        shutil.rmtree(d)


def test_escape_and_quit(roamd, tui):
    roamd(verdict_scenario("online"))
    t = tui()
    t.wait_for(screen="overview", text="wlan0")

    # Esc goes back, as "1" does ...
    for key in ("1", ESC):
        t.key("2")
        t.wait_for(screen="link")
        t.key(key)
        t.wait_for(screen="overview")  # a functional wait (10 s)
    # ... without the second-long wait curses makes by default (ESCDELAY, 1000 ms) for the
    # rest of an escape sequence: the delay in force, as roam's frames report it, is one a
    # person does not notice (a terminal sends a sequence's bytes together)
    assert int(t.frame.fields["escdelay"]) <= 50, t.frame.fields
    t.key("q")
    assert t.proc.wait(timeout=10) == 0


def test_unknown_terminal(roamd, tui):
    """A terminal curses does not know: a clear message pointing to the other modes."""
    roamd(verdict_scenario("online"))
    t = tui(term="no-such-terminal")
    assert t.proc.wait(timeout=10) == 1
    while t._read(0.5):
        pass
    out = b"".join(t.output).decode()
    assert "Cannot start the full-screen interface on TERM=no-such-terminal" in out
    assert "roam --plain" in out


def test_keys_after_a_resize(roamd, tui):
    """ncurses 6.4 queues KEY_RESIZE on every resizeterm() call: a key after a resize must
    still move the cursor, and q must still quit (it once spun forever)."""
    roamd(SEVERAL)
    t = tui(cols=100, rows=30)
    t.wait_for(screen="overview", text="tun0")
    for cols, rows in ((80, 24), (90, 26)):
        t.resize(cols, rows)
        t.wait(lambda t: t.frame.fields.get("size") == f"{cols}x{rows}",
               what=f"a frame at {cols}x{rows}")
    t.key("j")
    t.wait_cursor("> eth1")
    t.key("k")
    t.wait_cursor("> wlan0")
    t.key("q")
    assert t.proc.wait(timeout=10) == 0


def test_link_continuation_lines_and_folded_history(roamd, tui, golden):
    """A field's further lines have no label (not ':'); rechecks that change nothing fold into
    one history line with a count."""
    fake = roamd(verdict_scenario("online"))
    t = tui(rows=40)
    t.wait_for(screen="overview", text="wlan0")
    t.key("\r")
    t.wait_for(screen="link", text="wlan0 (wifi): online")
    lines = t.text_lines()
    i = next(i for i, line in enumerate(lines) if "Addresses:" in line)
    assert lines[i + 1].strip() == "2001:db8::10/64 (global)", lines[i + 1]
    assert lines[i + 2].strip() == "fe80::3/64 (link-local)", lines[i + 2]
    for k in (1, 2):
        fake.send(op="set", link=3, props={"LastProbe": NOW - 3_000_000 + k * 1_000_000,
                                           "ProbeDuration": 90_000})
    t.wait_for(screen="link", text="(\u00d73, last 22:13:20)")
    history = [line for line in t.text_lines() if "checks answered; probe took" in line]
    assert len(history) == 1, t.text()
    golden("link-folded-history", t)


def test_tab_shows_the_section(roamd, tui):
    """Tab to a section scrolls so its contents show, the heading on top (not on the last
    row)."""
    roamd(verdict_scenario("portal"))
    t = tui(rows=14)
    t.wait_for(screen="overview", text="eth1")
    t.key("\r")
    t.wait_for(screen="link", text="eth1 (ethernet): portal")
    for heading in ("Connectivity", "Link", "Addresses and routes", "DNS"):
        t.key("\t")
        t.wait_cursor(f"> {heading}", screen="link")
        assert t.screen.cursor.y == 1, t.text()


def link_rows(t):
    """The names of the link rows of the overview's table, in order."""
    lines = t.text_lines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  Link "))
    return [line[2:].split()[0] for line in lines[start + 1:]
            if len(line) > 2 and line[2] != " " and line[:2] in ("  ", "> ")]


def test_filter_typing_keys(roamd, tui, golden):
    """While a filter is typed, the hint bar offers only what works then (q, r, s would be
    text); Ctrl-U clears the text; a second / starts a new filter instead of adding to the old
    one out of sight."""
    roamd(SEVERAL)
    t = tui()
    t.wait_for(screen="overview", text="tun0")
    t.key("/")
    t.wait_for(screen="overview", text="Filter: _ (7 of 7 links)")
    hints = t.text_lines()[-1]
    assert hints.split() == ["Enter", "apply", "Esc", "cancel", "Ctrl-U", "clear", "Backspace",
                             "delete"], hints
    golden("overview-filter-typing", t)
    t.key("wl")
    t.wait_for(screen="overview", text="Filter: wl_ (1 of 7 links)")
    t.key(b"\x15")  # Ctrl-U
    t.wait_for(screen="overview", text="Filter: _ (7 of 7 links)")
    t.key("eth\r")
    t.wait_for(screen="overview", text="Filter: eth (3 of 7 links)")
    assert "q quit" in t.text_lines()[-1]
    t.key("/")
    t.wait_for(screen="overview", text="Filter: _ (7 of 7 links)")
    t.key("tun\r")
    t.wait_for(screen="overview", text="Filter: tun (1 of 7 links)")
    assert link_rows(t) == ["tun0"]


def test_filter_and_sort(roamd, tui, golden):
    roamd(SEVERAL)
    t = tui()
    t.wait_for(screen="overview", text="tun0")
    t.key("/")
    t.wait_for(screen="overview", text="Filter: _ (7 of 7 links)")
    t.key("eth")
    t.wait_for(screen="overview", text="Filter: eth_ (3 of 7 links)")
    assert link_rows(t) == ["eth0", "eth1", "enp0s31f6-long"]
    # Digits and letters are text while typing: no screen switch, no quit.
    t.key("\r")
    t.wait_for(screen="overview", text="Filter: eth (3 of 7 links)")
    golden("overview-filter", t)
    t.key("\r")  # Enter on a filtered row opens that link
    t.wait_for(screen="link", text="(ethernet)")
    t.key(ESC)
    t.wait_for(screen="overview", text="Filter: eth (3 of 7 links)")
    t.key(ESC)  # Esc clears the filter
    t.wait(lambda t: "Filter" not in t.text() and "tun0" in t.text(), what="no filter")
    assert link_rows(t) == ["eth0", "wlan0", "eth1", "wwan0", "enp0s31f6-long", "br-virt",
                            "tun0"]
    t.key("s")
    t.wait_for(screen="overview", text="Sorted by name.")
    assert link_rows(t) == ["br-virt", "enp0s31f6-long", "eth0", "eth1", "tun0", "wlan0",
                            "wwan0"]
    t.key("s")
    t.wait_for(screen="overview", text="Sorted by state.")
    assert link_rows(t) == ["wlan0", "tun0", "wwan0", "eth1", "enp0s31f6-long", "eth0",
                            "br-virt"]
    golden("overview-sorted-state", t)
    t.key("s")
    t.wait_for(screen="overview", text="Sorted by bearer.")
    assert link_rows(t) == ["wwan0", "eth0", "eth1", "enp0s31f6-long", "br-virt", "tun0",
                            "wlan0"]
    t.key("s")
    t.wait_for(screen="overview", text="Sorted by interface index.")


def test_portal_url_hyperlink_and_copy(roamd, tui):
    """The login URL is an OSC 8 hyperlink (the text on screen unchanged) and c copies it
    (OSC 52); terminals not known to take OSC 8 never get it."""
    import base64
    url = "http://portal.cafe.example/login?next=%2F"
    roamd(verdict_scenario("portal"))
    t = tui()
    t.wait_for(screen="overview", text="Log in at " + url)
    assert f"\x1b]8;;{url}\x1b\\{url}\x1b]8;;\x1b\\".encode() in b"".join(t.output)
    assert "c copy URL" in t.text_lines()[-1]
    t.key("c")
    t.wait_for(screen="overview", text="Copied " + url)
    assert b"\x1b]52;c;" + base64.b64encode(url.encode()) + b"\x07" in b"".join(t.output)
    t.key("\r")
    t.wait_for(screen="link", text="eth1 (ethernet): portal")
    t.key("c")
    t.wait_for(screen="link", text="Copied " + url)
    t2 = tui(term="vt100")
    t2.wait_for(screen="overview", text="Log in at")
    assert b"\x1b]8;" not in b"".join(t2.output)


def test_links_in_a_stable_order(roamd, tui):
    """Links are listed by interface index (as `ip link` lists them), not in arrival order."""
    fake = roamd(verdict_scenario("online"))
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    fake.send(op="add", link={"Index": 1, "Name": "usb0", "Bearer": "ethernet"})
    t.wait_for(screen="overview", text="usb0")
    assert link_rows(t) == ["usb0", "eth0", "wlan0"]


def test_wrapped_url_is_one_hyperlink(roamd, tui):
    """A URL longer than a row wraps over rows; each piece is written inside an OSC 8 link to
    the whole URL, all with one id=, so the terminal treats them as one link."""
    import re
    url = ("http://portal.cafe.example/login?next=%2Fsome%2Fvery%2Flong%2Fpath&session="
           "0123456789abcdef0123456789abcdef&lang=en")
    eth1 = dict(ETH1_PORTAL, PortalURL=url,
                CaptivePortal=dict(ETH1_PORTAL["CaptivePortal"], UserPortalURL=url))
    roamd({"manager": manager("portal", eth1), "links": [eth1]})
    t = tui()
    t.wait_for(screen="overview", text="eth1")
    t.key("\r")
    t.wait_for(screen="link", text="eth1 (ethernet): portal")
    rows = t.text_lines()
    assert url not in "\n".join(rows)  # wrapped: no row holds it whole
    assert url in "".join(r.strip() for r in rows)
    link_rows = [r.strip() for r in rows if "Log in at:" in r or r.startswith(" " * 18)]
    pattern = re.compile(rb"\x1b\]8;id=(roam-[0-9a-f]{8});" + re.escape(url.encode()) +
                         rb"\x1b\\(.*?)\x1b\]8;;\x1b\\")

    def runs():
        """Consecutive pieces of one id that add up to the URL, as written."""
        out, ident, acc = [], None, []
        for i, text in pattern.findall(b"".join(t.output)):
            if i != ident or "".join(acc) == url:
                ident, acc = i, []
            acc.append(text.decode())
            if "".join(acc) == url:
                out.append(list(acc))
        return out

    # The link screen's "Log in at:" field: its two pieces, each on its row.
    # (written with the frame that showed it, in the same flush)
    assert any(len(r) == 2 and r[1] in link_rows[1] for r in runs()), runs()
    first, second = [r for r in runs() if len(r) == 2 and r[1] in link_rows[1]][-1]
    assert link_rows[0].endswith(first) and link_rows[1].startswith(second)
    # Never a piece without its link: no bare OSC 8 for part of the URL.
    assert not re.search(rb"\x1b\]8;;" + re.escape(url.encode()) + rb"\x1b\\h", b"".join(t.output))

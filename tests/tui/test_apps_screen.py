"""The Apps screen (3) against fake_roamd's App objects: the list, the selected row, the bearer
dialog, every action's call and its answer on the status line, small terminals and themes."""
import pytest

from scenarios import APPS, app
from tuidriver import NOW

ESC = b"\x1b"
MINUTE = 60_000_000
DENIED = ("Not allowed to change org.example.Backup: Only root or members of group netdev "
          "may do this (polkit is not running).")


def open_apps(t):
    t.wait_for(screen="overview", text="wlan0")
    t.key("3")
    said(t, "org.example.Backup")


def select(t, app_id):
    """Moves the selection down to the app's row."""
    for _ in range(12):
        if t.cursor_line().startswith((f"> {app_id} ", f"> {app_id}:")):
            return
        before = t.cursor_line()
        t.key("j")
        # the frame that shows the move, not any frame: one drawn before the key was read
        # would send a second j while the first is still on its way
        t.wait(lambda t: t.cursor_line() != before, what="the selection to move after j")
    raise AssertionError(f"{app_id} never selected:\n{t.text()}")


def said(t, text, timeout=10):
    """The next apps frame that shows text, which may be wrapped over rows (the status line
    takes up to three rows for a long message)."""
    return t.wait(lambda t: t.frame.screen == "apps" and text in " ".join(t.text().split()),
                  timeout, f"apps saying {text!r}")


def hints(t):
    return t.text_lines()[-1]


def test_apps_list(roamd, tui, golden):
    roamd(APPS)
    t = tui()
    open_apps(t)
    golden("apps-list", t)
    # Sorted by ID, default and system last; every state in words.
    rows = [line[2:] for line in t.text_lines() if line[2:6] in ("org.", "defa", "syst")]
    assert [r.split()[0] for r in rows] == [
        "org.example.Backup", "org.example.Browser", "org.example.Chat", "org.example.Mail",
        "org.example.Maps", "org.example.Printer", "default", "system"]
    text = t.text()
    for words in ("blocked: VPN down", "online for a task", "blocked: access denied",
                  "blocked: no allowed link", "local networks only",
                  "route v4 tun0 (vpn), v6 tun0 (vpn); bearers wifi, ethernet; handover sticky",
                  "route v4 wlan0 (wifi), v6 none; bearers all; handover move; online until",
                  "changed at runtime"):
        assert words in text, words
    assert t.cursor_line().startswith("> org.example.Backup")
    # The header names the screen in brackets; the hint bar has only keys that act now.
    assert "[3 Apps]" in t.text_lines()[0]
    # R (reset) shows only for an app changed at runtime; Esc leads back.
    assert hints(t) == " ? help  q quit  a access  v VPN  b bearers  o online  m handover  Esc back"


def test_apps_selected_row(roamd, tui, golden):
    roamd(APPS)
    t = tui()
    open_apps(t)
    t.key("j")
    t.wait_cursor("> org.example.Browser", screen="apps")
    # A grant to end: now the release key shows (the gaps shrink so that all still fit).
    assert hints(t) == (" ? help q quit a access v VPN b bearers o online x release m handover"
                        " Esc back")
    t.key("G")
    t.wait_cursor("> system", screen="apps")
    # What roamd would refuse is not offered: system has only an access, no grants.
    assert hints(t) == " ? help  q quit  a access  Esc back"
    t.key("k")
    t.wait_cursor("> default", screen="apps")
    assert hints(t) == " ? help  q quit  a access  v VPN  b bearers  m handover  Esc back"
    t.key("G")
    t.wait_cursor("> system", screen="apps")
    t.key("\t")  # wraps around
    t.wait_cursor("> org.example.Backup", screen="apps")
    t.press("kcuu1")  # the arrows stop at the ends
    t.press("kcud1")
    t.press("kcud1")
    t.press("kcud1")
    t.wait_cursor("> org.example.Mail", screen="apps")
    golden("apps-selected", t)


def test_apps_cycle_access_vpn_handover(roamd, tui):
    fake = roamd(APPS)
    t = tui()
    open_apps(t)
    t.key("a")
    said(t, "Done: org.example.Backup access lan.")
    assert t.cursor_line().split()[:4] == [">", "org.example.Backup", "lan", "required"]
    t.key("a")  # deny asks first (test_apps_confirm_deny_reset)
    said(t, "Deny org.example.Backup all network access? Its connections stop now. (y/N)")
    t.key("y")
    said(t, "Done: org.example.Backup access deny.")
    assert "blocked: access denied" in t.cursor_line()
    t.key("a")
    said(t, "Done: org.example.Backup access allow.")
    t.key("v")
    said(t, "Done: org.example.Backup VPN forbidden.")
    t.key("v")
    said(t, "Done: org.example.Backup VPN any.")
    assert t.cursor_line().split()[:5] == [">", "org.example.Backup", "allow", "any", "online"]
    t.key("m")
    said(t, "Done: org.example.Backup handover move.")
    assert "handover move; changed at runtime" in t.text()
    assert fake.send(op="calls") == [
        ["SetAppPolicy", "org.example.Backup", {"access": "lan"}],
        ["SetAppPolicy", "org.example.Backup", {"access": "deny"}],
        ["SetAppPolicy", "org.example.Backup", {"access": "allow"}],
        ["SetAppPolicy", "org.example.Backup", {"vpn": "forbidden"}],
        ["SetAppPolicy", "org.example.Backup", {"vpn": "any"}],
        ["SetAppPolicy", "org.example.Backup", {"handover": "move"}],
    ]


def test_apps_online_release_reset(roamd, tui):
    fake = roamd(APPS)
    t = tui()
    open_apps(t)
    select(t, "org.example.Chat")
    t.key("x")  # no grant yet: said, and nothing asked
    said(t, "org.example.Chat is not online for a task: nothing to release.")
    t.key("o")
    said(t, "Done: org.example.Chat online for 10 minutes.")
    assert "online for a task" in t.cursor_line()
    assert "online until 22:23:20" in t.text()
    assert "x release" in hints(t) and "R reset" in hints(t)
    t.key("x")
    said(t, "Done: org.example.Chat grant released.")
    assert "blocked: access denied" in t.cursor_line()
    t.key("R")
    said(t, "Forget every change made to org.example.Chat at runtime?")
    t.key("y")
    said(t, "Done: org.example.Chat policy reset.")
    assert fake.send(op="calls") == [
        ["OnlineFor", "org.example.Chat", 10 * MINUTE],
        ["Release", "org.example.Chat", None],
        ["ResetAppPolicy", "org.example.Chat", None],
    ]


def test_apps_confirm_deny_reset(roamd, tui, golden):
    """Deny and reset ask (y/N) first: n, Esc, Enter and any other key leave roamd's state as
    it was (fake_roamd records no call and the app keeps its policy); only y acts."""
    fake = roamd(APPS)
    t = tui()
    open_apps(t)
    t.key("a")
    said(t, "Done: org.example.Backup access lan.")
    t.key("a")
    said(t, "Deny org.example.Backup all network access? Its connections stop now. (y/N)")
    golden("apps-confirm-deny", t)
    assert hints(t) == " ? help  q quit  y yes  n no"
    t.key("n")
    said(t, "Not done: org.example.Backup keeps access lan.")
    t.key("a")
    said(t, "(y/N)")
    t.key(ESC)
    said(t, "Not done: org.example.Backup keeps access lan.")
    t.key("a")
    said(t, "(y/N)")
    t.key("\r")  # Enter: the default, no
    said(t, "Not done: org.example.Backup keeps access lan.")
    t.key("a")
    said(t, "(y/N)")
    t.key("j")  # any other key is no, and does nothing else
    said(t, "Not done: org.example.Backup keeps access lan.")
    assert t.cursor_line().split()[:3] == [">", "org.example.Backup", "lan"]
    assert fake.send(op="calls") == [["SetAppPolicy", "org.example.Backup", {"access": "lan"}]]
    # Reset: the app changed at runtime keeps its changes when the answer is no.
    t.key("R")
    said(t, "Forget every change made to org.example.Backup at runtime? Its configured policy "
            "applies again. (y/N)")
    golden("apps-confirm-reset", t)
    t.key(ESC)
    said(t, "Not done: org.example.Backup keeps its changes made at runtime.")
    assert "changed at runtime" in t.text()
    assert len(fake.send(op="calls")) == 1
    t.key("R")
    said(t, "(y/N)")
    t.key("y")
    said(t, "Done: org.example.Backup policy reset.")
    assert fake.send(op="calls")[-1] == ["ResetAppPolicy", "org.example.Backup", None]
    # ? (offered in the hint bar) answers no and opens the help.
    t.key("a")  # the reset brought back access allow: lan, then deny
    said(t, "Done: org.example.Backup access lan.")
    t.key("a")
    said(t, "(y/N)")
    t.key("?")
    t.wait_for(screen="help")
    assert len(fake.send(op="calls")) == 3


def test_apps_bearer_dialog(roamd, tui, golden):
    fake = roamd(APPS)
    t = tui()
    open_apps(t)
    select(t, "org.example.Mail")
    t.key("b")
    said(t, "Bearers org.example.Mail may use")
    assert hints(t) == " ? help  q quit  Enter apply  Esc cancel  Space check"
    assert "[x] ethernet" in t.text() and "[x] wifi" in t.text()
    assert "[ ] cellular" in t.text()
    assert "> [x] ethernet" in t.cursor_line()
    golden("apps-bearers", t)
    t.key("j")
    t.key("j")
    t.wait(lambda t: "> [ ] cellular" in t.cursor_line(), what="cellular selected")
    t.key(" ")
    t.wait(lambda t: "> [x] cellular" in t.cursor_line(), what="cellular checked")
    # Other keys do not reach the list while the dialog is open.
    t.key("a")
    t.key("\r")
    said(t, "Done: org.example.Mail bearers ethernet,wifi,cellular.")
    assert "Bearers org.example.Mail may use" not in t.text()
    assert "bearers ethernet, wifi, cellular" in t.text()
    assert fake.send(op="calls") == [
        ["SetAppPolicy", "org.example.Mail", {"bearers": "ethernet,wifi,cellular"}]]

    # All unchecked: every bearer.
    t.key("b")
    said(t, "Bearers org.example.Mail may use")
    for _ in range(3):
        t.key(" ")
        t.key("j")
    said(t, "None checked: every bearer.")
    t.key("\r")
    said(t, "Done: org.example.Mail bearers all.")
    assert fake.send(op="calls")[-1] == ["SetAppPolicy", "org.example.Mail", {"bearers": "all"}]

    # Esc cancels, nothing asked.
    t.key("b")
    said(t, "Bearers org.example.Mail may use")
    t.key(" ")
    t.key(ESC)
    said(t, "Bearers of org.example.Mail left as they were.")
    assert len(fake.send(op="calls")) == 2


def test_apps_keys_that_cannot_apply(roamd, tui):
    """Keys that cannot apply to the selected app are answered here with the reason, never
    sent to roamd to fail."""
    fake = roamd(APPS)
    t = tui()
    open_apps(t)
    t.key("G")
    t.wait_cursor("> system", screen="apps")
    for key, words in (("v", "system has only an access"), ("m", "system has only an access"),
                       ("b", "system has only an access"),
                       ("o", "system is not an app: online for a task is for one app."),
                       ("x", "system is not an app"),
                       ("R", "system has no changes made at runtime")):
        t.key(key)
        said(t, words)
        assert "Bearers system may use" not in t.text()
    t.key("k")
    t.wait_cursor("> default", screen="apps")
    t.key("o")
    said(t, "default is not an app: online for a task is for one app.")
    assert fake.send(op="calls") == []


def test_apps_denied(roamd, tui, golden):
    fake = roamd(dict(APPS, _deny_uids=[0]))
    t = tui()
    open_apps(t)
    t.key("a")
    said(t, DENIED)
    golden("apps-denied", t)
    # Nothing changed.
    assert t.cursor_line().split()[:3] == [">", "org.example.Backup", "allow"]
    fake.send(op="fail", message="nftables refused the change: Operation not permitted")
    fake.send(op="deny", uids=[])
    t.key("v")
    said(t, "Cannot change org.example.Backup (VPN forbidden): "
            "nftables refused the change: Operation not permitted")


@pytest.mark.parametrize("theme", ["high-contrast", "monochrome"])
def test_apps_themes(roamd, tui, golden, theme):
    roamd(dict(APPS, _deny_uids=[0]))
    t = tui(args=("--theme", theme))
    open_apps(t)
    t.key("j")
    t.key("o")
    said(t, "Not allowed to change org.example.Browser")
    golden(f"apps-theme-{theme}", t, theme=theme)


def test_apps_small_terminal(roamd, tui, golden):
    roamd(APPS)
    t = tui(cols=40, rows=12)
    t.wait_for(screen="overview", text="wlan0")
    t.key("3")
    said(t, "org.example.Backup: blocked: VPN down")
    golden("apps-small", t)
    select(t, "org.example.Mail")
    t.key("b")
    said(t, "Bearers org.example.Mail may use")
    golden("apps-small-bearers", t)
    # At 40 columns the dialog's way out and in stay.
    assert hints(t) == " ? help  q quit  Enter apply  Esc cancel"
    t.key(ESC)
    said(t, "left as they were")
    # 64 columns: still a table, with narrower IDs.
    t.resize(64, 20)
    t.wait(lambda t: t.frame.fields.get("size") == "64x20", what="a frame at 64x20")
    assert "App                 Access VPN       State" in t.text()


def test_apps_follow_roamd(roamd, tui):
    fake = roamd(APPS)
    t = tui()
    open_apps(t)
    select(t, "org.example.Maps")
    fake.send(op="add_app", app={"Id": "org.example.Music", "Access": "lan",
                                 "State": "local networks only"})
    said(t, "org.example.Music")
    assert t.cursor_line().startswith("> org.example.Maps")
    fake.send(op="app", id="org.example.Maps", props={"Bearers": [], "State": "online",
                                                       "Route4": "wlan0"})
    t.wait(lambda t: "> org.example.Maps" in t.cursor_line() and "online" in t.cursor_line(),
           what="Maps online")
    # The selected app vanishes: its neighbour is selected.
    fake.send(op="remove_app", id="org.example.Maps")
    t.wait(lambda t: "org.example.Maps" not in t.text(), what="Maps gone")
    assert t.cursor_line().startswith("> org.example.Music")
    # roamd goes away: back to the overview, which says so.
    fake.close()
    t.wait_for(screen="overview", live="not-running", text="roamd is not running")


def many_long_apps(count):
    """A scenario with count apps whose IDs differ only at their end, past any column."""
    apps = [app("system", Source="builtin"), app("default", Access="lan",
                                                 State="local networks only")]
    apps += [app(f"org.spam.{'A' * 60}{i:03d}") for i in range(count)]
    return dict(APPS, apps=apps)


def test_apps_long_ids_cut_in_the_middle(roamd, tui, golden):
    """200 IDs alike but for their end stay tell-apart: cut in the middle, not at the end;
    the header and the filter line count the same apps ("N of M apps")."""
    roamd(many_long_apps(200))
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    t.key("3")
    said(t, "200 apps; default")
    rows = [line for line in t.text_lines() if "org.spam." in line]
    assert len(rows) > 5
    ends = [line.split()[1 if line.startswith(">") else 0][-3:] for line in rows]
    assert ends[:3] == ["000", "001", "002"], rows
    golden("apps-long-ids", t)
    t.key("/")
    t.key("19")
    t.key("\r")
    said(t, "Filter: 19 (12 of 200 apps)")
    assert "12 of 200 apps; default" in t.text(), t.text()
    golden("apps-long-ids-filter", t)


def test_apps_tab_needs_apps(roamd, tui):
    fake = roamd(APPS)
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    assert "3 Apps" in t.text_lines()[0]
    for app_id in ("org.example.Backup", "org.example.Browser", "org.example.Chat",
                   "org.example.Mail", "org.example.Maps", "org.example.Printer", "default",
                   "system"):
        fake.send(op="remove_app", id=app_id)
    # The tab stays, greyed with its reason word (never colour alone), and the key says why.
    t.wait(lambda t: "Apps" not in t.text_lines()[0] and " 3:none " in t.text_lines()[0],
           what="the Apps tab greyed")
    t.key("3")
    t.wait_for(screen="overview",
               text="3 Apps: roamd has no apps (an older roamd, or [Apps] Enforce=no).")


def test_apps_help(roamd, tui, golden):
    roamd(APPS)
    t = tui()
    open_apps(t)
    t.key("?")
    t.wait_for(screen="help", text="Help: the Apps screen")
    golden("help-apps", t)
    t.key("G")
    t.wait(lambda t: "8                Firewall" in t.text(),
           what="the global keys")
    t.key(ESC)
    t.wait_for(screen="apps")


def test_apps_plain_ascii(roamd, tui):
    """LANG=C: every character on the apps screen and in its dialog is ASCII."""
    roamd(APPS)
    t = tui(lang="C")
    open_apps(t)
    t.key("b")
    said(t, "Bearers org.example.Backup may use")
    assert all(ord(c) < 128 for c in t.text())
    assert NOW  # the scenario's clock is roam's: times are stable


def test_apps_wording(roamd, tui):
    """The header counts apps, not default and system; a LAN-only app without an uplink route
    says where it goes; a grant's time never reads as "blocked until"."""
    fake = roamd(APPS)
    t = tui(cols=100)
    open_apps(t)
    assert t.text_lines()[1].startswith("  6 apps; default: processes in no app")
    fake.send(op="app", id="org.example.Printer", props={"Route4": "", "Route6": ""})
    fake.send(op="app", id="org.example.Backup", props={"OnlineUntil": NOW + 10 * MINUTE})
    # The grant's time is on the details line, apart from the state (never "blocked until").
    t.wait(lambda t: "route local networks only; bearers all" in t.text() and
           "route none; bearers all; handover sticky; online until 22:23:20" in t.text(),
           what="the new wording")
    assert "VPN down until" not in t.text()


def test_apps_filter_and_sort(roamd, tui, golden):
    fake = roamd(APPS)
    t = tui()
    open_apps(t)
    t.key("/")
    t.key("blocked")
    said(t, "Filter: blocked_ (3 of 6 apps)")
    t.key("\r")
    said(t, "Filter: blocked (3 of 6 apps)")
    ids = [line[2:].split()[0] for line in t.text_lines()
           if line[2:6] == "org." or line[2:9] in ("default", "system ")]
    assert ids == ["org.example.Backup", "org.example.Chat", "org.example.Maps"]
    # Keys act on the rows shown: j selects the next blocked app.
    t.key("j")
    t.wait_cursor("> org.example.Chat", screen="apps")
    golden("apps-filter", t)
    t.key(ESC)  # clears the filter; a second Esc goes back
    t.wait(lambda t: "Filter" not in t.text() and "org.example.Printer" in t.text(),
           what="no filter")
    t.key("s")
    said(t, "Sorted by state.")
    ids = [line[2:].split()[0] for line in t.text_lines()
           if line[2:6] == "org." or line[2:9] in ("default", "system ")]
    assert ids[0] == "org.example.Browser" and ids[-3:] == [
        "org.example.Backup", "org.example.Chat", "org.example.Maps"], ids
    t.key(ESC)
    t.wait_for(screen="overview")
    assert fake.send(op="calls") == []


def test_apps_sort_by_bearer(roamd, tui, golden):
    """s steps ID -> state -> access -> bearer: by the bearer of the link each app's new flows
    take now (the shared bearer order: wifi before vpn), apps without a route last."""
    roamd(APPS)
    t = tui()
    open_apps(t)
    for name in ("state", "access", "bearer"):
        t.key("s")
        said(t, f"Sorted by {name}.")
    ids = [line[2:].split()[0] for line in t.text_lines()
           if line[2:6] == "org." or line[2:9] in ("default", "system ")]
    assert ids == ["org.example.Browser", "org.example.Printer", "default", "system",
                   "org.example.Mail", "org.example.Backup", "org.example.Chat",
                   "org.example.Maps"], ids
    # The order is seen: each route names its link's bearer in words.
    routes = [line.split("route ")[1].split(";")[0] for line in t.text_lines()
              if "  route " in line]
    assert routes == ["v4 wlan0 (wifi), v6 none"] + ["v4 wlan0 (wifi), v6 wlan0 (wifi)"] * 3 + [
        "v4 tun0 (vpn), v6 tun0 (vpn)", "none", "none", "none"], routes
    golden("apps-sort-bearer", t)
    t.key("s")
    said(t, "Sorted by ID.")


def test_wake_state_on_the_apps_screen(roamd, tui):
    """A wake-listed app's place in the ordered wake-up, as `roam apps` says it (L22 of the
    new-user report: the Apps screen left it out)."""
    sc = dict(APPS, apps=APPS["apps"] + [app("org.example.Torrent", State="online",
                                             Wake=31, WakeState="done", WakeReason="done")])
    roamd(sc)
    t = tui(cols=100, rows=40)
    open_apps(t)
    flat = " ".join(t.text().split())
    assert "org.example.Torrent allow any online; wake: its turn is over" in flat, flat

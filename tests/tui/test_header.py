"""The header (docs/tui.md): tab names fit where they can, abbreviated before they go (M10 of
the new-user report: at 80 columns only the active tab kept its name), and the screens
without a tab (t Time, w Wake queue) open from every screen and show in the header while
they are shown (M9)."""
from firewall_scenario import FIREWALL
ESC = b"\x1b"


def header(t):
    return t.text_lines()[0]


def test_names_abbreviated_before_dropped(roamd, tui):
    roamd(FIREWALL)
    t = tui(cols=76, rows=24)
    t.wait_for(screen="overview", text="Connected to roamd")
    # 8 Firewall is available here: "8 FW" leaves room for every other name
    assert header(t).startswith("roam [1 Overview] 2 Link 3 Apps 4:none 5 Usage "), header(t)
    assert " 8 FW " in header(t), header(t)
    t = tui(cols=100, rows=24)
    t.wait_for(screen="overview", text="Connected to roamd")
    assert " 8 Firewall " in header(t), header(t)


def test_time_and_wake_from_every_screen(roamd, tui):
    roamd(FIREWALL)
    t = tui(cols=100, rows=24)
    t.wait_for(screen="overview", text="Connected to roamd")
    t.settle()  # the first-join question's grace: keys typed before it wait
    t.key(ESC)
    t.key("5")
    t.wait_for(screen="usage")
    t.key("t")
    t.wait_for(screen="time")
    assert "[t Time]" in header(t), header(t)
    t.key("8")
    t.wait_for(screen="firewall")
    t.key("w")
    t.wait_for(screen="wake")
    assert "[w Wake queue]" in header(t), header(t)
    t.key("?")
    t.wait_for(screen="help", text="Keys everywhere")
    text = " ".join(t.text().split())
    assert "t, w The Time and Wake queue screens" in text, text


def test_slash_says_where_it_filters(roamd, tui):
    """/ on a screen without a filter says so (L8 of the new-user report: it did nothing)."""
    roamd(FIREWALL)
    t = tui(cols=100, rows=24)
    t.wait_for(screen="overview", text="Connected to roamd")
    t.settle()
    t.key(ESC)
    t.key("?")
    t.wait_for(screen="help")
    t.key("/")
    t.wait_for(screen="help", text="The Help screen has no filter: / filters the links on")


def test_why_column_stops_growing(roamd, tui):
    """At 200 columns the Why column stays near its reasons; Probed does not go to the far
    edge (L20 of the new-user report)."""
    roamd(FIREWALL)
    t = tui(cols=200, rows=50)
    t.wait_for(screen="overview", text="Connected to roamd")
    heading = next(line for line in t.text_lines() if line.lstrip().startswith("Link "))
    assert heading.index("Probed") < 110, heading


def test_portal_without_roamd_says_so(tui):
    """4 while roamd is not running: not "no link is behind one" (L1 of the new-user
    report), which would be a claim about portals nobody read."""
    t = tui()
    t.wait_for(screen="overview", live="not-running", text="roamd is not running")
    t.key("4")
    t.wait(lambda t: "Captive portals unknown: roamd is not running." in t.text() or
           "4 Portal: roamd is not running" in t.text(), what="the portal tab says why")
    assert "no link is behind one" not in t.text()


def test_help_names_every_tab_word(roamd, tui):
    """Help explains every word a greyed tab may carry, not three examples (L2 of the
    new-user report: 7:off was shown while help said 7:down)."""
    roamd(FIREWALL)
    t = tui(cols=100, rows=60)
    t.wait_for(screen="overview", text="Connected to roamd")
    t.settle()
    t.key(ESC)
    t.key("?")
    t.wait_for(screen="help", text="Screens")
    flat = " ".join(t.text().split())
    for word in ("none (nothing of that kind)", "off (switched off or not there)",
                 "down (roamd is not running)", "wait (being read)", "error (roamd's"):
        assert word in flat, word

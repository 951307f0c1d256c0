# SPDX-License-Identifier: LGPL-2.1-or-later
"""The usage screen (key 5): owners with not roaming and roaming side by side, bars with numbers,
the last 24 hours, budgets in words, sort keys; 80x24, 40x12 and monochrome."""
import pytest

ESC = b"\x1b"

from scenarios import verdict_scenario
from tuidriver import NOW

HOUR = NOW // 1_000_000 // 3600 * 3600  # the hour NOW is in
MB = 1_000_000
ROWS = [
    ["app:org.example.Mail", "wlan0", False, 40 * MB, 5 * MB, 40000, 9000],
    ["app:org.example.Mail", "wwan0", True, 2 * MB, MB // 2, 2000, 900],
    ["user:0/app:org.mozilla.Firefox", "wlan0", False, 120 * MB, 10 * MB, 99000, 40000],
    ["user:0/app:org.mozilla.Firefox", "wwan0", True, 30 * MB, 2 * MB, 25000, 9000],
    ["user:1000", "wlan0", False, 3 * MB, MB, 3000, 1000],
    ["system", "wlan0", False, 800_000, 200_000, 900, 400],
    ["other", "wlan0", False, 12_000, 0, 40, 0],
]
# the last 24 hours: quiet at night, a peak three hours ago, roaming in the last two
HISTORY = [[HOUR - h * 3600, False, (24 - abs(h - 3) * 3) * MB if h < 8 else 100_000, 0, 1, 0]
           for h in range(24)] + [[HOUR - h * 3600, True, 4 * MB, 0, 1, 0] for h in (0, 1)]
END = HOUR // 86400 * 86400 + 86400 * 17
BUDGETS = [
    ["org.example.Mail", "cellular", 500 * MB, 412 * MB, END - 86400 * 30, END, 80, "warning"],
    ["org.mozilla.Firefox", "roaming", 0, 0, END - 86400 * 30, END, 80, "over"],
]


def scenario(rows=ROWS, budgets=BUDGETS):
    sc = verdict_scenario("online")
    sc["usage"] = {"rows": rows, "history": HISTORY, "budgets": budgets}
    return sc


def open_usage(t, *texts):
    """Key 5, then a frame with the answers of all three calls (texts: what they show)."""
    t.wait_for(screen="overview", text="online")
    t.key("5")
    t.wait_for(screen="usage", text=list(texts or ("Firefox", "peak", "Budgets")))


def test_usage_screen(roamd, tui, golden):
    fake = roamd(scenario())
    t = tui()
    open_usage(t)
    text = t.text()
    # every number in words next to its bar; the budgets' states in words
    assert "Usage of everyone, sorted by total" in text
    assert "Not roaming 180.0 MB, roaming 34.5 MB" in text
    assert "org.example.Mail on cellular: 412.0 MB of 500.0 MB, warning: nearly used up" in text
    assert "org.mozilla.Firefox on roaming: nothing allowed, over budget: blocked" in text
    assert "peak 24.0 MB at 19:00 UTC" in text
    golden("usage-list", t)

    t.key("s")
    t.wait_for(screen="usage", text="sorted by not roaming")
    t.key("s")
    t.wait_for(screen="usage", text="sorted by roaming")
    lines = [l for l in t.text().splitlines() if "app:" in l or "user:" in l or "system" in l]
    assert "Firefox" in lines[0] and "Mail" in lines[1], lines
    t.key("s")
    t.wait_for(screen="usage", text="sorted by name")
    golden("usage-sorted-name", t)

    # a budget changes: the screen reads again on the signal
    fake.send(op="budget", budgets=[BUDGETS[0][:7] + ["over"], BUDGETS[1]])
    t.wait_for(screen="usage", text="org.example.Mail on cellular: 412.0 MB of 500.0 MB, over")

    # bytes counted meanwhile (no signal): read again by itself while shown, every 5 s,
    # which for roam's frozen clock is the driver's SIGUSR1 (L7 of the new-user report)
    rows = [list(r) for r in ROWS]
    rows[0][3] += 100 * MB
    fake.send(op="usage_rows", rows=rows)
    t.settle()
    if "Not roaming 280.0 MB" not in t.text():  # the frame settle() waited for may have it
        t.wait_for(screen="usage", text="Not roaming 280.0 MB")


def test_usage_screen_small_terminal(roamd, tui, golden):
    roamd(scenario())
    t = tui(cols=40, rows=12)
    open_usage(t, "Owners", "peak")
    assert "Not roaming 180.0 MB, roaming 34.5 MB" in t.text()
    # the whole name, the numbers in words under it
    assert "user:0/app:org.mozilla.Firefox" in t.text()
    assert "not roaming 130.0 MB\n  roaming 32.0 MB" in t.text()
    golden("usage-small", t)


@pytest.mark.parametrize("theme", ["monochrome"])
def test_usage_screen_theme(roamd, tui, golden, theme):
    roamd(scenario())
    t = tui(args=("--theme", theme))
    open_usage(t)
    golden(f"usage-theme-{theme}", t, theme=theme)


def test_usage_screen_own_only_and_empty(roamd, tui):
    """Without authorization for everyone's usage, the user's own (roamd says which)."""
    roamd(dict(scenario(rows=[], budgets=[]), _deny_uids=[0]))
    t = tui()
    open_usage(t, "Your usage, sorted by total", "Nothing counted yet.", "peak")
    assert "Budgets" not in t.text()


def test_usage_screen_ascii(roamd, tui, golden):
    """LANG=C: the bars and the sparkline fall back to ASCII, nothing else changes."""
    roamd(scenario())
    t = tui(lang="C")
    open_usage(t)
    text = t.text()
    assert all(ord(c) < 128 for c in text), [c for c in text if ord(c) >= 128]
    assert "Not roaming 180.0 MB, roaming 34.5 MB" in text
    assert "org.mozilla.Firefox on roaming: nothing allowed, over budget: blocked" in text
    golden("usage-ascii", t)


def test_usage_screen_filter(roamd, tui, golden):
    """/ narrows the owners to those whose name contains the text (L8 of the new-user report:
    / did nothing here); Enter keeps it, Esc clears it, the totals stay everyone's."""
    roamd(scenario())
    t = tui()
    open_usage(t)
    t.key("/")
    t.key("fire")
    t.wait_for(screen="usage", text="Filter: fire_ (1 of 5 owners)")
    t.key("\r")
    t.wait_for(screen="usage", text="Filter: fire (1 of 5 owners)")
    text = t.text()
    assert "app:org.mozilla.Firefox" in text and "app:org.example.Mail" not in text, text
    assert "user:1000" not in text and "system" not in text.split("Owner")[1], text
    assert "Not roaming 180.0 MB, roaming 34.5 MB" in text  # the totals stay everyone's
    golden("usage-filter", t)
    t.key(ESC)
    t.wait_for(screen="usage", text="user:1000")
    assert "Filter:" not in t.text()

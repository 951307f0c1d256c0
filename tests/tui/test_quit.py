"""Quitting: at once by default; with --confirm-quit (roam-demo, whose quit tears its world
down) q asks first, ignores keys typed ahead for the question's grace period, and only a
deliberate y quits (issue 32, item 8)."""
from scenarios import APPS

DEMO = "--confirm-quit=The demo world is torn down."
QUESTION = "Quit roam? The demo world is torn down. (y/N)"


def shows(t, text, timeout=10):
    return t.wait(lambda t: text in " ".join(t.text().split()), timeout, f"{text!r} shown")


def answered_by_then(t):
    """Every key sent so far has been read: Ctrl-L draws a frame after them."""
    n = t.frames
    t.key(b"\x0c")
    t.wait(lambda t: t.frames > n, what="a frame after Ctrl-L")


def test_quit_at_once_by_default(roamd, tui):
    roamd(APPS)
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    t.key("q")
    assert t.proc.wait(timeout=10) == 0


def test_quit_asks_in_the_demo(roamd, tui, golden):
    roamd(APPS)
    t = tui(args=[DEMO])
    t.wait_for(screen="overview", text="wlan0")
    t.key("q")
    t.wait(lambda t: QUESTION in " ".join(t.text().split()) and
           t.frame.fields.get("settling") == "1", what="the quit question, settling")
    # Its keys alone: "? help" and "q quit" would only answer no.
    assert t.text_lines()[-1].split() == ["y", "yes", "n", "no"]
    golden("quit-confirm", t)
    # A y typed ahead (q then y in one burst) answers nothing during the grace period.
    t.key("y")
    answered_by_then(t)
    assert t.proc.poll() is None
    assert QUESTION in " ".join(t.text().split())
    t.settle()
    # q, Esc, Enter, n and any other key answer no, and roam goes on.
    for k in ["q", "\x1b", "\r", "n", "j"]:
        t.key(k)
        shows(t, "Not quit: roam goes on.")
        assert t.proc.poll() is None
        assert QUESTION not in " ".join(t.text().split())
        t.key("q")
        shows(t, QUESTION)
        t.settle()
    t.key("y")
    assert t.proc.wait(timeout=10) == 0


def test_quit_question_small(roamd, tui, golden):
    roamd(APPS)
    t = tui(args=[DEMO], cols=40, rows=12)
    t.wait_for(screen="overview", text="wlan0")
    t.key("q")
    shows(t, QUESTION)
    t.settle()
    golden("quit-confirm-40x12", t)
    t.key("y")
    assert t.proc.wait(timeout=10) == 0


def test_quit_bad_option(roamd, tui):
    roamd(APPS)
    t = tui(args=["--confirm-quit="])
    assert t.proc.wait(timeout=10) == 2


def test_quit_no_at_once(roamd, tui):
    """n right after q (within the grace period) answers no: a no is never harmful (L15 of
    the new-user report: it was dropped silently)."""
    roamd(APPS)
    t = tui(args=[DEMO])
    t.wait_for(screen="overview", text="wlan0")
    t.key("q")
    shows(t, QUESTION)
    t.key("n")  # roam's clock is frozen: still within the grace period
    shows(t, "Not quit")
    assert QUESTION not in " ".join(t.text().split())
    assert t.proc.poll() is None

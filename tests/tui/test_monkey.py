"""A monkey at the keyboard: thousands of random keys (letters, digits, control keys, escape
sequences of the terminal's special keys, mouse reports, UTF-8) interleaved with resizes
between 40x12 and 200x60, from a fixed seed. After every burst the TUI must answer a query (a
redraw on Ctrl-L at the size just set) and at the end go back to the overview and quit cleanly.
It never crashes, never spins and never stops reading keys.

roam runs as roam-demo runs it (--confirm-quit): q and F10 ask "Quit roam?", and the monkey
types them, the answers that are no (n, Esc, Enter, any key) and the end of the question's
grace period (SIGUSR1, as the frozen clock's stand-in) between bursts; only y, which would end
the run, is left out until the end."""
import random
import re
import signal

from scenarios import APPS
from tuidriver import MARKER, _terminfo

SEED = 11
ROUNDS = 60
KEYS_PER_ROUND = 100

# Keys that would end the program (y answering the quit question) or the terminal's job
# control (SIGINT, SIGQUIT, SIGTSTP) are left out: the monkey must keep the TUI alive to test
# it. q, Q and F10 stay: they only ask.
QUIT = set(b"yY\x03\x1a\x1c")
SPECIAL = ["kcuu1", "kcud1", "kcub1", "kcuf1", "kpp", "knp", "khome", "kend", "kcbt", "kf1",
           "kbs", "kdch1", "kich1", "kf10"]
DEMO = "--confirm-quit=The demo world is torn down."


def random_keys(rng, term):
    specials = [s for s in (_terminfo(term, name) for name in SPECIAL) if s]
    out = []
    for _ in range(KEYS_PER_ROUND):
        kind = rng.random()
        if kind < 0.55:
            c = rng.randrange(0x20, 0x7f)
            out.append(bytes([c]) if c not in QUIT else b"q")
        elif kind < 0.7:
            out.append(rng.choice(specials))
        elif kind < 0.8:
            c = rng.choice([0x09, 0x0d, 0x1b, 0x7f, 0x0c, 0x00, 0x01, 0x08, 0x15])
            out.append(bytes([c]))
        elif kind < 0.9:
            # SGR mouse reports: a press, a release, the wheel, in any column (even off
            # screen), above the hint bar of the smallest size (a click on "q quit" would end
            # the run)
            b = rng.choice([0, 1, 2, 32, 64, 65])
            x, y = rng.randrange(1, 220), rng.randrange(1, 12)
            out.append(f"\x1b[<{b};{x};{y}{rng.choice('Mm')}".encode())
        else:
            # UTF-8: accents, wide characters, a zero-width space. Not broken sequences:
            # ncurses' get_wch() then swallows the bytes that follow while it looks for a
            # character, a race of its own that would make this test flaky.
            out.append(rng.choice(["é", "日本", "\U0001f600", "\u200b"]).encode())
    return out


def drain(t):
    """Reads what roam wrote without rendering it; returns the last frame's fields."""
    last = None
    while True:
        if not t._read(0):
            raise AssertionError(f"roam exited ({t.proc.wait()})")
        if not t.output:
            return last
        data = b"".join(t.output)
        t.output.clear()
        t.pending = b""
        for m in MARKER.finditer(data):
            last = m
        if not data:
            return last


def query(t, cols, rows):
    """Ctrl-L and a whole new frame at this size: the TUI still reads keys and draws."""
    t.output.clear()
    t.pending = b""
    t.screen.reset()
    t.key(b"\x0c")
    t.wait(lambda t: t.frame.fields.get("size") == f"{cols}x{rows}",
           what=f"an answer to Ctrl-L at {cols}x{rows}")
    assert t.proc.poll() is None


def test_monkey(roamd, tui):
    rng = random.Random(SEED)
    roamd(APPS)
    t = tui(cols=80, rows=24, args=[DEMO])
    t.wait_for(screen="overview", text="wlan0")
    for _ in range(ROUNDS):
        cols, rows = rng.randrange(40, 201), rng.randrange(12, 61)
        keys = random_keys(rng, t.term)
        half = rng.randrange(len(keys))
        for k in keys[:half]:
            t.key(k)
            drain(t)
        # A quit question typed into stays open through its grace period, then takes keys.
        t.proc.send_signal(signal.SIGUSR1)
        t.resize(cols, rows)
        for k in keys[half:]:
            t.key(k)
            drain(t)
        query(t, cols, rows)
    # Whatever screen or dialog the monkey left open, Esc leads back and 1 shows the overview
    # (a quit question takes one Esc as its no, once its grace is over).
    t.settle()
    t.key(b"\x1b")
    t.key(b"\x1b")
    t.key(b"\x1b")
    t.key(b"\x1b")
    t.key(b"1")
    t.wait(lambda t: t.frame.screen == "overview" and re.search(r"wlan0", t.text()),
           what="the overview after the monkey")
    t.key(b"q")
    t.wait(lambda t: "Quit roam?" in t.text(), what="the quit question")
    t.settle()
    t.key(b"y")
    assert t.proc.wait(timeout=10) == 0

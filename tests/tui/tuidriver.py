"""Runs the real `roam` TUI on a pseudo-terminal and reads its screen with pyte, a virtual
terminal: text, an attribute layer per cell (colours, bold, reverse, underline, named after the
theme roles they match) and the cursor.

roam, started with ROAM_TEST_FRAMES=1, sets the terminal title to
"roam-frame N screen=NAME live=STATE size=WxH ..." after every frame it draws. The driver splits
the output at those markers, so a screen is only ever judged whole, and waits for a frame that
satisfies a condition (polling the pty with a timeout; never a fixed sleep).
ROAM_TEST_NOW freezes roam's clock so "probed 3s ago" and the history's times are stable."""
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios

import pyte

from fakebus import ROAM, TOP

THEMES = os.path.join(TOP, "themes")
# 2023-11-14 22:13:20 UTC, in µs: roam's "now" in every screenshot.
NOW = 1_700_000_000_000_000
MARKER = re.compile(rb"\x1b\]2;(roam-frame (\d+) ([^\x07]*))\x07")


class Screen(pyte.Screen):
    """pyte's screen plus what ncurses sends on xterm-256color and pyte 0.8 lacks: REP (CSI n b,
    repeat the last character) and SU/SD (CSI n S / CSI n T, scroll the region); and ED
    fixed to erase every cell with the current background (back_color_erase), where pyte only
    rewrites cells that were written before."""

    def select_graphic_rendition(self, *attrs, **kwargs):
        """pyte names bright colours (SGR 90-97, 100-107) like the normal ones: tell them
        apart, as themes do (bright-white is not white)."""
        super().select_graphic_rendition(*attrs, **kwargs)
        fg = bg = None
        i = 0
        while i < len(attrs):
            a = attrs[i]
            if a in (38, 48):  # 38;5;N or 38;2;R;G;B: not bright codes
                i += 3 if i + 1 < len(attrs) and attrs[i + 1] == 5 else 5
                continue
            if 30 <= a <= 39:
                fg = None
            elif 90 <= a <= 97:
                fg = "bright" + pyte.graphics.FG_AIXTERM[a]
            elif 40 <= a <= 49:
                bg = None
            elif 100 <= a <= 107:
                bg = "bright" + pyte.graphics.BG_AIXTERM[a]
            elif a == 0:
                fg = bg = None
            i += 1
        if fg:
            self.cursor.attrs = self.cursor.attrs._replace(fg=fg)
        if bg:
            self.cursor.attrs = self.cursor.attrs._replace(bg=bg)

    def erase_in_display(self, how=0, *args, **kwargs):
        super().erase_in_display(how, *args, **kwargs)
        rows = {0: range(self.cursor.y + 1, self.lines), 1: range(self.cursor.y),
                2: range(self.lines), 3: range(self.lines)}.get(how, range(0))
        for y in rows:
            line = self.buffer[y]
            for x in range(self.columns):
                line[x] = self.cursor.attrs

    last = None

    def draw(self, data):
        super().draw(data)
        if data:
            self.last = data[-1]

    def repeat_last(self, count=1, *args, **kwargs):
        if self.last:
            self.draw(self.last * max(count, 1))


    def _margins(self):
        if self.margins:
            return self.margins.top, self.margins.bottom
        return 0, self.lines - 1

    def scroll_up(self, count=1, *args, **kwargs):
        top, bottom = self._margins()
        saved = self.cursor.y
        self.cursor.y = bottom
        for _ in range(max(count, 1)):
            self.index()
        self.cursor.y = saved

    def scroll_down(self, count=1, *args, **kwargs):
        top, bottom = self._margins()
        saved = self.cursor.y
        self.cursor.y = top
        for _ in range(max(count, 1)):
            self.reverse_index()
        self.cursor.y = saved


class ByteStream(pyte.ByteStream):
    csi = dict(pyte.ByteStream.csi, b="repeat_last", S="scroll_up", T="scroll_down")


def _set_size(fd, cols, rows):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


_TERMINFO = {}


def _terminfo(term, cap):
    """A key's sequence from terminfo (infocmp in a child: curses.setupterm works once)."""
    if term not in _TERMINFO:
        out = subprocess.run(["infocmp", "-1", "-q", term], capture_output=True, text=True,
                             check=True).stdout
        caps = {}
        for line in out.splitlines():
            line = line.strip().rstrip(",")
            if "=" in line and not line.startswith("#"):
                k, v = line.split("=", 1)
                caps[k] = v
        _TERMINFO[term] = caps
    v = _TERMINFO[term].get(cap)
    if v is None:
        return None
    # \E is ESC in terminfo; key capabilities use nothing else
    return v.replace("\\E", "\x1b").replace("\\e", "\x1b").encode("latin-1")


def _controlling_tty():
    # A session of its own with the pty as controlling terminal: the kernel then sends
    # SIGWINCH to roam when the test resizes the pty.
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Frame:
    def __init__(self, number, fields):
        self.number = number
        self.fields = dict(f.split("=", 1) for f in fields.split())

    @property
    def screen(self):
        return self.fields.get("screen")

    @property
    def live(self):
        return self.fields.get("live")


class Tui:
    def __init__(self, env, tmp_path, args=(), cols=80, rows=24, term="xterm-256color",
                 lang="C.UTF-8", extra_env=None, preexec=None):
        self.cols, self.rows = cols, rows
        self.term = term
        self.screen = Screen(cols, rows)
        self.stream = ByteStream(self.screen)
        self.pending = b""
        self.frame = None
        self.frames = 0
        self.output = []
        env = dict(env, TERM=term, LANG=lang, LC_ALL=lang, TZ="UTC", ROAM_TEST_FRAMES="1",
                   ROAM_TEST_NOW=str(NOW), ROAM_THEME_PATH=THEMES,
                   XDG_CONFIG_HOME=str(tmp_path / "config"), HOME=str(tmp_path))
        env.pop("NO_COLOR", None)
        env.pop("COLUMNS", None)
        env.pop("LINES", None)
        env.pop("ESCDELAY", None)  # curses takes it over the delay roam sets
        env.update(extra_env or {})
        self.master, slave = os.openpty()
        _set_size(slave, cols, rows)

        def setup():
            _controlling_tty()
            if preexec:
                preexec()

        self.proc = subprocess.Popen([ROAM, *args], stdin=slave, stdout=slave, stderr=slave,
                                     env=env, preexec_fn=setup, close_fds=True)
        os.close(slave)

    def _read(self, timeout):
        """Reads what arrived within timeout; returns False at EOF (roam exited)."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.master, 65536)
        except OSError:
            return False
        if not data:
            return False
        self.output.append(data)
        self.pending += data
        return True

    def _feed_frames(self, condition):
        """Feeds whole frames; True as soon as one satisfies condition."""
        while True:
            m = MARKER.search(self.pending)
            if not m:
                return False
            self.stream.feed(self.pending[:m.end()])
            self.pending = self.pending[m.end():]
            self.frames += 1
            self.frame = Frame(int(m.group(2)), m.group(3).decode())
            if condition(self):
                return True

    def wait(self, condition=lambda tui: True, timeout=10, what="a frame"):
        """Waits for the next frame that satisfies condition(tui)."""
        import time
        deadline = time.monotonic() + timeout
        first = self.frames
        while True:
            if self._feed_frames(lambda t: t.frames > first and condition(t)):
                return self
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what}; screen now:\n" +
                                     "\n".join(self.text_lines()))
            if not self._read(min(left, 0.5)):
                raise AssertionError(f"roam exited ({self.proc.wait()}) waiting for {what}; "
                                     "screen:\n" + "\n".join(self.text_lines()))

    def wait_output(self, text, timeout=10):
        """Waits until text (bytes) arrives outside any frame: what another program on the
        terminal (the portal's login browser) writes while roam is suspended."""
        import time
        deadline = time.monotonic() + timeout
        while text not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {text!r}; got {self.pending!r}")
            if not self._read(min(left, 0.5)):
                raise AssertionError(f"roam exited ({self.proc.wait()}) waiting for {text!r}")
        return self

    def wait_for(self, screen=None, live="ready", text=None, timeout=10):
        """The next frame of this screen and live state that shows text (a str or a list)."""
        texts = [text] if isinstance(text, str) else (text or [])

        def ok(t):
            return ((screen is None or t.frame.screen == screen) and
                    (live is None or t.frame.live == live) and
                    all(x in t.text() for x in texts))
        return self.wait(ok, timeout, f"screen={screen} live={live} text={texts}")

    def settle(self, timeout=10):
        """Ends the grace period of a question that came by itself (keys typed before it showed
        do not answer it): roam's clock is frozen, so the driver says the time has passed
        (SIGUSR1), and waits for a frame drawn after that."""
        self.proc.send_signal(signal.SIGUSR1)
        return self.wait(lambda t: t.frame.fields.get("settling") == "0", timeout,
                         "a frame after the question's grace period")

    def cursor_line(self):
        return self.text_lines()[self.screen.cursor.y]

    def wait_cursor(self, prefix, screen=None, timeout=10):
        """The next frame whose cursor line starts with prefix (the focused item)."""
        return self.wait(lambda t: (screen is None or t.frame.screen == screen) and
                         t.cursor_line().startswith(prefix), timeout,
                         f"the cursor on a line starting with {prefix!r}")

    def key(self, keys):
        """Types keys: a str, or bytes for escape sequences."""
        os.write(self.master, keys.encode() if isinstance(keys, str) else keys)

    def click(self, x, y, button=0):
        """A mouse press and release at column x, row y (0-based), as xterm reports them in
        SGR mode (1006): button 0 is the left one, 64 and 65 the wheel up and down."""
        self.key(f"\x1b[<{button};{x + 1};{y + 1}M".encode())
        if button < 64:
            self.key(f"\x1b[<{button};{x + 1};{y + 1}m".encode())

    def find(self, text):
        """(x, y) of the first place the screen shows text."""
        for y, line in enumerate(self.text_lines()):
            if text in line:
                return line.index(text), y
        raise AssertionError(f"{text!r} is not on the screen:\n{self.text()}")

    def resize(self, cols, rows):
        """Resizes the terminal, as a window manager would: roam gets SIGWINCH, no key."""
        self.cols, self.rows = cols, rows
        self.screen.resize(rows, cols)
        _set_size(self.master, cols, rows)

    def text_lines(self):
        return [line.rstrip() for line in self.screen.display]

    def text(self):
        return "\n".join(self.text_lines())

    def cell_style(self, y, x):
        c = self.screen.buffer[y][x]
        return (c.fg, c.bg, c.bold, c.reverse, c.underscore)

    def dump(self, roles=None):
        """Text, attribute layer, legend and cursor as one string, for goldens. roles: style
        -> role names (from theme_roles()) to annotate the legend."""
        letters = {}
        attr_lines = []
        default = ("default", "default", False, False, False)
        for y in range(self.rows):
            row = ""
            for x in range(self.cols):
                style = self.cell_style(y, x)
                if style == default:
                    row += "."
                    continue
                if style not in letters:
                    letters[style] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[
                        len(letters) % 52]
                row += letters[style]
            attr_lines.append(row.rstrip("."))
        out = ["--- text"]
        out += [f"|{line}" for line in self.text_lines()]
        out.append("--- attributes ('.' is the terminal's default)")
        out += [f"|{line}" for line in attr_lines]
        out.append("--- legend")
        for style, letter in letters.items():
            fg, bg, bold, reverse, underline = style
            words = [f"fg={fg}", f"bg={bg}"] + [n for n, on in (("bold", bold), (
                "reverse", reverse), ("underline", underline)) if on]
            names = (roles or {}).get(style)
            out.append(f"{letter}: {' '.join(words)}" + (f" ({', '.join(names)})" if names else ""))
        c = self.screen.cursor
        out.append("--- cursor")
        out.append(f"row {c.y}, column {c.x}, {'hidden' if c.hidden else 'visible'}")
        return "\n".join(out) + "\n"

    def press(self, name):
        """Types a special key as this terminal sends it (terminfo: "kcud1" is Down, "kf1"
        F1...): with keypad mode on, xterm sends ESC O B for Down, not ESC [ B."""
        seq = _terminfo(self.term, name)
        if not seq:
            raise ValueError(f"TERM={self.term} has no {name}")
        self.key(seq)

    def close(self):
        if self.master is None:
            return self.proc.returncode
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        os.close(self.master)
        self.master = None
        return self.proc.returncode


# pyte's names for the colours ncurses sends through xterm-256color's setaf/setab.
PYTE_NAMES = ["black", "red", "green", "brown", "blue", "magenta", "cyan", "white"]
THEME_NAMES = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]


def _pyte_colour(word, colours=256):
    if word == "default":
        return "default"
    if word.startswith("bright-"):
        i = THEME_NAMES.index(word[7:])
        return "bright" + PYTE_NAMES[i] if colours >= 16 else PYTE_NAMES[i]
    if word.startswith("color"):
        return pyte.graphics.FG_BG_256[int(word[5:])]
    return PYTE_NAMES[THEME_NAMES.index(word)]


def theme_roles(name):
    """Style tuple (as in Tui.cell_style) -> names of the roles of a theme that look so."""
    roles = {}
    with open(os.path.join(THEMES, name + ".theme")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            role, value = (s.strip() for s in line.split("=", 1))
            if role in ("description", "colours"):
                continue
            words = value.split()
            fg = bg = "default"
            if words and words[0] not in ("bold", "dim", "underline", "reverse", "standout",
                                          "plain", "on"):
                fg = _pyte_colour(words.pop(0))
            if len(words) >= 2 and words[0] == "on":
                bg = _pyte_colour(words[1])
                words = words[2:]
            style = (fg, bg, "bold" in words, "reverse" in words or "standout" in words,
                     "underline" in words)
            roles.setdefault(style, []).append(role)
    return roles

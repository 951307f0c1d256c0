"""Terminals the full-screen interface cannot use: refused with a clear message pointing to
`roam --plain` (docs/tui.md)."""
import pytest

from scenarios import verdict_scenario


@pytest.mark.parametrize("term", ["dumb", "no-such-terminal", ""])
def test_refused_terminal(roamd, tui, term):
    """TERM=dumb cannot move the cursor: refused like a terminal terminfo does not know."""
    roamd(verdict_scenario("online"))
    t = tui(term=term)
    assert t.proc.wait(timeout=10) == 1
    while t._read(0.5):
        pass
    out = b"".join(t.output).decode()
    assert f"roam: Cannot start the full-screen interface on TERM={term}. Try 'roam --plain' " \
           "or 'roam status'." in out
    assert "\x1b[" not in out  # nothing of curses reached the terminal

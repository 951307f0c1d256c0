"""The mouse: a click selects, the wheel scrolls, a click on a key hint runs it, a click on a
tab switches to it; --no-mouse leaves the mouse to the terminal."""
import re

from scenarios import APPS, SEVERAL

MOUSE_ON = re.compile(rb"\x1b\[\?[0-9;]*1000h")


def test_click_wheel_hints_and_tabs(roamd, tui):
    roamd(SEVERAL)
    t = tui()
    t.wait_for(screen="overview", text="tun0")
    assert t.cursor_line().startswith("> wlan0")
    x, y = t.find("eth1 ")
    t.click(x, y)
    t.wait_cursor("> eth1", screen="overview")
    # The address line under a link belongs to it too.
    x, y = t.find("203.0.113.77/32")
    t.click(x, y)
    t.wait_cursor("> wwan0", screen="overview")
    t.click(10, 5, button=65)  # the wheel, down: three rows
    t.wait_cursor("> tun0", screen="overview")
    t.click(10, 5, button=64)
    t.wait_cursor("> wwan0", screen="overview")
    x, y = t.find("Enter details")
    t.click(x + 2, y)
    t.wait_for(screen="link", text="wwan0 (cellular): partial")
    x, y = t.find("1 Overview")
    t.click(x, y)
    t.wait_for(screen="overview")
    x, y = t.find("? Help")
    t.click(x, y)
    t.wait_for(screen="help", text="Keys on this screen")
    x, y = t.find("Esc close")
    t.click(x, y)
    t.wait_for(screen="overview")


def test_click_in_the_bearer_dialog(roamd, tui):
    fake = roamd(APPS)
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    x, y = t.find("3 Apps")
    t.click(x, y)
    t.wait_for(screen="apps", text="org.example.Backup")
    x, y = t.find("org.example.Mail")
    t.click(x, y)
    t.wait_cursor("> org.example.Mail", screen="apps")
    x, y = t.find("b bearers")
    t.click(x, y)
    t.wait_for(screen="apps", text="Bearers org.example.Mail may use")
    x, y = t.find("[ ] cellular")
    t.click(x, y)
    t.wait(lambda t: "> [x] cellular" in t.cursor_line(), what="cellular checked")
    x, y = t.find("Enter apply")
    t.click(x, y)
    t.wait_for(screen="apps", text="Done: org.example.Mail bearers ethernet,wifi,cellular.")
    assert fake.send(op="calls") == [
        ["SetAppPolicy", "org.example.Mail", {"bearers": "ethernet,wifi,cellular"}]]


def test_no_mouse(roamd, tui):
    roamd(SEVERAL)
    t = tui(args=("--no-mouse",))
    t.wait_for(screen="overview", text="tun0")
    out = b"".join(t.output)
    assert not MOUSE_ON.search(out)
    t2 = tui()
    t2.wait_for(screen="overview", text="tun0")
    assert MOUSE_ON.search(b"".join(t2.output))  # the mouse is asked for by default

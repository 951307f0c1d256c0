"""Every command's own short help (docs/client.md): `roam COMMAND --help`, `-h`, `roam help
COMMAND`, and --help among a command's own words; all without asking roamd."""
import os
import re

import pytest

from fakebus import run_roam

NO_BUS = {"DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/roam-test-bus"}


def env(tmp_path):
    return dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={tmp_path}/no-such-socket")


def global_help():
    r = run_roam(dict(os.environ, **NO_BUS), "--help")
    assert r.rc == 0
    return r.out


def commands():
    """The commands the global help lists, in its order."""
    text = global_help().split("\nCommands:\n", 1)[1].split("\n\n", 1)[0]
    names = []
    for m in re.finditer(r"^  ([a-z0-9-]+)", text, re.M):
        if m.group(1) not in names:
            names.append(m.group(1))
    return names


def test_global_help_lists_the_commands():
    assert commands() == ["status", "apps", "app", "run", "wait-online", "when-online", "stats",
                          "portal", "time", "p2p", "bt", "nfc", "network", "firewall", "wifi",
                          "help"]


def check_own_help(r, command):
    assert r.rc == 0, r.err
    assert r.err == ""
    assert r.out.startswith(f"Usage: roam {command}"), r.out
    lines = r.out.splitlines()
    assert 3 <= len(lines) <= 24, r.out  # one screen, not the global help
    assert all(len(line) <= 80 for line in lines), r.out
    assert "Commands:" not in r.out


@pytest.mark.parametrize("command", commands())
@pytest.mark.parametrize("how", ["--help", "-h", "help"])
def test_command_help(tmp_path, command, how):
    args = ("help", command) if how == "help" else (command, how)
    r = run_roam(env(tmp_path), *args)
    check_own_help(r, command)
    assert r.out == run_roam(env(tmp_path), command, "--help").out


@pytest.mark.parametrize("args", [
    ("portal", "approve", "--help"),
    ("portal", "login", "--user", "bob", "-h"),
    ("portal", "wlan0", "--help"),
    ("nfc", "import", "--help"),
    ("nfc", "accept", "-h"),
    ("bt", "pair", "--help"),
    ("p2p", "connect", "tv", "--help"),
    ("p2p", "help"),
    ("app", "org.example.Mail", "set", "--help"),
    ("network", "trust", "--help"),
    ("firewall", "check", "tcp", "--help"),
    ("stats", "--link", "wlan0", "--help"),
    ("--json", "apps", "--help"),
    ("run", "--app", "org.example.Mail", "--help"),
], ids=" ".join)
def test_help_among_the_words(tmp_path, args):
    """--help is a question wherever it is in a command's words: never a bad option, a file
    name or a link name."""
    command = args[1] if args[0] == "--json" else args[0]
    check_own_help(run_roam(env(tmp_path), *args), command)


def test_help_of_roam(tmp_path):
    r = run_roam(env(tmp_path), "help")
    assert (r.rc, r.out, r.err) == (0, global_help(), "")
    r = run_roam(env(tmp_path), "help", "nosuch")
    assert r.rc == 2 and r.out == ""
    assert r.err == "roam: no command 'nosuch' to help with. Try 'roam --help'.\n"
    r = run_roam(env(tmp_path), "help", "status", "apps")
    assert r.rc == 2 and r.err.startswith("roam: 'help' takes at most 1 arguments")


def test_usage_errors_point_to_the_command_help(tmp_path):
    for args in (("portal", "login"), ("p2p", "frob"), ("network", "trust"),
                 ("firewall", "check"), ("bt", "frob"), ("nfc", "import"), ("stats", "x"),
                 ("app",)):
        r = run_roam(env(tmp_path), *args)
        assert r.rc == 2, args
        assert r.err.endswith(f" Try 'roam {args[0]} --help'.\n"), r.err


def test_run_passes_help_to_its_command(roamd, roam):
    """After CMD, --help is CMD's: roam runs it."""
    from test_apps import APPS
    roamd(APPS)
    r = roam("run", "--app", "org.example.Mail", "sh", "-c", "echo $1", "sh", "--help")
    assert (r.rc, r.out) == (0, "--help\n"), r.err
    r = roam("run", "--app", "org.example.Mail", "--", "sh", "-c", "echo $1", "sh", "-h")
    assert (r.rc, r.out) == (0, "-h\n"), r.err


def test_portal_browser_prefers_lynx(tmp_path):
    """lynx first, in the help as in the choice (it can be told to open no file: URL; w3m
    follows a portal's redirect to file:, docs/portal.md), and the package suggests lynx."""
    r = run_roam(env(tmp_path), "portal", "--help")
    assert r.rc == 0, r.err
    assert "(lynx, w3m, $BROWSER)" in r.out, r.out
    r = run_roam(env(tmp_path), "--help")
    assert "(lynx, w3m," in r.out and "(w3m" not in r.out, r.out
    control = os.path.join(os.path.dirname(__file__), "..", "..", "debian", "control")
    with open(control) as f:
        suggests = [line for line in f if line.startswith("Suggests:")]
    assert suggests and all("w3m" not in line for line in suggests), suggests
    assert any(line.split()[1].startswith("lynx") for line in suggests), suggests


@pytest.mark.parametrize("command", ["p2p", "bt"])
def test_no_pin_in_argv_in_the_usage(tmp_path, command):
    """The usage shows no PIN argument: PINs and passkeys come on standard input or from
    --pin-file (argv is readable by every local user)."""
    r = run_roam(env(tmp_path), command, "--help")
    assert r.rc == 0, r.err
    assert "PIN]" not in r.out and "pin PIN" not in r.out and "passkey]" not in r.out, r.out
    r = run_roam(env(tmp_path), "--help")
    assert "[PIN or passkey]" not in r.out and "--pin-file FILE" in r.out, r.out


def test_every_surface_says_roamd_sets_the_clock(tmp_path):
    """issue 41 §5 (M3): roamd steps the clock through timedated when the sources agree and
    no clock daemon keeps it (SetClock=auto, docs/time.md): `roam time --help`, roam(1) and
    the TUI's help say so, none says it never sets it."""
    text = " ".join(run_roam(env(tmp_path), "time", "--help").out.split())
    assert "never sets the clock" not in text
    assert "steps it through timedated when the sources agree and no clock daemon keeps it" \
        in text and "SetClock=" in text
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for f in ("man/roam.1.scd", "tui/screens/screen-time.c", "man/roamd.8.scd"):
        assert "never sets the clock" not in open(os.path.join(top, f)).read(), f

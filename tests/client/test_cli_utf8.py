"""Arguments that are not UTF-8 (docs/client.md): every word roam hands to roamd is text, so a
broken one is a usage error at the command line's boundary (exit 2, one line naming it
escaped), never "Out of memory", "Invalid argument" or a timeout; a command to run or a file
to read is this machine's own and may be any bytes."""
import pytest

from test_cli_errors import SCENARIO
from test_wake_cli import scenario

FF = "\udcff"  # the byte 0xff, as Python passes it through to argv (surrogateescape)

BROKEN = [
    ("network", "trust", "home", "x" + FF),
    ("stats", "--link", "\udcc3"),
    ("stats", "--app", "org." + FF),
    ("stats", "--user", FF),
    ("app", "org." + FF, "set", "access=lan"),
    ("app", "org.example.Mail", "set", "bearers=wifi," + FF),
    ("app", "org." + FF),
    ("wait-online", "--app", FF, "--timeout", "1"),
    ("when-online", "--app", FF, "--", "true"),
    ("run", "--app", FF, "--", "true"),
    ("firewall", "check", "tcp", "22", "eth" + FF),
    ("portal", "approve", "wlan" + FF),
    ("portal", "wlan" + FF),
    ("portal", "login", "--user", FF, "--password-file", "-"),
    ("p2p", "connect", "tv" + FF),
    ("bt", "pair", FF),
    ("--theme", FF, "status"),
]


@pytest.mark.parametrize("args", BROKEN, ids=lambda a: " ".join(a).replace(FF, "\\xff"))
def test_not_utf8_is_a_usage_error(roamd, roam, args):
    fake = roamd(SCENARIO)
    r = roam(*args)
    assert r.rc == 2, (r.rc, r.err)
    assert r.out == ""
    assert r.err.count("\n") == 1, r.err
    assert "is not valid UTF-8" in r.err, r.err
    assert "\\xff" in r.err or "\\xc3" in r.err, r.err
    assert "Try 'roam" in r.err, r.err
    assert "memory" not in r.err and "Invalid argument" not in r.err
    # nothing was asked of roamd
    assert fake.send(op="calls") == []
    assert fake.send(op="portal_calls") == []
    assert fake.send(op="runs") == []


def test_local_bytes_stay_allowed(roamd, roam, tmp_path):
    """A file name is any bytes: nfc import reads it (and says it is missing), not refused."""
    roamd(scenario())
    r = roam("nfc", "import", str(tmp_path) + "/tag" + FF)
    assert r.rc == 1, (r.rc, r.err)
    assert "UTF-8" not in r.err


def test_wait_for_a_bad_or_unknown_app_is_an_error(roamd, roam):
    """An ID roamd refuses is an error (2) at once, not "not online in time" (1); roamd's
    message is not given two periods."""
    roamd(scenario())
    for cmd in (("wait-online",), ("when-online",)):
        tail = ("--", "true") if cmd == ("when-online",) else ()
        r = roam(*cmd, "--app", "bad id!", "--timeout", "5", *tail)
        assert r.rc == 2, (cmd, r.rc, r.err)
        assert "Invalid app ID" in r.err and "in time" not in r.err, r.err
    r = roam("wait-online", "--app", "nosuch.App", "--timeout", "5")
    assert (r.rc, r.err) == (2, "roam: Cannot wait: No app nosuch.App.\n")


def test_negative_number_is_said_so(roam):
    """`online-for -5m` is a negative duration, not an unknown option alone (L17)."""
    r = roam("app", "org.example.Mail", "online-for", "-5m")
    assert r.rc == 2, r.err
    assert r.err.startswith("roam: '-5m' is negative: a negative duration, timeout or count "
                            "is not allowed."), r.err
    assert "unknown option" not in r.err, r.err

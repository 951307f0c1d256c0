"""`roam apps`, `roam app ID [set|reset|online-for|release]` and `roam run`, against
fake_roamd.py's App objects on a private system bus."""
import json
import os
import re
import subprocess

import pytest

from fakebus import ROAM, run_roam

NOT_RUNNING = "roam: roamd is not running (no owner of org.roam1 on the system bus)"
DENIED = ("roam: not allowed to change apps: Only root or members of group netdev may do "
          "this (polkit is not running)")
UNTIL_RELEASED = 2**64 - 1
NOW = 1_700_000_000_000_000  # 2023-11-14 22:13:20 UTC
MINUTE = 60 * 1_000_000

WIFI0 = {"Index": 3, "Name": "wifi0", "Bearer": "wifi", "Connectivity": "online",
         "ConnectivityReason": "ok", "State": "routable"}
TUN0 = {"Index": 9, "Name": "tun0", "Bearer": "vpn", "Connectivity": "online",
        "ConnectivityReason": "ok", "State": "routable"}
MAIL = {"Id": "org.example.Mail", "Access": "allow", "Bearers": ["wifi", "ethernet"],
        "VPN": "required", "Handover": "sticky", "Source": "config", "Route4": "tun0",
        "Route6": "tun0", "State": "online",
        "Cgroups": ["/user.slice/user-1000.slice/app.slice/app-gnome-org.example.Mail-1.scope"]}
CHAT = {"Id": "org.example.Chat", "Access": "deny", "Source": "runtime",
        "State": "blocked: access denied"}
BROWSER = {"Id": "org.example.Browser", "Access": "allow", "Handover": "move",
           "Source": "config", "Route4": "wifi0", "Route6": "", "State": "online for a task",
           "OnlineUntil": NOW + 10 * MINUTE}
DEFAULT = {"Id": "default", "Access": "lan", "Source": "config", "Route4": "wifi0",
           "Route6": "wifi0", "State": "local networks only"}
# Route6 as an object path: shown with the link's name all the same.
SYSTEM = {"Id": "system", "Source": "builtin", "Route4": "wifi0",
          "Route6": "/org/roam1/link/3"}
# Listed out of order on purpose: roam sorts by ID, default and system last.
APPS = {
    "manager": {"State": "online", "BestLink": "/org/roam1/link/3"},
    "links": [WIFI0, TUN0],
    "apps": [SYSTEM, MAIL, DEFAULT, CHAT, BROWSER],
    "_now": NOW,
}
APP_KEYS = ["id", "path", "access", "bearers", "vpn", "handover", "source", "route4", "route6",
            "state", "online_until_usec", "cgroups", "wake", "wake_slice_usec", "wake_bytes",
            "wake_state", "wake_reason", "wake_since_usec"]
KEYS = "access, bearers, vpn, handover, wake, wake-slice, wake-bytes"


@pytest.fixture
def roam_utc(bus):
    """roam(*args, **env) in UTC (times of day in the output are stable)."""
    return lambda *args, **env: run_roam(dict(bus.env, TZ="UTC", **env), *args)


def table(out):
    """The rows of `roam apps`' table split at its column starts (taken from the heading)."""
    lines = out.rstrip("\n").split("\n")
    starts = [m.start() for m in re.finditer(r"\S+", lines[0])]
    rows = []
    for line in lines:
        cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
        rows.append(cells)
    return rows


def block_fields(block):
    fields = {}
    label = None
    for line in block.split("\n")[1:]:
        if line[2:3] != " " and ":" in line[:18]:
            label = line[2:18].strip().rstrip(":")
            fields[label] = [line[18:]]
        else:
            fields[label].append(line[18:])
    return fields


def test_apps_table(roamd, roam_utc):
    roamd(APPS)
    r = roam_utc("apps")
    assert r.rc == 0, r.err
    assert r.err == ""
    rows = table(r.out)
    assert rows[0] == ["ID", "ACCESS", "BEARERS", "VPN", "HANDOVER", "ROUTE", "STATE"]
    assert rows[1:] == [
        ["org.example.Browser", "allow", "all", "any", "move", "v4 wifi0, v6 none",
         "online for a task until 22:23:20"],
        ["org.example.Chat", "deny", "all", "any", "sticky", "none", "blocked: access denied"],
        ["org.example.Mail", "allow", "wifi,ethernet", "required", "sticky", "v4 tun0, v6 tun0",
         "online"],
        ["default", "lan", "all", "any", "sticky", "v4 wifi0, v6 wifi0", "local networks only"],
        ["system", "allow", "all", "any", "sticky", "v4 wifi0, v6 wifi0", "online"],
    ]
    # Aligned: every column starts at the same place on every line, and nothing trails.
    for line in r.out.split("\n"):
        assert line == line.rstrip()
    # Piped output is the same whatever the terminal is.
    assert "\x1b" not in r.out


def test_apps_narrow_terminal_blocks(roamd, roam_utc):
    """When the table does not fit $COLUMNS, one block per app instead."""
    roamd(APPS)
    r = roam_utc("apps", COLUMNS="60")
    assert r.rc == 0, r.err
    blocks = r.out.rstrip("\n").split("\n\n")
    assert [b.split("\n")[0] for b in blocks] == [
        "org.example.Browser", "org.example.Chat", "org.example.Mail", "default", "system"]
    for line in r.out.split("\n"):
        assert len(line) <= 80 or line.startswith("  Cgroups:"), line  # paths are not cut
    mail = block_fields(blocks[2])
    assert mail["Access"] == ["allow (any network)"]
    assert mail["VPN"] == ["required (only through a VPN)"]
    # Wide enough: the table.
    assert roam_utc("apps", COLUMNS="200").out == roam_utc("apps").out


def test_apps_json(roamd, roam):
    roamd(APPS)
    r = roam("apps", "--json")
    assert r.rc == 0, r.err
    doc = json.loads(r.out)
    assert [a["id"] for a in doc] == ["org.example.Browser", "org.example.Chat",
                                      "org.example.Mail", "default", "system"]
    for a in doc:
        assert list(a) == APP_KEYS
    assert doc[2] == {
        "id": "org.example.Mail", "path": "/org/roam1/app/org_2eexample_2eMail",
        "access": "allow", "bearers": ["wifi", "ethernet"], "vpn": "required",
        "handover": "sticky", "source": "config", "route4": "tun0", "route6": "tun0",
        "state": "online", "online_until_usec": None,
        "cgroups": ["/user.slice/user-1000.slice/app.slice/app-gnome-org.example.Mail-1.scope"],
        "wake": None, "wake_slice_usec": None, "wake_bytes": None, "wake_state": None,
        "wake_reason": None, "wake_since_usec": None,
    }
    assert doc[0]["online_until_usec"] == NOW + 10 * MINUTE
    assert doc[0]["route6"] == ""
    assert doc[1]["bearers"] == [] and doc[1]["cgroups"] == []
    assert doc[4]["route6"] == "/org/roam1/link/3"  # as roamd sent it
    assert roam("--json", "apps").out == r.out


def test_apps_without_app_objects(roamd, roam):
    """An older roamd without apps would have no App objects; the fake always has default and
    system, so remove them."""
    fake = roamd({"manager": {"State": "offline"}})
    fake.send(op="remove_app", id="default")
    fake.send(op="remove_app", id="system")
    r = roam("apps")
    assert r.rc == 0, r.err
    assert r.out == ("No apps: roamd does not govern apps (an older roamd, or [Apps] "
                     "Enforce=no).\n")
    assert json.loads(roam("apps", "--json").out) == []


def test_app_show(roamd, roam_utc):
    roamd(APPS)
    r = roam_utc("app", "org.example.Mail")
    assert r.rc == 0, r.err
    lines = r.out.split("\n")
    assert lines[0] == "org.example.Mail"
    assert block_fields(r.out) == {
        "State": ["online"],
        "Access": ["allow (any network)"],
        "Bearers": ["wifi, ethernet"],
        "VPN": ["required (only through a VPN)"],
        "Handover": ["sticky (existing flows finish on the old link)"],
        "Route": ["v4 tun0, v6 tun0"],
        "Policy from": ["the configuration (apps.d)"],
        "Cgroups": ["/user.slice/user-1000.slice/app.slice/app-gnome-org.example.Mail-1.scope"],
        "Net monitor": ["GLib's own (roamd answers none here)", ""],
    }
    browser = block_fields(roam_utc("app", "org.example.Browser").out)
    assert browser["State"] == ["online for a task until 22:23:20"]
    assert browser["Bearers"] == ["all (every bearer)"]
    assert browser["Handover"] == ["move (existing flows move to the new link)"]
    assert browser["Cgroups"] == ["none"]
    system = block_fields(roam_utc("app", "system").out)
    assert system["Route"] == ["v4 wifi0, v6 wifi0"]
    assert system["Policy from"] == ["built in"]

    doc = json.loads(roam_utc("app", "org.example.Mail", "--json").out)
    assert list(doc) == APP_KEYS and doc["id"] == "org.example.Mail"


def test_app_show_says_whether_its_glib_processes_listen(roamd, roam_utc):
    """docs/apps-hear.md: roam app ID says whether the app's GLib processes hear roamd."""
    roamd({**APPS, "monitor_listeners": {"org.example.Mail": 2, "org.example.Chat": 1}})
    mail = block_fields(roam_utc("app", "org.example.Mail").out)
    assert mail["Net monitor"] == ["roam's; 2 processes listen", ""], mail
    chat = block_fields(roam_utc("app", "org.example.Chat").out)
    assert chat["Net monitor"] == ["roam's; 1 process listens", ""], chat
    browser = block_fields(roam_utc("app", "org.example.Browser").out)
    assert browser["Net monitor"] == ["roam's; no process listens now", ""], browser


def test_app_show_errors(roamd, roam):
    fake = roamd(APPS)
    r = roam("app", "org.example.Nothing")
    assert r.rc == 1
    assert r.out == ""
    assert r.err == "roam: no app 'org.example.Nothing' (roam apps lists them)\n"
    # a malformed ID is a usage error, said before roamd is asked (L17)
    for bad in ("../etc", "bad id!", "", ".hidden", "x" * 256):
        for action in ((), ("reset",), ("set", "access=lan"), ("online-for", "10m")):
            r = roam("app", bad, *action)
            assert r.rc == 2, (bad, action, r.err)
            assert r.err.startswith("roam: Invalid app ID '%s': 1-255 characters" % bad), r.err
    assert fake.send(op="calls") == []


def test_app_set(roamd, roam):
    fake = roamd(APPS)
    r = roam("app", "org.example.Mail", "set", "access=lan", "vpn=any", "bearers=cellular,wifi",
             "handover=move")
    assert r.rc == 0, r.err
    assert r.out == "" and r.err == ""
    # One call with every pair.
    assert fake.send(op="calls") == [["SetAppPolicy", "org.example.Mail", {
        "access": "lan", "vpn": "any", "bearers": "cellular,wifi", "handover": "move"}]]
    doc = json.loads(roam("app", "org.example.Mail", "--json").out)
    assert (doc["access"], doc["vpn"], doc["bearers"], doc["handover"], doc["source"]) == (
        "lan", "any", ["wifi", "cellular"], "move", "runtime")
    assert doc["state"] == "local networks only"

    # bearers=all empties the list.
    assert roam("app", "org.example.Mail", "set", "bearers=all").rc == 0
    assert json.loads(roam("app", "org.example.Mail", "--json").out)["bearers"] == []

    # A new app: SetAppPolicy creates it.
    assert roam("app", "org.example.New", "set", "access=deny").rc == 0
    doc = json.loads(roam("app", "org.example.New", "--json").out)
    assert doc["state"] == "blocked: access denied" and doc["source"] == "runtime"


def test_app_set_refused_by_roamd(roamd, roam):
    fake = roamd(APPS)
    r = roam("app", "org.x", "set", "access=lan", "foo=bar")
    assert r.rc == 1
    assert r.out == ""
    assert r.err == ("roam: cannot change org.x: unknown key 'foo' "
                     "(known: %s)\n" % KEYS)
    r = roam("app", "org.example.Mail", "set", "access=maybe")
    assert r.rc == 1
    assert r.err == ("roam: cannot change org.example.Mail: invalid value 'maybe' for access "
                     "(allow, lan, deny)\n")
    r = roam("app", "org.example.Mail", "set", "bearers=wifi,carrier-pigeon")
    assert r.rc == 1
    assert r.err == ("roam: cannot change org.example.Mail: unknown bearer 'carrier-pigeon' in "
                     "bearers (ethernet, wifi, cellular, bluetooth, wifi-direct, vpn, lowpan)\n")
    r = roam("app", "org.example.Mail", "set", "bearers=all,wifi")
    assert r.rc == 1
    assert r.err == ("roam: cannot change org.example.Mail: 'all' cannot be combined with "
                     "other bearers in bearers\n")
    # Nothing changed: all or nothing.
    assert json.loads(roam("app", "org.example.Mail", "--json").out)["access"] == "allow"
    assert roam("app", "org.x").rc == 1  # not created either
    fake.send(op="fail", message="cannot create the cgroup: No space left on device")
    r = roam("app", "org.example.Mail", "set", "access=lan")
    assert r.rc == 1
    assert r.err == ("roam: cannot change org.example.Mail: cannot create the cgroup: "
                     "No space left on device\n")


def test_app_set_refused_locally(roamd, roam):
    fake = roamd(APPS)
    cases = {
        ("app", "org.x", "set", "access"):
            "roam: 'access' is not a setting: give key=value (keys: %s)." % KEYS,
        ("app", "org.x", "set", "access=lan", "=deny"):
            "roam: '=deny' is not a setting",
        ("app", "org.x", "set", "access=lan", "access=deny"):
            "roam: 'access' is given twice.",
        ("app", "org.x", "set"): "roam: 'roam app org.x set' needs KEY=VALUE (keys: %s)." % KEYS,
    }
    for args, message in cases.items():
        r = roam(*args)
        assert r.rc == 2, args
        assert r.out == ""
        assert r.err.startswith(message), r.err
        assert r.err.endswith(f"Try 'roam {args[0]} --help'.\n"), r.err
    assert fake.send(op="calls") == []  # nothing reached roamd


def test_app_access_denied(roamd, roam):
    fake = roamd(dict(APPS, _deny_uids=[0]))
    for args in (("set", "access=lan"), ("reset",), ("online-for", "10m"), ("release",)):
        r = roam("app", "org.example.Mail", *args)
        assert r.rc == 1, args
        assert r.out == ""
        assert r.err == DENIED + "\n", args
    # Reading stays open.
    assert roam("app", "org.example.Mail").rc == 0
    assert roam("apps").rc == 0
    assert json.loads(roam("app", "org.example.Mail", "--json").out)["access"] == "allow"
    fake.send(op="deny", uids=[])
    assert roam("app", "org.example.Mail", "set", "access=lan").rc == 0


def test_app_reset(roamd, roam):
    roamd(APPS)
    assert roam("app", "org.example.Mail", "set", "access=deny", "vpn=any").rc == 0
    r = roam("app", "org.example.Mail", "reset")
    assert r.rc == 0, r.err
    assert r.out == "" and r.err == ""
    doc = json.loads(roam("app", "org.example.Mail", "--json").out)
    assert (doc["access"], doc["vpn"], doc["source"]) == ("allow", "required", "config")
    # An app that only had a runtime policy (no cgroup) is gone after a reset.
    assert roam("app", "org.example.New", "set", "access=deny").rc == 0
    assert roam("app", "org.example.New", "reset").rc == 0
    assert roam("app", "org.example.New").rc == 1
    r = roam("app", "org.example.Nothing", "reset")
    assert r.rc == 1
    assert r.err == "roam: no app 'org.example.Nothing' (roam apps lists them)\n"


@pytest.mark.parametrize("duration,usec", [
    ("90s", 90_000_000), ("10m", 600_000_000), ("1h", 3_600_000_000),
    ("1h30m", 5_400_000_000), ("24h", 86_400_000_000), ("until-released", UNTIL_RELEASED)])
def test_app_online_for(roamd, roam, duration, usec):
    fake = roamd(APPS)
    r = roam("app", "org.example.Chat", "online-for", duration)
    assert r.rc == 0, r.err
    assert r.out == "" and r.err == ""
    assert fake.send(op="calls") == [["OnlineFor", "org.example.Chat", usec]]
    doc = json.loads(roam("app", "org.example.Chat", "--json").out)
    assert doc["state"] == "online for a task"
    assert doc["online_until_usec"] == (UNTIL_RELEASED if usec == UNTIL_RELEASED
                                        else NOW + usec)


def test_app_online_for_bad_durations(roamd, roam):
    fake = roamd(APPS)
    cases = {
        "25h": "roam: '25h' is longer than a day: at most 24h, or until-released.",
        "24h1s": "roam: '24h1s' is longer than a day",
        "0s": "roam: '0s' is no time at all: give at least 1s.",
        "10": "roam: '10' is not a duration: use a number and a unit (s, m, h) like 90s, "
              "10m, 1h or 1h30m, or until-released.",
        "ten minutes": "roam: 'ten minutes' is not a duration",
        "10d": "roam: '10d' is not a duration",
        "-5m": "roam: '-5m' is not a duration",  # after --, else an unknown option
        "forever": "roam: 'forever' is not a duration",
    }
    for duration, message in cases.items():
        r = roam("app", "org.example.Chat", "online-for", "--", duration)
        assert r.rc == 2, duration
        assert r.err.startswith(message), r.err
    r = roam("app", "org.example.Chat", "online-for")
    assert r.rc == 2 and "needs one DURATION" in r.err
    assert fake.send(op="calls") == []


def test_special_policies(roamd, roam):
    """default and system are policies, not apps: roamd refuses grants for them, and system
    has only an access. Its words reach the user as they are."""
    roamd(APPS)
    r = roam("app", "default", "online-for", "10m")
    assert r.rc == 1
    assert r.err == ("roam: cannot change default: default is not an app: online for a task "
                     "is for one app.\n")
    r = roam("app", "system", "set", "vpn=required")
    assert r.rc == 1
    assert r.err == ("roam: cannot change system: The system policy has only an access; its "
                     "traffic is routed by the main table.\n")
    assert roam("app", "system", "set", "access=lan").rc == 0
    assert roam("app", "default", "set", "vpn=forbidden").rc == 0


def test_app_online_for_and_release_need_the_app(roamd, roam):
    roamd(APPS)
    for args in (("online-for", "10m"), ("release",)):
        r = roam("app", "org.example.Nothing", *args)
        assert r.rc == 1
        assert r.err == "roam: no app 'org.example.Nothing' (roam apps lists them)\n"


def test_app_release(roamd, roam):
    fake = roamd(APPS)
    r = roam("app", "org.example.Browser", "release")
    assert r.rc == 0, r.err
    assert fake.send(op="calls") == [["Release", "org.example.Browser", None]]
    doc = json.loads(roam("app", "org.example.Browser", "--json").out)
    assert doc["online_until_usec"] is None and doc["state"] == "online"


def test_app_usage_errors(roamd, roam):
    roamd(APPS)
    cases = {
        ("app",): "roam: 'app' needs an app ID",
        ("app", "org.x", "frob"): "roam: unknown action 'frob' for 'roam app'",
        ("app", "org.x", "reset", "now"): "roam: 'roam app org.x reset' takes no arguments",
        ("app", "org.x", "release", "now"): "roam: 'roam app org.x release' takes no argument",
        ("app", "org.x", "reset", "--json"): "roam: --json goes with 'roam app ID' alone.",
        ("apps", "extra"): "roam: 'apps' takes no arguments, got 'extra'.",
        ("apps", "--app", "x"): "roam: --app and --online-for go with 'roam run'.",
    }
    for args, message in cases.items():
        r = roam(*args)
        assert r.rc == 2, args
        assert r.err.startswith(message), r.err
        assert r.err.endswith(f"Try 'roam {args[0]} --help'.\n"), r.err


def test_apps_not_running(bus, roam):
    for args in (("apps",), ("app", "org.x"), ("app", "org.x", "set", "access=deny"),
                 ("app", "org.x", "online-for", "1m"), ("run", "--app", "org.x", "true")):
        r = roam(*args)
        assert r.rc == 3, args
        assert r.err.strip() == NOT_RUNNING


def test_run(roamd, roam):
    fake = roamd(APPS)
    r = roam("run", "--app", "org.example.Mail", "--", "sh", "-c", "echo ran; echo $$")
    assert r.rc == 0, r.err
    assert r.err == ""
    out = r.out.split("\n")
    assert out[0] == "ran"
    runs = fake.send(op="runs")
    assert runs == [{"id": "org.example.Mail", "pid": int(out[1]), "usec": 0,
                     "cgroup": "/roam.slice/app-org.example.Mail.scope"}]
    # roam exec'd the command: the pid roamd got is the command's own.
    doc = json.loads(roam("app", "org.example.Mail", "--json").out)
    assert "/roam.slice/app-org.example.Mail.scope" in doc["cgroups"]


def test_run_without_dashes_and_exit_status(roamd, roam):
    roamd(APPS)
    # Options of the command are its own once the command started.
    r = roam("run", "--app", "org.example.Mail", "sh", "-c", "echo $0 $1; exit 7", "a", "-b")
    assert r.rc == 7
    assert r.out == "a -b\n"


def test_run_online_for(roamd, roam):
    fake = roamd(APPS)
    # a new app is made on purpose, with its policy, before anything runs in it
    assert roam("app", "org.example.New", "set", "access=deny").rc == 0
    r = roam("run", "--app", "org.example.New", "--online-for", "1h30m", "true")
    assert r.rc == 0, r.err
    assert [run["usec"] for run in fake.send(op="runs")] == [5_400_000_000]
    doc = json.loads(roam("app", "org.example.New", "--json").out)
    assert doc["state"] == "online for a task"
    assert doc["online_until_usec"] == NOW + 5_400_000_000
    r = roam("run", "--online-for", "until-released", "--app", "org.example.New", "true")
    assert r.rc == 0, r.err
    assert fake.send(op="runs")[-1]["usec"] == UNTIL_RELEASED


def test_run_denied_does_not_run(roamd, roam, tmp_path):
    fake = roamd(dict(APPS, _deny_uids=[0]))
    marker = tmp_path / "ran"
    r = roam("run", "--app", "org.example.Mail", "--", "sh", "-c", f"echo ran; touch {marker}")
    assert r.rc == 1
    assert r.out == ""
    assert r.err == ("roam: not allowed to run programs in apps: Only root or members of "
                     "group netdev may do this (polkit is not running)\n")
    assert not marker.exists()
    assert fake.send(op="runs") == []


def test_run_refused_does_not_run(roamd, roam):
    fake = roamd(APPS)
    r = roam("run", "--app", "bad/id", "--", "sh", "-c", "echo ran")
    assert r.rc == 1
    assert r.out == ""
    assert r.err.startswith('roam: no app \'bad/id\': Invalid app ID "bad/id"')
    r = roam("run", "--app", "default", "--", "sh", "-c", "echo ran")
    assert r.rc == 1 and r.out == ""
    assert r.err == ("roam: cannot start sh in app default: default is a policy, not an app "
                     "to run under.\n")
    fake.send(op="fail", message="cannot create roam.slice/app-org.x.scope: Read-only file system")
    r = roam("run", "--app", "org.example.Mail", "--", "sh", "-c", "echo ran")
    assert r.rc == 1
    assert r.out == ""
    assert r.err == ("roam: cannot start sh in app org.example.Mail: cannot create "
                     "roam.slice/app-org.x.scope: Read-only file system\n")


def test_run_unknown_app_is_not_created(roamd, roam):
    """A typo in --app must not make a new app (with the default policy) and run in it."""
    fake = roamd(APPS)
    r = roam("run", "--app", "org.example.Mial", "--", "sh", "-c", "echo ran")
    assert r.rc == 1
    assert r.out == ""
    assert r.err == ("roam: no app 'org.example.Mial' (roam apps lists them; roam app ID set "
                     "KEY=VALUE... makes one)\n")
    assert fake.send(op="runs") == []
    assert "org.example.Mial" not in roam("apps").out


def test_run_exec_fails(roamd, roam):
    roamd(APPS)
    r = roam("run", "--app", "org.example.Mail", "--", "/nonexistent/program", "arg")
    assert r.rc == 127
    assert r.err == "roam: cannot run '/nonexistent/program': No such file or directory\n"


def test_run_pidfd_of_another_process_is_refused(roamd, bus):
    """roamd checks that the pidfd names the caller; the fake does the same. A pidfd of the
    caller's parent (sent by a python client) is refused."""
    roamd(APPS)
    script = """
import os, dbus
conn = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
m = conn.get_object("org.roam1", "/org/roam1")
fd = os.pidfd_open(os.getppid())
try:
    m.RunApp("org.x", dbus.types.UnixFd(fd), dbus.UInt64(0),
             dbus_interface="org.roam1.Manager")
    print("accepted")
except dbus.exceptions.DBusException as e:
    print(e.get_dbus_name(), e.get_dbus_message())
"""
    r = subprocess.run(["/usr/bin/python3", "-c", script], env=bus.env, capture_output=True,
                       text=True, timeout=30)
    assert r.stdout.startswith("org.roam1.Error.InvalidArguments The pidfd must be the "
                               "calling process's own"), r.stderr


def test_run_usage_errors(roamd, roam):
    fake = roamd(APPS)
    cases = {
        ("run", "true"): "roam: 'run' needs --app ID.",
        ("run", "--app", "org.x"): "roam: 'run' needs a command to run",
        ("run", "--app"): "roam: option '--app' needs an argument.",
        ("run", "--app", "org.x", "--online-for", "2d", "true"): "roam: '2d' is not a duration",
        ("run", "--app", "org.x", "--online-for", "25h", "true"):
            "roam: '25h' is longer than a day",
        ("run", "--json", "--app", "org.x", "true"): "roam: 'run' prints no JSON.",
    }
    for args, message in cases.items():
        r = roam(*args)
        assert r.rc == 2, args
        assert r.out == ""
        assert r.err.startswith(message), r.err
    assert fake.send(op="runs") == []


def test_help_lists_the_app_commands(tmp_path):
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={tmp_path}/no-such-socket")
    r = subprocess.run([ROAM, "--help"], env=env, capture_output=True, text=True, timeout=10)
    assert r.returncode == 0
    for words in ("  apps ", "  app ID ", "app ID set KEY=VALUE", "app ID reset",
                  "app ID online-for DURATION", "app ID release",
                  "run --app ID [--online-for DURATION] [--] CMD [ARGS...]", "until-released",
                  "  127  "):
        assert words in r.stdout, words
    for line in r.stdout.split("\n"):
        assert len(line) <= 80, line


def test_app_shows_what_set_wake_changed(roamd, roam):
    """issue 41 §3: after `set wake=80 wake-slice=3s wake-bytes=2M` the CLI reads the values
    back, in text and JSON (`roam app ID`, `--json`, `roam apps --json`)."""
    roamd(APPS)
    r = roam("app", "org.example.Mail", "set", "wake=80", "wake-slice=3s", "wake-bytes=2M")
    assert r.rc == 0, r.err
    r = roam("app", "org.example.Mail")
    fields = block_fields(r.out)
    assert fields["Wake"] == ["priority 80, turns of at most 3.0 s, fetching about 2.1 MB"], r.out
    assert fields["Wake state"] == ["waiting for its turn (a new period began)"], r.out
    doc = json.loads(roam("app", "org.example.Mail", "--json").out)
    assert (doc["wake"], doc["wake_slice_usec"], doc["wake_bytes"]) == (80, 3_000_000, 2 << 20)
    assert (doc["wake_state"], doc["wake_reason"]) == ("waiting", "restart")
    assert doc["wake_since_usec"] > 0
    apps = {a["id"]: a for a in json.loads(roam("apps", "--json").out)}
    assert apps["org.example.Mail"]["wake"] == 80
    assert apps["default"]["wake"] is None and apps["default"]["wake_state"] is None
    # and off the list again
    assert roam("app", "org.example.Mail", "set", "wake=no").rc == 0
    doc = json.loads(roam("app", "org.example.Mail", "--json").out)
    assert doc["wake"] is None and doc["wake_state"] is None
    assert "Wake" not in block_fields(roam("app", "org.example.Mail").out)

# SPDX-License-Identifier: LGPL-2.1-or-later
"""The time zone from the cellular network, in the world: a fake ModemManager (a dbusmock
template written from ModemManager's documented API, tests/dbusmock/modemmanager.py) reports
NITZ for another country; python3-dbusmock's timedated template stands in for timedated on the
world's own bus, so SetTimezone is intercepted and the host's zone is never touched. The zone
changes only when a second source agrees (a second modem, an oFono modem, the network's DHCP
option 101); otherwise SetTimezone is not called and ZoneCandidates lists the choices.
Garbage and a modem flapping its time are refused."""
import datetime
import os
import re
import signal
import subprocess
import zoneinfo

import dbus
import pytest

from roamworld import PROPS_IFACE, DBusCallError, wait_for

WORLD = "ttimezone"
MM = "org.freedesktop.ModemManager1"
MM_PATH = "/org/freedesktop/ModemManager1"
MOCK_IFACE = "org.freedesktop.DBus.Mock"
TIMEDATED = "org.freedesktop.timedate1"
TIMEDATED_TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dbusmock",
                                  "timedated.py")
TIMEDATED_PATH = "/org/freedesktop/timedate1"
TIME_PATH = "/org/roam1/time"
TIME_IFACE = "org.roam1.Time"
MM_TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dbusmock",
                           "modemmanager.py")
UNKNOWN = 2147483647  # NetworkTimezone without "offset"


def start_mock(w, template, name):
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=w.address)
    mock = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template",
                             template], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wait_for(lambda: w.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                            "s", [name], dest="org.freedesktop.DBus"), 10, what=name + " mock")
    return mock


@pytest.fixture
def mocks(w):
    """ModemManager and timedated (zone Etc/UTC) on the world's bus; gone after the test, so
    that roamd forgets the modems. The test that makes a choice with SetZone runs last."""
    td = start_mock(w, TIMEDATED_TEMPLATE, TIMEDATED)
    mm = start_mock(w, MM_TEMPLATE, MM)
    # roamd has asked the new timedated for its zone
    wait_for(lambda: zone(w)["Zone"] == "Etc/UTC", 10, what="roamd knows timedated's zone")
    try:
        yield w
    finally:
        for p in (mm, td):
            p.terminate()
            p.wait(10)
        # no witness left (the user's choice, once made, stays)
        wait_for(lambda: zone(w)["ZoneReason"] in ("no-witness", "manual"), 20,
                 what="roamd forgets the modems and leases")


def zone(w):
    props = w.call(TIME_PATH, PROPS_IFACE, "GetAll", "s", (TIME_IFACE,))
    return {k: (list(v) if k == "ZoneCandidates" else str(v)) for k, v in props.items()}


def local_time(tz):
    now = datetime.datetime.now(zoneinfo.ZoneInfo(tz))
    off = int(now.utcoffset().total_seconds() // 60)
    dst = int(now.dst().total_seconds() // 60)
    sign = "+" if off >= 0 else "-"
    text = now.strftime("%Y-%m-%dT%H:%M:%S") + "%s%02d:%02d" % (sign, abs(off) // 60,
                                                               abs(off) % 60)
    return text, off, dst


def add_modem(w, ifname, operator, tz, offset=None, dst=None, time=None):
    text, off, d = local_time(tz)
    return w.call(MM_PATH, MOCK_IFACE, "AddTimeModem", "sssii",
                  [ifname, operator, text if time is None else time,
                   off if offset is None else offset, d if dst is None else dst], dest=MM)


def set_timezone_calls(w):
    calls = w.call(TIMEDATED_PATH, MOCK_IFACE, "GetCalls", dest=TIMEDATED)
    return [[str(a) for a in c[2]] for c in calls if str(c[1]) == "SetTimezone"]


def timedated_zone(w):
    return str(w.call(TIMEDATED_PATH, PROPS_IFACE, "Get", "ss", (TIMEDATED, "Timezone"),
                      dest=TIMEDATED))


def test_one_nitz_for_another_country_asks_the_user(mocks):
    """Japan's network (MCC 440, UTC+9) on one modem: one witness; the user is asked."""
    w = mocks
    add_modem(w, "cell0", "44010", "Asia/Tokyo")
    wait_for(lambda: zone(w)["ZoneReason"] == "single-witness", 10,
             what="the zone decision waits for a second witness")
    z = zone(w)
    assert z["ZoneState"] == "choose"
    assert z["ZoneCandidates"] == ["Asia/Tokyo"]
    assert z["Zone"] == "Etc/UTC"
    assert set_timezone_calls(w) == []
    assert timedated_zone(w) == "Etc/UTC"


def test_a_second_modem_agrees_and_the_zone_changes(mocks):
    """A second modem on Japan's networks is an independent witness: timedated is asked to set
    Asia/Tokyo (not interactively), roamd's Zone follows and ZoneChanged is sent."""
    w = mocks
    add_modem(w, "cell0", "44010", "Asia/Tokyo")
    wait_for(lambda: zone(w)["ZoneReason"] == "single-witness", 10, what="one witness")
    with w.monitor() as mon:
        add_modem(w, "cell1", "44020", "Asia/Tokyo")
        wait_for(lambda: timedated_zone(w) == "Asia/Tokyo", 10, what="SetTimezone(Asia/Tokyo)")
        assert set_timezone_calls(w) == [["Asia/Tokyo", "False"]]
        _, sig = mon.wait_signal(lambda m: m["member"] == "ZoneChanged")
        assert (sig["path"], sig["interface"], sig["payload"]["data"]) == \
            (TIME_PATH, TIME_IFACE, ["Asia/Tokyo"])
    # sent once (learning timedated's zone at the start was no change)
    assert len(re.findall(r"Time zone: ZoneChanged\(", w.roamd_log())) == 1
    assert zone(w)["Zone"] == "Asia/Tokyo"
    z = zone(w)
    assert (z["ZoneState"], z["ZoneReason"]) == ("settled", "current-zone-fits")
    assert re.search(r"Time zone: changing Etc/UTC -> Asia/Tokyo \(agreed\)", w.roamd_log())


def time_sources(w):
    return [tuple(str(x) for x in s[:3]) for s in
            w.call(TIME_PATH, PROPS_IFACE, "Get", "ss", (TIME_IFACE, "Sources"))]


def test_a_modems_network_time_is_a_time_witness(mocks):
    """The modem's NITZ (the real time, told in Tokyo's offset) is a sample of the time
    consensus, a witness of its own: with wifi0's HTTPS Date the time settles on two."""
    w = mocks
    modem = add_modem(w, "cell0", "44010", "Asia/Tokyo")
    witness = "modem:" + str(modem)
    wait_for(lambda: any(s[0] == "nitz" for s in time_sources(w)), 10,
             what="the NITZ sample among the time's sources")
    nitz = [s for s in time_sources(w) if s[0] == "nitz"]
    assert len(nitz) == 1 and nitz[0][1] == witness and modem in nitz[0][2], nitz
    wait_for(lambda: zone(w)["State"] == "settled", 20, what="the time settled on two witnesses")
    kinds = {(s[0], s[1]) for s in time_sources(w)}
    assert ("https-date", "link:wifi0") in kinds and ("nitz", witness) in kinds, kinds


def test_one_modemmanager_client(mocks):
    """Issue 42: roamd runs ONE ModemManager client (the Core's), however many features use
    the modems (the usage's roaming, the time feed's NITZ, the time zone): a new modem with
    Modem.Time is asked for its network time once, not once per client."""
    w = mocks
    modem = add_modem(w, "cell0", "44010", "Asia/Tokyo")
    wait_for(lambda: any(s[0] == "nitz" for s in time_sources(w)), 10,
             what="the NITZ sample among the time's sources")
    calls = w.call(str(modem), MOCK_IFACE, "GetCalls", dest=MM)
    asked = [c for c in calls if str(c[1]) == "GetNetworkTime"]
    assert len(asked) == 1, calls


def test_modems_that_disagree_change_nothing(mocks):
    """Japan on one modem, Germany on the other: disputed, both zones offered, no change."""
    w = mocks
    add_modem(w, "cell0", "44010", "Asia/Tokyo")
    add_modem(w, "cell1", "26201", "Europe/Berlin")
    wait_for(lambda: zone(w)["ZoneReason"] == "witnesses-disagree", 10, what="disputed")
    z = zone(w)
    assert z["ZoneState"] == "disputed"
    assert sorted(z["ZoneCandidates"]) == ["Asia/Tokyo", "Europe/Berlin"]
    assert set_timezone_calls(w) == []


def test_nitz_garbage_is_refused(mocks):
    """A zone of "GMT+34", a time that is not ISO 8601: refused with their reasons; a second
    modem with the garbage zone is no witness, so one good modem stays one witness."""
    w = mocks
    add_modem(w, "cell0", "44010", "Asia/Tokyo")
    bad = add_modem(w, "cell1", "44020", "Asia/Tokyo", offset=34 * 60, dst=0,
                    time="24/07/01,12:00:00+34")
    wait_for(lambda: re.search(r"ModemManager: %s: time zone refused \(offset-out-of-range\)"
                               % re.escape(bad), w.roamd_log()), 10, what="zone refused")
    wait_for(lambda: re.search(r"ModemManager: %s: network time refused \(garbage\)"
                               % re.escape(bad), w.roamd_log()), 10, what="time refused")
    assert zone(w)["ZoneReason"] == "single-witness"
    assert set_timezone_calls(w) == []


def test_a_modem_flapping_its_time_is_refused(mocks):
    """Answers that jump back and forth against the elapsed time: one jump passes, the second
    within ten minutes marks the modem flapping and its time is refused."""
    w = mocks
    text, off, dst = local_time("Asia/Tokyo")
    modem = add_modem(w, "cell0", "44010", "Asia/Tokyo")
    wait_for(lambda: zone(w)["ZoneReason"] == "single-witness", 10, what="the modem is seen")
    later = (datetime.datetime.fromisoformat(text) + datetime.timedelta(hours=5)).isoformat()
    w.call(MM_PATH, MOCK_IFACE, "EmitNetworkTime", "os", [modem, later], dest=MM)
    wait_for(lambda: re.search(r"%s: network time jumped" % re.escape(modem), w.roamd_log()),
             10, what="one jump")
    w.call(MM_PATH, MOCK_IFACE, "EmitNetworkTime", "os", [modem, text], dest=MM)
    wait_for(lambda: re.search(r"%s: network time refused \(flapping\)" % re.escape(modem),
                               w.roamd_log()), 10, what="flapping")


OFONO = "org.ofono"


def ofono_nettime(utc, tz_seconds, dst, mcc, mnc):
    return ('ret = dbus.Dictionary({"UTC": dbus.Int64(%d), "Timezone": dbus.Int32(%d), '
            '"DST": dbus.UInt32(%d), "MobileCountryCode": dbus.String("%s"), '
            '"MobileNetworkCode": dbus.String("%s")}, signature="sv")'
            % (utc, tz_seconds, dst, mcc, mnc))


def test_an_ofono_modem_is_a_second_witness(mocks):
    """oFono (python3-dbusmock's template; its modem given org.ofono.NetworkTime's
    GetNetworkTime) says Japan too: with the ModemManager modem, two witnesses agree. Its
    "GMT+34" NetworkTimeChanged afterwards is refused."""
    w = mocks
    add_modem(w, "cell0", "44010", "Asia/Tokyo")
    wait_for(lambda: zone(w)["ZoneReason"] == "single-witness", 10, what="one witness")
    ofono = start_mock(w, "ofono", OFONO)
    try:
        now = int(datetime.datetime.now(datetime.timezone.utc).timestamp())
        w.call("/ril_0", MOCK_IFACE, "AddMethod", "sssss",
               ["org.ofono.NetworkTime", "GetNetworkTime", "", "a{sv}",
                ofono_nettime(now, 9 * 3600, 0, "440", "10")], dest=OFONO)
        # a second modem appears: roamd reads every modem again, network time included
        w.call("/", MOCK_IFACE, "AddModem", "sa{sv}", ["ril_1", {}], dest=OFONO)
        wait_for(lambda: timedated_zone(w) == "Asia/Tokyo", 10, what="SetTimezone(Asia/Tokyo)")
        assert set_timezone_calls(w) == [["Asia/Tokyo", "False"]]
        w.call("/ril_0", MOCK_IFACE, "EmitSignal", "sssav",
               ["org.ofono.NetworkTime", "NetworkTimeChanged", "a{sv}",
                [dbus.Dictionary({"UTC": dbus.Int64(now), "Timezone": dbus.Int32(34 * 3600)},
                                 signature="sv")]], dest=OFONO)
        wait_for(lambda: re.search(r"oFono: /ril_0: network time refused \(offset-out-of-range\)",
                                   w.roamd_log()), 10, what="GMT+34 refused")
    finally:
        ofono.terminate()
        ofono.wait(10)


def lease_zone(w, opts):
    """The living network's (cell0's) dnsmasq sends these DHCP options from now on; dhcpcd
    asks again."""
    w.path("living-dhcp-opts").write_text(opts)
    os.kill(int(w.path("living-dnsmasq.pid").read_text().split()[0]), signal.SIGHUP)
    w.dhcpcd_restart()


def test_the_lease_of_the_network_is_a_second_witness(mocks):
    """cell0's network names its zone in DHCP option 101 (RFC 4833): with a modem saying Japan
    too, two witnesses agree."""
    w = mocks
    try:
        lease_zone(w, '101,"Asia/Tokyo"\n')
        wait_for(lambda: zone(w)["ZoneReason"] == "single-witness", 20,
                 what="the lease alone is one witness")
        assert zone(w)["ZoneCandidates"] == ["Asia/Tokyo"]
        assert set_timezone_calls(w) == []
        add_modem(w, "cell0", "44010", "Asia/Tokyo")
        wait_for(lambda: timedated_zone(w) == "Asia/Tokyo", 10, what="SetTimezone(Asia/Tokyo)")
        assert set_timezone_calls(w) == [["Asia/Tokyo", "False"]]
    finally:
        lease_zone(w, "")


def test_timedated_double_refuses_what_timedated_refuses(mocks):
    """issue 39: the timedated double is as strict as systemd's timedated.c: a zone that
    timezone_is_valid() refuses, SetTime while NTP is on, and a caller without CAP_SYS_TIME
    (no polkit here) are refused with timedated's errors; the zone stays."""
    w = mocks

    def refused(name, method, sig, args):
        with pytest.raises(DBusCallError) as e:
            w.call(TIMEDATED_PATH, TIMEDATED, method, sig, args, dest=TIMEDATED)
        assert e.value.name == name, (method, args, e.value)
    for bad in ("Asia/Tokio", "Etc/Utc", "Asia//Tokyo", "/usr/share/zoneinfo/Asia/Tokyo",
                "Asia/Tokyo/", "../zoneinfo/Asia/Tokyo", "Asia", "posixrules.d", ""):
        refused("org.freedesktop.DBus.Error.InvalidArgs", "SetTimezone", "sb", (bad, False))
    refused("org.freedesktop.timedate1.AutomaticTimeSyncEnabled", "SetTime", "xbb",
            (1_700_000_000_000_000, False, False))
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                        "dbus-send", "--bus=" + w.address, "--print-reply",
                        "--dest=" + TIMEDATED, TIMEDATED_PATH, TIMEDATED + ".SetTimezone",
                        "string:Asia/Tokyo", "boolean:false"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode != 0 and "org.freedesktop.DBus.Error.AccessDenied" in r.stderr, r
    assert timedated_zone(w) == "Etc/UTC"
    # the zone in force, and "UTC", pass
    w.call(TIMEDATED_PATH, TIMEDATED, "SetTimezone", "sb", ("Etc/UTC", False), dest=TIMEDATED)
    assert timedated_zone(w) == "Etc/UTC"


def test_modemmanager_double_refuses_what_modemmanager_refuses(mocks):
    """issue 39: the ModemManager double answers GetNetworkTime as ModemManager does: a modem
    that is not registered refuses (Core.WrongState) and its State says searching; registered
    again, the time comes back."""
    w = mocks
    modem = add_modem(w, "cell0", "44010", "Asia/Tokyo")
    call = lambda: w.call(str(modem), "org.freedesktop.ModemManager1.Modem.Time",  # noqa: E731
                          "GetNetworkTime", dest=MM)
    assert datetime.datetime.fromisoformat(str(call())).utcoffset().total_seconds() == 9 * 3600
    w.call(MM_PATH, MOCK_IFACE, "SetRegistrationState", "ou", [modem, 2], dest=MM)
    with pytest.raises(DBusCallError) as e:
        call()
    assert e.value.name == "org.freedesktop.ModemManager1.Error.Core.WrongState", e.value
    state = w.call(str(modem), PROPS_IFACE, "Get", "ss",
                   ("org.freedesktop.ModemManager1.Modem", "State"), dest=MM)
    assert int(state) == 7  # MM_MODEM_STATE_SEARCHING
    w.call(MM_PATH, MOCK_IFACE, "SetRegistrationState", "ou", [modem, 1], dest=MM)
    assert datetime.datetime.fromisoformat(str(call())).utcoffset().total_seconds() == 9 * 3600


def test_set_zone_is_the_users_choice(mocks):
    """SetZone as root: timedated is asked; a name that is no zone is refused; an unprivileged
    caller is refused (no polkit in the world, not in group netdev)."""
    w = mocks
    add_modem(w, "cell0", "44010", "Asia/Tokyo")
    wait_for(lambda: zone(w)["ZoneReason"] == "single-witness", 10, what="one witness")
    ok, err, out = w.call_as(65534, TIME_PATH, TIME_IFACE, "SetZone", "string:Asia/Tokyo")
    assert not ok and "AccessDenied" in (err or "") + out
    ok, err, out = w.call_as(0, TIME_PATH, TIME_IFACE, "SetZone", "string:../../etc/shadow")
    assert not ok and "InvalidArguments" in (err or "") + out
    assert set_timezone_calls(w) == []
    w.call(TIME_PATH, TIME_IFACE, "SetZone", "s", ["Asia/Tokyo"])
    wait_for(lambda: timedated_zone(w) == "Asia/Tokyo", 10, what="SetTimezone(Asia/Tokyo)")
    assert set_timezone_calls(w) == [["Asia/Tokyo", "False"]]
    wait_for(lambda: zone(w)["ZoneReason"] == "manual", 10, what="manual")

# SPDX-License-Identifier: LGPL-2.1-or-later
"""A python3-dbusmock template of systemd-timedated (org.freedesktop.timedate1) that refuses
what systemd 252's timedated.c refuses, where python3-dbusmock's stock "timedated" template
takes anything (issue 39):

  SetTimezone(s zone, b interactive): a zone timezone_is_valid() (basic/time-util.c) refuses
      is org.freedesktop.DBus.Error.InvalidArgs "Invalid or not installed time zone '%s'":
      letters, digits and "-_+/" only, no leading, trailing or double "/", and a regular
      file under /usr/share/zoneinfo that starts with the TZif magic ("UTC" always passes);
      the zone in force already is answered at once, with no change (and no signal).
  SetTime(x usec_utc, b relative, b interactive): refused with
      org.freedesktop.timedate1.AutomaticTimeSyncEnabled "Automatic time synchronization is
      enabled" while NTP is on; an absolute time <= 0 is InvalidArgs "Invalid absolute
      time", a relative 0 changes nothing, a relative one that overflows is InvalidArgs
      "Time value overflow". It never sets the clock (the call is recorded: GetCalls).
  Every change wants CAP_SYS_TIME or polkit (bus_verify_polkit_async()): a caller that is not
      root is refused with org.freedesktop.DBus.Error.AccessDenied (no polkit here).

The properties start as the stock template's, with the zone "Etc/UTC" (a zone that exists:
timedated reads it from /etc/localtime) unless the parameters say otherwise.
"""
import os
import stat
import time

import dbus
from dbusmock.templates import timedated as stock

BUS_NAME = stock.BUS_NAME
MAIN_OBJ = stock.MAIN_OBJ
MAIN_IFACE = stock.MAIN_IFACE
SYSTEM_BUS = True

ZONEINFO = "/usr/share/zoneinfo"
INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"
ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"
AUTOMATIC_TIME_SYNC_ENABLED = "org.freedesktop.timedate1.AutomaticTimeSyncEnabled"
PATH_MAX = 4096


def timezone_is_valid(name):
    """basic/time-util.c timezone_is_valid()."""
    if not name:
        return False
    if name == "UTC":
        return True
    if name.startswith("/") or len(name) >= PATH_MAX:
        return False
    slash = False
    for c in name:
        if not (c.isascii() and (c.isalnum() or c in "-_+/")):
            return False
        if c == "/" and slash:
            return False
        slash = c == "/"
    if slash:
        return False
    path = os.path.join(ZONEINFO, name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        return os.read(fd, 4) == b"TZif"
    finally:
        os.close(fd)


def _error(name, message):
    return dbus.exceptions.DBusException(message, name=name)


def _authorize(mock, sender):
    """CAP_SYS_TIME (root) passes; anybody else would need polkit, and there is none."""
    bus = mock.connection.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus")
    uid = bus.GetConnectionUnixUser(sender, dbus_interface="org.freedesktop.DBus")
    if uid != 0:
        raise _error(ACCESS_DENIED, "Access denied")


@dbus.service.method(MAIN_IFACE, in_signature="sb", out_signature="", sender_keyword="sender")
def SetTimezone(mock, zone, interactive, sender=None):
    if not timezone_is_valid(str(zone)):
        raise _error(INVALID_ARGS, "Invalid or not installed time zone '%s'" % zone)
    if str(zone) == str(mock.Get(MAIN_IFACE, "Timezone")):
        return
    _authorize(mock, sender)
    mock.Set(MAIN_IFACE, "Timezone", dbus.String(zone))


@dbus.service.method(MAIN_IFACE, in_signature="xbb", out_signature="", sender_keyword="sender")
def SetTime(mock, usec, relative, interactive, sender=None):
    if mock.Get(MAIN_IFACE, "NTP"):
        raise _error(AUTOMATIC_TIME_SYNC_ENABLED, "Automatic time synchronization is enabled")
    if not relative and usec <= 0:
        raise _error(INVALID_ARGS, "Invalid absolute time")
    if relative and usec == 0:
        return
    if relative:
        now = time.clock_gettime_ns(time.CLOCK_REALTIME) // 1000
        if not 0 <= now + usec <= (1 << 64) - 1:  # usec_t arithmetic wrapped
            raise _error(INVALID_ARGS, "Time value overflow")
    _authorize(mock, sender)
    # the clock is the host's: never set (the call is in the log)


def load(mock, parameters):
    # the stock template's properties and its other methods; SetTimezone and SetTime are the
    # strict ones above (dbusmock registered them before load())
    mock.AddMethods(MAIN_IFACE, [
        ("SetLocalRTC", "bbb", "", stock.setProperty("LocalRTC")),
        ("SetNTP", "bb", "", stock.setProperty("NTP") + "; " + stock.setProperty("NTPSynchronized")),
    ])
    mock.AddProperties(MAIN_IFACE, dbus.Dictionary({
        "Timezone": parameters.get("Timezone", "Etc/UTC"),
        "LocalRTC": parameters.get("LocalRTC", False),
        "NTP": parameters.get("NTP", True),
        "NTPSynchronized": parameters.get("NTP", True),
        "CanNTP": parameters.get("CanNTP", True),
    }, signature="sv"))

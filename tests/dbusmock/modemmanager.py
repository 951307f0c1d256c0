# SPDX-License-Identifier: LGPL-2.1-or-later
"""A python3-dbusmock template of ModemManager (org.freedesktop.ModemManager1), written from
ModemManager's documented D-Bus API: the manager object with an ObjectManager that carries the
modems (Modem and Modem.Modem3gpp interfaces), and bearers as objects of their own outside the
ObjectManager, read with Properties.GetAll, as ModemManager exports them.

Test methods on the manager object (interface org.freedesktop.DBus.Mock):
  AddModem(ifname, registration_state) -> modem path: a registered modem with one connected
      bearer whose Interface is ifname;
  SetRegistrationState(modem path, state): PropertiesChanged on Modem.Modem3gpp, and the
      modem's State follows as ModemManager's does (connected while registered, its bearer
      being connected; searching while searching; enabled otherwise).
  AddTimeModem(ifname, operator_code, time, offset, dst_offset) -> modem path: a registered
      modem (as AddModem) on the network operator_code ("MCC" + "MNC", Modem3gpp.OperatorCode)
      with Modem.Time: GetNetworkTime answers `time` (ISO 8601 local time with its offset, as
      ModemManager formats it; "" unknown) and NetworkTimezone is {"offset": offset,
      "dst-offset": dst_offset} (minutes; an offset of 2147483647 leaves the key out);
  EmitNetworkTime(modem path, time): the next GetNetworkTime answer, and NetworkTimeChanged.
Registration states (MMModem3gppRegistrationState): 1 home, 5 roaming, 6/9 home variants,
7/10 roaming variants, 0 idle, 2 searching, 3 denied, 4 unknown.

As strict as ModemManager (issue 39): Modem.Time.GetNetworkTime of a modem that is not
registered (State below registered) fails with org.freedesktop.ModemManager1.Error.Core.
WrongState "Cannot load network time: not registered yet" (mm-iface-modem-time.c
handle_get_network_time_auth_ready()), and a time the modem does not know fails (Core.Failed)
rather than answer "".
"""
import dbus

from dbusmock import mockobject

BUS_NAME = "org.freedesktop.ModemManager1"
MAIN_OBJ = "/org/freedesktop/ModemManager1"
MAIN_IFACE = "org.freedesktop.ModemManager1"
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

MODEM_IFACE = "org.freedesktop.ModemManager1.Modem"
GPP_IFACE = "org.freedesktop.ModemManager1.Modem.Modem3gpp"
TIME_IFACE = "org.freedesktop.ModemManager1.Modem.Time"
BEARER_IFACE = "org.freedesktop.ModemManager1.Bearer"
MOCK_IFACE = "org.freedesktop.DBus.Mock"

MM_MODEM_STATE_ENABLED = 6
MM_MODEM_STATE_SEARCHING = 7
MM_MODEM_STATE_REGISTERED = 8
MM_MODEM_STATE_CONNECTED = 11
REGISTERED_STATES = (1, 5, 6, 7, 9, 10)  # home, roaming and their SMS-only/CSFB variants
SEARCHING = 2
WRONG_STATE = "org.freedesktop.ModemManager1.Error.Core.WrongState"
CORE_FAILED = "org.freedesktop.ModemManager1.Error.Core.Failed"


def modem_state(registration_state):
    if registration_state in REGISTERED_STATES:
        return MM_MODEM_STATE_CONNECTED  # its bearer is connected
    if registration_state == SEARCHING:
        return MM_MODEM_STATE_SEARCHING
    return MM_MODEM_STATE_ENABLED


def get_network_time(modem):
    """mm-iface-modem-time.c handle_get_network_time_auth_ready()."""
    if modem.Get(MODEM_IFACE, "State") < MM_MODEM_STATE_REGISTERED:
        raise dbus.exceptions.DBusException("Cannot load network time: not registered yet",
                                            name=WRONG_STATE)
    if not modem.network_time:
        raise dbus.exceptions.DBusException("Couldn't load network time", name=CORE_FAILED)
    return dbus.String(modem.network_time)


def load(mock, parameters):
    mock.AddProperties(MAIN_IFACE, {"Version": dbus.String("1.20.4")})
    mock.AddMethods(MAIN_IFACE, [("ScanDevices", "", "", ""),
                                 ("SetLogging", "s", "", "")])
    mock.n_modems = 0


@dbus.service.method(MOCK_IFACE, in_signature="su", out_signature="o")
def AddModem(self, ifname, registration_state):
    modem = add_modem(self, ifname, registration_state)
    self.object_manager_emit_added(modem)
    return dbus.ObjectPath(modem)


def add_modem(self, ifname, registration_state):
    n = self.n_modems
    self.n_modems += 1
    modem = "/org/freedesktop/ModemManager1/Modem/%d" % n
    bearer = "/org/freedesktop/ModemManager1/Bearer/%d" % n
    self.AddObject(bearer, BEARER_IFACE, {
        "Interface": dbus.String(ifname),
        "Connected": dbus.Boolean(True),
        "Suspended": dbus.Boolean(False),
        "Ip4Config": dbus.Dictionary({}, signature="sv"),
        "Ip6Config": dbus.Dictionary({}, signature="sv"),
        "IpTimeout": dbus.UInt32(20),
        "Properties": dbus.Dictionary({"apn": dbus.String("internet")}, signature="sv"),
    }, [])
    self.AddObject(modem, MODEM_IFACE, {
        "Bearers": dbus.Array([dbus.ObjectPath(bearer)], signature="o"),
        "State": dbus.Int32(modem_state(registration_state)),
        "PrimaryPort": dbus.String("cdc-wdm%d" % n),
        "Manufacturer": dbus.String("roam test"),
        "Model": dbus.String("mock modem"),
        "EquipmentIdentifier": dbus.String("00000000000000%d" % n),
    }, [])
    obj = mockobject.objects[modem]
    obj.AddProperties(GPP_IFACE, {
        "RegistrationState": dbus.UInt32(registration_state),
        "OperatorCode": dbus.String("00101"),
        "OperatorName": dbus.String("Test Network"),
        "Imei": dbus.String("00000000000000%d" % n),
    })
    return modem


@dbus.service.method(MOCK_IFACE, in_signature="sssii", out_signature="o")
def AddTimeModem(self, ifname, operator_code, time, offset, dst_offset):
    modem = add_modem(self, ifname, 1)
    obj = mockobject.objects[modem]
    obj.UpdateProperties(GPP_IFACE, {"OperatorCode": dbus.String(operator_code)})
    zone = {}
    if offset != 2147483647:
        zone["offset"] = dbus.Int32(offset)
        zone["dst-offset"] = dbus.Int32(dst_offset)
    obj.network_time = str(time)
    obj.AddProperties(TIME_IFACE, {"NetworkTimezone": dbus.Dictionary(zone, signature="sv")})
    obj.get_network_time = get_network_time
    obj.AddMethods(TIME_IFACE, [("GetNetworkTime", "", "s", "ret = self.get_network_time(self)")])
    self.object_manager_emit_added(modem)
    return dbus.ObjectPath(modem)


@dbus.service.method(MOCK_IFACE, in_signature="os", out_signature="")
def EmitNetworkTime(self, modem, time):
    obj = mockobject.objects[modem]
    obj.network_time = str(time)
    obj.EmitSignal(TIME_IFACE, "NetworkTimeChanged", "s", [dbus.String(time)])


@dbus.service.method(MOCK_IFACE, in_signature="ou", out_signature="")
def SetRegistrationState(self, modem, state):
    obj = mockobject.objects[modem]
    obj.UpdateProperties(GPP_IFACE, {"RegistrationState": dbus.UInt32(state)})
    obj.UpdateProperties(MODEM_IFACE, {"State": dbus.Int32(modem_state(state))})

# SPDX-License-Identifier: LGPL-2.1-or-later
"""A python3-dbusmock template of NetworkManager's Wi-Fi surface (org.freedesktop.NetworkManager),
as strict as NetworkManager 1.42..1.59 where roamd talks to it (issue 43). Debian's stock
template (dbusmock/templates/networkmanager.py, 0.28.7) has no AddAndActivateConnection2, no
AgentManager, no LastScan and no failure path; this one is written from NM's introspection XML
and its sources (read at 355bc902: src/core/nm-manager.c, devices/wifi/nm-device-wifi.c,
devices/wifi/nm-wifi-utils.c, settings/nm-agent-manager.c, settings/nm-settings-connection.c).

Objects: the manager (/org/freedesktop/NetworkManager: GetDevices, GetAllDevices,
GetDeviceByIpIface, AddAndActivateConnection2, ActivateConnection, DeactivateConnection),
Settings (ListConnections, GetConnectionByUuid), Settings/N (Settings.Connection: GetSettings
without secrets, GetSecrets, Update2, Delete), AgentManager (Register,
RegisterWithCapabilities, Unregister), Devices/N (Device, Device.Wireless: RequestScan,
GetAccessPoints, GetAllAccessPoints, LastScan), AccessPoint/N, ActiveConnection/N
(Connection.Active, StateChanged). Properties change with
org.freedesktop.DBus.Properties.PropertiesChanged, as NM sends them.

Refused as NM refuses them (error names are NM's: domain interface + enum nick):
- AddAndActivateConnection2 options other than persist (disk|memory|volatile) and
  bind-activation (dbus-client|none): InvalidArguments; an unknown device: UnknownDevice; an AP
  path not in the device's scan list: Device.SpecificObjectNotFound; no AP path and no
  802-11-wireless.ssid: Device.InvalidConnection; key-mgmt wpa-psk for an AP without PSK
  ("Access point does not support PSK but setting requires it"), security for an open AP, a
  wpa-psk psk that is not 8..63 ASCII or 64 hex (sae's is not checked): Settings.Connection.
  InvalidProperty/InvalidSetting with NM's "setting.property: text"; unknown settings or
  properties, or a property of the wrong type: InvalidSetting / InvalidProperty.
- RequestScan: an 'ssids' option that is not aay, an SSID over 32 bytes:
  Device.InvalidArgument; a device below DISCONNECTED: Device.NotAllowed.
- Register/RegisterWithCapabilities: identifiers NM refuses (3..255 characters of
  [A-Za-z0-9_.-], not starting or ending with '.'): AgentManager.InvalidIdentifier; a second
  agent with the same identifier for the same uid: AgentManager.PermissionDenied; Unregister of
  a caller that has none: AgentManager.NotRegistered. An agent goes when its connection goes.
- Update2: unknown flags ("Unknown flags"), two persist modes or volatile without an in-memory
  mode ("Conflicting flags"), arguments other than plugin/version-id: Settings.
  InvalidArguments; new settings without connection.id/uuid/type: MissingProperty. New
  settings replace the old ones; secrets not sent are kept.

Activation, as nm-device-wifi.c does it: the device goes PREPARE, CONFIG; a secured network
whose secrets are missing is NEED_AUTH (reason 0) and NM asks the secret agents of the
activation's uid (the caller's: nm-agent-manager.c drops agents of other uids), the agent in
the caller's own process first, with GetSecrets(connection without secrets, path, setting,
[], ALLOW_INTERACTION). An agent's NoSecrets or other error moves on to the next agent,
UserCanceled ends the request; no agent left: FAILED reason 7 (NO_SECRETS). A wrong wpa-psk
is a disconnect during the 4-way handshake: NEED_AUTH reason 8 (SUPPLICANT_DISCONNECT) and
GetSecrets with ALLOW_INTERACTION|REQUEST_NEW; a wrong sae password or 802.1X password is the
association timeout: NEED_AUTH reason 0 and REQUEST_NEW; each counts against auth-retries (3)
and then FAILED reason 7. A hidden SSID no AP answers: FAILED reason 53 (SSID_NOT_FOUND).
Right secrets: IP_CONFIG, ACTIVATED, the active connection ACTIVATED, and the profile is
saved (persist disk), kept in memory (memory, Unsaved) or removed when it deactivates
(volatile).

Test methods (org.freedesktop.DBus.Mock on the manager):
  AddWiFiDevice(s ifname) -> device path (state DISCONNECTED, managed);
  AddAccessPoint(o device, ay ssid, s security, y strength, s secret, b hidden) -> AP path:
      security one of open, owe, wpa2 (PSK), wpa3 (SAE only), wpa2/wpa3 (PSK+SAE),
      enterprise (802.1X; secret "identity:password"); secret is what the network accepts;
      a hidden AP shows an empty Ssid until a join of it connects (then the connection's
      SSID, as try_fill_ssid_for_hidden_ap() fills it in from the seen BSSIDs);
  RemoveAccessPoint(o ap);
  AddKnown(o device, ay ssid, s key_mgmt, s psk, b autoconnect, i priority) -> settings path
      (a saved profile, as a keyfile would give it);
  SetAuthRetries(i);
  GetCalls() -> a(sss): (method, sender, a repr of its arguments with secrets hidden as
      '<secret N bytes>') of every call to NM's own interfaces, in order;
  GetAgentCalls() -> a(ssu): (sender's agent name, setting, flags) of each GetSecrets NM sent;
  GetSecretsSeen() -> a(ss): (setting.key, value) of secrets NM received from agents, for the
      tests to assert what roamd answered.
"""
import dbus
import dbus.service

import dbusmock
from dbusmock import MOCK_IFACE, mockobject

BUS_NAME = "org.freedesktop.NetworkManager"
MAIN_OBJ = "/org/freedesktop"
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

NM = "org.freedesktop.NetworkManager"
MANAGER_OBJ = "/org/freedesktop/NetworkManager"
SETTINGS_OBJ = MANAGER_OBJ + "/Settings"
AGENT_MANAGER_OBJ = MANAGER_OBJ + "/AgentManager"
SETTINGS_IFACE = NM + ".Settings"
CONNECTION_IFACE = NM + ".Settings.Connection"
AGENT_MANAGER_IFACE = NM + ".AgentManager"
AGENT_IFACE = NM + ".SecretAgent"
AGENT_PATH = "/org/freedesktop/NetworkManager/SecretAgent"
DEVICE_IFACE = NM + ".Device"
WIRELESS_IFACE = NM + ".Device.Wireless"
AP_IFACE = NM + ".AccessPoint"
ACTIVE_IFACE = NM + ".Connection.Active"
PROPS_IFACE = "org.freedesktop.DBus.Properties"

# NMDeviceState, NMDeviceStateReason, NMActiveConnectionState (nm-dbus-interface.h)
UNAVAILABLE, DISCONNECTED, PREPARE, CONFIG, NEED_AUTH = 20, 30, 40, 50, 60
IP_CONFIG, ACTIVATED, DEACTIVATING, FAILED = 70, 100, 110, 120
R_NONE, R_SUPPLICANT_DISCONNECT, R_NO_SECRETS, R_SSID_NOT_FOUND = 0, 8, 7, 53
R_USER_REQUESTED = 39
AC_ACTIVATING, AC_ACTIVATED, AC_DEACTIVATING, AC_DEACTIVATED = 1, 2, 3, 4
AC_R_USER_DISCONNECTED, AC_R_DEVICE_DISCONNECTED = 2, 3
ALLOW_INTERACTION, REQUEST_NEW = 0x1, 0x2
# NM80211ApFlags / NM80211ApSecurityFlags
AP_PRIVACY = 0x1
PAIR_CCMP, GROUP_CCMP = 0x8, 0x80
KM_PSK, KM_8021X, KM_SAE, KM_OWE = 0x100, 0x200, 0x400, 0x800
SECURITY = {  # name -> (Flags, WpaFlags, RsnFlags)
    "open": (0, 0, 0),
    "owe": (0, 0, PAIR_CCMP | GROUP_CCMP | KM_OWE),
    "wpa2": (AP_PRIVACY, 0, PAIR_CCMP | GROUP_CCMP | KM_PSK),
    "wpa3": (AP_PRIVACY, 0, PAIR_CCMP | GROUP_CCMP | KM_SAE),
    "wpa2/wpa3": (AP_PRIVACY, 0, PAIR_CCMP | GROUP_CCMP | KM_PSK | KM_SAE),
    "enterprise": (AP_PRIVACY, 0, PAIR_CCMP | GROUP_CCMP | KM_8021X),
}
PERSIST_FLAGS = 0x1 | 0x2 | 0x4 | 0x8
UPDATE2_VOLATILE, UPDATE2_BLOCK_AUTOCONNECT, UPDATE2_NO_REAPPLY = 0x10, 0x20, 0x40
IN_MEMORY_FLAGS = 0x2 | 0x4 | 0x8

# The settings and properties this double knows, with their D-Bus types (nm-setting-*.h);
# secrets are flagged: GetSettings leaves them out, agents are asked for them.
SETTINGS = {
    "connection": {"id": "s", "uuid": "s", "type": "s", "autoconnect": "b",
                   "autoconnect-priority": "i", "permissions": "as", "interface-name": "s",
                   "auth-retries": "i", "timestamp": "t"},
    "802-11-wireless": {"ssid": "ay", "hidden": "b", "mode": "s", "cloned-mac-address": "s",
                        "bssid": "ay", "mac-address": "ay", "seen-bssids": "as"},
    "802-11-wireless-security": {"key-mgmt": "s", "psk": "s", "psk-flags": "u",
                                 "auth-alg": "s"},
    "802-1x": {"eap": "as", "identity": "s", "anonymous-identity": "s", "password": "s",
               "password-flags": "u", "phase2-auth": "s", "ca-cert": "ay",
               "domain-suffix-match": "s"},
    "ipv4": {"method": "s"},
    "ipv6": {"method": "s"},
}
SECRETS = {("802-11-wireless-security", "psk"), ("802-1x", "password")}
KEY_MGMT = ("none", "ieee8021x", "owe", "wpa-psk", "sae", "wpa-eap", "wpa-eap-suite-b-192")


def _fail(name, text):
    raise dbus.exceptions.DBusException(text, name=name)


def _conn_fail(kind, setting, prop, text):
    where = "%s.%s" % (setting, prop) if prop else setting
    _fail(CONNECTION_IFACE + "." + kind, "%s: %s" % (where, text))


def _sig(v):
    """The D-Bus type of a value as dbus-python unmarshalled it."""
    if isinstance(v, dbus.Boolean):
        return "b"
    if isinstance(v, dbus.UInt32):
        return "u"
    if isinstance(v, dbus.Int32):
        return "i"
    if isinstance(v, dbus.UInt64):
        return "t"
    if isinstance(v, dbus.String):
        return "s"
    if isinstance(v, dbus.Array):
        return "a" + (v.signature or "?")
    if isinstance(v, (dbus.ByteArray, bytes)):
        return "ay"
    return "?"


def _plain(v):
    if isinstance(v, dbus.Array) and v.signature == "y":
        return bytes(int(b) for b in v)
    if isinstance(v, (dbus.ByteArray, bytes)):
        return bytes(v)
    if isinstance(v, dbus.Array):
        return [_plain(x) for x in v]
    if isinstance(v, dbus.Boolean):
        return bool(v)
    if isinstance(v, (dbus.Int32, dbus.UInt32, dbus.UInt64, dbus.Int64, dbus.Byte)):
        return int(v)
    if isinstance(v, dbus.String):
        return str(v)
    return v


def parse_connection(settings):
    """a{sa{sv}} -> {setting: {prop: python value}}, strict as NM_SETTING_PARSE_FLAGS_STRICT."""
    out = {}
    for name, props in settings.items():
        name = str(name)
        known = SETTINGS.get(name)
        if known is None:
            _conn_fail("InvalidSetting", name, None, "unknown setting name")
        out[name] = {}
        for prop, value in props.items():
            prop = str(prop)
            if prop not in known:
                _conn_fail("InvalidProperty", name, prop, "unknown property")
            if _sig(value) != known[prop]:
                _conn_fail("InvalidProperty", name, prop,
                           "can't set property of type '%s' from value of type '%s'"
                           % (known[prop], _sig(value)))
            out[name][prop] = _plain(value)
    # nm-setting-connection.c: autoconnect-priority's GParamSpec is -999..999; a value out of
    # it fails the parse (nm-setting.c out_error_param_spec_validation's words)
    prio = out.get("connection", {}).get("autoconnect-priority")
    if prio is not None and not -999 <= prio <= 999:
        _conn_fail("InvalidProperty", "connection", "autoconnect-priority",
                   "value of type 'i' is invalid or out of range for property "
                   "'autoconnect-priority'")
    return out


def to_dbus(conn, secrets=False):
    out = dbus.Dictionary({}, signature="sa{sv}")
    for name, props in conn.items():
        d = dbus.Dictionary({}, signature="sv")
        for prop, value in props.items():
            if (name, prop) in SECRETS and not secrets:
                continue
            t = SETTINGS[name][prop]
            if t == "ay":
                d[prop] = dbus.ByteArray(value, variant_level=1) if value else dbus.Array(
                    [], signature="y", variant_level=1)
            elif t == "as":
                d[prop] = dbus.Array(value, signature="s", variant_level=1)
            elif t == "b":
                d[prop] = dbus.Boolean(value, variant_level=1)
            elif t == "u":
                d[prop] = dbus.UInt32(value, variant_level=1)
            elif t == "i":
                d[prop] = dbus.Int32(value, variant_level=1)
            elif t == "t":
                d[prop] = dbus.UInt64(value, variant_level=1)
            else:
                d[prop] = dbus.String(value, variant_level=1)
        out[name] = d
    return out


def psk_valid(psk):
    """nm_utils_wpa_psk_valid(): 8..63 ASCII characters, or 64 hex digits."""
    if len(psk) == 64:
        return all(c in "0123456789abcdefABCDEF" for c in psk)
    return 8 <= len(psk) <= 63 and all(0x20 <= ord(c) < 0x7f for c in psk)


def _redact(v):
    return "<secret %d bytes>" % len(str(v).encode())


def _bus_daemon(bus, method, name):
    return bus.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus",
                             "org.freedesktop.DBus", method, "s", [name])


def _method(obj, iface, name, in_sig, out_sig, fn, asynchronous=False):
    """An NM method on one mock object, with its caller's unique name (dbusmock's AddMethod
    gives neither the sender nor a deferred reply)."""
    kw = {"in_signature": in_sig, "out_signature": out_sig, "sender_keyword": "sender"}
    if asynchronous:
        kw["async_callbacks"] = ("ok_cb", "err_cb")
    m = dbus.service.method(iface, **kw)(fn)
    m.__name__ = name
    obj.methods.setdefault(iface, {})[name] = (in_sig, out_sig, "", m)


ROOT = []  # the main object (not in dbusmock's objects while the template loads)


def _add_object(path, iface, props):
    ROOT[0].AddObject(path, iface, props, [])
    return mockobject.objects[path]


def _remove_object(path):
    ROOT[0].object_manager_emit_removed(path)
    ROOT[0].RemoveObject(path)


def _added(path):
    ROOT[0].object_manager_emit_added(path)


def _changed(obj, iface, props):
    for k, v in props.items():
        obj.props[iface][k] = v
    obj.EmitSignal(PROPS_IFACE, "PropertiesChanged", "sa{sv}as", [iface, props, []])


class State:
    """What the double knows beyond the objects' properties."""

    def __init__(self, mock):
        self.mock = mock
        self.bus = mock.connection
        self.n = 0
        self.calls = []
        self.agent_calls = []
        self.secrets_seen = []
        self.agents = []  # dicts: name, identifier, uid, pid, caps
        self.aps = {}     # ap path -> {ssid, security, secret, hidden, device}
        self.conns = {}   # settings path -> {"conn": dict, "unsaved": b, "volatile": b}
        self.actives = {}  # active path -> activation dict
        self.auth_retries = 3

    def next(self):
        self.n += 1
        return self.n

    def record(self, method, sender, args):
        self.calls.append((method, sender or "", repr(args)))


def st():
    return mockobject.objects[MANAGER_OBJ].nmstate


def load(mock, parameters):
    """parameters: {"WiFiDevices": ["wlan0", ...]}: devices NM has when it takes its name
    (as a NetworkManager starting on a machine with them), added before any call is served."""
    ROOT[:] = [mock]
    mock.AddObject(MANAGER_OBJ, NM, {
        "Version": "1.42.4",
        "Devices": dbus.Array([], signature="o"),
        "AllDevices": dbus.Array([], signature="o"),
        "ActiveConnections": dbus.Array([], signature="o"),
        "NetworkingEnabled": True, "WirelessEnabled": True, "WirelessHardwareEnabled": True,
        "State": dbus.UInt32(70), "Startup": False,
    }, [])
    manager = mockobject.objects[MANAGER_OBJ]
    manager.nmstate = State(manager)
    _method(manager, NM, "GetDevices", "", "ao", lambda self, sender=None: self.props[NM]["Devices"])
    _method(manager, NM, "GetAllDevices", "", "ao",
            lambda self, sender=None: self.props[NM]["AllDevices"])
    _method(manager, NM, "GetDeviceByIpIface", "s", "o", get_device_by_ip_iface)
    _method(manager, NM, "AddAndActivateConnection2", "a{sa{sv}}ooa{sv}", "ooa{sv}",
            add_and_activate2)
    _method(manager, NM, "ActivateConnection", "ooo", "o", activate_connection)
    _method(manager, NM, "DeactivateConnection", "o", "", deactivate_connection)
    for name, sig, fn in (("AddWiFiDevice", ("s", "o"), AddWiFiDevice),
                          ("AddAccessPoint", ("oaysysb", "o"), AddAccessPoint),
                          ("RemoveAccessPoint", ("o", ""), RemoveAccessPoint),
                          ("AddKnown", ("oayssbi", "o"), AddKnown),
                          ("SetAuthRetries", ("i", ""), SetAuthRetries),
                          ("GetCalls", ("", "a(sss)"), GetCalls),
                          ("GetAgentCalls", ("", "a(ssu)"), GetAgentCalls),
                          ("GetSecretsSeen", ("", "a(ss)"), GetSecretsSeen)):
        _method(manager, MOCK_IFACE, name, sig[0], sig[1], fn)

    settings = _add_object(SETTINGS_OBJ, SETTINGS_IFACE, {
        "Connections": dbus.Array([], signature="o"), "CanModify": True,
        "Hostname": "roam-test"})
    _method(settings, SETTINGS_IFACE, "ListConnections", "", "ao",
            lambda self, sender=None: self.props[SETTINGS_IFACE]["Connections"])
    _method(settings, SETTINGS_IFACE, "GetConnectionByUuid", "s", "o", get_connection_by_uuid)

    agents = _add_object(AGENT_MANAGER_OBJ, AGENT_MANAGER_IFACE, {})
    _method(agents, AGENT_MANAGER_IFACE, "Register", "s", "",
            lambda self, ident, sender=None: register_agent(ident, 0, sender))
    _method(agents, AGENT_MANAGER_IFACE, "RegisterWithCapabilities", "su", "",
            lambda self, ident, caps, sender=None: register_agent(ident, caps, sender))
    _method(agents, AGENT_MANAGER_IFACE, "Unregister", "", "", unregister_agent)

    def owner_changed(name, old, new):
        if old and not new:
            s = st()
            s.agents = [a for a in s.agents if a["name"] != name]
    mock.connection.add_signal_receiver(owner_changed, "NameOwnerChanged",
                                        "org.freedesktop.DBus", "org.freedesktop.DBus",
                                        "/org/freedesktop/DBus")
    for ifname in parameters.get("WiFiDevices", []):
        AddWiFiDevice(manager, str(ifname))


# ---- the mock's own methods ----------------------------------------------------------------
def AddWiFiDevice(self, ifname, sender=None):
    s = st()
    path = "%s/Devices/%d" % (MANAGER_OBJ, s.next())
    dev = _add_object(path, DEVICE_IFACE, {
        "Interface": ifname, "IpInterface": ifname, "DeviceType": dbus.UInt32(2),
        "Driver": "dbusmock", "Managed": True, "Autoconnect": True,
        "State": dbus.UInt32(DISCONNECTED),
        "StateReason": dbus.Struct((dbus.UInt32(DISCONNECTED), dbus.UInt32(0)), signature="uu"),
        "ActiveConnection": dbus.ObjectPath("/"),
        "AvailableConnections": dbus.Array([], signature="o")})
    dev.AddProperties(WIRELESS_IFACE, {
        "HwAddress": "02:72:6d:00:00:20", "PermHwAddress": "02:72:6d:00:00:20",
        "Mode": dbus.UInt32(2), "Bitrate": dbus.UInt32(0),
        "AccessPoints": dbus.Array([], signature="o"), "ActiveAccessPoint": dbus.ObjectPath("/"),
        "WirelessCapabilities": dbus.UInt32(0x1ff), "LastScan": dbus.Int64(-1)})
    _method(dev, WIRELESS_IFACE, "RequestScan", "a{sv}", "", request_scan)
    _method(dev, WIRELESS_IFACE, "GetAccessPoints", "", "ao",
            lambda obj, sender=None: [p for p in obj.props[WIRELESS_IFACE]["AccessPoints"]
                                      if not s.aps[str(p)]["hidden"]])
    _method(dev, WIRELESS_IFACE, "GetAllAccessPoints", "", "ao",
            lambda obj, sender=None: obj.props[WIRELESS_IFACE]["AccessPoints"])
    dev.path_kind = "device"
    _added(path)
    for prop in ("Devices", "AllDevices"):
        self.props[NM][prop] = dbus.Array(list(self.props[NM][prop]) + [dbus.ObjectPath(path)],
                                          signature="o")
    self.EmitSignal(NM, "DeviceAdded", "o", [path])
    return path


def AddAccessPoint(self, device, ssid, security, strength, secret, hidden, sender=None):
    s = st()
    if str(security) not in SECURITY:
        _fail(MOCK_IFACE + ".Error", "security must be one of " + ", ".join(SECURITY))
    dev = mockobject.objects[str(device)]
    flags, wpa, rsn = SECURITY[str(security)]
    path = "%s/AccessPoint/%d" % (MANAGER_OBJ, s.next())
    ssid = bytes(ssid)
    n = s.n
    _add_object(path, AP_IFACE, {
        "Ssid": dbus.ByteArray(b"" if hidden else ssid),
        "Flags": dbus.UInt32(flags), "WpaFlags": dbus.UInt32(wpa), "RsnFlags": dbus.UInt32(rsn),
        "Frequency": dbus.UInt32(2437), "HwAddress": "02:72:6d:00:%02x:02" % (n & 0xff),
        "Mode": dbus.UInt32(2), "MaxBitrate": dbus.UInt32(54000), "Bandwidth": dbus.UInt32(20),
        "Strength": dbus.Byte(int(strength)), "LastSeen": dbus.Int32(1)})
    _added(path)
    s.aps[path] = {"ssid": ssid, "security": str(security), "secret": str(secret),
                   "hidden": bool(hidden), "device": str(device)}
    aps = list(dev.props[WIRELESS_IFACE]["AccessPoints"]) + [dbus.ObjectPath(path)]
    _changed(dev, WIRELESS_IFACE, {"AccessPoints": dbus.Array(aps, signature="o")})
    dev.EmitSignal(WIRELESS_IFACE, "AccessPointAdded", "o", [path])
    return path


def RemoveAccessPoint(self, ap, sender=None):
    s = st()
    info = s.aps.pop(str(ap))
    dev = mockobject.objects[info["device"]]
    aps = [p for p in dev.props[WIRELESS_IFACE]["AccessPoints"] if str(p) != str(ap)]
    _changed(dev, WIRELESS_IFACE, {"AccessPoints": dbus.Array(aps, signature="o")})
    dev.EmitSignal(WIRELESS_IFACE, "AccessPointRemoved", "o", [ap])
    _remove_object(str(ap))


def AddKnown(self, device, ssid, key_mgmt, psk, autoconnect, priority, sender=None):
    name = bytes(ssid).decode("utf-8", "replace")
    conn = {"connection": {"id": name, "uuid": "00000000-0000-4000-8000-%012d" % (st().n + 1),
                           "type": "802-11-wireless", "autoconnect": bool(autoconnect),
                           "autoconnect-priority": int(priority)},
            "802-11-wireless": {"ssid": bytes(ssid), "mode": "infrastructure"}}
    if key_mgmt:
        conn["802-11-wireless-security"] = {"key-mgmt": str(key_mgmt)}
        if psk:
            conn["802-11-wireless-security"]["psk"] = str(psk)
    return add_connection(conn, unsaved=False, volatile=False)


def SetAuthRetries(self, n, sender=None):
    st().auth_retries = int(n)


def GetCalls(self, sender=None):
    return dbus.Array([dbus.Struct(c, signature="sss") for c in st().calls], signature="(sss)")


def GetAgentCalls(self, sender=None):
    return dbus.Array([dbus.Struct(c, signature="ssu") for c in st().agent_calls],
                      signature="(ssu)")


def GetSecretsSeen(self, sender=None):
    return dbus.Array([dbus.Struct(c, signature="ss") for c in st().secrets_seen],
                      signature="(ss)")


# ---- the manager ---------------------------------------------------------------------------
def get_device_by_ip_iface(self, iface, sender=None):
    st().record("GetDeviceByIpIface", sender, [str(iface)])
    for path in self.props[NM]["Devices"]:
        if mockobject.objects[str(path)].props[DEVICE_IFACE]["Interface"] == iface:
            return path
    _fail(NM + ".UnknownDevice", "No device found for the requested iface.")


def _device(path):
    obj = mockobject.objects.get(str(path))
    if obj is None or getattr(obj, "path_kind", None) != "device":
        _fail(NM + ".UnknownDevice", "Device not found")
    return obj


def _complete(conn, dev, ap_path):
    """nm-device-wifi.c complete_connection() and nm_wifi_utils_complete_connection()."""
    s = st()
    wifi = conn.get("802-11-wireless")
    wsec = conn.get("802-11-wireless-security")
    dot1x = conn.get("802-1x")
    if ap_path is None:
        if wifi is None:
            _fail(DEVICE_IFACE + ".InvalidConnection",
                  "A 'wireless' setting is required if no AP path was given.")
        if not wifi.get("ssid"):
            _fail(DEVICE_IFACE + ".InvalidConnection",
                  "A 'wireless' setting with a valid SSID is required if no AP path was given.")
        ap = None
        for path, info in s.aps.items():  # a compatible AP in the scan list (not hidden ones)
            if info["device"] == dev.path and not info["hidden"] and info["ssid"] == wifi["ssid"]:
                ap = path
        if ap is None:
            wifi["hidden"] = True
    else:
        info = s.aps.get(ap_path)
        if info is None or info["device"] != dev.path:
            _fail(DEVICE_IFACE + ".SpecificObjectNotFound",
                  "The access point %s was not in the scan list." % ap_path)
        ap = ap_path
        wifi = conn.setdefault("802-11-wireless", {})
        if info["hidden"] and not wifi.get("ssid"):
            _fail(DEVICE_IFACE + ".InvalidConnection",
                  "A 'wireless' setting with a valid SSID is required for hidden access points.")
        wifi.setdefault("ssid", info["ssid"])
    key_mgmt = wsec.get("key-mgmt") if wsec else None
    if key_mgmt is not None and key_mgmt not in KEY_MGMT:
        _conn_fail("InvalidProperty", "802-11-wireless-security", "key-mgmt",
                   "'%s' is not a valid value for the property" % key_mgmt)
    if ap is not None:
        flags, _wpa, rsn = SECURITY[s.aps[ap]["security"]]
        if not flags and not rsn:
            if wsec or dot1x:
                _conn_fail("InvalidSetting", "802-11-wireless-security" if wsec else "802-1x",
                           None, "Access point is unencrypted but setting specifies security")
        elif rsn & KM_OWE and not flags:
            if key_mgmt not in (None, "owe"):
                _conn_fail("InvalidProperty", "802-11-wireless-security", "key-mgmt",
                           "connection does not match access point")
            conn.setdefault("802-11-wireless-security", {})["key-mgmt"] = "owe"
        else:
            if key_mgmt == "wpa-psk" and not rsn & KM_PSK:
                _conn_fail("InvalidProperty", "802-11-wireless-security", "key-mgmt",
                           "Access point does not support PSK but setting requires it")
            if key_mgmt == "wpa-eap" and not rsn & KM_8021X:
                _conn_fail("InvalidProperty", "802-11-wireless-security", "key-mgmt",
                           "Access point does not support 802.1x but setting requires it")
            if key_mgmt == "sae" and not rsn & KM_SAE:
                _conn_fail("InvalidProperty", "802-11-wireless-security", "key-mgmt",
                           "connection does not match access point")
            if key_mgmt is None:
                wsec = conn.setdefault("802-11-wireless-security", {})
                if rsn & KM_8021X:
                    if dot1x is None:
                        _conn_fail("MissingSetting", "802-1x", None,
                                   "Enterprise connections require an 802-1x setting")
                    wsec["key-mgmt"] = "wpa-eap"
                elif rsn & KM_PSK:
                    wsec["key-mgmt"] = "wpa-psk"
                else:
                    wsec["key-mgmt"] = "sae"
    elif wsec and key_mgmt is None:
        _conn_fail("MissingProperty", "802-11-wireless-security", "key-mgmt",
                   "property is missing")
    wsec = conn.get("802-11-wireless-security")
    if wsec and wsec.get("key-mgmt") == "wpa-eap" and dot1x is None:
        _conn_fail("MissingSetting", "802-1x", None, "WPA-EAP authentication requires an "
                   "802.1x setting")
    if dot1x is not None and (wsec is None or wsec.get("key-mgmt") not in ("wpa-eap",
                                                                             "ieee8021x")):
        _conn_fail("InvalidSetting", "802-11-wireless-security", "key-mgmt",
                   "802.1x setting requires 'wpa-eap' key management")
    if wsec and wsec.get("psk") is not None and wsec.get("key-mgmt") != "sae" \
            and not psk_valid(wsec["psk"]):
        _conn_fail("InvalidProperty", "802-11-wireless-security", "psk", "property is invalid")
    if dot1x is not None:
        eap = dot1x.get("eap") or []
        if not eap:
            _conn_fail("MissingProperty", "802-1x", "eap", "property is missing")
        for m in eap:
            if m not in ("leap", "md5", "tls", "peap", "ttls", "sim", "fast", "pwd"):
                _conn_fail("InvalidProperty", "802-1x", "eap",
                           "'%s' is not a valid value for the property" % m)
        if ("peap" in eap or "ttls" in eap) and not dot1x.get("identity"):
            _conn_fail("MissingProperty", "802-1x", "identity", "property is missing")
        # nm-setting-8021x.c verify(): valid_phase2_auth[]
        p2 = dot1x.get("phase2-auth")
        if p2 is not None and p2 not in ("pap", "chap", "mschap", "mschapv2", "gtc", "otp",
                                         "md5", "tls"):
            _conn_fail("InvalidProperty", "802-1x", "phase2-auth",
                       "'%s' is not a valid value for the property" % p2)
    c = conn.setdefault("connection", {})
    name = wifi["ssid"].decode("utf-8", "replace")
    c.setdefault("id", name)
    c.setdefault("uuid", "00000000-0000-4000-8000-%012d" % s.next())
    c.setdefault("type", "802-11-wireless")
    if c["type"] != "802-11-wireless":
        _conn_fail("InvalidProperty", "connection", "type",
                   "connection type '%s' is not valid for a Wi-Fi device" % c["type"])
    return ap


def add_connection(conn, unsaved, volatile):
    s = st()
    path = "%s/%d" % (SETTINGS_OBJ, s.next())
    obj = _add_object(path, CONNECTION_IFACE, {
        "Unsaved": dbus.Boolean(unsaved), "Flags": dbus.UInt32(0x1 if unsaved else 0),
        "Filename": "" if unsaved else
        "/etc/NetworkManager/system-connections/%s.nmconnection" % conn["connection"]["id"]})
    _method(obj, CONNECTION_IFACE, "GetSettings", "", "a{sa{sv}}", get_settings)
    _method(obj, CONNECTION_IFACE, "GetSecrets", "s", "a{sa{sv}}", get_secrets)
    _method(obj, CONNECTION_IFACE, "Update2", "a{sa{sv}}ua{sv}", "a{sv}", update2)
    _method(obj, CONNECTION_IFACE, "Delete", "", "", delete)
    s.conns[path] = {"conn": conn, "unsaved": unsaved, "volatile": volatile}
    _added(path)
    settings = mockobject.objects[SETTINGS_OBJ]
    conns = list(settings.props[SETTINGS_IFACE]["Connections"]) + [dbus.ObjectPath(path)]
    _changed(settings, SETTINGS_IFACE, {"Connections": dbus.Array(conns, signature="o")})
    settings.EmitSignal(SETTINGS_IFACE, "NewConnection", "o", [path])
    return path


def remove_connection(path):
    s = st()
    if s.conns.pop(path, None) is None:
        return
    obj = mockobject.objects[path]
    obj.EmitSignal(CONNECTION_IFACE, "Removed", "", [])
    settings = mockobject.objects[SETTINGS_OBJ]
    conns = [p for p in settings.props[SETTINGS_IFACE]["Connections"] if str(p) != path]
    _changed(settings, SETTINGS_IFACE, {"Connections": dbus.Array(conns, signature="o")})
    settings.EmitSignal(SETTINGS_IFACE, "ConnectionRemoved", "o", [path])
    _remove_object(path)


def _caller(self, sender):
    uid = int(_bus_daemon(self.connection, "GetConnectionUnixUser", sender))
    pid = int(_bus_daemon(self.connection, "GetConnectionUnixProcessID", sender))
    return uid, pid


def add_and_activate2(self, settings, device, specific, options, sender=None):
    s = st()
    parsed = None
    persist, bind = "disk", "none"
    for k, v in options.items():
        if k == "persist" and isinstance(v, dbus.String):
            if v not in ("volatile", "memory", "disk"):
                _fail(NM + ".InvalidArguments",
                      'Option "persist" must be one of "volatile", "memory" or "disk"')
            persist = str(v)
        elif k == "bind-activation" and isinstance(v, dbus.String):
            if v not in ("dbus-client", "none"):
                _fail(NM + ".InvalidArguments",
                      'Option "bind-activation" must be one of "dbus-client" or "none"')
            bind = str(v)
        else:
            _fail(NM + ".InvalidArguments", "Unknown extra option passed")
    parsed = parse_connection(settings)
    s.record("AddAndActivateConnection2", sender, [_redacted_conn(parsed), str(device),
                                                   str(specific), dict(persist=persist,
                                                                       bind=bind)])
    if str(device) == "/":
        _fail(NM + ".UnknownDevice", "No suitable device found for this connection.")
    dev = _device(device)
    ap = _complete(parsed, dev, None if str(specific) == "/" else str(specific))
    conn_path = add_connection(parsed, unsaved=persist != "disk", volatile=persist == "volatile")
    uid, pid = _caller(self, sender)
    active = _start_activation(conn_path, dev, ap, uid, pid, sender)
    return (dbus.ObjectPath(conn_path), dbus.ObjectPath(active),
            dbus.Dictionary({}, signature="sv"))


def activate_connection(self, conn_path, device, specific, sender=None):
    s = st()
    s.record("ActivateConnection", sender, [str(conn_path), str(device), str(specific)])
    if str(conn_path) not in s.conns:
        _fail(NM + ".UnknownConnection", "Connection '%s' is not available" % conn_path)
    dev = _device(device)
    conn = s.conns[str(conn_path)]["conn"]
    ap = None
    if str(specific) != "/":
        info = s.aps.get(str(specific))
        if info is None or info["device"] != dev.path:
            _fail(NM + ".UnknownConnection",
                  "Specific object %s is not an access point of the device" % specific)
        ap = str(specific)
    uid, pid = _caller(self, sender)
    return dbus.ObjectPath(_start_activation(str(conn_path), dev, ap, uid, pid, sender,
                                             conn=conn))


def deactivate_connection(self, active, sender=None):
    s = st()
    s.record("DeactivateConnection", sender, [str(active)])
    act = s.actives.get(str(active))
    if act is None or act["state"] >= AC_DEACTIVATED:
        _fail(NM + ".ConnectionNotActive", "The connection was not active.")
    _finish(act, DISCONNECTED, R_USER_REQUESTED, AC_R_USER_DISCONNECTED)


def _redacted_conn(conn):
    out = {}
    for name, props in conn.items():
        out[name] = {k: (_redact(v) if (name, k) in SECRETS else
                         (v.decode("utf-8", "replace") if isinstance(v, bytes) else v))
                     for k, v in props.items()}
    return out


# ---- activation ----------------------------------------------------------------------------
def _set_device_state(dev, new, reason):
    old = int(dev.props[DEVICE_IFACE]["State"])
    _changed(dev, DEVICE_IFACE, {
        "State": dbus.UInt32(new),
        "StateReason": dbus.Struct((dbus.UInt32(new), dbus.UInt32(reason)), signature="uu")})
    dev.EmitSignal(DEVICE_IFACE, "StateChanged", "uuu", [dbus.UInt32(new), dbus.UInt32(old),
                                                         dbus.UInt32(reason)])


def _set_active_state(act, state, reason):
    act["state"] = state
    obj = mockobject.objects[act["path"]]
    _changed(obj, ACTIVE_IFACE, {"State": dbus.UInt32(state)})
    obj.EmitSignal(ACTIVE_IFACE, "StateChanged", "uu", [dbus.UInt32(state),
                                                        dbus.UInt32(reason)])


def _start_activation(conn_path, dev, ap, uid, pid, sender, conn=None):
    s = st()
    # one activation per device: the old one goes
    for other in list(s.actives.values()):
        if other["device"] is dev and other["state"] < AC_DEACTIVATED:
            _finish(other, DISCONNECTED, R_NONE, AC_R_DEVICE_DISCONNECTED, quiet_device=True)
    conn = s.conns[conn_path]["conn"]
    path = "%s/ActiveConnection/%d" % (MANAGER_OBJ, s.next())
    _add_object(path, ACTIVE_IFACE, {
        "Connection": dbus.ObjectPath(conn_path), "SpecificObject": dbus.ObjectPath(ap or "/"),
        "Id": conn["connection"]["id"], "Uuid": conn["connection"]["uuid"],
        "Type": "802-11-wireless", "Devices": dbus.Array([dev.path], signature="o"),
        "State": dbus.UInt32(AC_ACTIVATING), "StateFlags": dbus.UInt32(0),
        "Default": False, "Vpn": False})
    _added(path)
    act = {"path": path, "conn": conn_path, "device": dev, "ap": ap, "uid": uid, "pid": pid,
           "sender": sender, "state": AC_ACTIVATING, "retries": s.auth_retries,
           "agents": [], "pending": None}
    s.actives[path] = act
    mgr = mockobject.objects[MANAGER_OBJ]
    _changed(mgr, NM, {"ActiveConnections": dbus.Array(
        list(mgr.props[NM]["ActiveConnections"]) + [dbus.ObjectPath(path)], signature="o")})
    _changed(dev, DEVICE_IFACE, {"ActiveConnection": dbus.ObjectPath(path)})
    # The reply goes out before the device moves, as NM's does (stages run from idle).
    from gi.repository import GLib
    GLib.idle_add(lambda: (_stage(act), False)[1])
    return path


def _target_ap(act):
    s = st()
    if act["ap"] is not None:
        return act["ap"]
    ssid = s.conns[act["conn"]]["conn"]["802-11-wireless"]["ssid"]
    for path, info in s.aps.items():
        if info["device"] == act["device"].path and info["ssid"] == ssid:
            return path
    return None


def _secret_setting(conn):
    km = conn.get("802-11-wireless-security", {}).get("key-mgmt")
    if km in ("wpa-psk", "sae"):
        return "802-11-wireless-security", "psk"
    if km == "wpa-eap":
        return "802-1x", "password"
    return None, None


def _stage(act):
    s = st()
    if act["state"] >= AC_DEACTIVATED:
        return
    dev = act["device"]
    _set_device_state(dev, PREPARE, R_NONE)
    _set_device_state(dev, CONFIG, R_NONE)
    ap = _target_ap(act)
    if ap is None:
        _finish(act, FAILED, R_SSID_NOT_FOUND, AC_R_DEVICE_DISCONNECTED)
        return
    act["ap"] = ap
    conn = s.conns[act["conn"]]["conn"]
    setting, key = _secret_setting(conn)
    if setting is None:
        _connected(act)
        return
    if conn.get(setting, {}).get(key) is None:
        _set_device_state(dev, NEED_AUTH, R_NONE)
        _ask_agents(act, setting, ALLOW_INTERACTION)
        return
    _try_secret(act)


def _try_secret(act):
    s = st()
    conn = s.conns[act["conn"]]["conn"]
    info = s.aps[act["ap"]]
    setting, key = _secret_setting(conn)
    given = conn[setting][key]
    if setting == "802-1x":
        ok = "%s:%s" % (conn["802-1x"].get("identity", ""), given) == info["secret"]
    else:
        ok = given == info["secret"]
    if ok:
        _connected(act)
        return
    # wrong: new secrets are asked for, and any saved ones are cleared (NM clears them)
    act["retries"] -= 1
    del conn[setting][key]
    if act["retries"] < 0:
        _finish(act, FAILED, R_NO_SECRETS, AC_R_DEVICE_DISCONNECTED)
        return
    km = conn["802-11-wireless-security"]["key-mgmt"]
    reason = R_SUPPLICANT_DISCONNECT if km == "wpa-psk" else R_NONE
    _set_device_state(act["device"], NEED_AUTH, reason)
    _ask_agents(act, setting, ALLOW_INTERACTION | REQUEST_NEW)


def _ask_agents(act, setting, flags):
    s = st()
    # nm-agent-manager.c: only agents of the subject's uid; the requesting process's own
    # agent first, then in registration order.
    agents = [a for a in s.agents if a["uid"] == act["uid"]]
    agents.sort(key=lambda a: 0 if a["pid"] == act["pid"] else 1)
    act["agents"] = [a["name"] for a in agents]
    _next_agent(act, setting, flags)


def _next_agent(act, setting, flags):
    s = st()
    if act["state"] >= AC_DEACTIVATED:
        return
    if not act["agents"]:
        _finish(act, FAILED, R_NO_SECRETS, AC_R_DEVICE_DISCONNECTED)
        return
    name = act["agents"].pop(0)
    if not any(a["name"] == name for a in s.agents):
        _next_agent(act, setting, flags)
        return
    conn = s.conns[act["conn"]]["conn"]
    s.agent_calls.append((name, setting, flags))
    act["pending"] = (name, setting)

    def reply(secrets):
        act["pending"] = None
        if act["state"] >= AC_DEACTIVATED:
            return
        try:
            got = parse_connection(secrets)
        except dbus.exceptions.DBusException:
            _next_agent(act, setting, flags)
            return
        sset, skey = _secret_setting(conn)
        value = got.get(sset, {}).get(skey)
        if value is None:
            _next_agent(act, setting, flags)
            return
        s.secrets_seen.append(("%s.%s" % (sset, skey), str(value)))
        conn[sset][skey] = value
        if sset == "802-1x" and "identity" in got.get("802-1x", {}):
            conn["802-1x"]["identity"] = got["802-1x"]["identity"]
        _set_device_state(act["device"], CONFIG, R_NONE)
        _try_secret(act)

    def error(e):
        act["pending"] = None
        if e.get_dbus_name() == AGENT_IFACE + ".UserCanceled":
            _finish(act, FAILED, R_NO_SECRETS, AC_R_DEVICE_DISCONNECTED)
        else:
            _next_agent(act, setting, flags)

    s.bus.call_async(name, AGENT_PATH, AGENT_IFACE, "GetSecrets", "a{sa{sv}}osasu",
                     (to_dbus(conn), dbus.ObjectPath(act["conn"]), setting,
                      dbus.Array([], signature="s"), dbus.UInt32(flags)),
                     reply, error, timeout=120)


def _connected(act):
    s = st()
    dev = act["device"]
    _set_device_state(dev, IP_CONFIG, R_NONE)
    _set_device_state(dev, ACTIVATED, R_NONE)
    _changed(dev, WIRELESS_IFACE, {"ActiveAccessPoint": dbus.ObjectPath(act["ap"])})
    conn = s.conns[act["conn"]]["conn"]
    conn["connection"]["timestamp"] = 1
    # nm-device-wifi.c try_fill_ssid_for_hidden_ap(): a hidden AP (no Ssid) whose BSSID a
    # connection has seen gets that connection's SSID; the join just recorded it
    ap = mockobject.objects.get(str(act["ap"])) if act["ap"] else None
    if ap is not None and not bytes(ap.props[AP_IFACE]["Ssid"]):
        _changed(ap, AP_IFACE, {"Ssid": dbus.ByteArray(conn["802-11-wireless"]["ssid"])})
    _set_active_state(act, AC_ACTIVATED, R_NONE)


def _finish(act, dev_state, dev_reason, ac_reason, quiet_device=False):
    s = st()
    dev = act["device"]
    if act["pending"] is not None:
        name, setting = act["pending"]
        s.bus.call_async(name, AGENT_PATH, AGENT_IFACE, "CancelGetSecrets", "os",
                         (dbus.ObjectPath(act["conn"]), setting), lambda *a: None,
                         lambda *a: None)
        act["pending"] = None
    if act["state"] == AC_ACTIVATED:
        _set_active_state(act, AC_DEACTIVATING, ac_reason)
    if not quiet_device:
        _set_device_state(dev, dev_state, dev_reason)
        if dev_state == FAILED:
            _set_device_state(dev, DISCONNECTED, dev_reason)
    _changed(dev, WIRELESS_IFACE, {"ActiveAccessPoint": dbus.ObjectPath("/")})
    _changed(dev, DEVICE_IFACE, {"ActiveConnection": dbus.ObjectPath("/")})
    _set_active_state(act, AC_DEACTIVATED, ac_reason)
    mgr = mockobject.objects[MANAGER_OBJ]
    _changed(mgr, NM, {"ActiveConnections": dbus.Array(
        [p for p in mgr.props[NM]["ActiveConnections"] if str(p) != act["path"]],
        signature="o")})
    s.actives.pop(act["path"], None)
    _remove_object(act["path"])
    info = s.conns.get(act["conn"])
    if info is not None and info["volatile"]:
        remove_connection(act["conn"])


# ---- devices -------------------------------------------------------------------------------
def request_scan(self, options, sender=None):
    s = st()
    s.record("RequestScan", sender, [{str(k): _plain(v) for k, v in options.items()}])
    if "ssids" in options:
        v = options["ssids"]
        if not (isinstance(v, dbus.Array) and v.signature in ("ay",)):
            _fail(DEVICE_IFACE + ".InvalidArgument", "Invalid 'ssid' scan option")
        if len(v) > 32:
            _fail(DEVICE_IFACE + ".InvalidArgument", "too many SSIDs requested to scan")
        for i, ssid in enumerate(v):
            if len(ssid) > 32:
                _fail(DEVICE_IFACE + ".InvalidArgument",
                      "SSID at index %d more than 32 bytes" % i)
    if int(self.props[DEVICE_IFACE]["State"]) < DISCONNECTED:
        _fail(DEVICE_IFACE + ".NotAllowed", "Scanning not allowed while unavailable")
    now = int(open("/proc/uptime").read().split()[0].replace(".", "")) * 10
    _changed(self, WIRELESS_IFACE, {"LastScan": dbus.Int64(now)})


# ---- settings ------------------------------------------------------------------------------
def get_connection_by_uuid(self, uuid, sender=None):
    for path, info in st().conns.items():
        if info["conn"]["connection"]["uuid"] == uuid:
            return dbus.ObjectPath(path)
    _fail(SETTINGS_IFACE + ".InvalidConnection", "No connection with the UUID was found.")


def get_settings(self, sender=None):
    s = st()
    s.record("GetSettings", sender, [self.path])
    return to_dbus(s.conns[self.path]["conn"])


def get_secrets(self, setting, sender=None):
    s = st()
    s.record("GetSecrets", sender, [self.path, str(setting)])
    uid, _pid = _caller(self, sender)
    if uid != 0:  # settings.modify.system is auth_admin_keep: no agent here answers it
        _fail(SETTINGS_IFACE + ".PermissionDenied", "Insufficient privileges.")
    conn = s.conns[self.path]["conn"]
    if setting and setting not in conn:
        _fail(SETTINGS_IFACE + ".InvalidSetting", "Connection does not have any secrets")
    out = dbus.Dictionary({}, signature="sa{sv}")
    for name, d in to_dbus(conn, secrets=True).items():
        if setting and name != setting:
            continue
        sec = dbus.Dictionary({k: v for k, v in d.items() if (name, k) in SECRETS},
                              signature="sv")
        if sec:
            out[name] = sec
    return out


def update2(self, settings, flags, args, sender=None):
    s = st()
    flags = int(flags)
    parsed = parse_connection(settings) if len(settings) else None
    s.record("Update2", sender, [self.path, _redacted_conn(parsed) if parsed else {}, flags,
                                 {str(k): _plain(v) for k, v in args.items()}])
    if flags & ~(PERSIST_FLAGS | UPDATE2_VOLATILE | UPDATE2_BLOCK_AUTOCONNECT
                 | UPDATE2_NO_REAPPLY):
        _fail(SETTINGS_IFACE + ".InvalidArguments", "Unknown flags")
    persist = flags & PERSIST_FLAGS
    if (persist and persist & (persist - 1)) or (flags & UPDATE2_VOLATILE
                                                 and not flags & IN_MEMORY_FLAGS):
        _fail(SETTINGS_IFACE + ".InvalidArguments", "Conflicting flags")
    for k in args:
        if k not in ("plugin", "version-id"):
            _fail(SETTINGS_IFACE + ".InvalidArguments", "Unsupported argument '%s'" % k)
    info = s.conns[self.path]
    if parsed is not None:
        c = parsed.get("connection", {})
        for prop in ("id", "uuid", "type"):
            if not c.get(prop):
                _conn_fail("MissingProperty", "connection", prop, "property is missing")
        if c["uuid"] != info["conn"]["connection"]["uuid"]:
            _conn_fail("InvalidProperty", "connection", "uuid",
                       "the UUID of a connection cannot change")
        for setting, key in SECRETS:  # secrets not sent are kept
            old = info["conn"].get(setting, {}).get(key)
            if old is not None and setting in parsed and key not in parsed[setting]:
                parsed[setting][key] = old
        info["conn"].clear()
        info["conn"].update(parsed)
    if persist & 0x1:
        info["unsaved"] = False
    elif persist:
        info["unsaved"] = True
    _changed(self, CONNECTION_IFACE, {"Unsaved": dbus.Boolean(info["unsaved"])})
    self.EmitSignal(CONNECTION_IFACE, "Updated", "", [])
    return dbus.Dictionary({}, signature="sv")


def delete(self, sender=None):
    s = st()
    s.record("Delete", sender, [self.path])
    for act in list(s.actives.values()):
        if act["conn"] == self.path and act["state"] < AC_DEACTIVATED:
            _finish(act, DISCONNECTED, 38, AC_R_DEVICE_DISCONNECTED)  # CONNECTION_REMOVED
    remove_connection(self.path)


# ---- agents --------------------------------------------------------------------------------
def _validate_identifier(ident):
    err = AGENT_MANAGER_IFACE + ".InvalidIdentifier"
    if not 3 <= len(ident) <= 255:
        _fail(err, "Identifier length not between 3 and 255 characters (inclusive)")
    if ident[0] == "." or ident[-1] == ".":
        _fail(err, "Identifier must not start or end with '.'")
    for c in ident:
        if not (c.isascii() and c.isalnum()) and c not in "_-.":
            shown = c if c.isprintable() and c.isascii() else "\\x%02x" % (ord(c) & 0xff)
            _fail(err, "Identifier contains invalid character '%s'" % shown)


def register_agent(ident, caps, sender):
    s = st()
    s.record("RegisterWithCapabilities", sender, [str(ident), int(caps)])
    _validate_identifier(str(ident))
    mgr = mockobject.objects[MANAGER_OBJ]
    uid, pid = _caller(mgr, sender)
    if any(a["identifier"] == ident and a["uid"] == uid for a in s.agents):
        _fail(AGENT_MANAGER_IFACE + ".PermissionDenied",
              "An agent with this ID is already registered for this user.")
    s.agents.append({"name": str(sender), "identifier": str(ident), "uid": uid, "pid": pid,
                     "caps": int(caps)})


def unregister_agent(self, sender=None):
    s = st()
    s.record("Unregister", sender, [])
    if not any(a["name"] == sender for a in s.agents):
        _fail(AGENT_MANAGER_IFACE + ".NotRegistered", "Caller is not registered as an Agent")
    s.agents = [a for a in s.agents if a["name"] != sender]


# dbusmock's AddTemplate() only takes decorated functions; the template has none of its own.
_ = (dbusmock, dbus.service)

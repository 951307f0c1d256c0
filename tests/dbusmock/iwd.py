# SPDX-License-Identifier: LGPL-2.1-or-later
"""A python3-dbusmock template of iwd (net.connman.iwd), as strict as iwd 2.3..3.10 where
roamd talks to it (issue 43). python3-dbusmock has no iwd template; this one is written from
iwd's doc/*-api.txt and its sources (read at 8ba968d9: src/station.c, src/network.c,
src/agent.c, src/knownnetworks.c, src/dbus.c for the error names and texts).

Objects (an ObjectManager at /, as iwd's): /net/connman/iwd (AgentManager), an adapter
/net/connman/iwd/0, a device /net/connman/iwd/0/N (Device, Station), its networks
/net/connman/iwd/0/N/<hex SSID>_<type> (Network) and the known networks
/net/connman/iwd/<hex SSID>_<type> (KnownNetwork).

Refused as iwd refuses them:
- Station.Scan while a scan or a connection runs: InProgress "Operation already in progress".
- Network.Connect while the agent is being asked for it: InProgress; a psk network iwd has no
  passphrase for and no agent: NoAgent "No Agent registered"; an agent that answers with an
  error (or not within 120 s; iwd then sends Cancel("timed-out")): Aborted; a passphrase that is
  not 8..63 characters of 32..126: InvalidFormat; a wrong passphrase (the 4-way handshake
  fails): Failed "Operation failed", and the next Connect asks the agent again
  (network_connect_failed() sets ask_passphrase); an 8021x network without a provisioning file:
  NotConfigured.
- Station.ConnectHiddenNetwork: an SSID over 32 bytes: InvalidArguments; a known psk/open
  network of that name: AlreadyProvisioned; a visible network of that name: NotHidden; no
  hidden access point of that name after the scan: NotFound; one pending already: InProgress.
- Station.Disconnect while not connected: NotConnected.
- AgentManager.RegisterAgent a second time from one connection: AlreadyExists;
  UnregisterAgent from a connection without one: NotFound. An agent goes when its connection
  goes. RequestPassphrase goes to the agent of Connect()'s caller, else the first one
  (agent.c get_agent()).
- Properties.Set of anything but KnownNetwork.AutoConnect (a boolean, else InvalidArguments):
  org.freedesktop.DBus.Error.PropertyReadOnly.
A successful connection makes the network known (iwd saves a profile only on success);
KnownNetwork.Forget disconnects it and drops it. 802.1X networks are read from provisioning
files NAME.8021x in the template's StateDirectory parameter (as /var/lib/iwd; NAME is the SSID
when it is alphanumerics, ' ', '_' and '-', else '=' and its hex), watched as iwd watches it (a
file that appears makes a KnownNetwork, one that goes drops it). Connect checks the file as
eap_check_settings() does (src/eap.c, eap-peap.c, eap-ttls.c, eap-tls-common.c): no file, no
EAP-Method, no EAP-<M>-Phase2-Method, a CACert that is no PEM certificate, no EAP-Identity:
NotConfigured; a method other than PEAP and TTLS (case-insensitive), or a phase 2 other than
MSCHAPV2/GTC/MD5 in any case (TTLS also Tunneled-PAP/-CHAP/-MSCHAP/-MSCHAPv2, exactly so:
eap-ttls.c strcmp()s those, then looks the name up as an EAP method; eap-peap.c only as an EAP
method, so Tunneled-PAP inside PEAP is "EAP method unsupported"): NotSupported. (iwd also
takes its other EAP methods inside, TLS, PWD, SIM, AKA..., with settings of their own the
double does not model: it refuses them NotSupported; roamd never writes them.)
A missing phase-2 password is asked with RequestUserPassword(network, user), a missing user
with RequestUserNameAndPassword(network); a wrong one fails the handshake: Failed, and the
next Connect asks again (the file keeps no password).

Test methods (org.freedesktop.DBus.Mock on /):
  AddStation(s ifname) -> device path (station mode, disconnected);
  AddNetwork(o device, s ssid, s type, i signal (100 * dBm), s secret, b hidden) -> path (type
      open, psk or 8021x; secret: the passphrase, or "identity:password" for 8021x; a hidden
      one has no Network object until ConnectHiddenNetwork finds it);
  AddKnownNetwork(s ssid, s type, b hidden, b autoconnect, s passphrase) -> path (a profile
      iwd had already; passphrase "" for none saved);
  GetCalls() -> a(sss), GetAgentCalls() -> a(sss) (agent's bus name, method, network path),
  GetSecretsSeen() -> a(ss) (network name, what the agent answered),
  GetProfilesRead() -> a(sus) (each provisioning file Connect read: its name, its mode, its
      text);
  DppConfigure(o device, s ssid, s passphrase): a configurator sent the running enrollee a
      network (dpp.c: the profile written, dpp_reset(), then the station joins it when in
      range); DppFail(o device): the exchange failed (dpp_reset() only).

DeviceProvisioning (src/dpp.c, doc/device-provisioning-api.txt) on every station:
StartEnrollee while DPP runs: InProgress (dbus_error_busy()); it disconnects a connected
station first and answers the URI (channel 6, the device's address); Stop while nothing runs:
NotFound; ConfigureEnrollee(uri): not connected: NotConnected, a network that is not psk:
NotSupported, DPP running: InProgress, a URI that does not parse or lacks M: and C: (no
multicast frame registration, as nearly every driver): InvalidArguments.
"""
import os

import dbus
import dbus.service

from dbusmock import MOCK_IFACE, mockobject

BUS_NAME = "net.connman.iwd"
MAIN_OBJ = "/"
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

IWD = "net.connman.iwd"
BASE = "/net/connman/iwd"
AGENT_MANAGER_IFACE = IWD + ".AgentManager"
AGENT_IFACE = IWD + ".Agent"
ADAPTER_IFACE = IWD + ".Adapter"
DEVICE_IFACE = IWD + ".Device"
STATION_IFACE = IWD + ".Station"
DPP_IFACE = IWD + ".DeviceProvisioning"
NETWORK_IFACE = IWD + ".Network"
KNOWN_IFACE = IWD + ".KnownNetwork"
PROPS_IFACE = "org.freedesktop.DBus.Properties"
AGENT_TIMEOUT = 120

ERRORS = {
    "InProgress": "Operation already in progress", "Failed": "Operation failed",
    "Aborted": "Operation aborted", "InvalidArguments": "Argument type is wrong",
    "InvalidFormat": "Argument format is invalid", "AlreadyExists": "Object already exists",
    "NotFound": "Object not found", "NotSupported": "Operation not supported",
    "NoAgent": "No Agent registered", "NotConnected": "Not connected",
    "NotConfigured": "Not configured", "AlreadyProvisioned": "Already provisioned",
    "NotHidden": "Not hidden", "NotAvailable": "Operation not available",
}


def _error(kind):
    return dbus.exceptions.DBusException(ERRORS[kind], name=IWD + "." + kind)


def _fail(kind):
    raise _error(kind)


def passphrase_valid(p):
    """crypto_passphrase_is_valid(): 8..63 characters, each 32..126."""
    return 8 <= len(p) <= 63 and all(32 <= ord(c) <= 126 for c in p)


def storage_name(ssid):
    """storage.c: the SSID itself when it is [A-Za-z0-9 _-], else '=' and its hex."""
    if all(c.isascii() and (c.isalnum() or c in " _-") for c in ssid):
        return ssid
    return "=" + ssid.encode().hex()


ROOT = []


class State:
    def __init__(self, bus, state_dir):
        self.bus = bus
        self.state_dir = state_dir
        self.n = 0
        self.calls = []
        self.agent_calls = []
        self.secrets_seen = []
        self.profiles_read = []
        self.agents = []   # (bus name, path), in registration order
        self.networks = {}  # path -> dict
        self.known = {}     # path -> dict
        self.stations = {}  # device path -> dict


def st():
    return ROOT[0].iwdstate


def _method(obj, iface, name, in_sig, out_sig, fn, asynchronous=False):
    kw = {"in_signature": in_sig, "out_signature": out_sig, "sender_keyword": "sender"}
    if asynchronous:
        kw["async_callbacks"] = ("ok_cb", "err_cb")
    m = dbus.service.method(iface, **kw)(fn)
    m.__name__ = name
    obj.methods.setdefault(iface, {})[name] = (in_sig, out_sig, "", m)


def _read_only(obj, iface, name, value, sender=None):
    raise dbus.exceptions.DBusException("Property is read-only",
                                        name="org.freedesktop.DBus.Error.PropertyReadOnly")


def _add_object(path, iface, props):
    ROOT[0].AddObject(path, iface, props, [])
    obj = mockobject.objects[path]
    _method(obj, PROPS_IFACE, "Set", "ssv", "", _read_only)
    return obj


def _remove(path):
    ROOT[0].object_manager_emit_removed(path)
    ROOT[0].RemoveObject(path)


def _changed(obj, iface, props):
    for k, v in props.items():
        obj.props[iface][k] = v
    obj.EmitSignal(PROPS_IFACE, "PropertiesChanged", "sa{sv}as", [iface, props, []])


def _unset(obj, iface, name):
    obj.props[iface].pop(name, None)
    obj.EmitSignal(PROPS_IFACE, "PropertiesChanged", "sa{sv}as", [iface, {}, [name]])


def load(mock, parameters):
    ROOT[:] = [mock]
    mock.iwdstate = State(mock.connection, str(parameters.get("StateDirectory", "")))
    mgr = _add_object(BASE, AGENT_MANAGER_IFACE, {})
    _method(mgr, AGENT_MANAGER_IFACE, "RegisterAgent", "o", "", register_agent)
    _method(mgr, AGENT_MANAGER_IFACE, "UnregisterAgent", "o", "", unregister_agent)
    mock.object_manager_emit_added(BASE)
    for name, sig, fn in (("AddStation", ("s", "o"), AddStation),
                          ("AddNetwork", ("ossisb", "o"), AddNetwork),
                          ("AddKnownNetwork", ("ssbbs", "o"), AddKnownNetwork),
                          ("GetCalls", ("", "a(sss)"), GetCalls),
                          ("GetAgentCalls", ("", "a(sss)"), GetAgentCalls),
                          ("GetSecretsSeen", ("", "a(ss)"), GetSecretsSeen),
                          ("GetProfilesRead", ("", "a(sus)"), GetProfilesRead),
                          ("DppConfigure", ("oss", ""), DppConfigure),
                          ("DppFail", ("o", ""), DppFail)):
        _method(mock, MOCK_IFACE, name, sig[0], sig[1], fn)

    if mock.iwdstate.state_dir:
        _watch_profiles(mock.iwdstate)

    def owner_changed(name, old, new):
        if old and not new:
            s = st()
            s.agents = [a for a in s.agents if a[0] != name]
    mock.connection.add_signal_receiver(owner_changed, "NameOwnerChanged",
                                        "org.freedesktop.DBus", "org.freedesktop.DBus",
                                        "/org/freedesktop/DBus")
    # parameters "Stations": ["wlan0", ...]: stations iwd runs when it takes its name (an
    # iwd starting on a machine with them), added before any call is served
    for ifname in parameters.get("Stations", []):
        AddStation(mock, str(ifname))


def _watch_profiles(s):
    """iwd watches its directory: an 802.1X provisioning file that appears makes a known
    network (and the Network's KnownNetwork), one that goes drops it."""
    from gi.repository import Gio
    mon = Gio.File.new_for_path(s.state_dir).monitor_directory(Gio.FileMonitorFlags.WATCH_MOVES,
                                                                None)

    def rescan(*_args):
        names = set()
        for f in os.listdir(s.state_dir):
            if f.endswith(".8021x") and not f.startswith("."):
                stem = f[:-len(".8021x")]
                names.add(bytes.fromhex(stem[1:]).decode() if stem.startswith("=") else stem)
        for name in names:
            if not _known_for(name, "8021x"):
                _add_known(name, "8021x", False, True, "")
        for path, k in list(s.known.items()):
            if k["type"] == "8021x" and k["ssid"] not in names:
                s.known.pop(path)
                for net in s.networks.values():
                    if net["ssid"] == k["ssid"] and net["type"] == "8021x" and net["obj"]:
                        _unset(net["obj"], NETWORK_IFACE, "KnownNetwork")
                _remove(path)
    mon.connect("changed", rescan)
    s.monitor = mon  # kept alive with the state


def _record(method, sender, args):
    st().calls.append((method, sender or "", repr(args)))


# ---- test methods --------------------------------------------------------------------------
def AddStation(self, ifname, sender=None):
    s = st()
    s.n += 1
    adapter = BASE + "/0"
    if adapter not in mockobject.objects:
        _add_object(adapter, ADAPTER_IFACE, {"Powered": True, "Name": "phy0",
                                             "SupportedModes": dbus.Array(["station", "ap"],
                                                                          signature="s")})
        ROOT[0].object_manager_emit_added(adapter)
    path = "%s/%d" % (adapter, s.n + 2)
    dev = _add_object(path, DEVICE_IFACE, {
        "Name": ifname, "Address": "02:72:6d:00:00:30", "Powered": True,
        "Adapter": dbus.ObjectPath(adapter), "Mode": "station"})
    dev.AddProperties(STATION_IFACE, {"State": "disconnected", "Scanning": False})
    _method(dev, STATION_IFACE, "Scan", "", "", station_scan, asynchronous=True)
    _method(dev, STATION_IFACE, "GetOrderedNetworks", "", "a(on)", ordered_networks)
    _method(dev, STATION_IFACE, "GetHiddenAccessPoints", "", "a(sns)", hidden_aps)
    _method(dev, STATION_IFACE, "ConnectHiddenNetwork", "s", "", connect_hidden,
            asynchronous=True)
    _method(dev, STATION_IFACE, "Disconnect", "", "", station_disconnect)
    _method(dev, PROPS_IFACE, "Set", "ssv", "", _read_only)
    s.stations[path] = {"obj": dev, "scanning": False, "hidden_pending": False,
                        "connected": None, "connecting": None}
    _add_dpp(dev, s.stations[path])
    ROOT[0].object_manager_emit_added(path)
    return path


def AddNetwork(self, device, ssid, ntype, signal, secret, hidden, sender=None):
    s = st()
    if ntype not in ("open", "psk", "8021x"):
        raise dbus.exceptions.DBusException("type must be open, psk or 8021x",
                                            name=MOCK_IFACE + ".Error")
    path = "%s/%s_%s" % (device, str(ssid).encode().hex(), ntype)
    s.networks[path] = {"ssid": str(ssid), "type": str(ntype), "signal": int(signal),
                        "secret": str(secret), "hidden": bool(hidden), "device": str(device),
                        "path": path, "obj": None, "ask": True, "agent_pending": False}
    if not hidden:
        _export_network(s.networks[path])
    return path


def _export_network(net):
    props = {"Name": net["ssid"], "Connected": False, "Device": dbus.ObjectPath(net["device"]),
             "Type": net["type"]}
    known = _known_for(net["ssid"], net["type"])
    if known:
        props["KnownNetwork"] = dbus.ObjectPath(known)
    obj = _add_object(net["path"], NETWORK_IFACE, props)
    _method(obj, NETWORK_IFACE, "Connect", "", "", network_connect, asynchronous=True)
    net["obj"] = obj
    ROOT[0].object_manager_emit_added(net["path"])


def _known_for(ssid, ntype):
    for path, k in st().known.items():
        if k["ssid"] == ssid and k["type"] == ntype:
            return path
    return None


def AddKnownNetwork(self, ssid, ntype, hidden, autoconnect, passphrase, sender=None):
    return _add_known(str(ssid), str(ntype), bool(hidden), bool(autoconnect), str(passphrase))


def _add_known(ssid, ntype, hidden, autoconnect, passphrase):
    s = st()
    path = "%s/%s_%s" % (BASE, ssid.encode().hex(), ntype)
    s.known[path] = {"ssid": ssid, "type": ntype, "passphrase": passphrase or None}
    obj = _add_object(path, KNOWN_IFACE, {
        "Name": ssid, "Type": ntype, "Hidden": hidden, "AutoConnect": autoconnect,
        "LastConnectedTime": "2026-12-07T18:00:00Z"})
    _method(obj, KNOWN_IFACE, "Forget", "", "", known_forget)
    _method(obj, PROPS_IFACE, "Set", "ssv", "", known_set)
    ROOT[0].object_manager_emit_added(path)
    for net in s.networks.values():
        if net["obj"] is not None and net["ssid"] == ssid and net["type"] == ntype:
            _changed(net["obj"], NETWORK_IFACE, {"KnownNetwork": dbus.ObjectPath(path)})
    return path


def GetCalls(self, sender=None):
    return dbus.Array([dbus.Struct(c, signature="sss") for c in st().calls], signature="(sss)")


def GetAgentCalls(self, sender=None):
    return dbus.Array([dbus.Struct(c, signature="sss") for c in st().agent_calls],
                      signature="(sss)")


def GetProfilesRead(self, sender=None):
    return dbus.Array([dbus.Struct(c, signature="sus") for c in st().profiles_read],
                      signature="(sus)")


def GetSecretsSeen(self, sender=None):
    return dbus.Array([dbus.Struct(c, signature="ss") for c in st().secrets_seen],
                      signature="(ss)")


# ---- agents --------------------------------------------------------------------------------
def register_agent(self, path, sender=None):
    s = st()
    _record("RegisterAgent", sender, [str(path)])
    if any(a[0] == sender for a in s.agents):
        _fail("AlreadyExists")
    s.agents.append((str(sender), str(path)))


def unregister_agent(self, path, sender=None):
    s = st()
    _record("UnregisterAgent", sender, [str(path)])
    if not any(a[0] == sender for a in s.agents):
        _fail("NotFound")
    s.agents = [a for a in s.agents if a[0] != sender]


def _agent_for(sender):
    s = st()
    for a in s.agents:
        if a[0] == sender:
            return a
    return s.agents[0] if s.agents else None


def _ask(agent, method, sig, args, net, on_reply, on_error):
    """One agent request with iwd's 120 s timeout; Cancel("timed-out") when it passes."""
    s = st()
    s.agent_calls.append((agent[0], method, net["path"]))
    from gi.repository import GLib
    done = []

    def timeout():
        if not done:
            done.append(1)
            s.bus.call_async(agent[0], agent[1], AGENT_IFACE, "Cancel", "s", ("timed-out",),
                             lambda *a: None, lambda *a: None)
            on_error(None)
        return False
    tid = GLib.timeout_add_seconds(AGENT_TIMEOUT, timeout)

    def reply(*values):
        if not done:
            done.append(1)
            GLib.source_remove(tid)
            on_reply(*values)

    def error(e):
        if not done:
            done.append(1)
            GLib.source_remove(tid)
            on_error(e)
    s.bus.call_async(agent[0], agent[1], AGENT_IFACE, method, sig, args, reply, error,
                     timeout=AGENT_TIMEOUT + 5)


# ---- station -------------------------------------------------------------------------------
def _station(obj):
    return st().stations[obj.path]


def _set_state(sta, state):
    _changed(sta["obj"], STATION_IFACE, {"State": state})


def station_scan(self, ok_cb, err_cb, sender=None):
    _record("Scan", sender, [])
    sta = _station(self)
    if sta["scanning"] or sta["connecting"] is not None:
        err_cb(_error("InProgress"))
        return
    sta["scanning"] = True
    _changed(self, STATION_IFACE, {"Scanning": True})
    ok_cb()  # Scan() returns once the scan is triggered; Scanning goes false when it ends
    from gi.repository import GLib

    def finished():
        sta["scanning"] = False
        _changed(self, STATION_IFACE, {"Scanning": False})
        return False
    GLib.timeout_add(50, finished)


def ordered_networks(self, sender=None):
    s = st()
    nets = [n for n in s.networks.values() if n["device"] == self.path and n["obj"] is not None]
    sta = _station(self)

    def rank(n):
        return (0 if sta["connected"] is n else 1 if _known_for(n["ssid"], n["type"]) else 2,
                -n["signal"])
    nets.sort(key=rank)
    return dbus.Array([dbus.Struct((dbus.ObjectPath(n["path"]), dbus.Int16(n["signal"])),
                                   signature="on") for n in nets], signature="(on)")


def hidden_aps(self, sender=None):
    s = st()
    return dbus.Array([dbus.Struct(("02:72:6d:00:01:%02x" % i, dbus.Int16(n["signal"]),
                                    n["type"]), signature="sns")
                       for i, n in enumerate(s.networks.values())
                       if n["device"] == self.path and n["hidden"] and n["obj"] is None],
                      signature="(sns)")


def station_disconnect(self, sender=None):
    _record("Disconnect", sender, [])
    sta = _station(self)
    if sta["connected"] is None:
        _fail("NotConnected")
    _disconnected(sta)


def _disconnected(sta):
    net = sta["connected"]
    sta["connected"] = None
    if net is not None and net["obj"] is not None:
        _changed(net["obj"], NETWORK_IFACE, {"Connected": False})
    if "ConnectedNetwork" in sta["obj"].props[STATION_IFACE]:
        _unset(sta["obj"], STATION_IFACE, "ConnectedNetwork")
    _set_state(sta, "disconnected")


def connect_hidden(self, ssid, ok_cb, err_cb, sender=None):
    s = st()
    _record("ConnectHiddenNetwork", sender, [str(ssid)])
    sta = _station(self)
    try:
        if sta["hidden_pending"]:
            _fail("InProgress")
        if len(str(ssid).encode()) > 32:
            _fail("InvalidArguments")
        if _known_for(ssid, "psk") or _known_for(ssid, "open"):
            _fail("AlreadyProvisioned")
        for net in s.networks.values():
            if net["device"] == self.path and net["ssid"] == ssid and net["obj"] is not None \
                    and net["type"] in ("psk", "open"):
                _fail("NotHidden")
        target = None
        for net in s.networks.values():
            if net["device"] == self.path and net["ssid"] == ssid and net["hidden"] \
                    and net["type"] in ("psk", "open"):
                target = net
        if target is None:
            _fail("NotFound")  # the directed scan found nobody answering that SSID
    except dbus.exceptions.DBusException as e:
        err_cb(e)
        return
    sta["hidden_pending"] = True
    _export_network(target)

    def ok():
        sta["hidden_pending"] = False
        ok_cb()

    def err(e):
        sta["hidden_pending"] = False
        if target["obj"] is not None and not _known_for(target["ssid"], target["type"]):
            _remove(target["path"])  # station_hide_network()
            target["obj"] = None
        err_cb(e)
    _connect(target, sender, ok, err)


# ---- networks ------------------------------------------------------------------------------
def network_connect(self, ok_cb, err_cb, sender=None):
    s = st()
    _record("Connect", sender, [self.path])
    net = s.networks[self.path]
    _connect(net, sender, ok_cb, err_cb)


def _read_8021x(net):
    s = st()
    if not s.state_dir:
        return None
    name = storage_name(net["ssid"]) + ".8021x"
    path = os.path.join(s.state_dir, name)
    try:
        with open(path) as f:
            text = f.read()
            mode = os.fstat(f.fileno()).st_mode & 0o7777
    except OSError:
        return None
    s.profiles_read.append((name, dbus.UInt32(mode), text))
    section, out = None, {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif "=" in line and section:
            k, v = line.split("=", 1)
            out["%s/%s" % (section, k.strip())] = v.strip()
    return out


def _connect(net, sender, ok_cb, err_cb):
    s = st()
    sta = s.stations[net["device"]]
    if sta["connected"] is net:
        ok_cb()
        return
    if net["agent_pending"]:
        err_cb(_error("InProgress"))
        return
    if net["type"] == "open":
        _associate(net, sta, None, ok_cb, err_cb)
        return
    if net["type"] == "8021x":
        _connect_8021x(net, sta, sender, ok_cb, err_cb)
        return
    known = _known_for(net["ssid"], "psk")
    saved = s.known[known]["passphrase"] if known else None
    if saved is not None and not net["ask"]:
        _associate(net, sta, saved, ok_cb, err_cb)
        return
    if saved is not None and net["ask"] and net.get("tried_saved") is None:
        net["tried_saved"] = True
        _associate(net, sta, saved, ok_cb, err_cb)
        return
    agent = _agent_for(sender)
    if agent is None:
        err_cb(_error("NoAgent"))
        return
    net["ask"] = False
    net["agent_pending"] = True

    def reply(passphrase):
        net["agent_pending"] = False
        s.secrets_seen.append((net["ssid"], str(passphrase)))
        if not passphrase_valid(str(passphrase)):
            err_cb(_error("InvalidFormat"))
            return
        _associate(net, sta, str(passphrase), ok_cb, err_cb)

    def error(_e):
        net["agent_pending"] = False
        err_cb(_error("Aborted"))
    _ask(agent, "RequestPassphrase", "o", (dbus.ObjectPath(net["path"]),), net, reply, error)


# eap.c: the methods iwd has that export key material (802.1X needs it); the double runs only
# PEAP and TTLS, the others are refused as a method iwd lacks would be
EAP_METHODS = ("PEAP", "TTLS")
# eap-ttls.c tunneled_non_eap_methods: compared with strcmp, case and all
TTLS_NON_EAP = ("Tunneled-PAP", "Tunneled-CHAP", "Tunneled-MSCHAP", "Tunneled-MSCHAPv2")
# inner EAP methods (strcasecmp) the double runs: the user name and password kind
INNER_EAP = ("MSCHAPV2", "GTC", "MD5")


def _pem_certificate(path):
    """eap-tls-common.c: a CACert that l_pem_load_certificate_list() cannot read is -EIO."""
    try:
        with open(path) as f:
            return "-----BEGIN CERTIFICATE-----" in f.read()
    except (OSError, UnicodeDecodeError):
        return False


def _check_8021x(conf):
    """eap_check_settings(prefix "EAP-", set_key_material): None when the settings do, else
    the error network_connect_8021x() answers (-ENOTSUP NotSupported, -ENOENT and -EIO
    NotConfigured)."""
    method = conf.get("Security/EAP-Method")
    if method is None:
        return "NotConfigured"  # "Property EAP-Method missing"
    method = method.upper()
    if method not in EAP_METHODS:
        return "NotSupported"  # unsupported, or no key material
    phase2 = conf.get("Security/EAP-%s-Phase2-Method" % method)
    if phase2 is None:
        return "NotConfigured"
    if not (phase2.upper() in INNER_EAP or (method == "TTLS" and phase2 in TTLS_NON_EAP)):
        return "NotSupported"
    ca = conf.get("Security/EAP-%s-CACert" % method)
    if ca is not None and not _pem_certificate(ca):
        return "NotConfigured"  # -EIO: "Failed to load"
    if conf.get("Security/EAP-Identity") is None:
        return "NotConfigured"  # "Property EAP-Identity is missing"
    return None


def _connect_8021x(net, sta, sender, ok_cb, err_cb):
    s = st()
    conf = _read_8021x(net)
    if conf is None:
        err_cb(_error("NotConfigured"))  # network_settings_load() failed
        return
    refused = _check_8021x(conf)
    if refused:
        err_cb(_error(refused))
        return
    method = conf["Security/EAP-Method"].upper()
    user = conf.get("Security/EAP-%s-Phase2-Identity" % method)
    password = conf.get("Security/EAP-%s-Phase2-Password" % method)
    net["outer_identity"] = conf["Security/EAP-Identity"]
    if user is not None and password is not None:
        _associate(net, sta, "%s:%s" % (user, password), ok_cb, err_cb)
        return
    agent = _agent_for(sender)
    if agent is None:
        err_cb(_error("NoAgent"))
        return
    net["agent_pending"] = True

    def error(_e):
        net["agent_pending"] = False
        err_cb(_error("Aborted"))

    def got(u, p):
        net["agent_pending"] = False
        s.secrets_seen.append((net["ssid"], "%s:%s" % (u, p)))
        _associate(net, sta, "%s:%s" % (u, p), ok_cb, err_cb)
    # eap-mschapv2.c (and the tunneled methods): no identity, both asked; an identity
    # without its password, the password asked for that identity
    if user is None:
        _ask(agent, "RequestUserNameAndPassword", "o", (dbus.ObjectPath(net["path"]),), net,
             lambda u, p: got(str(u), str(p)), error)
    else:
        _ask(agent, "RequestUserPassword", "os", (dbus.ObjectPath(net["path"]), user), net,
             lambda p: got(user, str(p)), error)


def _associate(net, sta, secret, ok_cb, err_cb):
    """The handshake: right secret -> connected and known; wrong -> Failed, ask again."""
    if sta["connected"] is not None:
        _disconnected(sta)
    sta["connecting"] = net
    _set_state(sta, "connecting")
    sta["connecting"] = None
    if net["type"] != "open" and secret != net["secret"]:
        net["ask"] = True  # network_connect_failed(in_handshake = true)
        _set_state(sta, "disconnected")
        err_cb(_error("Failed"))
        return
    sta["connected"] = net
    net["ask"] = False
    _changed(net["obj"], NETWORK_IFACE, {"Connected": True})
    _changed(sta["obj"], STATION_IFACE, {"ConnectedNetwork": dbus.ObjectPath(net["path"])})
    _set_state(sta, "connected")
    known = _known_for(net["ssid"], net["type"])
    if known is None:
        _add_known(net["ssid"], net["type"], net["hidden"], True,
                   secret if net["type"] == "psk" else "")
    elif net["type"] == "psk":
        st().known[known]["passphrase"] = secret
    ok_cb()


# ---- known networks ------------------------------------------------------------------------
def known_forget(self, sender=None):
    s = st()
    _record("Forget", sender, [self.path])
    k = s.known.pop(self.path)
    for sta in s.stations.values():
        net = sta["connected"]
        if net is not None and net["ssid"] == k["ssid"] and net["type"] == k["type"]:
            _disconnected(sta)
    for net in s.networks.values():
        if net["ssid"] == k["ssid"] and net["type"] == k["type"]:
            net["ask"] = True
            net.pop("tried_saved", None)
            if net["obj"] is not None:
                _unset(net["obj"], NETWORK_IFACE, "KnownNetwork")
    _remove(self.path)


def known_set(self, iface, name, value, sender=None):
    _record("Set", sender, [self.path, str(iface), str(name), repr(value)])
    if iface != KNOWN_IFACE or name != "AutoConnect":
        _read_only(self, iface, name, value)
    if not isinstance(value, dbus.Boolean):
        _fail("InvalidArguments")
    if bool(value) != bool(self.props[KNOWN_IFACE]["AutoConnect"]):
        _changed(self, KNOWN_IFACE, {"AutoConnect": dbus.Boolean(value)})


# ---- DeviceProvisioning (DPP) ----------------------------------------------------------------
DPP_KEY = "MDkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDIgACFZq9YNQAmI26YSe+ixNxngctk/4qn8uSe3P2t+8iOaE="


def _add_dpp(dev, sta):
    dev.AddProperties(DPP_IFACE, {"Started": False})
    sta["dpp"] = None  # None, "enrollee" or "configurator"
    _method(dev, DPP_IFACE, "StartEnrollee", "", "s", dpp_start_enrollee)
    _method(dev, DPP_IFACE, "ConfigureEnrollee", "s", "s", dpp_configure_enrollee)
    _method(dev, DPP_IFACE, "Stop", "", "", dpp_stop)


def _dpp_uri(dev, channel):
    mac = str(dev.props[DEVICE_IFACE]["Address"]).replace(":", "")
    return "DPP:C:81/%d;M:%s;V:2;K:%s;;" % (channel, mac, DPP_KEY)


def _dpp_started(sta, role, uri):
    sta["dpp"] = role
    _changed(sta["obj"], DPP_IFACE, {"Started": True, "Role": role, "URI": uri})


def _dpp_reset(sta):
    """dpp_reset(): Started false, Role and URI gone (dpp_property_changed_notify())."""
    sta["dpp"] = None
    obj = sta["obj"]
    obj.props[DPP_IFACE].pop("Role", None)
    obj.props[DPP_IFACE].pop("URI", None)
    obj.props[DPP_IFACE]["Started"] = False
    obj.EmitSignal(PROPS_IFACE, "PropertiesChanged", "sa{sv}as",
                   [DPP_IFACE, {"Started": False}, ["Role", "URI"]])


def dpp_start_enrollee(self, sender=None):
    _record("StartEnrollee", sender, [])
    sta = _station(self)
    if sta["dpp"] is not None:
        _fail("InProgress")
    if sta["connected"] is not None:  # dpp_try_disconnect_station()
        _disconnected(sta)
    uri = _dpp_uri(self, 6)  # dpp_start_enrollee(): channel 6 only
    _dpp_started(sta, "enrollee", uri)
    return uri


def _uri_ok(uri):
    """dpp_parse_uri() enough for the double: DPP:, a K:, the closing ;;, and (without
    multicast registration) M: and C:."""
    if not uri.startswith("DPP:") or not uri.endswith(";;"):
        return False
    toks = [t for t in uri[4:-2].split(";") if t]
    keys = {t[:2] for t in toks}
    return {"K:", "M:", "C:"} <= keys and all(len(t) > 2 and t[1] == ":" for t in toks)


def dpp_configure_enrollee(self, uri, sender=None):
    _record("ConfigureEnrollee", sender, [str(uri)])
    sta = _station(self)
    net = sta["connected"]
    if net is None:
        _fail("NotConnected")
    if net["type"] != "psk":
        _fail("NotSupported")
    if sta["dpp"] is not None:
        _fail("InProgress")
    if not _uri_ok(str(uri)):
        _fail("InvalidArguments")
    own = _dpp_uri(self, 1)
    _dpp_started(sta, "configurator", own)
    return own


def dpp_stop(self, sender=None):
    _record("Stop", sender, [])
    sta = _station(self)
    if sta["dpp"] is None:
        _fail("NotFound")
    _dpp_reset(sta)


def DppConfigure(self, device, ssid, passphrase, sender=None):
    s = st()
    sta = s.stations[str(device)]
    if sta["dpp"] != "enrollee":
        raise dbus.exceptions.DBusException("no enrollee runs", name=MOCK_IFACE + ".Error")
    ssid, passphrase = str(ssid), str(passphrase)
    # dpp_write_config() then, once the profile is synced, dpp_start_connect(): dpp_reset(),
    # then network_autoconnect() of the network when the station sees it
    known = _known_for(ssid, "psk")
    if known:
        s.known[known]["passphrase"] = passphrase
    else:
        _add_known(ssid, "psk", False, True, passphrase)
    _dpp_reset(sta)
    for net in s.networks.values():
        if net["device"] == str(device) and net["ssid"] == ssid and net["type"] == "psk" \
                and net["obj"] is not None:
            _associate(net, sta, passphrase, lambda: None, lambda e: None)
            break


def DppFail(self, device, sender=None):
    sta = st().stations[str(device)]
    if sta["dpp"] is None:
        raise dbus.exceptions.DBusException("DPP does not run", name=MOCK_IFACE + ".Error")
    _dpp_reset(sta)

"""python3-dbusmock template: Debian's bluez5 template, extended where roam's tests need BlueZ to
behave like bluetoothd does and the stock template does not:

- AgentManager1 as src/agent.c has it: one agent per bus name (a second RegisterAgent from
  the same name is AlreadyExists, whatever the path), capabilities as parse_io_capability()
  takes them ("" is KeyboardDisplay), UnregisterAgent and RequestDefaultAgent only for the
  caller's own agent and path (DoesNotExist otherwise), no default agent until one asks, and
  an agent whose owner leaves the bus is dropped (g_dbus_add_disconnect_watch), default or
  not. Device1.Pair asks the caller's own agent, else the default one (agent_get()), the
  question BlueZ would ask for the device's pairing method, answering
  the Pair call only when the agent has answered (asynchronously, like bluetoothd), with
  BlueZ's error names: AuthenticationRejected, AuthenticationCanceled, AuthenticationFailed,
  ConnectionAttemptFailed.
- Network1 (PAN) on devices made by AddNetworkDevice: Connect("nap") creates the bnep link
  (a veth pair in the test's network namespace: this kernel has no Bluetooth) and answers its
  name, like bluetoothd answers the name of the bnep device it made.
- Battery1 through AddBattery.

Test controls (interface org.bluez.Mock on /): SetPairing(device, method, value),
FinishPairing(device, success), RemoteCancel(device), LoseDevice(device),
IncomingService(device, uuid) -> result of the agent's AuthorizeService,
AddNetworkDevice(adapter, address, name), AddBattery(device, percent).
"""
import subprocess

import dbus
import dbus.service
from dbusmock import OBJECT_MANAGER_IFACE, mockobject
from dbusmock.templates import bluez5

BUS_NAME = bluez5.BUS_NAME
MAIN_OBJ = bluez5.MAIN_OBJ
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True

MOCK_IFACE = "org.bluez.Mock"
DEVICE_IFACE = "org.bluez.Device1"
ADAPTER_IFACE = "org.bluez.Adapter1"
AGENT_MANAGER_IFACE = "org.bluez.AgentManager1"
AGENT_IFACE = "org.bluez.Agent1"
NETWORK_IFACE = "org.bluez.Network1"
BATTERY_IFACE = "org.bluez.Battery1"
NAP_UUID = "00001116-0000-1000-8000-00805f9b34fb"
AGENT_TIMEOUT = 60.0  # bluetoothd's own timeout for agent requests

PARAMS = {}

# The stock template's methods (AddAdapter, AddDevice, ...): dbusmock registers the decorated
# functions found in the loaded module, so they are taken over here; the ones defined below
# replace their namesakes.
for _name in dir(bluez5):
    if hasattr(getattr(bluez5, _name), "_dbus_interface"):
        globals()[_name] = getattr(bluez5, _name)


def _error(name, message):
    return dbus.exceptions.DBusException(message, name="org.bluez.Error." + name)


# src/agent.c parse_io_capability(); src/error.c's messages
IO_CAPABILITIES = ("", "DisplayOnly", "DisplayYesNo", "KeyboardOnly", "NoInputNoOutput",
                   "KeyboardDisplay")


def _agents():
    """owner bus name -> agent path (src/agent.c agent_list), and the default agents' owners,
    the current default first (default_agents)."""
    manager = mockobject.objects["/org/bluez"]
    return manager.agents, manager.default_agents


def _agent_gone(owner):
    agents, defaults = _agents()
    agents.pop(owner, None)
    if owner in defaults:
        defaults.remove(owner)


@dbus.service.method(AGENT_MANAGER_IFACE, in_signature="os", out_signature="",
                     sender_keyword="sender")
def RegisterAgent(manager, agent_path, capability, sender=None):
    agents, _ = _agents()
    if str(sender) in agents:
        raise _error("AlreadyExists", "Already Exists")
    if str(capability) not in IO_CAPABILITIES:
        raise _error("InvalidArguments", "Invalid arguments in method call")
    owner = str(sender)
    agents[owner] = str(agent_path)
    # agent_create(): g_dbus_add_disconnect_watch(owner, agent_disconnect)
    watch = []

    def on_owner(new_owner):
        if not new_owner and agents.get(owner) is not None:
            _agent_gone(owner)
            if watch:
                watch[0].cancel()
    watch.append(manager.connection.watch_name_owner(owner, on_owner))


@dbus.service.method(AGENT_MANAGER_IFACE, in_signature="o", out_signature="",
                     sender_keyword="sender")
def UnregisterAgent(manager, agent_path, sender=None):
    agents, _ = _agents()
    if agents.get(str(sender)) != str(agent_path):
        raise _error("DoesNotExist", "Does Not Exist")
    _agent_gone(str(sender))


@dbus.service.method(AGENT_MANAGER_IFACE, in_signature="o", out_signature="",
                     sender_keyword="sender")
def RequestDefaultAgent(manager, agent_path, sender=None):
    agents, defaults = _agents()
    if agents.get(str(sender)) != str(agent_path):
        raise _error("DoesNotExist", "Does Not Exist")
    if str(sender) in defaults:
        defaults.remove(str(sender))
    defaults.insert(0, str(sender))


def _agent(device, caller=None):
    """agent_get(): the caller's own agent, else the default one; (owner, path) or None."""
    agents, defaults = _agents()
    owner = caller if caller in agents else (defaults[0] if defaults else None)
    if owner is None:
        return None
    return owner, agents[owner]


def _set_paired(device):
    device.paired = True
    device.UpdateProperties(DEVICE_IFACE, {"Paired": dbus.Boolean(True, variant_level=1)})


def _finish(device, error=None):
    pending = getattr(device, "pending_pair", None)
    device.pending_pair = None
    if not pending:
        return
    ok, err = pending
    if error is None:
        _set_paired(device)
        ok()
    else:
        err(error)


def _ask(device, method, signature, args, on_reply):
    agent = _agent(device, getattr(device, "pair_caller", None))
    if agent is None:
        _finish(device, _error("AuthenticationFailed", "No agent is registered"))
        return
    owner, path = agent

    def on_error(e):
        name = e.get_dbus_name()
        device.last_agent_error = name
        if name == "org.bluez.Error.Rejected":
            _finish(device, _error("AuthenticationRejected", "Authentication Rejected"))
        elif name == "org.bluez.Error.Canceled":
            _finish(device, _error("AuthenticationCanceled", "Authentication Canceled"))
        else:
            _finish(device, _error("AuthenticationFailed", "Authentication Failed"))

    device.connection.call_async(owner, path, AGENT_IFACE, method, signature, args,
                                 on_reply, on_error, timeout=AGENT_TIMEOUT)


@dbus.service.method(DEVICE_IFACE, in_signature="", out_signature="",
                     async_callbacks=("ok", "err"), sender_keyword="sender")
def Pair(device, ok, err, sender=None):
    if device.paired:
        err(_error("AlreadyExists", "Already Exists"))
        return
    if getattr(device, "pending_pair", None):
        err(_error("InProgress", "In Progress"))
        return
    device.pending_pair = (ok, err)
    device.pair_caller = str(sender) if sender else None
    method, value = getattr(device, "pair_method", ("just-works", ""))
    path = dbus.ObjectPath(device.__dbus_object_path__)
    mockobject.objects["/"].log(f"Pair {path} by {method}")
    if method == "just-works":
        _finish(device)
    elif method in ("confirm", "remote-cancel"):
        _ask(device, "RequestConfirmation", "ou", (path, dbus.UInt32(int(value))),
             lambda *a: _finish(device) if method == "confirm" else None)
    elif method == "pin":
        _ask(device, "RequestPinCode", "o", (path,),
             lambda pin: _finish(device) if pin == value else
             _finish(device, _error("AuthenticationFailed", "Authentication Failed")))
    elif method == "passkey":
        _ask(device, "RequestPasskey", "o", (path,),
             lambda key: _finish(device) if int(key) == int(value) else
             _finish(device, _error("AuthenticationFailed", "Authentication Failed")))
    elif method == "display-passkey":
        # The passkey is shown, then typed on the device's keyboard (FinishPairing).
        _ask(device, "DisplayPasskey", "ouq", (path, dbus.UInt32(int(value)), dbus.UInt16(0)),
             lambda *a: None)
    elif method == "display-pin":
        _ask(device, "DisplayPinCode", "os", (path, value), lambda *a: None)
    else:
        _finish(device, _error("Failed", f"unknown test pairing method {method}"))


def _device(path):
    try:
        return mockobject.objects[str(path)]
    except KeyError:
        raise dbus.exceptions.DBusException(f"No device {path}", name=MOCK_IFACE + ".NoSuchDevice")


@dbus.service.method(MOCK_IFACE, in_signature="oss", out_signature="")
def SetPairing(self, path, method, value):
    _device(path).pair_method = (str(method), str(value))


@dbus.service.method(MOCK_IFACE, in_signature="ob", out_signature="")
def FinishPairing(self, path, success):
    _finish(_device(path), None if success else
            _error("AuthenticationFailed", "Authentication Failed"))


@dbus.service.method(MOCK_IFACE, in_signature="o", out_signature="")
def RemoteCancel(self, path):
    """The remote side gave up: bluetoothd cancels the agent request and fails Pair."""
    device = _device(path)
    agent = _agent(device, getattr(device, "pair_caller", None))
    if agent:
        device.connection.call_async(agent[0], agent[1], AGENT_IFACE, "Cancel", "", (),
                                     lambda *a: None, lambda e: None)
    _finish(device, _error("AuthenticationCanceled", "Authentication Canceled"))


@dbus.service.method(MOCK_IFACE, in_signature="o", out_signature="")
def LoseDevice(self, path):
    """The device went out of range mid-pair: Pair fails and its (temporary) object goes."""
    device = _device(path)
    _finish(device, _error("ConnectionAttemptFailed", "Page Timeout"))
    adapter = mockobject.objects[str(device.props[DEVICE_IFACE]["Adapter"])]
    bluez5.RemoveDevice(adapter, path)


@dbus.service.method(MOCK_IFACE, in_signature="os", out_signature="s",
                     async_callbacks=("ok", "err"))
def IncomingService(self, path, uuid, ok, err):
    """A paired device connects a profile: bluetoothd asks the agent's AuthorizeService."""
    device = _device(path)
    agent = _agent(device)  # a remote's request: the default agent (agent_get(NULL))
    if agent is None:
        ok("org.bluez.Error.Rejected")  # nobody to ask: bluetoothd refuses the service
        return
    owner, agent_path = agent
    device.connection.call_async(owner, agent_path, AGENT_IFACE, "AuthorizeService", "os",
                                 (dbus.ObjectPath(path), uuid), lambda *a: ok("accepted"),
                                 lambda e: ok(e.get_dbus_name()), timeout=AGENT_TIMEOUT)


@dbus.service.method(NETWORK_IFACE, in_signature="s", out_signature="s")
def NetworkConnect(device, role):
    if role.lower() != "nap":
        raise _error("NotSupported", "Not Supported")
    if device.props[NETWORK_IFACE]["Connected"]:
        raise _error("AlreadyConnected", "Already Connected")
    ifname = PARAMS.get("ifname", "bnep0")
    netns = PARAMS.get("netns")
    if netns:
        # The NAP's end goes to its own namespace when the test gives one.
        peer = ["netns", PARAMS["napns"]] if PARAMS.get("napns") else []
        subprocess.run(["ip", "-n", netns, "link", "add", ifname, "type", "veth", "peer", "name",
                        ifname + "p", *peer], check=True)
    device.UpdateProperties(NETWORK_IFACE, {
        "Connected": dbus.Boolean(True, variant_level=1),
        "Interface": dbus.String(ifname, variant_level=1),
        "UUID": dbus.String(NAP_UUID, variant_level=1),
    })
    return ifname


@dbus.service.method(NETWORK_IFACE, in_signature="", out_signature="")
def NetworkDisconnect(device):
    if not device.props[NETWORK_IFACE]["Connected"]:
        raise _error("NotConnected", "Not Connected")
    ifname = str(device.props[NETWORK_IFACE]["Interface"])
    netns = PARAMS.get("netns")
    if netns:
        subprocess.run(["ip", "-n", netns, "link", "del", ifname], check=False)
    device.UpdateProperties(NETWORK_IFACE, {
        "Connected": dbus.Boolean(False, variant_level=1),
        "Interface": dbus.String("", variant_level=1),
    })


@dbus.service.method(MOCK_IFACE, in_signature="sss", out_signature="s")
def AddNetworkDevice(self, adapter, address, name):
    path = bluez5.AddDevice(self, adapter, address, name)
    _patch_device(path)
    device = mockobject.objects[path]
    uuids = dbus.Array([NAP_UUID], signature="s", variant_level=1)
    device.UpdateProperties(DEVICE_IFACE, {"UUIDs": uuids,
                                           "Class": dbus.UInt32(0x5a020c, variant_level=1)})
    props = {"Connected": dbus.Boolean(False, variant_level=1),
             "Interface": dbus.String("", variant_level=1),
             "UUID": dbus.String("", variant_level=1)}
    device.AddProperties(NETWORK_IFACE, props)
    device.methods.setdefault(NETWORK_IFACE, {})["Connect"] = ("s", "s", NetworkConnect,
                                                               NetworkConnect)
    device.methods[NETWORK_IFACE]["Disconnect"] = ("", "", NetworkDisconnect, NetworkDisconnect)
    self.EmitSignal(OBJECT_MANAGER_IFACE, "InterfacesAdded", "oa{sa{sv}}",
                    [dbus.ObjectPath(path), {NETWORK_IFACE: props}])
    return path


@dbus.service.method(MOCK_IFACE, in_signature="oy", out_signature="")
def AddBattery(self, path, percent):
    device = _device(path)
    props = {"Percentage": dbus.Byte(percent, variant_level=1)}
    device.AddProperties(BATTERY_IFACE, props)
    self.EmitSignal(OBJECT_MANAGER_IFACE, "InterfacesAdded", "oa{sa{sv}}",
                    [dbus.ObjectPath(path), {BATTERY_IFACE: props}])


@dbus.service.method(MOCK_IFACE, in_signature="oan", out_signature="")
def RssiBurst(self, path, values):
    """A scan hearing the device again and again: one PropertiesChanged per value, sent
    back to back as bluetoothd does during discovery."""
    device = _device(path)
    for v in values:
        device.UpdateProperties(DEVICE_IFACE, {"RSSI": dbus.Int16(v, variant_level=1)})


def _discovering(adapter, on):
    adapter.UpdateProperties(ADAPTER_IFACE, {"Discovering": dbus.Boolean(on, variant_level=1)})


# The stock StartDiscovery/StopDiscovery read a DiscoveryFilter that exists only after
# SetDiscoveryFilter; bluetoothd needs no filter to scan.
@dbus.service.method(ADAPTER_IFACE, in_signature="", out_signature="")
def AdapterStartDiscovery(adapter):
    _discovering(adapter, True)


@dbus.service.method(ADAPTER_IFACE, in_signature="", out_signature="")
def AdapterStopDiscovery(adapter):
    if not adapter.props[ADAPTER_IFACE]["Discovering"]:
        raise _error("Failed", "No discovery started")
    _discovering(adapter, False)


@dbus.service.method(MOCK_IFACE, in_signature="ss", out_signature="s")
def AddAdapter(self, device_name, system_name):
    path = bluez5.AddAdapter(self, device_name, system_name)
    adapter = mockobject.objects[path]
    adapter.methods[ADAPTER_IFACE]["StartDiscovery"] = ("", "", AdapterStartDiscovery,
                                                        AdapterStartDiscovery)
    adapter.methods[ADAPTER_IFACE]["StopDiscovery"] = ("", "", AdapterStopDiscovery,
                                                       AdapterStopDiscovery)
    return path


def _patch_device(path):
    device = mockobject.objects[path]
    device.methods[DEVICE_IFACE]["Pair"] = ("", "", Pair, Pair)


@dbus.service.method(MOCK_IFACE, in_signature="sss", out_signature="s")
def AddDevice(self, adapter, address, name):
    path = bluez5.AddDevice(self, adapter, address, name)
    _patch_device(path)
    return path


def load(mock, parameters):
    PARAMS.update(parameters or {})
    bluez5.load(mock, parameters)
    manager = mockobject.objects["/org/bluez"]
    manager.agents = {}
    manager.default_agents = []
    for name, sig, fn in (("RegisterAgent", "os", RegisterAgent),
                          ("UnregisterAgent", "o", UnregisterAgent),
                          ("RequestDefaultAgent", "o", RequestDefaultAgent)):
        manager.methods[AGENT_MANAGER_IFACE][name] = (sig, "", fn, fn)

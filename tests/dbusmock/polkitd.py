# SPDX-License-Identifier: LGPL-2.1-or-later
"""A python3-dbusmock template of polkitd (org.freedesktop.PolicyKit1) as strict as polkit 122,
written from its documented D-Bus API (polkit(8), the Authority and AuthenticationAgent
interfaces) and its implicit authorizations:

- CheckAuthorization(subject, action_id, details, flags, cancellation_id) knows only the
  actions of data/org.roam1.policy (an unknown one is an error, as in polkitd), checks the
  subject (system-bus-name or unix-process; another identity's subject only for uid 0) and
  decides like polkitd: a rule's grant (SetAllowed) first, then a temporary authorization
  kept from an earlier challenge (auth_*_keep), then the implicit authorization of the
  subject (allow_active for a uid in an active local session, SetActiveUids; allow_any
  otherwise): yes, no, or a challenge. A challenge with flag AllowUserInteraction (1) and an
  authentication agent registered for the subject's process goes to that agent
  (BeginAuthentication with a cookie and the identities that may authenticate: the subject's
  user for auth_self, the administrators, SetAdminUids, for auth_admin); the check is
  answered when the agent returns: authorized when the cookie was answered for one of those
  identities, else (False, False, {polkit.dismissed: true}). Without the flag or without an
  agent: (False, True, {}), is_challenge, as polkitd answers.
- RegisterAuthenticationAgent[WithOptions] for a unix-process subject of the caller's own
  user (uid 0 for anyone's), one agent per subject, dropped when its connection goes;
  UnregisterAuthenticationAgent.
- AuthenticationAgentResponse[2] only from uid 0 (polkit-agent-helper-1 is setuid root).

Test methods (org.freedesktop.DBus.Mock): SetAllowed(as) (a rule granting actions to
everyone), SetActiveUids(au), SetAdminUids(au), SetPassword(u uid, s password),
HelperResponse(s cookie, u uid, s password) -> b (what the setuid helper does after PAM: the
test's tests/world/polkit_agent_helper.py stands in for polkit-agent-helper-1 and calls this
instead of AuthenticationAgentResponse2, since it cannot run as root), GetChecks() ->
a(su) (each check's action and flags, in order), and python3-dbusmock's SetDelay(d),
SimulateHang(b), SimulateHangActions(as), ReleaseHangingCalls(), HaveHangingCalls().
"""
import os
import time
import uuid
import xml.etree.ElementTree as ET

import dbus

BUS_NAME = "org.freedesktop.PolicyKit1"
MAIN_OBJ = "/org/freedesktop/PolicyKit1/Authority"
MAIN_IFACE = "org.freedesktop.PolicyKit1.Authority"
AGENT_IFACE = "org.freedesktop.PolicyKit1.AuthenticationAgent"
MOCK_IFACE = "org.freedesktop.DBus.Mock"
SYSTEM_BUS = True

ERR_FAILED = "org.freedesktop.PolicyKit1.Error.Failed"
ERR_NOT_AUTHORIZED = "org.freedesktop.PolicyKit1.Error.NotAuthorized"
ALLOW_USER_INTERACTION = 1
POLICY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data",
                      "org.roam1.policy")
IMPLICIT = ("no", "yes", "auth_self", "auth_self_keep", "auth_admin", "auth_admin_keep")


def _fail(name, text):
    raise dbus.exceptions.DBusException(text, name=name)


def load_actions(path=POLICY):
    """{action: {"any": ..., "inactive": ..., "active": ..., "message": ...}}"""
    actions = {}
    for a in ET.parse(path).getroot().iter("action"):
        d = a.find("defaults")
        entry = {k: d.findtext("allow_" + k, "no").strip() for k in ("any", "inactive", "active")}
        for v in entry.values():
            assert v in IMPLICIT, v
        entry["message"] = a.findtext("message", "").strip()
        actions[a.get("id")] = entry
    return actions


def _bus_daemon(bus, method, name):
    return bus.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus",
                             "org.freedesktop.DBus", method, "s", [name])


def _proc_start_time(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


def _proc_uid(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Uid:"):
                return int(line.split()[1])
    raise OSError("no Uid")


def load(mock, _parameters):
    mock.AddProperties(MAIN_IFACE, dbus.Dictionary({
        "BackendName": "local", "BackendVersion": "122",
        "BackendFeatures": dbus.UInt32(1, variant_level=1)}, signature="sv"))
    mock.actions = load_actions()
    mock.allowed = []
    mock.active_uids = set()
    mock.admin_uids = [0]
    mock.passwords = {}
    mock.agents = {}       # (pid, start time) -> (bus name, object path, uid)
    mock.cookies = {}      # cookie -> {"uids": allowed uids, "answered": uid or None}
    mock.kept = set()      # ((pid, start time), action): temporary authorizations
    mock.checks = []
    mock.registrations = 0  # agents ever registered (the tests' view: who started one)
    mock.delay = 0
    mock.simulate_hang = False
    mock.hanging_actions = []
    mock.hanging_calls = []
    bus = mock.connection

    def owner_changed(name, old, new):
        if old and not new:
            for key, agent in list(mock.agents.items()):
                if agent[0] == name:
                    del mock.agents[key]
    bus.add_signal_receiver(owner_changed, "NameOwnerChanged", "org.freedesktop.DBus",
                            "org.freedesktop.DBus", "/org/freedesktop/DBus")


def _subject(self, subject, sender):
    """(kind, (pid, start time), uid) of a subject, checked as polkitd checks it."""
    kind, details = str(subject[0]), subject[1]
    bus = self.connection
    if kind == "system-bus-name":
        name = str(details.get("name", ""))
        try:
            pid = int(_bus_daemon(bus, "GetConnectionUnixProcessID", name))
            uid = int(_bus_daemon(bus, "GetConnectionUnixUser", name))
        except dbus.exceptions.DBusException:
            _fail(ERR_FAILED, "Unable to determine the process of name %s" % name)
        return kind, (pid, _proc_start_time(pid)), uid
    if kind == "unix-process":
        try:
            pid = int(details["pid"])
        except (KeyError, ValueError):
            _fail(ERR_FAILED, "unix-process subject without a pid")
        try:
            start = _proc_start_time(pid)
            uid = _proc_uid(pid)
        except OSError:
            _fail(ERR_FAILED, "No process with pid %d" % pid)
        given = int(details.get("start-time", 0))
        if given and given != start:
            _fail(ERR_FAILED, "The process with pid %d has another start time" % pid)
        if "uid" in details and int(details["uid"]) != -1 and int(details["uid"]) != uid:
            _fail(ERR_FAILED, "The process with pid %d is not of uid %d" % (pid, details["uid"]))
        return kind, (pid, start), uid
    _fail(ERR_FAILED, "Unsupported subject kind %s" % kind)


@dbus.service.method(MAIN_IFACE, in_signature="(sa{sv})sa{ss}us", out_signature="(bba{ss})",
                     sender_keyword="sender", async_callbacks=("ok_cb", "err_cb"))
def CheckAuthorization(self, subject, action_id, details, flags, cancellation_id, ok_cb, err_cb,
                       sender=None):
    try:
        caller_uid = int(_bus_daemon(self.connection, "GetConnectionUnixUser", sender))
        _kind, proc, uid = _subject(self, subject, sender)
        if caller_uid != 0 and caller_uid != uid:
            _fail(ERR_NOT_AUTHORIZED, "Only trusted callers (e.g. uid 0 or an action owner) can "
                  "use CheckAuthorization() for subjects belonging to other identities")
        action_id = str(action_id)
        if action_id not in self.actions:
            _fail(ERR_FAILED, "Action %s is not registered" % action_id)
    except dbus.exceptions.DBusException as e:
        err_cb(e)
        return
    flags = int(flags)
    self.checks.append((action_id, flags))
    time.sleep(self.delay)
    a = self.actions[action_id]
    implicit = a["active"] if uid in self.active_uids else a["any"]
    if action_id in self.allowed or (proc, action_id) in self.kept or implicit == "yes":
        ret = (True, False, {})
    elif implicit == "no":
        ret = (False, False, {})
    else:
        agent = self.agents.get(proc)
        if flags & ALLOW_USER_INTERACTION and agent:
            _challenge(self, agent, proc, uid, action_id, implicit, ok_cb)
            return
        ret = (False, True, {})
    if self.simulate_hang or action_id in self.hanging_actions:
        self.hanging_calls.append((ok_cb, ret))
    else:
        ok_cb(ret)


def _challenge(self, agent, proc, uid, action_id, implicit, ok_cb):
    name, path, _agent_uid = agent
    uids = [uid] if implicit.startswith("auth_self") else list(self.admin_uids)
    cookie = "cookie-%s" % uuid.uuid4().hex
    self.cookies[cookie] = {"uids": uids, "answered": None}
    identities = dbus.Array([dbus.Struct(("unix-user", {"uid": dbus.UInt32(u, variant_level=1)}),
                                         signature="sa{sv}") for u in uids], signature="(sa{sv})")

    def done(*_args):
        c = self.cookies.pop(cookie, None)
        if c and c["answered"] is not None and c["answered"] in c["uids"]:
            if implicit.endswith("_keep"):
                self.kept.add((proc, action_id))
            ok_cb((True, False, {}))
        else:
            ok_cb((False, False, {"polkit.dismissed": "true"}))

    self.connection.call_async(name, path, AGENT_IFACE, "BeginAuthentication",
                               "sssa{ss}sa(sa{sv})",
                               (action_id, self.actions[action_id]["message"], "",
                                dbus.Dictionary({}, signature="ss"), cookie, identities),
                               done, done, timeout=600)


def _register(self, subject, object_path, sender):
    caller_uid = int(_bus_daemon(self.connection, "GetConnectionUnixUser", sender))
    kind, details = str(subject[0]), subject[1]
    if kind != "unix-process":
        _fail(ERR_FAILED, "Only unix-process subjects are supported by this double")
    _kind, proc, uid = _subject(self, subject, sender)
    if caller_uid != 0 and caller_uid != uid:
        _fail(ERR_FAILED, "The process subject is not owned by the caller")
    if proc in self.agents:
        _fail(ERR_FAILED, "An authentication agent already exists for the given subject")
    self.agents[proc] = (sender, str(object_path), caller_uid)
    self.registrations += 1


@dbus.service.method(MAIN_IFACE, in_signature="(sa{sv})ss", sender_keyword="sender")
def RegisterAuthenticationAgent(self, subject, locale, object_path, sender=None):
    _register(self, subject, object_path, sender)


@dbus.service.method(MAIN_IFACE, in_signature="(sa{sv})ssa{sv}", sender_keyword="sender")
def RegisterAuthenticationAgentWithOptions(self, subject, locale, object_path, options,
                                           sender=None):
    _register(self, subject, object_path, sender)


@dbus.service.method(MAIN_IFACE, in_signature="(sa{sv})s", sender_keyword="sender")
def UnregisterAuthenticationAgent(self, subject, object_path, sender=None):
    _kind, proc, _uid = _subject(self, subject, sender)
    agent = self.agents.get(proc)
    if not agent or agent[0] != sender or agent[1] != str(object_path):
        _fail(ERR_FAILED, "No such agent registered")
    del self.agents[proc]


def _response(self, cookie, identity, sender):
    if int(_bus_daemon(self.connection, "GetConnectionUnixUser", sender)) != 0:
        _fail(ERR_FAILED, "Only uid 0 may invoke this method.")
    c = self.cookies.get(str(cookie))
    if not c:
        _fail(ERR_FAILED, "No such cookie")
    if str(identity[0]) == "unix-user":
        c["answered"] = int(identity[1]["uid"])


@dbus.service.method(MAIN_IFACE, in_signature="s(sa{sv})", sender_keyword="sender")
def AuthenticationAgentResponse(self, cookie, identity, sender=None):
    _response(self, cookie, identity, sender)


@dbus.service.method(MAIN_IFACE, in_signature="us(sa{sv})", sender_keyword="sender")
def AuthenticationAgentResponse2(self, uid, cookie, identity, sender=None):
    _response(self, cookie, identity, sender)


@dbus.service.method(MOCK_IFACE, in_signature="sus", out_signature="b")
def HelperResponse(self, cookie, uid, password):
    c = self.cookies.get(str(cookie))
    ok = bool(c) and self.passwords.get(int(uid)) == str(password)
    if ok:
        c["answered"] = int(uid)
    return ok


@dbus.service.method(MOCK_IFACE, in_signature="as")
def SetAllowed(self, actions):
    self.allowed = [str(a) for a in actions]


@dbus.service.method(MOCK_IFACE, in_signature="au")
def SetActiveUids(self, uids):
    self.active_uids = {int(u) for u in uids}


@dbus.service.method(MOCK_IFACE, in_signature="au")
def SetAdminUids(self, uids):
    self.admin_uids = [int(u) for u in uids]


@dbus.service.method(MOCK_IFACE, in_signature="us")
def SetPassword(self, uid, password):
    self.passwords[int(uid)] = str(password)


@dbus.service.method(MOCK_IFACE, out_signature="a(su)")
def GetChecks(self):
    return dbus.Array([dbus.Struct((a, dbus.UInt32(f))) for a, f in self.checks],
                      signature="(su)")


@dbus.service.method(MOCK_IFACE, out_signature="u")
def GetRegistrations(self):
    return dbus.UInt32(self.registrations)


@dbus.service.method(MOCK_IFACE, in_signature="d")
def SetDelay(self, delay):
    self.delay = delay


@dbus.service.method(MOCK_IFACE, in_signature="b")
def SimulateHang(self, hang):
    self.simulate_hang = hang


@dbus.service.method(MOCK_IFACE, in_signature="as")
def SimulateHangActions(self, actions):
    self.hanging_actions = actions


@dbus.service.method(MOCK_IFACE)
def ReleaseHangingCalls(self):
    for cb, ret in self.hanging_calls:
        cb(ret)
    self.hanging_calls = []


@dbus.service.method(MOCK_IFACE, out_signature="b")
def HaveHangingCalls(self):
    return len(self.hanging_calls) > 0

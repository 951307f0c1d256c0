"""org.roam1.WiFi of fake_roamd.py: Wi-Fi links joined through their owner (docs/dbus-api.md:
the research notes' §4.3 with roamd's deviations: no WiFiRadio unless a scenario gives one,
the EAP password as its own key `password`, JoinSecret and JoinCancel for the
caller of Join only, no `portal` result: the verdict comes on the link), strict as roamd is.

A link of the scenario with "_wifi" is a Wi-Fi link: its object has org.roam1.WiFi too.
  "_wifi": {"backend": "networkmanager", "why": "NetworkManager manages wifi0",
            "radio": "on", "last_scan": 0,
            "networks": [{"ssid": "Home" | "ssid_hex": "486f6d65", "signal": -48,
                          "security": "wpa2", "band": "5 GHz", "bssids": 1, "known": false,
                          "connected": false, "autoconnect": true, "priority": 0,
                          "last_connected": 0, "in_range": true,
                          "passphrase": "the right one", "identity": "alice",
                          "password": "its EAP password", "portal": "http://...",
                          "shareable": true, "name": "a display name roamd would send",
                          "eap_retry": true (a refused EAP password is asked again,
                          JoinNeedsSecret identity+password wrong-key, as through
                          NetworkManager and iwd; else auth-failed, as wpa_supplicant),
                          "stall": true (a join stops after authenticating: JoinCancel ends
                          it)}],
            "scan": [networks a Scan() adds or replaces, by SSID]}
What roamd refuses, this refuses, in its order (roamd-wifi-bus.c: authorization first, then
the arguments, then the owner and its state):
unknown or mistyped Join keys, an SSID that is empty or longer than 32 bytes, a hidden join
without security, an unknown security or EAP method, a passphrase shorter than 8 or longer
than 63 bytes (64 hex digits are a raw key), EAP without identity, a CA file that is no
absolute path; a second join while one runs (Busy); JoinSecret and JoinCancel of an unknown
join (InvalidArguments) or of another caller's join (AccessDenied); Forget, SetAutoconnect and
SetPriority of a network that is not known (InvalidArguments); Share of a network without a
secret the owner gives (Failed) and by anyone but root (admin every time: AccessDenied even
for group netdev); JoinUri of a DPP URI where the owner has no DPP (NotSupported); SetPriority
where the owner has none (iwd: NotSupported); every method, GetNetworks too, while there is
no owner roamd joins through (ConnMan, none: NotSupported with WiFiBackendWhy).

A join goes: JoinStep scanning; not in range (and not hidden) -> JoinDone not-found; a secured
network without a passphrase -> JoinNeedsSecret first; a wrong one -> JoinNeedsSecret
wrong-key (WPA2: asked again, in place), JoinDone wrong-key-or-out-of-range (WPA3 only: the
owner cannot tell) or auth-failed (enterprise); the right one -> JoinStep associating,
authenticating, configuring, checking, the link's verdict (WiFi* properties, LastProbe,
Connectivity online, or portal with the network's "portal" URL), then JoinDone connected (portal
behind a captive portal), as roamd orders them. The
Join property follows.
Commands (stdin of fake_roamd.py):
  {"op": "wifi_calls"}                        the calls: [method, link, ssid, {arguments}]
                                              (secrets are recorded as their length only)
  {"op": "wifi_joins"}                        the joins: {"id", "ssid", "passphrases": [...]}
  {"op": "wifi_set", "link": 3, "networks": [...]}   replace the networks
  {"op": "wifi_enroll", "link": 3, "ssid": "Home"}   the configurator of the running
                                              enrollment sent that network (joined as Join)
  {"op": "wifi_enroll", "link": 3, "fail": "words"}  or the exchange failed (JoinDone refused)
Enroll (roamd-wifi-enroll.c): NotSupported where the owner has no DPP (NetworkManager), Busy
while a join runs; answers (join id, DPP: URI), JoinStep enrolling, then as a join. JoinUri of
a DPP: text with apply: NotSupported on NetworkManager and iwd; on wpa_supplicant an
administrator every time, then a join that asks the passphrase of the network the link is on
and ends shared (or refused when it is on none).
"""
import dbus
import dbus.service
from gi.repository import GLib

WIFI_IFACE = "org.roam1.WiFi"
SECURITIES = ("open", "owe", "wpa", "wpa2", "wpa3", "wpa2/wpa3", "enterprise", "wep", "psk")
JOIN_KEYS = {"ssid": "ay", "hidden": "b", "security": "s", "passphrase": "ay", "identity": "s",
             "password": "ay",
             "anonymous-identity": "s", "eap": "s", "phase2": "s", "ca-file": "s",
             "domain": "s", "remember": "b", "autoconnect": "b"}
SECRET_KEYS = {"passphrase": "ay", "identity": "s", "password": "ay"}
HIDDEN_SECURITIES = ("open", "wpa2", "wpa3", "enterprise")
STEP_WORDS = {"enrolling": "waiting for a phone or another configurator to scan this device's "
                           "code", "scanning": "looking for the network", "associating": "associating",
              "authenticating": "checking the passphrase", "configuring": "getting an address",
              "checking": "checking the connection"}

# fake_roamd.py fills these in (it runs as __main__: no import cycle)
hooks = {}


def err(name, message):
    return hooks["error"](name, message)


def signal_words(dbm):
    if dbm == 0:
        return ""
    for limit, word in ((-50, "excellent"), (-60, "good"), (-70, "fair"), (-80, "weak")):
        if dbm >= limit:
            return word
    return "very weak"


def ssid_bytes(n):
    if "ssid_hex" in n:
        return bytes.fromhex(n["ssid_hex"])
    return n.get("ssid", "").encode()


def display_name(raw):
    if not raw:
        return "(hidden network)"
    return raw.decode("utf-8", "backslashreplace")


def signature_of(value):
    sig = getattr(value, "signature", None)
    if isinstance(value, dbus.Boolean):
        return "b"
    if isinstance(value, (dbus.Array, dbus.ByteArray)) and (sig == "y" or
                                                            isinstance(value, dbus.ByteArray)):
        return "ay"
    if isinstance(value, dbus.String):
        return "s"
    if isinstance(value, dbus.Int32):
        return "i"
    if isinstance(value, dbus.UInt32):
        return "u"
    return "?"


def zxing_escape(s):
    out = "".join("\\" + c if c in '\\;,":' else c for c in s)
    if out and all(c in "0123456789abcdefABCDEF" for c in out):
        return '"' + out + '"'
    return out


def parse_wifi_uri(uri):
    """The ZXing form: T:, S:, P:, H:, with backslash escapes; '%' is literal."""
    body = uri[5:]
    fields, key, val, i, esc = {}, None, "", 0, False
    cur = ""
    while i < len(body):
        c = body[i]
        if esc:
            cur += c
            esc = False
        elif c == "\\":
            esc = True
        elif c == ":" and key is None:
            key, cur = cur, ""
        elif c == ";":
            if key is None:
                if cur == "":
                    break
                raise err("InvalidArguments", f"'{cur}' in the WIFI: URI has no value")
            fields[key] = cur
            key, cur = None, ""
        else:
            cur += c
        i += 1
    else:
        raise err("InvalidArguments", "the WIFI: URI does not end with ';;'")
    if "S" not in fields or not fields["S"]:
        raise err("InvalidArguments", "the WIFI: URI has no network name (S:)")
    val = fields.get("P", "")
    if len(val) >= 2 and val[0] == '"' and val[-1] == '"':
        val = val[1:-1]
    return fields, val


class WiFiObject(dbus.service.Object):
    """The org.roam1.WiFi half of a Wi-Fi link (mixed into fake_roamd's Link)."""

    def wifi_init(self, wifi):
        self.wifi = wifi
        self.networks = [dict(n) for n in wifi.get("networks", [])]
        self.wifi_calls = []
        self.joins = []
        self.join = None  # the running join: {"id", "sender", "net", "waiting", ...}
        self.scan_waiters = []
        self.wifi_props = dbus.Dictionary({
            "WiFiBackend": dbus.String(wifi.get("backend", "networkmanager")),
            "WiFiBackendWhy": dbus.String(wifi.get("why", "NetworkManager manages it")),
            "Scanning": dbus.Boolean(False),
            "LastScan": dbus.UInt64(wifi.get("last_scan", 0)),
            "Join": dbus.Struct((dbus.UInt32(0), dbus.String("")), signature="us"),
        }, signature="sv")
        if "radio" in wifi:  # not offered by roamd yet (docs/dbus-api.md)
            self.wifi_props["WiFiRadio"] = dbus.String(wifi["radio"])

    def wifi_update(self, changes):
        changed = dbus.Dictionary({}, signature="sv")
        for k, v in changes.items():
            self.wifi_props[k] = v
            changed[k] = v
        self.PropertiesChanged(WIFI_IFACE, changed, dbus.Array([], signature="s"))

    def set_join(self, jid, words):
        self.wifi_update({"Join": dbus.Struct((dbus.UInt32(jid), dbus.String(words)),
                                              signature="us")})

    def find_net(self, raw):
        for n in self.networks:
            if ssid_bytes(n) == raw:
                return n
        return None

    def record(self, method, raw, args=None):
        self.wifi_calls.append([method, self.index, raw.decode("utf-8", "backslashreplace"),
                                args or {}])

    def check_auth(self, sender, admin=False):
        uid = self.connection.get_unix_user(sender)
        if admin and uid != 0:
            raise err("AccessDenied", "Sharing a network's key needs an administrator "
                      "every time (org.roam1.wifi-share).")
        if not hooks["authorized"](self.connection, sender):
            raise err("AccessDenied", hooks["denied"])

    def check_owner(self):
        """No owner roamd joins through (ConnMan, none): every method says why, as roamd."""
        if self.wifi_props["WiFiBackend"] not in ("networkmanager", "iwd", "wpa_supplicant"):
            raise err("NotSupported", self.wifi_props["WiFiBackendWhy"])

    def check_ssid(self, raw):
        if not 1 <= len(raw) <= 32:
            raise err("InvalidArguments", f"an SSID has 1 to 32 bytes, got {len(raw)}")

    # Properties: both interfaces of the object

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        if interface == WIFI_IFACE:
            if name not in self.wifi_props:
                raise dbus.exceptions.DBusException(
                    f"no property {interface}.{name}",
                    name="org.freedesktop.DBus.Error.UnknownProperty")
            return self.wifi_props[name]
        return super().Get(interface, name)

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s",
                         out_signature="a{sv}")
    def GetAll(self, interface):
        if interface == WIFI_IFACE:
            return self.wifi_props
        return super().GetAll(interface)

    # Methods

    @dbus.service.method(WIFI_IFACE, sender_keyword="sender", async_callbacks=("ok", "fail"))
    def Scan(self, sender=None, ok=None, fail=None):
        try:
            self.scan_start(sender)
        except dbus.DBusException as e:
            fail(e)
            return
        self.scan_waiters.append(ok)

    def scan_start(self, sender):
        self.check_auth(sender)
        self.check_owner()
        if self.wifi_props.get("WiFiRadio", "on") != "on":
            raise err("Failed", f"Wi-Fi is off (rfkill: {self.wifi_props['WiFiRadio']})")
        if self.wifi_props["Scanning"]:
            raise err("Busy", "a scan is running")
        self.wifi_calls.append(["Scan", self.index, "", {}])
        self.wifi_update({"Scanning": dbus.Boolean(True)})

        def done():
            for n in self.wifi.get("scan", []):
                old = self.find_net(ssid_bytes(n))
                if old:
                    old.update(n)
                else:
                    self.networks.append(dict(n))
            self.wifi_update({"Scanning": dbus.Boolean(False),
                              "LastScan": dbus.UInt64(hooks["now"]())})
            # answered when the scan ended, after its PropertiesChanged
            waiters, self.scan_waiters = self.scan_waiters, []
            for ok in waiters:
                ok()
            return False
        GLib.idle_add(done)

    @dbus.service.method(WIFI_IFACE, out_signature="a(aysa{sv})")
    def GetNetworks(self):
        self.check_owner()
        out = dbus.Array([], signature="(aysa{sv})")
        for n in self.networks:
            raw = ssid_bytes(n)
            sig = int(n.get("signal", 0)) if n.get("in_range", True) else 0
            props = dbus.Dictionary({
                "signal": dbus.Int32(sig),
                "signal-words": dbus.String(signal_words(sig) or "out of range"),
                "security": dbus.String(n.get("security", "open")),
                "band": dbus.String(n.get("band", "")),
                "bssids": dbus.UInt32(n.get("bssids", 1 if n.get("in_range", True) else 0)),
                "known": dbus.Boolean(n.get("known", False)),
                "connected": dbus.Boolean(n.get("connected", False)),
                "autoconnect": dbus.Boolean(n.get("autoconnect", n.get("known", False))),
                "last-connected": dbus.UInt64(n.get("last_connected", 0)),
                "in-range": dbus.Boolean(n.get("in_range", True)),
            }, signature="sv")
            if self.wifi_props["WiFiBackend"] != "iwd":  # iwd has no priority: absent
                props["priority"] = dbus.Int32(n.get("priority", 0))
            out.append(dbus.Struct((dbus.ByteArray(raw), dbus.String(n.get("name",
                                                                             display_name(raw))),
                                    props), signature="aysa{sv}"))
        return out

    def check_request(self, req):
        for k, v in req.items():
            if k not in JOIN_KEYS:
                raise err("InvalidArguments", f"unknown key '{k}' in the join request")
            if signature_of(v) != JOIN_KEYS[k]:
                raise err("InvalidArguments", f"'{k}' must be of type {JOIN_KEYS[k]}")
        if "ssid" not in req:
            raise err("InvalidArguments", "the join request has no 'ssid'")
        raw = bytes(req["ssid"])
        self.check_ssid(raw)
        sec = str(req.get("security", ""))
        if sec and sec not in SECURITIES:
            raise err("InvalidArguments", f"unknown security '{sec}'")
        if req.get("hidden") and sec not in HIDDEN_SECURITIES:
            raise err("InvalidArguments", "a hidden network needs its 'security': open, wpa2, "
                      "wpa3 or enterprise")
        eap = str(req.get("eap", ""))
        if "passphrase" in req and sec != "wpa3":
            self.check_passphrase(bytes(req["passphrase"]))
        if "password" in req and not (eap or sec == "enterprise"):
            raise err("InvalidArguments", "'password' is the EAP password: give 'eap'")
        if eap and eap not in ("peap", "ttls"):
            raise err("InvalidArguments", f"unknown EAP method '{eap}' (peap, ttls)")
        if (eap or sec == "enterprise") and not str(req.get("identity", "")):
            raise err("InvalidArguments", "an enterprise network needs an 'identity'")
        ca = str(req.get("ca-file", ""))
        if ca and not ca.startswith("/"):
            raise err("InvalidArguments", f"'ca-file' must be an absolute path, got '{ca}'")
        return raw

    def check_passphrase(self, p):
        if len(p) == 64 and all(c in b"0123456789abcdefABCDEF" for c in p):
            return
        if not 8 <= len(p) <= 63:
            raise err("InvalidArguments",
                      f"a passphrase has 8 to 63 characters (or 64 hex digits), got {len(p)}")

    @dbus.service.method(WIFI_IFACE, in_signature="a{sv}", out_signature="u",
                         sender_keyword="sender")
    def Join(self, req, sender=None):
        self.check_auth(sender)
        raw = self.check_request(req)
        self.check_owner()
        if self.join:
            raise err("Busy", f"joining {display_name(self.join['ssid'])} (join "
                      f"{self.join['id']}) first")
        return self.start_join(raw, req, sender)

    def start_join(self, raw, req, sender, method="Join"):
        hooks["join_id"][0] += 1
        jid = hooks["join_id"][0]
        args = {k: (len(bytes(v)) if k in ("passphrase", "password") else
                    (bool(v) if signature_of(v) == "b" else str(v)))
                for k, v in req.items() if k != "ssid"}
        self.record(method, raw, args)
        n = self.find_net(raw)
        j = {"id": jid, "sender": sender, "ssid": raw, "req": req, "waiting": None,
             "passphrases": [], "net_security": n.get("security") if n else ""}
        self.join = j
        self.joins.append(j)
        self.set_join(jid, STEP_WORDS["scanning"])
        GLib.idle_add(self.join_run, j, dict((k, req[k]) for k in ("passphrase", "identity",
                                                                    "password") if k in req))
        return dbus.UInt32(jid)

    def step(self, j, name):
        self.set_join(j["id"], STEP_WORDS[name])
        self.JoinStep(dbus.UInt32(j["id"]), name, STEP_WORDS[name])

    def done(self, j, result, words):
        if self.join is not j:
            return
        self.join = None
        self.set_join(0, "")
        self.JoinDone(dbus.UInt32(j["id"]), result, words)

    def join_run(self, j, secrets):
        if self.join is not j:
            return False
        raw = j["ssid"]
        name = display_name(raw)
        n = self.find_net(raw)
        self.step(j, "scanning")
        if n is None or not (n.get("in_range", True)):
            hint = "" if j["req"].get("hidden") else " (if it is hidden, join it as hidden)"
            self.done(j, "not-found", f"No network named {name} answered{hint}.")
            return False
        if not j["req"].get("hidden") and n.get("hidden"):
            self.done(j, "not-found", f"No network named {name} answered (if it is hidden, "
                      "join it as hidden).")
            return False
        sec = n.get("security", "open")
        if sec in ("open", "owe"):
            return self.connect(j, n)
        if sec == "enterprise":
            if "password" not in secrets:
                j["waiting"] = "identity+password"
                self.JoinNeedsSecret(dbus.UInt32(j["id"]), "identity+password", "first")
                return False
            self.step(j, "associating")
            self.step(j, "authenticating")
            j["passphrases"].append(bytes(secrets["password"]).decode("utf-8", "replace"))
            if (bytes(secrets["password"]) != n.get("password", "").encode() or
                    str(secrets.get("identity", j["req"].get("identity", ""))) !=
                    n.get("identity", "")):
                if n.get("eap_retry"):
                    j["waiting"] = "identity+password"
                    self.JoinNeedsSecret(dbus.UInt32(j["id"]), "identity+password", "wrong-key")
                    return False
                self.done(j, "auth-failed", f"{name} refused the user name or password "
                          "(EAP failure).")
                return False
            return self.connect(j, n)
        if "passphrase" not in secrets:
            j["waiting"] = "passphrase"
            self.JoinNeedsSecret(dbus.UInt32(j["id"]), "passphrase", "first")
            return False
        self.step(j, "associating")
        self.step(j, "authenticating")
        if n.get("stall"):
            return False
        p = bytes(secrets["passphrase"])
        j["passphrases"].append(p.decode("utf-8", "replace"))
        if p != n.get("passphrase", "").encode():
            if sec == "wpa3":
                self.done(j, "wrong-key-or-out-of-range",
                          f"{name} did not accept the password, or it is out of reach: WPA3 "
                          "cannot tell these apart.")
                return False
            j["waiting"] = "passphrase"
            self.JoinNeedsSecret(dbus.UInt32(j["id"]), "passphrase", "wrong-key")
            return False
        return self.connect(j, n)

    def connect(self, j, n):
        self.step(j, "associating")
        self.step(j, "configuring")
        self.step(j, "checking")
        for other in self.networks:
            other["connected"] = False
        n["connected"] = True
        if j["req"].get("remember", True):
            n["known"] = True
            n["autoconnect"] = bool(j["req"].get("autoconnect", True))
        if j["req"].get("hidden"):
            n["hidden"] = True
        raw = ssid_bytes(n)
        changes = {"WiFiState": "COMPLETED", "WiFiSSID": display_name(raw),
                   "WiFiSignal": int(n.get("signal", 0)), "Carrier": True, "State": "routable",
                   "LastProbe": hooks["now"]()}
        if n.get("portal"):
            changes.update({"Connectivity": "portal", "ConnectivityReason": "portal-redirect",
                            "CaptivePortalURL": n["portal"], "PortalURL": n["portal"]})
        else:
            changes.update({"Connectivity": "online", "ConnectivityReason": "ok"})
        # as roamd: the link's verdict after the join first, then JoinDone (portal when
        # behind a captive portal)
        self.update(changes)
        self.done(j, "portal" if n.get("portal") else "connected", f"Joined {display_name(raw)}.")
        return False

    def own_join(self, jid, sender, manage=False):
        if not self.join or self.join["id"] != jid:
            raise err("InvalidArguments", f"no join {jid} on this link")
        if self.join["sender"] != sender and not (manage and
                                                  hooks["authorized"](self.connection, sender)):
            raise err("AccessDenied", f"join {jid} is another client's")
        return self.join

    @dbus.service.method(WIFI_IFACE, in_signature="ua{sv}", sender_keyword="sender")
    def JoinSecret(self, jid, secrets, sender=None):
        self.check_owner()
        for k, v in secrets.items():
            if k not in SECRET_KEYS:
                raise err("InvalidArguments", f"unknown key '{k}' in the secrets")
            if signature_of(v) != SECRET_KEYS[k]:
                raise err("InvalidArguments", f"'{k}' must be of type {SECRET_KEYS[k]}")
        j = self.own_join(int(jid), sender)
        want = "password" if j["waiting"] == "identity+password" else "passphrase"
        if not j["waiting"]:
            raise err("Failed", f"join {jid} asked for no secret")
        if want not in secrets:
            raise err("InvalidArguments", f"join {jid} needs '{want}'")
        if want == "passphrase" and j["net_security"] != "wpa3":
            self.check_passphrase(bytes(secrets["passphrase"]))
        self.wifi_calls.append(["JoinSecret", self.index,
                                j["ssid"].decode("utf-8", "backslashreplace"),
                                {k: len(bytes(v)) if k != "identity" else str(v)
                                 for k, v in secrets.items()}])
        j["waiting"] = None
        if j.get("configure"):
            j["passphrases"].append(bytes(secrets["passphrase"]).decode("utf-8", "replace"))

            def sent():
                self.JoinStep(dbus.UInt32(j["id"]), "sharing", "sending the network to the "
                              "device")
                self.done(j, "shared", f"Sent {display_name(j['ssid'])} to the device of the "
                          "code (Wi-Fi Easy Connect)")
                return False
            GLib.idle_add(sent)
            return
        GLib.idle_add(self.join_run, j, dict(secrets))

    @dbus.service.method(WIFI_IFACE, in_signature="u", sender_keyword="sender")
    def JoinCancel(self, jid, sender=None):
        self.check_owner()
        j = self.own_join(int(jid), sender, manage=True)
        self.record("JoinCancel", j["ssid"])
        GLib.idle_add(lambda: self.done(j, "canceled", "Canceled.") and False)

    def known_net(self, raw):
        self.check_ssid(raw)
        n = self.find_net(raw)
        if not n or not n.get("known"):
            raise err("InvalidArguments", f"{display_name(raw)} is not a known network")
        return n

    @dbus.service.method(WIFI_IFACE, in_signature="ay", sender_keyword="sender")
    def Forget(self, ssid, sender=None):
        self.check_auth(sender)
        self.check_owner()
        raw = bytes(ssid)
        n = self.known_net(raw)
        self.record("Forget", raw)
        n["known"] = False
        n["autoconnect"] = False
        if not n.get("in_range", True):
            self.networks.remove(n)

    @dbus.service.method(WIFI_IFACE, in_signature="ayb", sender_keyword="sender")
    def SetAutoconnect(self, ssid, on, sender=None):
        self.check_auth(sender)
        self.check_owner()
        raw = bytes(ssid)
        n = self.known_net(raw)
        self.record("SetAutoconnect", raw, {"on": bool(on)})
        n["autoconnect"] = bool(on)

    @dbus.service.method(WIFI_IFACE, in_signature="ayi", sender_keyword="sender")
    def SetPriority(self, ssid, prio, sender=None):
        self.check_auth(sender)
        self.check_owner()
        raw = bytes(ssid)
        n = self.known_net(raw)
        if self.wifi_props["WiFiBackend"] == "iwd":
            raise err("NotSupported", "iwd orders known networks itself: no priority")
        self.record("SetPriority", raw, {"priority": int(prio)})
        n["priority"] = int(prio)

    @dbus.service.method(WIFI_IFACE, in_signature="ay", out_signature="s",
                         sender_keyword="sender")
    def Share(self, ssid, sender=None):
        self.check_auth(sender, admin=True)
        self.check_owner()
        raw = bytes(ssid)
        n = self.known_net(raw)
        self.record("Share", raw)
        sec = n.get("security", "open")
        if sec == "enterprise":
            raise err("Failed", f"{display_name(raw)} is an enterprise network: a QR code "
                      "cannot carry its login")
        if sec in ("open", "owe"):
            t, p = "nopass", None
        else:
            if not n.get("shareable", True) or not n.get("passphrase"):
                raise err("Failed", f"{self.wifi_props['WiFiBackend']} does not give out the "
                          f"key of {display_name(raw)}")
            t, p = ("SAE" if sec == "wpa3" else "WPA"), n["passphrase"]
        s = raw.decode("utf-8", "replace")
        uri = f"WIFI:T:{t};S:{zxing_escape(s)};"
        if p is not None:
            uri += f"P:{zxing_escape(p)};"
        if n.get("hidden"):
            uri += "H:true;"
        return uri + ";"

    @dbus.service.method(WIFI_IFACE, in_signature="sb", out_signature="a{sv}",
                         sender_keyword="sender")
    def JoinUri(self, uri, apply, sender=None):
        self.check_owner()
        uri = str(uri)
        summary = dbus.Dictionary({}, signature="sv")
        if uri.startswith("DPP:"):
            if not uri.endswith(";;") or ";K:" not in ";" + uri[4:]:
                raise err("InvalidArguments", "the DPP: URI has no public key (K:) or no ';;'")
            summary["kind"] = dbus.String("dpp")
            for tok in uri[4:-2].split(";"):
                key, _, val = tok.partition(":")
                if key in ("M", "C", "I"):
                    summary[{"M": "mac", "C": "channels", "I": "info"}[key]] = dbus.String(val)
                elif key == "V":
                    summary["version"] = dbus.UInt32(int(val))
            if apply:
                # roamd-wifi-enroll.c: a configurator of the network the link is on, where
                # wpa_supplicant owns it (the passphrase asked: it never gives it back)
                backend = self.wifi_props["WiFiBackend"]
                if backend == "networkmanager":
                    raise err("NotSupported", "NetworkManager cannot configure a device by DPP "
                              "(Wi-Fi Easy Connect)")
                if backend == "iwd":
                    raise err("NotSupported", "iwd's ConfigureEnrollee does not say whether the "
                              "device received the network, so roamd does not configure "
                              "devices through iwd")
                self.check_auth(sender, admin=True)
                if self.join:
                    raise err("Busy", f"Already running on {self.values.get('Name', '')}")
                on = next((n for n in self.networks if n.get("connected")), None)
                hooks["join_id"][0] += 1
                jid = hooks["join_id"][0]
                raw = ssid_bytes(on) if on else b""
                self.record("JoinUri", raw, {"dpp": True})
                j = {"id": jid, "sender": sender, "ssid": raw, "req": {}, "waiting": None,
                     "passphrases": [], "net_security": "", "configure": on}
                self.join = j
                self.joins.append(j)

                def ask():
                    if on is None:
                        self.done(j, "refused", f"{self.values.get('Name', '')} is not on a "
                                  "network: a configurator sends the network it is on")
                    else:
                        j["waiting"] = "passphrase"
                        self.JoinNeedsSecret(dbus.UInt32(jid), "passphrase", "first")
                    return False
                GLib.idle_add(ask)
                summary["join"] = dbus.UInt32(jid)
            return summary
        if not uri.startswith("WIFI:"):
            raise err("InvalidArguments", "not a WIFI: or DPP: URI")
        fields, password = parse_wifi_uri(uri)
        t = fields.get("T", "nopass")
        sec = {"WPA": "", "SAE": "wpa3", "nopass": "open", "WEP": "wep"}.get(t)
        if sec is None:
            raise err("InvalidArguments", f"unknown T:{t} in the WIFI: URI")
        if sec == "wep":
            raise err("NotSupported", "WEP is broken; roam does not join WEP networks")
        raw = fields["S"].encode()
        self.check_ssid(raw)
        hidden = fields.get("H", "") == "true"
        summary["kind"] = dbus.String("wifi")
        summary["ssid"] = dbus.ByteArray(raw)
        summary["name"] = dbus.String(display_name(raw))
        summary["security"] = dbus.String(sec or "wpa2")
        summary["hidden"] = dbus.Boolean(hidden)
        summary["has-passphrase"] = dbus.Boolean(bool(password))
        if not apply:
            return summary
        req = dbus.Dictionary({"ssid": dbus.ByteArray(raw)}, signature="sv")
        if hidden:
            req["hidden"] = dbus.Boolean(True)
            req["security"] = dbus.String(sec or "wpa2")
        elif sec == "wpa3":
            req["security"] = dbus.String("wpa3")
        if password:
            req["passphrase"] = dbus.ByteArray(password.encode())
        self.check_request(req)
        self.check_auth(sender)
        if self.join:
            raise err("Busy", f"joining {display_name(self.join['ssid'])} first")
        summary["join"] = self.start_join(raw, req, sender, "JoinUri")
        return summary

    @dbus.service.method(WIFI_IFACE, out_signature="us", sender_keyword="sender")
    def Enroll(self, sender=None):
        self.check_auth(sender)
        self.check_owner()
        if self.wifi_props["WiFiBackend"] == "networkmanager":
            raise err("NotSupported", "NetworkManager cannot enroll a device by DPP (Wi-Fi "
                      "Easy Connect)")
        if self.join:
            raise err("Busy", f"Already running on {self.values.get('Name', '')}")
        hooks["join_id"][0] += 1
        jid = hooks["join_id"][0]
        self.record("Enroll", b"")
        j = {"id": jid, "sender": sender, "ssid": b"", "req": {}, "waiting": None,
             "passphrases": [], "net_security": "", "enroll": True}
        self.join = j
        self.joins.append(j)
        GLib.idle_add(lambda: self.step(j, "enrolling") and False)
        uri = ("DPP:C:81/1;M:02726d000030;V:2;K:MDkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDIgACFZq9YNQ"
               "AmI26YSe+ixNxngctk/4qn8uSe3P2t+8iOaE=;;")
        return dbus.Struct((dbus.UInt32(jid), dbus.String(uri)), signature="us")

    def enroll_send(self, ssid=None, fail=None):
        j = self.join
        if not j or not j.get("enroll"):
            raise ValueError("no enrollment runs")
        if fail:
            self.done(j, "refused", fail)
            return
        n = self.find_net(ssid.encode())
        j["ssid"] = ssid.encode()
        j["req"] = {"ssid": ssid.encode()}
        if n is None:
            self.done(j, "not-found", f"No network named {ssid} answered.")
            return
        self.connect(j, n)

    # Signals

    @dbus.service.signal(WIFI_IFACE, signature="uss")
    def JoinStep(self, jid, step, words):
        pass

    @dbus.service.signal(WIFI_IFACE, signature="uss")
    def JoinNeedsSecret(self, jid, kind, why):
        pass

    @dbus.service.signal(WIFI_IFACE, signature="uss")
    def JoinDone(self, jid, result, words):
        pass

"""A wpa_supplicant 2.10 P2P device for tests, on a real unix datagram control socket.

The machine has no radio, and the wired driver has no P2P, so roamd's P2P side is tested
against this peer. It answers and announces byte for byte what wpa_supplicant 2.10 does; the
source of each format is cited where it is produced (hostap tree, tag hostap_2_10):

  wpa_supplicant/ctrl_iface_unix.c   one datagram per reply; events to ATTACHed clients as
                                     "<level>text" (wpa_supplicant_ctrl_iface_send); DETACH of
                                     a client that is not attached answers FAIL
  wpa_supplicant/ctrl_iface.c        PING/STATUS/P2P_* replies ("OK\\n", "FAIL\\n",
                                     "UNKNOWN COMMAND\\n", P2P_CONNECT ... pin -> "%08d" without
                                     newline, p2p_ctrl_peer() key=value lines,
                                     wpa_supplicant_ctrl_iface_status() key order)
  wpa_supplicant/p2p_supplicant.c    P2P-* events (wpas_dev_found, wpas_dev_lost,
                                     wpas_go_neg_req_rx, wpas_prov_disc_req,
                                     wpas_p2p_group_started, wpas_p2p_group_delete, ...)
  src/common/wpa_ctrl.h              the event names, most with a trailing space
  src/wps/wps_common.c               wps_generate_pin() (8 digits, last one a checksum)
  wpa_supplicant/ctrl_iface.c        networks: ADD_NETWORK ("%d\\n"), SET_NETWORK,
                                     GET_NETWORK (the value without newline; keys as "*",
                                     wpa_config_get_no_key()), ENABLE_NETWORK, REMOVE_NETWORK,
                                     LIST_NETWORKS (header, then id TAB ssid TAB bssid TAB
                                     flags), SAVE_CONFIG (FAIL without update_config=1);
                                     SIGNAL_POLL (wpa_supplicant_signal_poll(): RSSI, LINKSPEED,
                                     NOISE, FREQUENCY lines; FAIL when the driver has none)

With global_path it is the global control interface instead (wpa_supplicant -g PATH,
ctrl_iface_unix.c wpa_supplicant_global_ctrl_iface_receive()): INTERFACES lists the one
interface, "IFNAME=x CMD" runs CMD on it (wpa_supplicant_global_ctrl_iface_process():
"FAIL-NO-IFNAME-MATCH\n" for another x, as the global transcript shows), and events carry
"IFNAME=x " only when sent with wpa_msg() (per interface: CTRL-EVENT-*), not with
wpa_msg_global() (the P2P-* events of p2p_supplicant.c): wpa_supplicant_ctrl_iface_msg_cb().

With p2p=False it behaves like wpa_supplicant on a driver without P2P (what the wired driver
gives): test_fake_vs_real.py compares those answers with transcripts recorded from the real
daemon (tests/wpa/transcripts/)."""
import os
import re
import random
import select
import socket
import threading
import time

MSG_INFO = 3  # src/utils/wpa_debug.h
CTRL_IFACE_MAX_LEN = 8192  # wpa_supplicant/ctrl_iface.h: a longer request gets no reply at all
WPS_DEV_NAME_MAX_LEN = 32  # src/wps/wps_defs.h: SET device_name's limit (config.c STR_RANGE)
# ctrl_iface.c wpa_supplicant_ctrl_iface_process(): the P2P_* words 2.10 knows; any other
# word falls through to "UNKNOWN COMMAND"
P2P_COMMANDS = frozenset((
    "P2P_FIND", "P2P_STOP_FIND", "P2P_ASP_PROVISION", "P2P_ASP_PROVISION_RESP", "P2P_CONNECT",
    "P2P_LISTEN", "P2P_GROUP_REMOVE", "P2P_GROUP_ADD", "P2P_GROUP_MEMBER", "P2P_PROV_DISC",
    "P2P_GET_PASSPHRASE", "P2P_SERV_DISC_REQ", "P2P_SERV_DISC_CANCEL_REQ", "P2P_SERV_DISC_RESP",
    "P2P_SERVICE_UPDATE", "P2P_SERV_DISC_EXTERNAL", "P2P_SERVICE_FLUSH", "P2P_SERVICE_ADD",
    "P2P_SERVICE_REP", "P2P_SERVICE_DEL", "P2P_REJECT", "P2P_INVITE", "P2P_PEER", "P2P_SET",
    "P2P_FLUSH", "P2P_UNAUTHORIZE", "P2P_CANCEL", "P2P_PRESENCE_REQ", "P2P_EXT_LISTEN",
    "P2P_REMOVE_CLIENT", "P2P_LO_START", "P2P_LO_STOP"))
# The global parameters SET takes that roamd or the tests use (config.c global_fields[]); any
# other name is refused as unknown, as wpa_config_process_global() refuses one it lacks.
SET_GLOBALS = {"device_name": WPS_DEV_NAME_MAX_LEN, "manufacturer": 64, "model_name": 32,
               "model_number": 32, "serial_number": 32, "device_type": None,
               "config_methods": None, "p2p_go_intent": None, "persistent_reconnect": None,
               "update_config": None, "p2p_listen_reg_class": None, "p2p_listen_channel": None}
# config.c wpa_config_parse_key_mgmt(), _proto(), _auth_alg(): space separated lists of these
KEY_MGMT = frozenset(("WPA-PSK", "WPA-EAP", "IEEE8021X", "NONE", "WPA-NONE", "FT-PSK", "FT-EAP",
                      "FT-EAP-SHA384", "WPA-EAP-SHA384", "WPA-PSK-SHA256", "WPA-EAP-SHA256",
                      "WPS", "SAE", "FT-SAE", "WPA-EAP-SUITE-B", "WPA-EAP-SUITE-B-192",
                      "FILS-SHA256", "FILS-SHA384", "FT-FILS-SHA256", "FT-FILS-SHA384", "OWE",
                      "DPP"))
PROTO = frozenset(("WPA", "RSN", "WPA2", "OSEN"))
AUTH_ALG = frozenset(("OPEN", "SHARED", "LEAP"))
MAX_WEP_KEY_LEN = 16  # src/common/defs.h
REPLY_SIZE = 4096  # ctrl_iface.c wpa_supplicant_ctrl_iface_process(): the reply buffer


def printf_encode(data):
    """src/utils/common.c printf_encode(): how LIST_NETWORKS shows an SSID (wpa_ssid_txt())."""
    special = {0x22: '\\"', 0x5c: "\\\\", 0x1b: "\\e", 0x0a: "\\n", 0x0d: "\\r",
               0x09: "\\t"}
    return "".join(special.get(b) or (chr(b) if 32 <= b <= 126 else "\\x%02x" % b)
                   for b in data)


def config_write_string(data):
    """config.c wpa_config_write_string(): quoted when every byte is printable ASCII, else
    lowercase hex without quotes (GET_NETWORK ssid)."""
    if any(b < 32 or b >= 127 for b in data):
        return data.hex()
    return '"%s"' % data.decode()


def wps_pin_checksum(pin7):
    # src/wps/wps_common.c, wps_pin_checksum()
    accum = 0
    while pin7:
        accum += 3 * (pin7 % 10)
        pin7 //= 10
        accum += pin7 % 10
        pin7 //= 10
    return (10 - accum % 10) % 10


def wps_generate_pin(rng):
    val = rng.randrange(10000000)
    return val * 10 + wps_pin_checksum(val)


class Peer:
    def __init__(self, addr, name, dev_type="7-0050F204-1", methods=0x188, dev_capab=0x25,
                 group_capab=0x0):
        self.addr, self.name, self.dev_type = addr, name, dev_type
        self.methods, self.dev_capab, self.group_capab = methods, dev_capab, group_capab

    def params(self):
        # p2p_supplicant.c wpas_prov_disc_req(): " p2p_dev_addr=... pri_dev_type=%s
        # name='%s' config_methods=0x%x dev_capab=0x%x group_capab=0x%x%s%s"
        return (f" p2p_dev_addr={self.addr} pri_dev_type={self.dev_type} name='{self.name}' "
                f"config_methods=0x{self.methods:x} dev_capab=0x{self.dev_capab:x} "
                f"group_capab=0x{self.group_capab:x}")


class FakeWpa:
    def __init__(self, ctrl_dir, ifname="p2p-dev-wlan0", p2p=True, address="02:00:00:00:aa:00",
                 uuid="178a6e1b-d99d-5e31-81dd-f371512dc3a7", seed=1, global_path=None):
        self.ctrl_dir, self.ifname, self.p2p = ctrl_dir, ifname, p2p
        self.global_path = global_path
        self.address, self.uuid = address, uuid
        self.p2p_dev_addr = address
        self.rng = random.Random(seed)
        self.peers = {}  # known to the P2P module (found); P2P_PEER answers from these
        self.groups = {}  # ifname -> role
        self.pending = None  # peer address of a P2P_CONNECT in progress
        self.finding = False
        self.attached = set()
        self.requests = []
        self.hold = set()  # command words whose reply is held back
        self.held = []  # (client address, command)
        self.cond = threading.Condition()
        self.sock = None
        self.thread = None
        self.wake_r, self.wake_w = os.pipe()
        self.running = False
        self.networks = {}  # id -> {field: value as set}, plus "disabled"
        self.update_config = True
        self.saved = None  # the networks at the last SAVE_CONFIG
        self.fail = {}  # "SET_NETWORK psk" or "ADD_NETWORK" -> the reply to give instead
        self.station = None  # associated: {"ssid", "bssid", "freq"}
        self.current = None  # the network id of the association (LIST_NETWORKS [CURRENT])
        self.signal = None  # {"RSSI": -58, "LINKSPEED": 300, "NOISE": 9999, "FREQUENCY": 5180}
        # the radio's world for joins (station side): BSSes in range, each
        # {"id", "bssid", "freq", "level", "flags", "ssid" (bytes), "psk": the AP's key or None,
        # "hidden": True for an AP whose beacon leaves its SSID out}
        self.bsses = []
        self.scanning = False
        # DPP (dpp_supplicant.c, dpp.c): the bootstrap keys made (id -> URI), the listen
        # frequency (0: not listening); the driver's flags (DRIVER_FLAGS): a radio's by default
        self.dpp_boot = {}
        self.dpp_next_id = 1
        self.dpp_listen = 0
        self.driver_wired = False
        self.dpp_peers = {}  # DPP_QR_CODE: id -> URI
        self.dpp_auth = None  # the last DPP_AUTH_INIT's parameters

    @property
    def path(self):
        return self.global_path or os.path.join(self.ctrl_dir, self.ifname)

    # The socket.

    def start(self):
        os.makedirs(self.ctrl_dir, exist_ok=True)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        s.bind(self.path)
        self.sock = s
        self.attached = set()
        self.running = True
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        """Goes away like a killed daemon: the socket disappears, nothing more is answered."""
        if not self.running:
            return
        self.running = False
        os.write(self.wake_w, b"x")
        self.thread.join(5)
        os.unlink(self.path)
        self.sock.close()
        self.sock = None

    def close(self):
        self.stop()
        os.close(self.wake_r)
        os.close(self.wake_w)

    def _loop(self):
        while self.running:
            r, _, _ = select.select([self.sock, self.wake_r], [], [])
            if self.wake_r in r:
                os.read(self.wake_r, 64)
                continue
            data, addr = self.sock.recvfrom(65536)
            if len(data) > CTRL_IFACE_MAX_LEN:
                # ctrl_iface_unix.c: "recvform(ctrl_iface): input truncated", no reply
                with self.cond:
                    self.requests.append("(dropped: %d bytes)" % len(data))
                    self.cond.notify_all()
                continue
            # the request is a C string: it ends at its first NUL
            cmd = data.split(b"\0", 1)[0].decode(errors="replace")
            with self.cond:
                self.requests.append(cmd)
                self.cond.notify_all()
                if cmd.split(" ")[0] in self.hold:
                    self.held.append((addr, cmd))
                    continue
            reply, events = self.handle(cmd, addr)
            # ctrl_iface_unix.c wpa_supplicant_ctrl_iface_receive(): the command runs
            # (wpa_supplicant_ctrl_iface_process()), and the events it causes go out from
            # wpa_msg() at once (wpa_supplicant_ctrl_iface_msg_cb()), before the reply's
            # sendto(): P2P-GROUP-REMOVED comes before P2P_GROUP_REMOVE's OK.
            for e in events:
                self.event(e)
            if reply is not None:
                self._sendto(reply, addr)

    def _sendto(self, data, addr):
        try:
            # surrogateescape: a peer name may hold bytes that are not UTF-8 (over the air, a
            # P2P device name is any bytes; b"TV\xc3\x28".decode(errors="surrogateescape"))
            self.sock.sendto(data if isinstance(data, bytes)
                             else data.encode(errors="surrogateescape"), addr)
        except OSError:
            pass  # the client is gone (ctrl_iface_unix.c logs and drops it too)

    # Test controls.

    def wait_request(self, prefix, timeout=10.0):
        """The first request starting with prefix (each one is returned once)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for i, r in enumerate(self.requests):
                    if r.startswith(prefix):
                        return self.requests.pop(i)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {prefix!r} request; got {self.requests}")
                self.cond.wait(left)

    def wait_attached(self, timeout=10.0):
        self.wait_request("ATTACH", timeout)

    def release(self, reply=None, to_addr=None):
        """Answers held requests (their normal answer, or reply)."""
        with self.cond:
            held, self.held = self.held, []
        for addr, cmd in held:
            r, events = self.handle(cmd, addr)
            for e in events:  # before the reply, as in _loop()
                self.event(e)
            self._sendto(reply if reply is not None else r, to_addr or addr)

    def event(self, text, level=MSG_INFO):
        """Sends an event to every attached client (ctrl_iface_unix.c: "<%d>" then the text,
        after "IFNAME=x " on the global interface for per-interface events)."""
        prefix = ""
        if self.global_path and not text.startswith("P2P-"):
            prefix = f"IFNAME={self.ifname} "
        self.raw(f"{prefix}<{level}>{text}".encode(errors="surrogateescape"))

    def raw(self, data):
        for a in list(self.attached):
            self._sendto(data, a)

    def add_peer(self, peer, new=1):
        """The P2P module found a peer: P2P-DEVICE-FOUND (p2p_supplicant.c wpas_dev_found():
        MACSTR " p2p_dev_addr=" MACSTR " pri_dev_type=%s name='%s' config_methods=0x%x
        dev_capab=0x%x group_capab=0x%x%s%s%s new=%d")."""
        self.peers[peer.addr] = peer
        self.event(f"P2P-DEVICE-FOUND {peer.addr} p2p_dev_addr={peer.addr} "
                   f"pri_dev_type={peer.dev_type} name='{peer.name}' "
                   f"config_methods=0x{peer.methods:x} dev_capab=0x{peer.dev_capab:x} "
                   f"group_capab=0x{peer.group_capab:x} new={new}")

    def lose_peer(self, addr):
        # wpas_dev_lost(): P2P_EVENT_DEVICE_LOST "p2p_dev_addr=" MACSTR
        self.peers.pop(addr, None)
        self.event(f"P2P-DEVICE-LOST p2p_dev_addr={addr}")

    def go_neg_request(self, addr, dev_passwd_id, go_intent=7):
        # wpas_go_neg_req_rx(): MACSTR " dev_passwd_id=%u go_intent=%u"
        self.event(f"P2P-GO-NEG-REQUEST {addr} dev_passwd_id={dev_passwd_id} "
                   f"go_intent={go_intent}")

    def prov_disc_pbc_req(self, peer):
        # wpas_prov_disc_req(): P2P_EVENT_PROV_DISC_PBC_REQ MACSTR "%s" (params)
        self.peers[peer.addr] = peer
        self.event(f"P2P-PROV-DISC-PBC-REQ {peer.addr}{peer.params()}")

    def prov_disc_show_pin(self, peer):
        # wpas_prov_disc_local_display(): MACSTR " %08d%s"; returns the PIN
        self.peers[peer.addr] = peer
        pin = f"{wps_generate_pin(self.rng):08d}"
        self.event(f"P2P-PROV-DISC-SHOW-PIN {peer.addr} {pin}{peer.params()}")
        return pin

    def prov_disc_enter_pin(self, peer):
        # wpas_prov_disc_local_keypad(): MACSTR "%s"
        self.peers[peer.addr] = peer
        self.event(f"P2P-PROV-DISC-ENTER-PIN {peer.addr}{peer.params()}")

    def prov_disc_failure(self, addr, status=1):
        # wpas_prov_disc_fail(): " p2p_dev_addr=" MACSTR " status=%d"
        self.event(f"P2P-PROV-DISC-FAILURE p2p_dev_addr={addr} status={status}")

    def go_neg_failure(self, status):
        # wpas_go_neg_completed(): P2P_EVENT_GO_NEG_FAILURE "status=%d"
        self.pending = None
        self.event(f"P2P-GO-NEG-FAILURE status={status}")

    def group_formation_failure(self):
        # wpas_group_formation_completed(): P2P_EVENT_GROUP_FORMATION_FAILURE (trailing space)
        self.pending = None
        self.event("P2P-GROUP-FORMATION-FAILURE ")

    def group_started(self, peer_addr, role, ifname="p2p-wlan0-0", freq=2437):
        """wpas_p2p_group_started(): "%s %s ssid=\\"%s\\" freq=%d%s%s%s%s%s go_dev_addr="
        MACSTR "%s%s" (psk for a client, passphrase for a GO)."""
        self.pending = None
        self.groups[ifname] = role
        ssid = "DIRECT-rm"
        if role == "GO":
            self.event(f'P2P-GROUP-STARTED {ifname} GO ssid="{ssid}" freq={freq} '
                       f'passphrase="abcdefgh" go_dev_addr={self.p2p_dev_addr}')
        else:
            self.event(f'P2P-GROUP-STARTED {ifname} client ssid="{ssid}" freq={freq} '
                       f"psk={'0' * 64} go_dev_addr={peer_addr} [PERSISTENT]")

    def group_removed(self, ifname, reason):
        """wpas_p2p_group_delete(): "%s %s%s" with " reason=REQUESTED" and friends, or no
        reason at all (removal reason unknown)."""
        role = self.groups.pop(ifname, "GO")
        self.event(f"P2P-GROUP-REMOVED {ifname} {role}" + (f" reason={reason}" if reason else ""))

    # Commands (ctrl_iface.c wpa_supplicant_ctrl_iface_process()).

    def associate(self, ssid, bssid, freq, rssi, linkspeed):
        """A station association: STATUS says COMPLETED, SIGNAL_POLL answers;
        CTRL-EVENT-CONNECTED as events.c wpa_supplicant_event_assoc() words it (the wired
        transcript shows the same)."""
        self.station = {"ssid": ssid, "bssid": bssid, "freq": freq}
        self.signal = {"RSSI": rssi, "LINKSPEED": linkspeed, "NOISE": 9999, "FREQUENCY": freq}
        self.event(f"CTRL-EVENT-CONNECTED - Connection to {bssid} completed [id=0 id_str=]")

    def signal_change(self, rssi, linkspeed, announce=True):
        """The driver's signal moved; with announce, CTRL-EVENT-SIGNAL-CHANGE as events.c
        wpas_event_signal_change() words it ("above=%d signal=%d noise=%d txrate=%lu")."""
        self.signal.update(RSSI=rssi, LINKSPEED=linkspeed)
        if announce:
            self.event(f"CTRL-EVENT-SIGNAL-CHANGE above=0 signal={rssi} noise=-92 "
                       f"txrate={linkspeed * 1000}")

    def disassociate(self):
        bssid = self.station["bssid"]
        self.station = self.signal = None
        self.event(f"CTRL-EVENT-DISCONNECTED bssid={bssid} reason=3 locally_generated=1")

    def status(self):
        # wpa_supplicant_ctrl_iface_status(): when associated bssid, freq, ssid, id, mode,
        # ciphers, key_mgmt (the order of the wired transcript's status_connected), then
        # wpa_state, [p2p_device_address], address, uuid
        s = "wpa_state=DISCONNECTED\n"
        if getattr(self, "station", None):
            st = self.station
            s = (f"bssid={st['bssid']}\nfreq={st['freq']}\nssid={st['ssid']}\nid=0\n"
                 "mode=station\npairwise_cipher=CCMP\ngroup_cipher=CCMP\nkey_mgmt=WPA2-PSK\n"
                 "wpa_state=COMPLETED\n")
        if self.p2p:
            s += f"p2p_device_address={self.p2p_dev_addr}\n"
        return s + f"address={self.address}\nuuid={self.uuid}\n"

    def peer_info(self, p):
        # ctrl_iface.c p2p_ctrl_peer()
        return (f"{p.addr}\npri_dev_type={p.dev_type}\ndevice_name={p.name}\nmanufacturer=\n"
                f"model_name=\nmodel_number=\nserial_number=\nconfig_methods=0x{p.methods:x}\n"
                f"dev_capab=0x{p.dev_capab:x}\ngroup_capab=0x{p.group_capab:x}\nlevel=-40\n")

    def handle(self, cmd, addr):
        """Returns (reply, events to send after it)."""
        fail, ok = "FAIL\n", "OK\n"
        if self.global_path and cmd not in ("ATTACH", "DETACH", "PING"):
            if cmd == "INTERFACES":
                return f"{self.ifname}\n", []
            if not cmd.startswith("IFNAME="):
                return "UNKNOWN COMMAND\n", []
            target, _, cmd = cmd[7:].partition(" ")
            if target != self.ifname:
                return "FAIL-NO-IFNAME-MATCH\n", []
        words = cmd.split(" ")
        w = words[0]
        if w == "PING":
            return "PONG\n", []
        if w == "ATTACH":
            self.attached.add(addr)
            return ok, []
        if w == "DETACH":
            if addr not in self.attached:
                return fail, []
            self.attached.discard(addr)
            return ok, []
        if w == "STATUS":
            return self.status(), []
        if w == "DISCONNECT" and len(words) == 1 and self.station:
            # wpas_request_disconnection() deauthenticates at once: CTRL-EVENT-DISCONNECTED
            # (events.c wpa_supplicant_event_disassoc_finish() words) and robust_av.c
            # wpas_dscp_deinit()'s "CTRL-EVENT-DSCP-POLICY clear_all", both before the OK
            # (the wired transcript's disconnect_exchange)
            bssid = self.station["bssid"]
            self.station = self.signal = None
            return ok, [f"CTRL-EVENT-DISCONNECTED bssid={bssid} reason=3 locally_generated=1",
                        "CTRL-EVENT-DSCP-POLICY clear_all"]
        if w in ("DISCONNECT", "RECONNECT") and len(words) == 1:
            return ok, []
        if w == "LEVEL" and len(words) == 2:  # ctrl_iface_unix.c, for attached clients
            return (ok if addr in self.attached else fail), []
        if w == "SET":
            # wpa_supplicant_ctrl_iface_set(): "SET NAME VALUE" (the value may hold spaces),
            # then wpa_config_process_global(): an unknown name, or a string over its
            # STR_RANGE maximum or with a newline, is refused
            name, _, value = cmd[4:].partition(" ")
            if not _ or name not in SET_GLOBALS or "\n" in value:
                return fail, []
            limit = SET_GLOBALS[name]
            if limit is not None and len(value.encode(errors="surrogateescape")) > limit:
                return fail, []
            return ok, []
        if w == "P2P_STOP_FIND":
            # wpas_p2p_stop_find() answers OK even without P2P (the transcript shows it);
            # p2p_stop_find() reports P2P-FIND-STOPPED when a search was running.
            events = []
            if self.finding:
                self.finding = False
                events.append("P2P-FIND-STOPPED ")
            return ok, events
        key = f"{w} {words[2]}" if w == "SET_NETWORK" and len(words) > 2 else w
        if key in self.fail:
            return self.fail[key], []
        if w == "SCAN" and len(words) == 1:
            # wpas_ctrl_scan(): FAIL-BUSY while a scan runs; the results come as events
            # (wpa_ctrl.h: both names end with a space)
            if self.scanning:
                return "FAIL-BUSY\n", []
            return ok, ["CTRL-EVENT-SCAN-STARTED ", "CTRL-EVENT-SCAN-RESULTS "]
        if w == "BSS":
            return self.bss_command(words), []
        if w.startswith("DPP_") or w in ("GET_CAPABILITY", "DRIVER_FLAGS"):
            return self.dpp_command(w, words, cmd), []
        if w == "SELECT_NETWORK" and len(words) == 2:
            return self.select_network(words[1])
        if w == "DISABLE_NETWORK" and len(words) == 2:
            if not words[1].isdigit() or int(words[1]) not in self.networks:
                return fail, []
            self.networks[int(words[1])]["disabled"] = "1"
            return ok, []
        if w in NETWORK_COMMANDS:
            return self.network_command(w, cmd), []
        if w == "SIGNAL_POLL":
            if not self.signal:
                return fail, []  # the wired driver has no signal_poll
            return "".join(f"{k}={self.signal[k]}\n" for k in
                           ("RSSI", "LINKSPEED", "NOISE", "FREQUENCY")), []
        if w not in P2P_COMMANDS:
            return "UNKNOWN COMMAND\n", []
        if not self.p2p:
            return fail, []  # !wpa_s->global->p2p: every other P2P_* command fails
        if w == "P2P_FIND":
            # p2p_ctrl_find() -> wpas_p2p_find(): OK once the search started
            self.finding = True
            return ok, []
        if w == "P2P_PEER" and len(words) == 2:
            addrs = list(self.peers)
            arg = words[1]
            if arg == "FIRST":
                i = 0
            elif arg.startswith("NEXT-"):
                i = addrs.index(arg[5:]) + 1 if arg[5:] in addrs else len(addrs)
            else:
                i = addrs.index(arg) if arg in addrs else len(addrs)
            return (self.peer_info(self.peers[addrs[i]]) if i < len(addrs) else fail), []
        if w == "P2P_CONNECT" and len(words) >= 3:
            # p2p_ctrl_connect(): "<addr> <pbc|pin|PIN> [display|keypad] [go_intent=N] ..."
            peer = words[1]
            if not is_mac(peer):
                return fail, []
            for opt in words[3:]:
                if opt.startswith("go_intent=") and not (opt[10:].isdigit() and
                                                         0 <= int(opt[10:]) <= 15):
                    return fail, []
            if words[2] not in ("pin", "pbc") and not (words[2].isdigit() and
                                                       len(words[2]) in (4, 8)):
                # wps_pin_str_valid(): 4 or 8 digits
                return "FAIL-INVALID-PIN\n", []
            if peer not in self.peers:
                # p2p_connect(): "Cannot connect to unknown P2P Device"
                return fail, []
            self.pending = peer
            if words[2] == "pin":
                # p2p_ctrl_connect(): a generated PIN is the reply, "%08d", no newline
                return f"{wps_generate_pin(self.rng):08d}", []
            return ok, []
        if w == "P2P_REJECT" and len(words) == 2:
            # p2p_ctrl_reject() -> wpas_p2p_reject() -> p2p_reject(): FAIL for an unknown peer
            return (ok if words[1] in self.peers else fail), []
        if w == "P2P_CANCEL":
            # wpas_p2p_cancel(): FAIL when no negotiation or group formation is going on
            if not self.pending:
                return fail, []
            self.pending = None
            return ok, []
        if w == "P2P_GROUP_REMOVE" and len(words) == 2:
            # wpas_p2p_group_remove(): FAIL for an unknown interface; else
            # wpas_p2p_group_delete(P2P_GROUP_REMOVAL_REQUESTED) announces the removal
            # ("%s %s%s", ifname, role, " reason=REQUESTED")
            if words[1] not in self.groups:
                return fail, []
            role = self.groups.pop(words[1])
            return ok, [f"P2P-GROUP-REMOVED {words[1]} {role} reason=REQUESTED"]
        return fail, []

    # The DPP key of every URI this double makes (any valid P-256 SubjectPublicKeyInfo: the
    # real supplicant's answer carries its own; roamd reads it as a DPP: text, never as a key).
    DPP_KEY = ("MDkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDIgACFZq9YNQAmI26YSe+ixNxngctk/4qn8uSe3P2t+8iOaE=")

    def dpp_command(self, w, words, cmd):
        """ctrl_iface.c's DPP commands, as the real 2.10 answers them (its transcript in
        test_wifi_dpp.py's real-supplicant test): numbers and the URI without a newline."""
        fail, ok = "FAIL\n", "OK\n"
        if w == "GET_CAPABILITY":
            # wpa_supplicant_ctrl_iface_get_capability(): "DPP=%d" (no newline); an unknown
            # field FAILs
            return "DPP=2" if cmd == "GET_CAPABILITY dpp" else fail
        if w == "DRIVER_FLAGS":
            # "%016llx:\n" then one driver_flag_to_string() name a line
            if self.driver_wired:
                return "0000000000000010:\nWIRED\n"
            return ("0000000000080a24:\nSME\nAP\nP2P_CAPABLE\nOFFCHANNEL_TX\n"
                    "HT_2040_COEX\n")
        if w == "DPP_BOOTSTRAP_GEN":
            # dpp_bootstrap_gen(): type= qrcode|pkex|nfc-uri; chan= a list of CLASS/CHANNEL;
            # mac= 12 hex digits (hwaddr_compact_aton()); the id as "%d"
            params = dict(x.split("=", 1) for x in words[1:] if "=" in x)
            if params.get("type") != "qrcode":
                return fail
            mac = params.get("mac", "")
            if mac and not (len(mac) == 12 and all(c in "0123456789abcdefABCDEF" for c in mac)):
                return fail
            chan = params.get("chan", "")
            for c in chan.split(",") if chan else []:
                cls, _, ch = c.partition("/")
                if not (cls.isdigit() and ch.isdigit()):
                    return fail
            uri = "DPP:"
            if chan:
                uri += f"C:{chan};"
            if mac:
                uri += f"M:{mac.lower()};"
            uri += f"V:2;K:{self.DPP_KEY};;"
            i = self.dpp_next_id
            self.dpp_next_id += 1
            self.dpp_boot[i] = uri
            return str(i)
        if w == "DPP_BOOTSTRAP_GET_URI" and len(words) == 2:
            i = int(words[1]) if words[1].isdigit() else -1
            return self.dpp_boot.get(i, fail)
        if w == "DPP_BOOTSTRAP_REMOVE" and len(words) == 2:
            # "*" removes all; an unknown id FAILs
            if words[1] == "*":
                self.dpp_boot.clear()
                return ok
            i = int(words[1]) if words[1].isdigit() else -1
            return ok if self.dpp_boot.pop(i, None) else fail
        if w == "DPP_LISTEN" and len(words) >= 2:
            # wpas_dpp_listen(): atoi(freq) > 0, then OK (the wired driver fails later, silently)
            if not words[1].isdigit() or int(words[1]) <= 0:
                return fail
            self.dpp_listen = int(words[1])
            return ok
        if w == "DPP_STOP_LISTEN":
            self.dpp_listen = 0
            return ok
        if w == "DPP_QR_CODE" and len(words) == 2:
            # wpas_dpp_qr_code() -> dpp_add_qr_code(): a URI dpp_parse_uri() reads (DPP:, a
            # K:, the closing ;;), the id as "%d"; ids are shared with the own bootstraps
            uri = words[1]
            toks = uri[4:-2].split(";") if uri.startswith("DPP:") and uri.endswith(";;") else []
            if not any(t.startswith("K:") and len(t) > 2 for t in toks):
                return fail
            i = self.dpp_next_id
            self.dpp_next_id += 1
            self.dpp_peers[i] = uri
            return str(i)
        if w == "DPP_AUTH_INIT":
            # wpas_dpp_auth_init(): peer= a known bootstrap; conf= one of dpp.c's words;
            # ssid= hex of 1..32 bytes; pass= hex of 8..63 bytes or psk= 64 hex digits
            params = dict(x.split("=", 1) for x in words[1:] if "=" in x)
            peer = params.get("peer", "")
            if not peer.isdigit() or int(peer) not in self.dpp_peers:
                return fail
            if params.get("conf") not in ("sta-psk", "sta-sae", "sta-psk-sae"):
                return fail
            try:
                ssid = bytes.fromhex(params.get("ssid", ""))
                pw = bytes.fromhex(params["pass"]) if "pass" in params else None
                psk = bytes.fromhex(params["psk"]) if "psk" in params else None
            except ValueError:
                return fail
            if not 1 <= len(ssid) <= 32 or (pw is None) == (psk is None):
                return fail
            if (pw is not None and not 8 <= len(pw) <= 63) or (psk is not None and
                                                               len(psk) != 32):
                return fail
            self.dpp_auth = {"peer": int(peer), "conf": params["conf"], "ssid": ssid,
                             "pass": pw, "psk": psk}
            return ok
        return "UNKNOWN COMMAND\n"

    def dpp_configure(self, ssid, passphrase=None, psk=None, akm="psk"):
        """A configurator (a phone) sent this device a network: dpp_supplicant.c
        wpas_dpp_handle_config_obj()'s events, byte for byte (the names end with a space, the
        SSID in wpa_ssid_txt()'s printf_encode form, the passphrase and PSK in hex)."""
        own = max(self.dpp_boot) if self.dpp_boot else -1
        self.event(f"DPP-AUTH-SUCCESS init=0 pkhash={'ab' * 32} own={own} peer=-1")
        self.event("DPP-CONF-RECEIVED ")
        self.event(f"DPP-CONFOBJ-AKM {akm}")
        if ssid:
            self.event(f"DPP-CONFOBJ-SSID {printf_encode(ssid)}")
        if passphrase is not None:
            self.event(f"DPP-CONFOBJ-PASS {passphrase.encode().hex()}")
        elif psk is not None:
            self.event(f"DPP-CONFOBJ-PSK {psk.hex()}")

    def dpp_configured_peer(self, conf_status=0, wait_conn_status=False):
        """The device of the code took the configuration (dpp_supplicant.c: the
        authentication, then DPP-CONF-SENT with the response's status)."""
        self.event(f"DPP-AUTH-SUCCESS init=1 pkhash={'cd' * 32} own=-1 "
                   f"peer={self.dpp_auth['peer']}")
        self.event(("DPP-CONF-SENT wait_conn_status=1 " if wait_conn_status else
                    "DPP-CONF-SENT ") + f"conf_status={conf_status}")

    def bss_command(self, words):
        """ctrl_iface.c wpa_supplicant_ctrl_iface_bss() for "BSS RANGE=ALL MASK=0x..." and
        "BSS RANGE=N1-[N2] MASK=0x...": print_bss_info()'s fields in its order for the mask
        bits modelled here (id, bssid, freq, level, flags, ssid; WPA_BSS_MASK_DELIM's "===="
        after each, "####" instead after the last BSS of the whole list). The reply is one
        4096-byte buffer (wpa_supplicant_ctrl_iface_process()'s reply_size): print_bss_info()
        writes a BSS only when all of it fits with its NUL, and the first that does not ends
        the reply (the loop stops on len == 0). No BSS in the range: an empty reply. Any other
        form or mask bit is a request this double does not model: UNKNOWN COMMAND, so a test
        fails loudly instead of passing on a made-up answer."""
        modelled = {0: "id", 1: "bssid", 2: "freq", 7: "level", 11: "flags", 12: "ssid"}
        if len(words) != 3 or not words[1].startswith("RANGE=") or \
                not words[2].startswith("MASK=0x"):
            return "UNKNOWN COMMAND\n"
        rng = words[1][6:]
        if rng == "ALL":
            first, last = 0, None
        else:
            # "N1-N2", "-N2", "N1-": atoi() of each side, id2 -1 (all) when not a digit
            lo, dash, hi = rng.partition("-")
            if not dash or not (lo.isdigit() or lo == "") or not (hi.isdigit() or hi == ""):
                return "UNKNOWN COMMAND\n"
            first, last = int(lo or 0), (int(hi) if hi else None)
        mask = int(words[2][7:], 16)
        if mask & ~(sum(1 << b for b in modelled) | 1 << 17):
            return "UNKNOWN COMMAND\n"
        # wpa_bss_get_id_range(): the BSSes in list order with first <= id <= last
        chosen = [b for b in self.bsses if b["id"] >= first and (last is None or b["id"] <= last)]
        out = ""
        for b in chosen:
            text = ""
            for bit, key in sorted(modelled.items()):
                if mask & (1 << bit):
                    # a hidden AP's beacon carries no SSID: the scan lists it empty
                    v = (printf_encode(b"" if b.get("hidden") else b["ssid"])
                         if key == "ssid" else b[key])
                    text += f"{key}={v}\n"
            if mask & (1 << 17):
                text += "####\n" if b is self.bsses[-1] else "====\n"
            if len((out + text).encode(errors="surrogateescape")) > REPLY_SIZE - 1:
                break
            out += text
        return out

    @staticmethod
    def bss_matches(n, bss):
        """events.c wpa_supplicant_ssid_bss_match(), for the RSN this double's BSSes have:
        "skip RSN IE - key mgmt mismatch" (the network's key_mgmt, default WPA-PSK WPA-EAP,
        and the AKMs of the BSS's flags: PSK, SAE, EAP; none: open, key_mgmt NONE) and "no
        mgmt frame protection enabled but AP requires it" (an SAE-only BSS, WPA3-Personal
        only, requires PMF: ieee80211w 0, the default with pmf=0, is skipped)."""
        flags = bss.get("flags", "")
        akms = set()
        for f in re.findall(r"\[(?:WPA2?|RSN)-([A-Z0-9+-]+?)-(?:CCMP|TKIP|GCMP)[^\]]*\]", flags):
            for a in f.split("+"):
                akms.add({"PSK": "WPA-PSK", "EAP": "WPA-EAP"}.get(a, a))
        mgmt = set(n.get("key_mgmt", "WPA-PSK WPA-EAP").split())
        if not akms:
            return "NONE" in mgmt or "OWE" in mgmt or "IEEE8021X" in mgmt
        if not akms & mgmt:
            return False
        mfpr = bss.get("mfpr", akms == {"SAE"})
        return not (mfpr and n.get("ieee80211w", "0") == "0")

    def select_network(self, arg):
        """wpa_supplicant_ctrl_iface_select_network() -> wpa_supplicant_select_network():
        every other network disabled, this one enabled; then the join this double models,
        as events after the OK: the AP of that SSID takes the network's key or not
        (events.c: CTRL-EVENT-CONNECTED's words; wpas_auth_failed()'s
        CTRL-EVENT-SSID-TEMP-DISABLED with reason=WRONG_KEY for a PSK mismatch, CONN_FAILED
        for SAE, which could_be_psk_mismatch() leaves out); no BSS of that SSID:
        CTRL-EVENT-NETWORK-NOT-FOUND."""
        if not arg.isdigit() or int(arg) not in self.networks:
            return "FAIL\n", []
        nid = int(arg)
        for i, n in self.networks.items():
            n["disabled"] = "0" if i == nid else "1"
        n = self.networks[nid]
        ssid = n.get("ssid", "").encode(errors="surrogateescape")
        # a hidden AP answers only a probe naming its SSID: scan_ssid=1 (wpa_supplicant's
        # wpa_supplicant_get_scan_ssids())
        bss = next((b for b in self.bsses if b["ssid"] == ssid
                    and (not b.get("hidden") or n.get("scan_ssid") == "1")
                    and self.bss_matches(n, b)), None)
        if not bss:
            return "OK\n", ["CTRL-EVENT-NETWORK-NOT-FOUND "]
        key = n.get("sae_password") if n.get("key_mgmt") == "SAE" else n.get("psk")
        if bss["psk"] is not None and key != bss["psk"]:
            failures = n["auth_failures"] = n.get("auth_failures", 0) + 1
            reason = "CONN_FAILED" if n.get("key_mgmt") == "SAE" else "WRONG_KEY"
            text = printf_encode(ssid)
            return "OK\n", [f"CTRL-EVENT-DISCONNECTED bssid={bss['bssid']} reason=15",
                            f'CTRL-EVENT-SSID-TEMP-DISABLED id={nid} ssid="{text}" '
                            f"auth_failures={failures} duration=10 reason={reason}"]
        self.station = {"ssid": ssid.decode(errors="surrogateescape"), "bssid": bss["bssid"],
                        "freq": bss["freq"]}
        self.current = nid
        if bss.get("hidden"):
            # the hidden AP answered the probe naming its SSID: the probe response is a BSS of
            # its own, the same BSSID with the name (bss.c wpa_bss_update_scan_res() keys
            # BSSes by BSSID and SSID), beside the beacon's entry without one
            named = dict(bss, id=max(b["id"] for b in self.bsses) + 1, hidden=False)
            if not any(b["bssid"] == bss["bssid"] and not b.get("hidden") for b in self.bsses):
                self.bsses.append(named)
        return "OK\n", [f"CTRL-EVENT-CONNECTED - Connection to {bss['bssid']} completed "
                        f"[id={nid} id_str=]"]

    def network_command(self, w, cmd):
        """ctrl_iface.c: wpa_supplicant_ctrl_iface_{add,set,get,enable,remove,list}_network*,
        and config.c's parsers for the fields roamd sets (ssid as hex or quoted, psk as a
        quoted 8..63 passphrase or 64 hex digits)."""
        fail, ok = "FAIL\n", "OK\n"
        words = cmd.split(" ", 3)
        nets = self.networks
        if w == "ADD_NETWORK":
            i = max(nets, default=-1) + 1
            nets[i] = {"disabled": "1"}
            return f"{i}\n"
        if w == "LIST_NETWORKS":
            # wpa_supplicant_ctrl_iface_list_networks(): whole lines while they fit in the
            # reply buffer (the rest is left out, LAST_ID=N pages on)
            out = "network id / ssid / bssid / flags\n"
            last = -1
            if len(words) > 1 and words[1].startswith("LAST_ID="):
                try:
                    last = int(words[1][8:])
                except ValueError:
                    last = 0  # atoi()
            for i, n in sorted(nets.items()):
                if last != -1 and i <= last:
                    continue
                # "[CURRENT]" for wpa_s->current_ssid, before "[DISABLED]"
                flags = ("[CURRENT]" if i == self.current and self.station else "") + \
                    ("[DISABLED]" if n["disabled"] == "1" else "")
                ssid = printf_encode(n.get("ssid", "").encode(errors="surrogateescape"))
                line = f"{i}\t{ssid}\tany\t{flags}\n"
                if len((out + line).encode(errors="surrogateescape")) > REPLY_SIZE - 1:
                    break
                out += line
            return out
        if w == "SAVE_CONFIG":
            if not self.update_config:
                return fail
            self.saved = {i: dict(n) for i, n in nets.items()}
            return ok
        if w in ("ENABLE_NETWORK", "REMOVE_NETWORK") and words[1:] == ["all"]:
            # wpa_supplicant_ctrl_iface_{enable,remove}_network(): "all" is every network
            if w == "REMOVE_NETWORK":
                nets.clear()
            for n in nets.values():
                n["disabled"] = "0"
            return ok
        if len(words) < 2 or not words[1].isdigit() or int(words[1]) not in nets:
            return fail
        n = nets[int(words[1])]
        if w == "ENABLE_NETWORK" and len(words) == 2:
            n["disabled"] = "0"
            return ok
        if w == "REMOVE_NETWORK" and len(words) == 2:
            del nets[int(words[1])]
            return ok
        if w == "GET_NETWORK" and len(words) == 3:
            if words[2] in ("psk", "wep_key0", "sae_password", "password"):
                return "*" if words[2] in n else fail
            if words[2] == "ssid" and "ssid" in n:
                return config_write_string(n["ssid"].encode(errors="surrogateescape"))
            # an INT field always has a value (config.c wpa_config_get(): its default, 0 for
            # priority and scan_ssid, until set)
            return n.get(words[2], "0" if words[2] in ("priority", "scan_ssid") else fail)
        if w == "SET_NETWORK" and len(words) == 4:
            field, value = words[2], words[3]
            if field == "ssid":
                # STR_RANGE(ssid, 0, SSID_MAX_LEN): an empty SSID is taken too
                text = quoted_or_hex(value)
                if text is None or len(text) > 32:
                    return fail
                n["ssid"] = text.decode(errors="surrogateescape")
            elif field == "psk":
                text = value[1:-1] if value.startswith('"') and value.endswith('"') else None
                if text is not None and 8 <= len(text.encode()) <= 63:
                    n["psk"] = text
                elif len(value) == 64 and all(c in "0123456789abcdefABCDEF" for c in value):
                    n["psk"] = value
                else:
                    return fail
            elif field in ("key_mgmt", "proto", "auth_alg"):
                # every word must be one the parser knows, and at least one given
                known = {"key_mgmt": KEY_MGMT, "proto": PROTO, "auth_alg": AUTH_ALG}[field]
                if not value.split() or any(v not in known for v in value.split()):
                    return fail
                n[field] = value
            elif field == "sae_password":
                # STR(sae_password): a quoted string of any length
                if not (len(value) >= 3 and value.startswith('"') and value.endswith('"')):
                    return fail
                n[field] = value[1:-1]
            elif field in ("scan_ssid", "ieee80211w", "priority", "eapol_flags"):
                # INT_RANGE: scan_ssid 0..1, ieee80211w 0..2, eapol_flags 0..3; priority INT
                lim = {"scan_ssid": 1, "ieee80211w": 2, "eapol_flags": 3}.get(field)
                if not value.lstrip("-").isdigit() or (lim is not None and
                                                       not 0 <= int(value) <= lim):
                    return fail
                n[field] = value
            elif field in ("eap", "identity", "password", "phase2", "ca_cert",
                           "domain_suffix_match", "anonymous_identity"):
                n[field] = value
            elif field == "wep_key0":
                # wpa_config_parse_wep_key(): a string, at most MAX_WEP_KEY_LEN bytes
                key = quoted_or_hex(value)
                if key is None or len(key) > MAX_WEP_KEY_LEN:
                    return fail
                n[field] = value
            else:
                return fail
            return ok
        return fail


NETWORK_COMMANDS = ("ADD_NETWORK", "SET_NETWORK", "GET_NETWORK", "ENABLE_NETWORK",
                    "REMOVE_NETWORK", "LIST_NETWORKS", "SAVE_CONFIG")


def is_mac(text):
    """hwaddr_aton(): six colon-separated hex pairs."""
    parts = text.split(":")
    return len(parts) == 6 and all(len(x) == 2 and all(c in "0123456789abcdefABCDEF" for c in x)
                                   for x in parts)


def quoted_or_hex(value):
    """config.c wpa_config_parse_string(): "text" or an even number of hex digits."""
    if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
        return value[1:-1].encode()
    try:
        return bytes.fromhex(value) if len(value) % 2 == 0 else None
    except ValueError:
        return None

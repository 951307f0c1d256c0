"""WiFi Direct through roamd's bus against a P2P device that speaks wpa_supplicant 2.10's control
protocol (fakewpa.py): finding peers, connecting by push button and both PIN directions,
incoming requests accepted and rejected, a peer lost mid-connect, every group removal reason,
and bad input on the socket (malformed, oversized, unknown, out-of-order, a daemon that stops
answering or goes away mid-request)."""
import os
import subprocess

import dbus
import pytest

from busutil import MANAGER, PEER, RoamBus
from fakewpa import FakeWpa, Peer, wps_pin_checksum
from minienv import MiniEnv
import wpaenv

TV = Peer("02:00:00:00:01:00", "Living Room TV", "7-0050F204-1", 0x188)
PHONE = Peer("02:00:00:00:02:00", "Ana's phone", "10-0050F204-5", 0x80)
PRINTER = Peer("02:00:00:00:03:00", "Office printer", "3-0050F204-1", 0x108)


def peer_path(p):
    return "/org/roam1/peer/" + p.addr.replace(":", "")


class P2PEnv:
    def __init__(self, env, fake, bus):
        self.env, self.fake, self.bus = env, fake, bus

    def prop(self, p, name):
        return self.bus.get(peer_path(p), PEER, name)

    def peer_call(self, p, method, *args):
        return self.bus.call(peer_path(p), PEER, method, *args)

    def wait_state(self, p, state, what=None):
        self.bus.wait(lambda: peer_path(p) in self.bus.peers()
                      and self.prop(p, "State") == state, what=what or f"{p.name} {state}")

    def wait_p2p(self, state):
        self.bus.wait(lambda: self.bus.get("/org/roam1", MANAGER, "P2PState") == state,
                      what=f"P2PState {state}")

    def found(self, p):
        self.fake.add_peer(p)
        self.bus.wait(lambda: peer_path(p) in self.bus.peers(), what=f"{p.name} found")

    def connected(self, p, method="push-button", pin=""):
        """Connects to p and lets the fake form a group with us as client."""
        self.peer_call(p, "Connect", method, pin)
        self.wait_state(p, "connecting")
        self.fake.group_started(p.addr, "client")
        self.wait_state(p, "connected")


def make_env(name, timeout="10"):
    env = MiniEnv(name)
    # The radio behind the P2P device p2p-dev-wlan0 (roamd takes only sockets of its own
    # namespace's interfaces when it runs outside the initial one).
    env.netns("ip link add wlan0 type veth peer name wlan0-peer")
    ctrl = os.path.join(env.dir, "ctrl")
    fake = FakeWpa(ctrl).start()
    wpaenv.start_roamd(env, ctrl, RequestTimeout=timeout)
    fake.wait_attached()
    bus = RoamBus(env.address)
    p = P2PEnv(env, fake, bus)
    p.wait_p2p("idle")
    return p


def close_env(p):
    try:
        wpaenv.stop_roamd(p.env)
    finally:
        p.fake.close()
        p.env.close()


@pytest.fixture
def p2p():
    p = make_env("p2p")
    try:
        yield p
    finally:
        close_env(p)


def test_find_peers_and_words(p2p):
    bus, fake = p2p.bus, p2p.fake
    assert bus.get("/org/roam1", MANAGER, "P2PDevice") == "p2p-dev-wlan0"
    bus.manager("P2PFind", dbus.UInt32(5))
    assert fake.wait_request("P2P_FIND") == "P2P_FIND 5"
    p2p.wait_p2p("finding")
    p2p.found(TV)
    p2p.found(PHONE)
    p2p.found(PRINTER)
    tv = bus.get_all(peer_path(TV), PEER)
    assert tv["Name"] == "Living Room TV" and tv["DeviceType"] == "TV"
    assert tv["PrimaryDeviceType"] == "7-0050F204-1" and tv["State"] == "available"
    # 0x188: push button, display (it shows a PIN: we type it), keypad (we show one).
    assert tv["ConfigMethods"] == ["push-button", "keypad", "display"]
    assert p2p.prop(PHONE, "DeviceType") == "phone"
    assert p2p.prop(PHONE, "Name") == "Ana's phone"
    assert p2p.prop(PHONE, "ConfigMethods") == ["push-button"]
    assert p2p.prop(PRINTER, "DeviceType") == "printer"
    bus.manager("P2PStopFind")
    p2p.wait_p2p("idle")
    fake.lose_peer(PHONE.addr)
    bus.wait(lambda: peer_path(PHONE) not in bus.peers(), what="phone lost")
    # A search that ends by itself (P2P-FIND-STOPPED after its timeout).
    bus.manager("P2PFind", dbus.UInt32(0))
    assert fake.wait_request("P2P_FIND") == "P2P_FIND 30"
    p2p.wait_p2p("finding")
    fake.event("P2P-FIND-STOPPED ")
    p2p.wait_p2p("idle")


def test_peers_known_before_roamd():
    """Peers wpa_supplicant found before roamd came are listed with P2P_PEER FIRST/NEXT-."""
    env = MiniEnv("p2p-first")
    env.netns("ip link add wlan0 type veth peer name wlan0-peer")
    ctrl = os.path.join(env.dir, "ctrl")
    fake = FakeWpa(ctrl)
    fake.peers = {TV.addr: TV, PHONE.addr: PHONE}
    fake.start()
    p = P2PEnv(env, fake, None)
    try:
        wpaenv.start_roamd(env, ctrl, RequestTimeout="10")
        p.bus = RoamBus(env.address)
        p.bus.wait(lambda: len(p.bus.peers()) == 2, what="both peers listed")
        assert fake.wait_request("P2P_PEER FIRST")
        assert fake.wait_request("P2P_PEER NEXT-") == f"P2P_PEER NEXT-{TV.addr}"
        assert fake.wait_request("P2P_PEER NEXT-") == f"P2P_PEER NEXT-{PHONE.addr}"
        assert p.prop(PHONE, "Name") == "Ana's phone"
    finally:
        close_env(p)


def test_push_button_connect_and_disconnect(p2p):
    bus, fake = p2p.bus, p2p.fake
    p2p.found(TV)
    assert p2p.peer_call(TV, "Connect", "push-button", "") == ""
    assert fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {TV.addr} pbc"
    p2p.wait_state(TV, "connecting")
    assert p2p.prop(TV, "Method") == "push-button"
    fake.group_started(TV.addr, "client")
    p2p.wait_state(TV, "connected")
    assert p2p.prop(TV, "GroupInterface") == "p2p-wlan0-0"
    assert p2p.prop(TV, "GroupRole") == "GO"
    p2p.peer_call(TV, "Disconnect")
    assert fake.wait_request("P2P_GROUP_REMOVE") == "P2P_GROUP_REMOVE p2p-wlan0-0"
    p2p.wait_state(TV, "available")
    assert p2p.prop(TV, "Reason") == "requested"
    assert bus.wait_signal("P2PGroupRemoved") == ["p2p-wlan0-0", TV.addr, "requested"]


def test_pin_roam_displays(p2p):
    p2p.found(PRINTER)
    pin = p2p.peer_call(PRINTER, "Connect", "display", "")
    assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {PRINTER.addr} pin"
    assert len(pin) == 8 and pin.isdigit()
    assert wps_pin_checksum(int(pin) // 10) == int(pin) % 10
    p2p.wait_state(PRINTER, "connecting")
    # the PIN is not a property (every local user reads those): GetPIN, authorized
    assert p2p.prop(PRINTER, "PIN") == ""
    assert p2p.peer_call(PRINTER, "GetPIN") == pin
    p2p.fake.group_started(PRINTER.addr, "GO")
    p2p.wait_state(PRINTER, "connected")
    assert p2p.peer_call(PRINTER, "GetPIN") == ""
    assert p2p.prop(PRINTER, "GroupRole") == "client"


def test_pin_user_enters(p2p):
    p2p.found(TV)
    with pytest.raises(dbus.DBusException) as e:
        p2p.peer_call(TV, "Connect", "keypad", "12")
    assert e.value.get_dbus_name() == "org.roam1.Error.InvalidArguments"
    with pytest.raises(dbus.DBusException) as e:
        p2p.peer_call(TV, "Connect", "carrier-pigeon", "")
    assert e.value.get_dbus_name() == "org.roam1.Error.InvalidArguments"
    p2p.peer_call(TV, "Connect", "keypad", "12345670")
    # The refused calls never reached wpa_supplicant.
    assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {TV.addr} 12345670 keypad"
    p2p.wait_state(TV, "connecting")
    with pytest.raises(dbus.DBusException) as e:
        p2p.peer_call(TV, "Connect", "push-button", "")
    assert "connecting" in e.value.get_dbus_message()


def test_incoming_push_button_accepted(p2p):
    p2p.fake.prov_disc_pbc_req(PHONE)
    p2p.wait_state(PHONE, "request")
    assert p2p.prop(PHONE, "Incoming") is True
    assert p2p.prop(PHONE, "Method") == "push-button"
    assert p2p.prop(PHONE, "Name") == "Ana's phone"
    p2p.peer_call(PHONE, "Accept", "")
    assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {PHONE.addr} pbc auth"
    p2p.wait_state(PHONE, "connecting")
    p2p.fake.group_started(PHONE.addr, "GO")
    p2p.wait_state(PHONE, "connected")


def test_incoming_pin_requests(p2p):
    fake = p2p.fake
    # The peer asks us to show a PIN: wpa_supplicant made one up; accepting authorizes it.
    pin = fake.prov_disc_show_pin(TV)
    p2p.wait_state(TV, "request")
    assert p2p.prop(TV, "Method") == "display" and p2p.prop(TV, "PIN") == ""
    assert p2p.peer_call(TV, "GetPIN") == pin
    p2p.peer_call(TV, "Accept", "")
    assert fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {TV.addr} {pin} display auth"
    p2p.wait_state(TV, "connecting")
    # GO negotiation request from a peer that shows a PIN (DEV_PW_REGISTRAR_SPECIFIED, 5).
    p2p.found(PRINTER)
    fake.go_neg_request(PRINTER.addr, 5)
    p2p.wait_state(PRINTER, "request")
    assert p2p.prop(PRINTER, "Method") == "keypad"
    with pytest.raises(dbus.DBusException) as e:
        p2p.peer_call(PRINTER, "Accept", "")
    assert e.value.get_dbus_name() == "org.roam1.Error.InvalidArguments"
    p2p.peer_call(PRINTER, "Accept", "87654325")
    assert fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {PRINTER.addr} 87654325 keypad"
    p2p.wait_state(PRINTER, "connecting")


def test_incoming_rejected(p2p):
    p2p.fake.prov_disc_enter_pin(PHONE)
    p2p.wait_state(PHONE, "request")
    assert p2p.prop(PHONE, "Method") == "keypad"
    p2p.peer_call(PHONE, "Reject")
    assert p2p.fake.wait_request("P2P_REJECT") == f"P2P_REJECT {PHONE.addr}"
    p2p.wait_state(PHONE, "available")
    assert p2p.prop(PHONE, "Reason") == "rejected"
    assert p2p.prop(PHONE, "Incoming") is False
    with pytest.raises(dbus.DBusException):
        p2p.peer_call(PHONE, "Accept", "")
    # A GO negotiation request with push button, withdrawn by the peer.
    p2p.fake.go_neg_request(PHONE.addr, 4)
    p2p.wait_state(PHONE, "request")
    p2p.fake.prov_disc_failure(PHONE.addr)
    p2p.wait_state(PHONE, "available")


def test_peer_lost_mid_connect(p2p):
    p2p.found(TV)
    p2p.peer_call(TV, "Connect", "push-button", "")
    p2p.wait_state(TV, "connecting")
    p2p.fake.lose_peer(TV.addr)
    assert p2p.bus.wait_signal("P2PConnectionFailed") == [TV.addr, "Living Room TV",
                                                          "peer-lost"]
    assert p2p.fake.wait_request("P2P_CANCEL") == "P2P_CANCEL"
    p2p.bus.wait(lambda: peer_path(TV) not in p2p.bus.peers(), what="TV gone")
    # wpa_supplicant may have given up already: its FAIL to the cancel is said as that.
    p2p.found(TV)
    p2p.peer_call(TV, "Connect", "push-button", "")
    p2p.wait_state(TV, "connecting")
    p2p.fake.pending = None
    p2p.fake.lose_peer(TV.addr)
    assert p2p.fake.wait_request("P2P_CANCEL") == "P2P_CANCEL"
    # A request after it: answered in order, so the cancel's answer was read before.
    p2p.bus.manager("P2PFind", dbus.UInt32(5))
    assert "wpa_supplicant had nothing to cancel (P2P_CANCEL: refused it)." in p2p.env.log()
    assert "refused the P2P device name" not in p2p.env.log()


def test_negotiation_failures(p2p):
    p2p.found(TV)
    p2p.peer_call(TV, "Connect", "push-button", "")
    p2p.wait_state(TV, "connecting")
    p2p.fake.go_neg_failure(11)  # P2P_SC_FAIL_REJECTED_BY_USER
    p2p.wait_state(TV, "available")
    assert p2p.prop(TV, "Reason") == "rejected"
    p2p.peer_call(TV, "Connect", "push-button", "")
    p2p.wait_state(TV, "connecting")
    p2p.fake.group_formation_failure()
    p2p.wait_state(TV, "available")
    assert p2p.prop(TV, "Reason") == "formation-failed"
    # Cancelling a connection in progress.
    p2p.peer_call(TV, "Connect", "push-button", "")
    p2p.wait_state(TV, "connecting")
    p2p.peer_call(TV, "Disconnect")
    assert p2p.fake.wait_request("P2P_CANCEL") == "P2P_CANCEL"
    p2p.wait_state(TV, "available")
    assert p2p.prop(TV, "Reason") == "cancelled"


REASONS = [("REQUESTED", "requested"), ("FORMATION_FAILED", "formation-failed"),
           ("IDLE", "idle"), ("UNAVAILABLE", "unavailable"),
           ("GO_ENDING_SESSION", "go-ending-session"), ("PSK_FAILURE", "psk-failure"),
           ("FREQ_CONFLICT", "freq-conflict"), (None, "unknown")]


def test_group_removed_each_reason(p2p):
    p2p.found(TV)
    for wire, word in REASONS:
        p2p.connected(TV)
        p2p.fake.group_removed("p2p-wlan0-0", wire)
        p2p.bus.wait(lambda: p2p.prop(TV, "State") == "available"
                     and p2p.prop(TV, "Reason") == word, what=word)
        assert p2p.prop(TV, "GroupInterface") == ""


def test_bad_input_is_dropped(p2p):
    fake, bus = p2p.fake, p2p.bus
    p2p.found(TV)
    fake.raw(b"<3>P2P-DEVICE-FOUND 02:00:00:00:09:00 p2p_dev_addr=02:00:00:00:09:00 "
             b"name='unterminated")
    fake.raw(b"<3>P2P-DEVICE-FOUND 02:00:00:00:09:01 name='ctl\x01char'")
    fake.raw(b"<3>P2P-DEVICE-FOUND not-an-address name='x'")
    fake.raw(b"<3>P2P-GROUP-STARTED")
    fake.raw(b"<3>P2P-GO-NEG-REQUEST 02:00:00:00:01:00")
    fake.raw(b"<3>P2P-PROV-DISC-SHOW-PIN 02:00:00:00:01:00 12ab")
    fake.raw(b"<3>P2P-SOMETHING-NEW a=b")
    fake.raw(b"<3" + b"x" * 100)
    fake.raw(b"IFNAME=p2p-dev-wlan0 P2P-FIND-STOPPED")
    fake.raw(b"<3>P2P-DEVICE-FOUND " + b"A" * 20000)
    fake.raw(b"OK\n")  # a reply nobody asked for
    # Still alive and in step: the next request gets its own answer.
    fake.add_peer(PHONE)
    bus.wait(lambda: peer_path(PHONE) in bus.peers(), what="phone after the garbage")
    bus.manager("P2PFind", dbus.UInt32(10))
    p2p.wait_p2p("finding")
    assert sorted(bus.peers()) == sorted([peer_path(TV), peer_path(PHONE)])
    assert p2p.prop(TV, "State") == "available"
    log = p2p.env.log()
    assert "Malformed event from" in log
    assert "Malformed P2P-GROUP-STARTED event" in log
    assert "Malformed P2P-GO-NEG-REQUEST event" in log
    assert "Oversized event (20020 bytes)" in log
    assert "Unexpected reply from" in log


def test_unanswered_and_late_replies():
    """A request wpa_supplicant does not answer in time fails; roamd takes a new socket so the
    late answer cannot be read as the reply to the next request."""
    p = make_env("p2p-late", timeout="1")
    try:
        p.fake.hold = {"P2P_FIND"}
        with pytest.raises(dbus.DBusException) as e:
            p.bus.manager("P2PFind", dbus.UInt32(5))
        assert "did not answer in time" in e.value.get_dbus_message()
        p.fake.wait_attached()  # the new socket
        p.wait_p2p("idle")  # its STATUS answered: the P2P device is back
        p.fake.hold = set()
        p.fake.release()  # the late OK goes to the old, closed socket
        p.fake.hold = {"P2P_STOP_FIND"}
        with pytest.raises(dbus.DBusException) as e:
            p.bus.manager("P2PStopFind")
        assert "did not answer in time" in e.value.get_dbus_message()
        p.fake.wait_attached()
        p.wait_p2p("idle")
        # An old answer delivered to the new socket is dropped as unexpected.
        p.fake.hold = set()
        p.fake.release(reply="OK\n", to_addr=next(iter(p.fake.attached)))
        p.bus.manager("P2PFind", dbus.UInt32(7))
        p.wait_p2p("finding")
        assert p.fake.wait_request("P2P_FIND 7")
    finally:
        close_env(p)


def test_socket_goes_away_mid_request(p2p):
    fake = p2p.fake
    p2p.found(TV)
    fake.hold = {"P2P_CONNECT"}
    reply = {}

    def done(*a):
        reply["ok"] = a

    def err(e):
        reply["error"] = e

    p2p.bus.obj(peer_path(TV)).Connect("push-button", "", dbus_interface=PEER,
                                       reply_handler=done, error_handler=err)
    p2p.bus.bus.flush()
    fake.wait_request("P2P_CONNECT")
    fake.stop()
    p2p.bus.wait(lambda: "error" in reply or "ok" in reply, what="the Connect answer")
    assert "went away" in reply["error"].get_dbus_message()
    p2p.wait_p2p("unavailable")
    assert p2p.bus.peers() == {}
    fake.hold = set()
    fake.start()
    p2p.wait_p2p("idle")


def test_unprivileged_callers_are_refused(p2p):
    p2p.found(TV)
    for args in (["/org/roam1", MANAGER, "P2PFind", "u", "5"],
                 [peer_path(TV), PEER, "Connect", "ss", "push-button", ""]):
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            "busctl", f"--address={p2p.env.address}", "call", "org.roam1",
                            *args], capture_output=True, text=True)
        assert r.returncode != 0 and "Only root or members of group netdev" in r.stderr, r
    assert p2p.prop(TV, "State") == "available"


def test_unprivileged_reader_cannot_see_the_pin(p2p):
    """A PIN roam shows (the peer asked us to show one) is for the users allowed to connect:
    another local user reads every property and hears every signal, and sees no PIN there;
    GetPIN refuses them."""
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "busctl",
              f"--address={p2p.env.address}"]
    pin = p2p.fake.prov_disc_show_pin(TV)
    p2p.wait_state(TV, "request")
    r = subprocess.run(nobody + ["get-property", "org.roam1", peer_path(TV), PEER, "PIN"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == 's ""', r
    r = subprocess.run(nobody + ["introspect", "org.roam1", peer_path(TV), PEER],
                       capture_output=True, text=True)
    assert r.returncode == 0 and pin not in r.stdout, r.stdout
    r = subprocess.run(nobody + ["call", "org.roam1", peer_path(TV), PEER, "GetPIN"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "Only root or members of group netdev" in r.stderr, r
    assert pin not in r.stdout
    assert p2p.peer_call(TV, "GetPIN") == pin


def test_sockets_of_other_namespaces_are_ignored():
    """Outside the initial namespace, a control socket whose interface is not here (the host's
    wpa_supplicant, say) is never attached."""
    env = MiniEnv("p2p-foreign")
    env.netns("ip link add wlan0 type veth peer name wlan0-peer")
    ctrl = os.path.join(env.dir, "ctrl")
    foreign = FakeWpa(ctrl, ifname="p2p-dev-wlan9").start()
    fake = FakeWpa(ctrl).start()
    p = P2PEnv(env, fake, None)
    try:
        wpaenv.start_roamd(env, ctrl, RequestTimeout="10")
        p.bus = RoamBus(env.address)
        fake.wait_attached()
        p.wait_p2p("idle")
        # Both sockets were looked at in the same scan: the decision about wlan9 is made.
        assert "p2p-dev-wlan9: a wpa_supplicant socket for an interface of another network " \
               "namespace, ignored." in env.log()
        assert foreign.requests == []
    finally:
        foreign.close()
        close_env(p)


def find_async(bus, seconds):
    """P2PFind without waiting: the dict gets "ok" or "error" when roamd answers."""
    reply = {}

    def answer(key, value):
        reply[key] = value
        bus.got = True  # wakes bus.wait()

    bus.obj("/org/roam1").P2PFind(dbus.UInt32(seconds), dbus_interface=MANAGER,
                                  reply_handler=lambda *a: answer("ok", a),
                                  error_handler=lambda e: answer("error", e))
    bus.bus.flush()
    return reply


def test_events_between_a_request_and_its_reply(p2p):
    """An event that arrives while a request waits for its reply is handled at once (the loop
    is not blocked on the reply), and the reply still answers its own request."""
    fake, bus = p2p.fake, p2p.bus
    fake.hold = {"P2P_FIND"}
    reply = find_async(bus, 9)
    assert fake.wait_request("P2P_FIND") == "P2P_FIND 9"
    fake.add_peer(TV)
    bus.wait(lambda: peer_path(TV) in bus.peers(), what="the TV while P2P_FIND waits")
    assert reply == {}
    fake.hold = set()
    fake.release()
    bus.wait(lambda: reply, what="the P2PFind answer")
    assert "ok" in reply, reply
    p2p.wait_p2p("finding")


def test_oversized_reply_fails_only_its_request(p2p):
    """A reply larger than roamd takes (16 KiB) fails that request, never cut into a shorter
    answer; the next request gets its own reply."""
    fake, bus = p2p.fake, p2p.bus
    fake.hold = {"P2P_FIND"}
    reply = find_async(bus, 9)
    fake.wait_request("P2P_FIND")
    fake.hold = set()
    fake.release(reply="OK\n" + "x" * 17000)
    bus.wait(lambda: reply, what="the P2PFind answer")
    assert "sent an oversized reply" in reply["error"].get_dbus_message()
    assert "Oversized reply (17003 bytes)" in p2p.env.log()
    assert p2p.bus.get("/org/roam1", MANAGER, "P2PState") == "idle"
    bus.manager("P2PFind", dbus.UInt32(4))
    assert fake.wait_request("P2P_FIND") == "P2P_FIND 4"
    p2p.wait_p2p("finding")


def test_detach_when_roamd_stops():
    """roamd says DETACH before it goes, so wpa_supplicant stops sending to its socket."""
    p = make_env("p2p-detach")
    try:
        wpaenv.stop_roamd(p.env)
        assert p.fake.wait_request("DETACH") == "DETACH"
        assert p.fake.attached == set()
    finally:
        p.fake.close()
        p.env.close()


def test_p2p_on_the_global_control_interface():
    """wpa_supplicant -g: roamd finds the P2P device with INTERFACES, addresses it with
    IFNAME=, takes its P2P events (sent without IFNAME=, wpa_msg_global()) and connects."""
    env = MiniEnv("p2p-global")
    env.netns("ip link add wlan0 type veth peer name wlan0-peer")
    glob = os.path.join(env.dir, "global", "wpa-global")
    fake = FakeWpa(os.path.join(env.dir, "ctrl"), global_path=glob)
    os.makedirs(os.path.dirname(glob))
    fake.start()
    p = P2PEnv(env, fake, None)
    try:
        wpaenv.start_roamd(env, os.path.join(env.dir, "ctrl"), RequestTimeout="10",
                           GlobalControl=glob)
        p.bus = RoamBus(env.address)
        p.wait_p2p("idle")
        assert fake.wait_request("INTERFACES") == "INTERFACES"
        assert fake.wait_request("IFNAME=p2p-dev-wlan0 STATUS")
        p.bus.manager("P2PFind", dbus.UInt32(5))
        assert fake.wait_request("IFNAME=p2p-dev-wlan0 P2P_FIND") == \
            "IFNAME=p2p-dev-wlan0 P2P_FIND 5"
        p.found(TV)
        assert p.prop(TV, "DeviceType") == "TV"
        p.peer_call(TV, "Connect", "push-button", "")
        assert fake.wait_request("IFNAME=p2p-dev-wlan0 P2P_CONNECT") == \
            f"IFNAME=p2p-dev-wlan0 P2P_CONNECT {TV.addr} pbc"
        p.wait_state(TV, "connecting")
        fake.group_started(TV.addr, "client")
        p.wait_state(TV, "connected")
        p.peer_call(TV, "Disconnect")
        assert fake.wait_request("IFNAME=p2p-dev-wlan0 P2P_GROUP_REMOVE") == \
            "IFNAME=p2p-dev-wlan0 P2P_GROUP_REMOVE p2p-wlan0-0"
        p.wait_state(TV, "available")
        assert p.prop(TV, "Reason") == "requested"
    finally:
        close_env(p)

"""RFC 8910 option 37 in Router Advertisements, through the real kernel: the device side
processes RAs (accept_ra=2), the kernel passes the option on rtnetlink (RTM_NEWNDUSEROPT),
and roamd fetches the RFC 8908 API it names (the café of tests/servers); a malformed option
is logged and changes nothing, and so is a process posing as the kernel; carrier loss
forgets the URI; the DHCP leases' URL comes first."""
import json
import os
import subprocess

import pytest

from minienv import wait_until
from probenet import GW_V4, PROBE_V4, PROBE_V6, ProbeNet

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RA_SENDER = os.path.join(TOP, "tests/servers/ra_sender.py")
NL_SPOOF = os.path.join(TOP, "tests/integration/nl_spoof.py")
ROUTER_LL = "fe80::1"
API = f"https://{GW_V4}/capport"
ONLINE = ("online", "ok", "online", "ok")
PORTAL = ("portal", "capport", "portal", "capport")
# Option 37, 2 units: a URI, its NUL, then padding that is not NUL (RFC 8910 2.3 says NUL).
BAD_PADDING = bytes([37, 2]) + b"https://x\0ZZZZ"


@pytest.fixture
def net():
    n = ProbeNet("ra37")
    try:
        yield n
        rc = n.stop_roamd()
        assert rc in (None, 0), f"roamd exited with {rc}:\n{n.log()[-4000:]}"
    finally:
        n.close()


def cafe(net, doc):
    """The network's check servers, its DNS and the RFC 8908 API on the gateway; the device
    processes Router Advertisements; the router has a link-local address to send them from."""
    net.netns("sysctl -qw net.ipv6.conf.d0.accept_ra=2")
    net.innet(f"ip addr add {ROUTER_LL}/64 dev n0 nodad")
    net.internet()
    net.dns(("probe.roam.test", PROBE_V4), ("probe.roam.test", PROBE_V6))
    net.server(f"{PROBE_V4}:80,[{PROBE_V6}]:80")
    net.server(f"{PROBE_V4}:443,[{PROBE_V6}]:443", tls="probe")
    path = net.write("capport.json", json.dumps(doc))
    net.server(f"{GW_V4}:443", mode="portal", tls="cafe",
               extra=["--capport-path", "/capport", "--capport-json", path])


def send_ra(net, *args):
    out = subprocess.run(["ip", "netns", "exec", net.net, "/usr/bin/python3", RA_SENDER, "n0",
                          ROUTER_LL, *args], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "sent"


def wait_log(net, text, count=1):
    """roamd's log is a file: re-read it (no bus signal announces a log line)."""
    wait_until(lambda: net.log().count(text) >= count, what=f"{count}x {text!r} in roamd's log",
               recheck=0.1)


def test_ra_option_37_portal(net):
    cafe(net, {"captive": True, "user-portal-url": "https://cafe.test/portal",
               "seconds-remaining": 600})
    net.start_roamd(net.probe_config())
    net.wait_verdicts(ONLINE)

    # A malformed option first: logged, and nothing about the link changes.
    send_ra(net, "--raw-option", BAD_PADDING.hex())
    wait_log(net, "d0: ignoring a router advertisement option: captive portal option padded "
                  "with non-NUL octets")
    assert net.link_prop("d0", "CaptivePortalURL") == ""
    assert net.verdicts() == ONLINE

    # A process posing as the kernel on the rtnetlink group: ignored, with a log line.
    out = net.netns(f"/usr/bin/python3 {NL_SPOOF} d0 {API}")
    assert out.stdout.strip() == "sent"
    wait_log(net, "ignoring nd user options sent by process")
    assert net.link_prop("d0", "CaptivePortalURL") == ""

    # The router announces its API: the link goes to portal through it.
    send_ra(net, "--portal", API)
    net.wait_verdicts(PORTAL)
    assert net.link_prop("d0", "CaptivePortalURL") == API
    assert net.link_prop("d0", "PortalURL") == "https://cafe.test/portal"
    assert net.link_prop("d0", "CaptivePortal")["SecondsRemaining"]["data"] == 600
    assert f"d0: router {ROUTER_LL} announced the captive portal API {API}" in net.log()

    # Another malformed one while captive: the announced URI stays.
    send_ra(net, "--raw-option", BAD_PADDING.hex())
    wait_log(net, "padded with non-NUL octets", count=2)
    assert net.link_prop("d0", "CaptivePortalURL") == API
    assert net.verdicts() == PORTAL

    # Carrier loss forgets it (option 37 has no lifetime: it lasts until the link changes);
    # with the carrier back and no new RA the link is judged without it.
    net.carrier(False)
    wait_until(lambda: net.link_prop("d0", "CaptivePortalURL") == "", what="URI forgotten")
    net.carrier(True)
    net.wait_verdicts(ONLINE)
    assert net.link_prop("d0", "CaptivePortalURL") == ""


def test_dhcp_lease_comes_before_ra(net):
    from test_verdicts import write_lease  # a dhcpcd lease announcing an API URL (option 114)

    cafe(net, {"captive": True})
    urn = "urn:ietf:params:capport:unrestricted"
    write_lease(net, urn)
    net.start_roamd(net.probe_config())
    net.wait_verdicts(ONLINE)
    assert net.link_prop("d0", "CaptivePortalURL") == urn

    send_ra(net, "--portal", API)
    wait_log(net, f"d0: the DHCP lease announces the captive portal API {urn}, router "
                  f"advertisements {API}: using the lease's")
    assert net.link_prop("d0", "CaptivePortalURL") == urn
    assert net.verdicts() == ONLINE

    # The lease goes (dhcpcd dropped it): the RA's URL, still remembered, takes over.
    os.unlink(os.path.join(net.dir, "leases", "d0.lease"))
    net.wait_verdicts(PORTAL)
    assert net.link_prop("d0", "CaptivePortalURL") == API


def test_ra_api_on_this_machine_is_refused(net):
    """A router announcing an API URL on the device's own loopback (or one of its own
    addresses): roamd (root) would fetch a local service. It refuses after resolving, says
    so, and the link's verdict is the probes' own."""
    cafe(net, {"captive": True})
    net.start_roamd(net.probe_config())
    net.wait_verdicts(ONLINE)
    for url, words in (("https://127.0.0.1/capport", "127.0.0.1, a loopback address"),
                       ("https://[::1]:8443/capport", "::1, a loopback address")):
        send_ra(net, "--portal", url)
        wait_log(net, f"d0: refused to open the captive portal API {url}: ")
        assert words in net.log(), net.log()[-2000:]
        # the new RA data starts a round ("checking"): its own verdict is online again
        net.wait_verdicts(ONLINE)

"""Connectivity verdicts against real servers in a namespace: online, partial, portal (each
way), local, offline, carrier loss, and hostile answers."""
import os
import subprocess
import time

import pytest

from minienv import wait_for
from probenet import GW_V4, GW_V6, PROBE_V4, PROBE_V6, ProbeNet

PROBE = [("probe.roam.test", PROBE_V4), ("probe.roam.test", PROBE_V6)]
LISTEN = f"{PROBE_V4}:80,[{PROBE_V6}]:80"
LISTEN_TLS = f"{PROBE_V4}:443,[{PROBE_V6}]:443"


@pytest.fixture
def net():
    n = ProbeNet("verdict")
    try:
        yield n
        rc = n.stop_roamd()
        assert rc in (None, 0), f"roamd exited with {rc}:\n{n.log()[-4000:]}"
    finally:
        n.close()


def healthy(net):
    net.internet()
    net.dns(*PROBE)
    net.server(LISTEN)
    net.server(LISTEN_TLS, tls="probe")


def test_online_both_families(net):
    healthy(net)
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("online", "ok", "online", "ok"))
    assert net.prop("/org/roam1", "org.roam1.Manager", "State") == "online"
    assert net.link_prop("d0", "Connectivity") == "online"
    assert net.link_prop("d0", "LastProbe") > 0
    assert net.link_prop("d0", "PortalURL") == ""
    # libxml2 (with ICU and libstdc++) is loaded by the first WISPr page only
    with open(f"/proc/{net.roamd.pid}/maps") as f:
        assert "libxml2" not in f.read()


def test_https_blocked_is_partial(net):
    net.internet()
    net.dns(*PROBE)
    net.server(LISTEN)
    # Port 443 refuses: a network that filters HTTPS.
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("partial", "https-failed", "partial", "https-failed"))
    assert net.prop("/org/roam1", "org.roam1.Manager", "State") == "partial"


def test_portal_redirect_with_lying_dns(net):
    # The café: DNS sends everything to the gateway, which redirects to its login page.
    net.dns(("probe.roam.test", GW_V4), ("probe.roam.test", GW_V6))
    net.server(f"{GW_V4}:80,[{GW_V6}]:80", mode="portal",
               extra=["--portal-url", "http://192.0.2.1/login?from=probe"])
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("portal", "portal-redirect", "portal", "portal-redirect"))
    assert net.link_prop("d0", "PortalURL") == "http://192.0.2.1/login?from=probe"
    assert net.prop("/org/roam1", "org.roam1.Manager", "State") == "portal"


def test_portal_dns_when_expected_addresses_known(net):
    net.dns(("probe.roam.test", GW_V4), ("probe.roam.test", GW_V6))
    net.server(f"{GW_V4}:80,[{GW_V6}]:80", mode="portal")
    net.start_roamd(net.probe_config(f"ExpectAddresses={PROBE_V4} {PROBE_V6}\n"))
    net.wait_verdicts(("portal", "portal-dns", "portal", "portal-dns"))


def test_portal_content(net):
    net.internet()
    net.dns(*PROBE)
    net.server(LISTEN, mode="garbage")
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("portal", "portal-content", "portal", "portal-content"))
    assert net.link_prop("d0", "PortalURL") == "http://probe.roam.test/roam-probe"


def test_local_only(net):
    # A LAN without uplink: the gateway and its DNS answer, nothing beyond does.
    net.dns()
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("local", "dns-failed", "local", "dns-failed"))
    assert net.prop("/org/roam1", "org.roam1.Manager", "State") == "local"


def test_local_when_dns_works_but_internet_does_not(net):
    net.dns(*PROBE)  # the names resolve, but no route leads to the check server
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("local", "http-failed", "local", "http-failed"))


def test_silent_gateway_is_offline(net):
    # Addresses and routes are there, nothing answers.
    net.innet("nft add table inet silent")
    net.innet("nft add chain inet silent in { type filter hook input priority 0 \\; policy drop \\; }")
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("offline", "gateway-unreachable", "offline", "gateway-unreachable"),
                      timeout=15)


def test_carrier_cut_is_offline_and_recovers(net):
    healthy(net)
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("online", "ok", "online", "ok"))
    net.carrier(False)
    # Woken by roamd's PropertiesChanged (10 s at most): how fast is bench/bench_verdict.py's
    # business, not this test's.
    net.wait_verdicts(("offline", "no-carrier", "offline", "no-carrier"))
    assert net.prop("/org/roam1", "org.roam1.Manager", "State") == "offline"
    net.carrier(True)
    net.wait_verdicts(("online", "ok", "online", "ok"))


def test_no_route_and_link_local_only(net):
    healthy(net)
    net.netns("ip -6 route del default")
    net.netns("ip addr del 192.0.2.2/24 dev d0")
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("offline", "no-address", "offline", "no-route"))
    net.netns("ip -6 addr del 2001:db8:1::2/64 dev d0")
    net.wait_verdicts(("offline", "no-address", "offline", "link-local-only"))


def rss_anon(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    return 0


@pytest.mark.parametrize("mode,expected", [
    ("huge", ("portal", "portal-content")),     # 50 MB chunked: cut at MaxBodySize
    ("loop", ("portal", "portal-redirect")),    # redirects to itself: never followed
    ("drip", ("local", "http-timeout")),        # the right body, a byte a second: Timeout
    ("close", ("local", "http-failed")),        # hangs up without an answer
])
def test_hostile_check_server(net, mode, expected):
    net.internet()
    net.dns(*PROBE)
    net.server(LISTEN, mode=mode)
    net.server(LISTEN_TLS, mode=mode, tls="probe")
    net.start_roamd(net.probe_config())
    net.wait_verdicts(expected * 2, timeout=15)
    # 50 MB were offered: roamd must not have kept them. A sanitizer build carries its own
    # shadow memory, so it gets a looser (still far below 50 MB) bound.
    limit = 32 * 1024 if os.environ.get("ROAMD_SANITIZED") else 8 * 1024
    assert rss_anon(net.roamd.pid) < limit, "roamd's memory grew with a hostile answer"
    assert net.roamd.poll() is None


def test_hundreds_of_dns_records(net):
    # 250 A records (a truncated UDP answer, then TCP); every address serves the probe.
    net.internet(v6=False)
    for i in range(1, 251):
        if i != 10:
            net.innet(f"ip addr add 203.0.113.{i}/32 dev lo")
    net.dns(*[("probe.roam.test", f"203.0.113.{i}") for i in range(1, 251)])
    net.server("0.0.0.0:80")
    net.server("0.0.0.0:443", tls="probe")  # its certificate names probe.roam.test
    net.start_roamd(net.probe_config())
    wait_for(lambda: net.verdicts()[:2] in (("online", "ok"), ("partial", "https-failed")),
             timeout=15, what="a verdict despite 250 records")
    assert net.roamd.poll() is None


def lease_v4(yiaddr, url):
    """A dhcpcd lease file (the raw BOOTP reply) announcing an RFC 8910 API URL."""
    b = bytearray(240)
    b[0] = 2
    b[16:20] = bytes(int(x) for x in yiaddr.split("."))
    b[236:240] = bytes([99, 130, 83, 99])
    u = url.encode()
    return bytes(b) + bytes([53, 1, 5, 114, len(u)]) + u + bytes([255])


def write_lease(net, url):
    d = os.path.join(net.dir, "leases")
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, "d0.lease.tmp")
    with open(tmp, "wb") as f:
        f.write(lease_v4("192.0.2.2", url))
    os.rename(tmp, os.path.join(d, "d0.lease"))


def capport_net(net, mode="good", cert="cafe", captive=True):
    healthy(net)
    doc = {"captive": captive, "user-portal-url": "https://cafe.test/portal",
           "venue-info-url": "https://cafe.test/venue", "seconds-remaining": 300,
           "can-extend-session": True}
    import json
    path = net.write("capport.json", json.dumps(doc))
    net.server(f"{GW_V4}:443", mode="portal", tls=cert,
               extra=["--capport-path", "/capport", "--capport-json", path,
                      "--capport-mode", mode])


def test_capport_captive(net):
    capport_net(net)
    os.makedirs(os.path.join(net.dir, "leases"), exist_ok=True)
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("online", "ok", "online", "ok"))
    write_lease(net, f"https://{GW_V4}/capport")
    net.wait_verdicts(("portal", "capport", "portal", "capport"))
    cp = net.link_prop("d0", "CaptivePortal")
    assert cp["Captive"]["data"] is True
    assert cp["UserPortalURL"]["data"] == "https://cafe.test/portal"
    assert cp["SecondsRemaining"]["data"] == 300
    assert net.link_prop("d0", "PortalURL") == "https://cafe.test/portal"
    assert net.link_prop("d0", "CaptivePortalURL") == f"https://{GW_V4}/capport"


def test_capport_not_captive_stays_online(net):
    capport_net(net, captive=False)
    write_lease(net, f"https://{GW_V4}/capport")
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("online", "ok", "online", "ok"))
    wait_for(lambda: net.link_prop("d0", "CaptivePortal").get("Captive", {}).get("data") is False,
             what="capport data")


@pytest.mark.parametrize("mode,cert,error", [
    ("garbage", "cafe", "malformed"),
    ("wrongtype", "cafe", "not application/captive+json"),
    ("good", "probe", "did not answer"),  # certificate for another name: TLS fails
])
def test_capport_bad_answers(net, mode, cert, error):
    capport_net(net, mode=mode, cert=cert)
    write_lease(net, f"https://{GW_V4}/capport")
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("online", "ok", "online", "ok"))
    wait_for(lambda: error in net.link_prop("d0", "CaptivePortal").get("Error", {}).get("data", ""),
             what=f"capport error containing {error!r}")
    assert "Captive" not in net.link_prop("d0", "CaptivePortal")


def test_reprobe_and_unprivileged_caller(net):
    healthy(net)
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("online", "ok", "online", "ok"))
    path = net.link_path("d0")
    before = net.link_prop("d0", "LastProbe")
    r = net.busctl("call", "org.roam1", path, "org.roam1.Link", "Reprobe", check=False)
    assert r.returncode == 0, r.stderr
    wait_for(lambda: net.link_prop("d0", "LastProbe") > before, what="a new probe round")
    r = net.sh(f"setpriv --reuid=65534 --regid=65534 --clear-groups busctl "
               f"--address={net.address} call org.roam1 {path} org.roam1.Link Reprobe",
               check=False)
    assert r.returncode != 0
    assert "Only root or members of group netdev" in r.stderr


def test_one_lookup_per_host_and_family_per_round(net):
    # The HTTP and HTTPS probe URLs name the same host: one A and one AAAA query per round
    # (the HTTP probe's lookup answers both), counted by the network's DNS server.
    net.internet()
    qlog = os.path.join(net.dir, "queries.log")
    net.dns(*PROBE, extra=["--log-queries", f"--log-facility={qlog}"])
    net.server(LISTEN)
    net.server(LISTEN_TLS, tls="probe")
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("online", "ok", "online", "ok"))

    def queries():
        with open(qlog) as f:
            text = f.read()
        return (text.count("query[A] probe.roam.test"),
                text.count("query[AAAA] probe.roam.test"))
    before = queries()
    last = net.link_prop("d0", "LastProbe")
    net.busctl("call", "org.roam1", net.link_path("d0"), "org.roam1.Link", "Reprobe")
    wait_for(lambda: net.link_prop("d0", "LastProbe") > last, what="a new probe round")
    assert net.verdicts() == ("online", "ok", "online", "ok")
    after = queries()
    assert (after[0] - before[0], after[1] - before[1]) == (1, 1), (before, after)


def test_150ms_one_way_delay_still_online():
    n = ProbeNet("delay", delay_ms=150)
    try:
        healthy(n)
        r = n.netns(f"ping -c 2 -W 3 {GW_V4}")
        rtts = [float(x.split("time=")[1].split()[0]) for x in r.stdout.splitlines()
                if "time=" in x]
        assert rtts and min(rtts) >= 290, f"the delay line does not delay: {rtts}"
        n.start_roamd(n.probe_config().replace("Timeout=3", "Timeout=5"))
        n.wait_verdicts(("online", "ok", "online", "ok"), timeout=20)
        rc = n.stop_roamd()
        assert rc == 0
    finally:
        n.close()


def test_capport_unrestricted_urn(net):
    healthy(net)
    write_lease(net, "urn:ietf:params:capport:unrestricted")
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("online", "ok", "online", "ok"))
    wait_for(lambda: net.link_prop("d0", "CaptivePortal") == {
        "Captive": {"type": "b", "data": False},
        "CanExtendSession": {"type": "b", "data": False}}, what="unrestricted capport state")


def drop_https(net):
    """Port 443 of the check server silently drops (no answer, no refusal)."""
    net.innet("nft add table inet nohttps")
    net.innet("nft add chain inet nohttps in { type filter hook input priority 0 \\; }")
    net.innet("nft add rule inet nohttps in tcp dport 443 drop")


def log_index(log, needle):
    lines = log.splitlines()
    for i, line in enumerate(lines):
        if needle in line:
            return i
    return None


def test_portal_published_before_the_https_probe_ends(net):
    # The café: DNS points the check host at the gateway, HTTP is redirected to the login
    # page, HTTPS is silently dropped (its probe can only time out).
    net.dns(("probe.roam.test", GW_V4), ("probe.roam.test", GW_V6))
    net.server(f"{GW_V4}:80,[{GW_V6}]:80", mode="portal",
               extra=["--portal-url", "http://192.0.2.1/login?from=probe"])
    drop_https(net)
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("portal", "portal-redirect", "portal", "portal-redirect"))
    assert net.link_prop("d0", "PortalURL") == "http://192.0.2.1/login?from=probe"
    # The HTTPS probe ends later (by its Timeout); the portal was published before that.
    wait_for(lambda: log_index(net.log(), "IPv4 probe https://") is not None, timeout=10,
             what="the end of the IPv4 HTTPS probe")
    log = net.log()
    published = log_index(log, "IPv4 connectivity checking (not-probed) -> portal")
    ended = log_index(log, "IPv4 probe https://")
    assert published is not None and published < ended, log[-3000:]
    assert "Timeout was reached" in log.splitlines()[ended]
    assert net.verdicts() == ("portal", "portal-redirect", "portal", "portal-redirect")


def test_login_page_is_portal_before_its_body_ended(net):
    # A portal that answers the check URL in place with a 200 login page (100 kB announced,
    # the first part sent, the rest never) and silently drops HTTPS. Its body never ends, so
    # a verdict that waited for it would be the HTTP probe's timeout (local), not portal.
    net.dns(("probe.roam.test", GW_V4), ("probe.roam.test", GW_V6))
    net.server(f"{GW_V4}:80,[{GW_V6}]:80", mode="slowlogin")
    drop_https(net)
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("portal", "portal-content", "portal", "portal-content"))
    assert net.link_prop("d0", "PortalURL") == "http://probe.roam.test/roam-probe"
    wait_for(lambda: log_index(net.log(), "IPv4 probe https://") is not None, timeout=10,
             what="the end of the IPv4 HTTPS probe")
    log = net.log()
    lines = log.splitlines()
    http = log_index(log, "IPv4 probe http://probe.roam.test/roam-probe: not the expected")
    published = log_index(log, "IPv4 connectivity checking (not-probed) -> portal")
    https = log_index(log, "IPv4 probe https://")
    assert http is not None and published is not None, log[-3000:]
    # decided on the part received (of 100 kB announced), before the HTTPS probe ended
    assert "(decided before the body ended)" in lines[http]
    assert int(lines[http].split(" bytes")[0].rsplit(" ", 1)[1]) < 100000
    assert http < published < https, log[-3000:]
    assert "Timeout was reached" in lines[https]
    assert "IPv4 probe http://probe.roam.test/roam-probe: Timeout" not in log


def test_partial_without_waiting_then_online_when_443_opens(net):
    net.internet()
    net.dns(*PROBE)
    net.server(LISTEN)
    net.server(LISTEN_TLS, tls="probe")
    drop_https(net)
    # A long Timeout: partial must come from the HTTPS budget, not from the probe's end.
    conf = net.probe_config("HttpsGraceMin=200ms\nHttpsGraceMax=1s\n")
    net.start_roamd(conf.replace("Timeout=3", "Timeout=10"))
    net.wait_verdicts(("partial", "https-failed", "partial", "https-failed"))
    assert log_index(net.log(), "probe https://") is None, "HTTPS ended before partial"
    net.innet("nft delete table inet nohttps")
    # The same HTTPS probe (its next SYN) gets through: online without a new round.
    net.wait_verdicts(("online", "ok", "online", "ok"), timeout=10)
    log = net.log()
    assert "IPv4 HTTPS probe answered late: online" in log
    assert log.count("d0: IPv4 probe round starts") == 1, log[-3000:]


def test_other_family_and_link_local_do_not_restart_the_ipv4_round(net):
    net.internet()
    net.dns(*PROBE)
    net.server(LISTEN)
    drop_https(net)  # the IPv4 round stays open until its HTTPS probe times out
    conf = net.probe_config("HttpsGraceMin=200ms\nHttpsGraceMax=1s\n")
    net.start_roamd(conf.replace("Timeout=3", "Timeout=8"))
    net.wait_verdicts(("partial", "https-failed", "partial", "https-failed"))
    # An IPv6 link-local address and a second global IPv6 address appear mid-round.
    net.netns("ip addr add fe80::99/64 dev d0 nodad")
    net.netns("ip addr add 2001:db8:1::3/64 dev d0 nodad")
    wait_for(lambda: any(a[1] == "2001:db8:1::3" for a in net.link_prop("d0", "Addresses"))
             and any(a[1] == "fe80::99" for a in net.link_prop("d0", "Addresses")),
             what="the new addresses on the bus")
    assert log_index(net.log(), "IPv4 probe https://") is None, "the round ended too soon"
    wait_for(lambda: log_index(net.log(), "IPv4 probe https://") is not None, timeout=15,
             what="the end of the IPv4 HTTPS probe")
    log = net.log()
    ended = log_index(log, "IPv4 probe https://")
    before = log.splitlines()[:ended]
    assert sum("d0: IPv4 probe round starts" in x for x in before) == 1, log[-4000:]
    # The global IPv6 address is a fact of IPv6: that round started again.
    assert sum("d0: IPv6 probe round starts" in x for x in before) == 2, log[-4000:]


def test_checking_until_the_first_answer(net):
    healthy(net)
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("online", "ok", "online", "ok"))
    log = net.log()
    checking = log_index(log, "IPv4 connectivity offline (not-probed) -> checking (not-probed)")
    done = log_index(log, "IPv4 connectivity checking (not-probed) -> online (ok)")
    assert checking is not None and done is not None and checking < done, log[-3000:]
    # A carrier cut and its return: offline at once, checking again, then online.
    net.carrier(False)
    net.wait_verdicts(("offline", "no-carrier", "offline", "no-carrier"))
    net.carrier(True)
    net.wait_verdicts(("online", "ok", "online", "ok"))
    log = net.log()
    assert "IPv4 connectivity offline (no-carrier) -> checking (not-probed)" in log
    assert net.link_prop("d0", "Connectivity") == "online"


def test_never_probed_link_has_no_last_probe(net):
    healthy(net)
    net.netns("ip -6 route del default")
    net.netns("ip route del default")
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("offline", "no-route", "offline", "no-route"))
    assert net.link_prop("d0", "LastProbe") == 0
    assert net.link_prop("d0", "ProbeDuration") == 0
    assert net.link_prop("d0", "Connectivity") == "offline"


def test_rejected_capport_url_is_reported(net):
    healthy(net)
    write_lease(net, f"http://{GW_V4}/capport")  # not https: roamd refuses it
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("online", "ok", "online", "ok"))
    assert net.link_prop("d0", "CaptivePortalURL") == ""
    assert net.link_prop("d0", "CaptivePortalURLRejected") == f"http://{GW_V4}/capport"
    assert "not a valid https URL" in net.link_prop("d0", "CaptivePortal")["Error"]["data"]
    # A good URL replaces it: accepted, nothing rejected.
    write_lease(net, "urn:ietf:params:capport:unrestricted")
    wait_for(lambda: net.link_prop("d0", "CaptivePortalURL") ==
             "urn:ietf:params:capport:unrestricted", what="the new API URL")
    assert net.link_prop("d0", "CaptivePortalURLRejected") == ""


def test_probe_starts_before_dns_only_where_dns_confirms(net):
    healthy(net)
    net.server(f"{GW_V4}:80,[{GW_V6}]:80", mode="portal",
               extra=["--portal-url", "http://192.0.2.1/login?from=probe"])
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("online", "ok", "online", "ok"))
    # A second round connects to the last round's address while DNS runs: confirmed.
    before = net.link_prop("d0", "LastProbe")
    net.busctl("call", "org.roam1", net.link_path("d0"), "org.roam1.Link", "Reprobe")
    wait_for(lambda: net.link_prop("d0", "LastProbe") > before, what="the second round")
    assert f"IPv4 probe https://probe.roam.test/roam-probe to {PROBE_V4} while DNS runs" \
        in net.log()
    assert net.verdicts() == ("online", "ok", "online", "ok")
    # The network's DNS now sends the check host to the café: the early transfer does not
    # count, the answer is the café's.
    for p in net.procs:
        if p.args[4] == "dnsmasq":
            p.terminate()
            p.wait(5)
    net.dns(("probe.roam.test", GW_V4), ("probe.roam.test", GW_V6))
    net.busctl("call", "org.roam1", net.link_path("d0"), "org.roam1.Link", "Reprobe")
    net.wait_verdicts(("portal", "portal-redirect", "portal", "portal-redirect"))
    assert f"IPv4 DNS did not confirm {PROBE_V4}: probing again" in net.log()
    assert net.link_prop("d0", "PortalURL") == "http://192.0.2.1/login?from=probe"


def test_failed_family_is_tried_again_while_the_other_is_online(net):
    # The check server refuses IPv6 for a while (a reset: no fact of the link changes, so no
    # new round starts from the link). IPv4 online must not leave IPv6 to the 300 s re-check.
    healthy(net)
    net.innet("nft add table ip6 refuse")
    net.innet("nft add chain ip6 refuse in { type filter hook input priority 0 \\; }")
    net.innet(f"nft add rule ip6 refuse in ip6 daddr {PROBE_V6} tcp dport {{ 80, 443 }} "
              "reject with tcp reset")
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("online", "ok", "local", "http-failed"))
    # a retry of IPv6 alone (BackoffMin=0.5s) has ended before the server takes IPv6 again
    start = len(net.log().splitlines())
    wait_for(lambda: sum("d0: IPv6 probe round starts" in x
                         for x in net.log().splitlines()[start:]) >= 1 and
             net.verdicts()[2:] == ("local", "http-failed"), what="an IPv6 retry")
    net.innet("nft delete table ip6 refuse")
    net.wait_verdicts(("online", "ok", "online", "ok"))
    # IPv4 stayed online meanwhile and was not probed again (its re-check is 300 s away)
    after = net.log().splitlines()[start:]
    assert sum("d0: IPv4 probe round starts" in x for x in after) == 0, "\n".join(after[-40:])
    assert sum("d0: IPv6 probe round starts" in x for x in after) >= 2, "\n".join(after[-40:])


@pytest.mark.parametrize("known", [False, True], ids=["first-round", "last-rounds-address"])
def test_apps_pass_waits_for_a_silent_network_only_briefly(net, known):
    # While a new link's probes wait for their first answer, the apps' routing pass waits
    # for it (the verdict changes the apps' policy again moments later), but only briefly:
    # here the check server never answers, and the default app gets the link while it
    # still reads `checking`, long before the probes give up. With the check host's
    # address known from the last round, the probes connect to it before their lookups
    # and `checking` start: the pass waits through that too.
    if known:
        healthy(net)
        net.start_roamd(net.probe_config())
        net.wait_verdicts(("online", "ok", "online", "ok"))
    else:
        net.internet()
        net.dns(*PROBE)
    net.innet("nft add table inet silent")
    net.innet("nft add chain inet silent in { type filter hook prerouting priority 0 \\; }")
    net.innet("nft add rule inet silent in tcp dport { 80, 443 } drop")
    net.carrier(False)
    if not known:
        net.start_roamd(net.probe_config())
    net.wait_verdicts(("offline", "no-carrier", "offline", "no-carrier"))

    # The default app routed over d0: online, or (the link not validated yet) checking via it.
    def via_d0(x):
        return "app default: " in x and (x.endswith("-> online") or "-> checking via d0" in x)

    wait_for(lambda: [x for x in net.log().splitlines() if "app default: " in x]
             and not via_d0([x for x in net.log().splitlines() if "app default: " in x][-1]),
             what="the default app without the link")
    start = len(net.log().splitlines())
    net.carrier(True)
    wait_for(lambda: any(via_d0(x) for x in net.log().splitlines()[start:]), what="the apps' pass")
    after = net.log().splitlines()[start:]
    app = next(i for i, x in enumerate(after) if via_d0(x))
    checking = [i for i, x in enumerate(after) if "IPv4 connectivity offline (no-carrier) -> "
                "checking" in x]
    left = [i for i, x in enumerate(after) if "IPv4 connectivity checking (not-probed) -> " in x]
    assert checking and checking[0] < app, "\n".join(after[-40:])
    assert not left or app < left[0], "\n".join(after[-40:])


def delayed_acks(net):
    """ACKs the device's kernel sent from its delayed-ACK timer (TcpExt DelayedACKs of the
    namespace roamd probes from; nothing else there speaks TCP)."""
    lines = net.netns("cat /proc/net/netstat").stdout.splitlines()
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            return dict(zip(names.split()[1:], map(int, values.split()[1:])))["DelayedACKs"]
    raise AssertionError("no TcpExt DelayedACKs in /proc/net/netstat")


def test_answer_held_by_nagle_is_not_waiting_for_a_delayed_ack(net):
    # The server sends TLS 1.3 session tickets, then the answer in two writes without
    # TCP_NODELAY: Nagle holds each piece until the client acknowledges the last one. A client
    # that delays that ACK (Linux does, 40 ms, once a connection looks interactive) gets its
    # answer only when its delayed-ACK timer fires; roamd acknowledges at once (TCP_QUICKACK).
    net.internet()
    net.dns(*PROBE)
    net.server(LISTEN, mode="tickets")
    net.server(LISTEN_TLS, mode="tickets", tls="probe")
    before = delayed_acks(net)
    net.start_roamd(net.probe_config())
    net.wait_verdicts(("online", "ok", "online", "ok"))
    assert delayed_acks(net) == before, "a probe's answer waited for a delayed ACK"


def tls_sessions(server, syn=False):
    """The next line the check server printed about a TLS session: 'full' or 'resumed'
    (syn: with how its SYN came, 'syn' or 'syn-data', i.e. the ClientHello in the SYN)."""
    import select
    r, _, _ = select.select([server.stdout], [], [], 10)
    assert r, "no HTTPS request reached the check server"
    words = server.stdout.readline().split()
    return (words[1], words[2]) if syn else words[1]


def test_recheck_resumes_the_tls_session(net):
    net.internet(v6=False)
    net.dns(*PROBE)
    net.server(f"{PROBE_V4}:80")
    tls = net.server(f"{PROBE_V4}:443", tls="probe", extra=["--report-sessions"])
    net.start_roamd(net.probe_config())
    # IPv6 reaches no check server: only IPv4's probes come to it
    wait_for(lambda: net.verdicts()[:2] == ("online", "ok"), what="IPv4 online")
    assert tls_sessions(tls) == "full"
    before = net.link_prop("d0", "LastProbe")
    r = net.busctl("call", "org.roam1", net.link_path("d0"), "org.roam1.Link", "Reprobe",
                   check=False)
    assert r.returncode == 0, r.stderr
    wait_for(lambda: net.link_prop("d0", "LastProbe") > before, what="a new probe round")
    # a server without TCP Fast Open: a plain SYN (its cookie request ignored), nothing lost
    assert tls_sessions(tls, syn=True) == ("resumed", "syn")


def test_another_network_gets_no_session_of_the_last(net):
    # The same addresses and check server behind another gateway (another NetworkId): a
    # session resumed there would tell that server where this device was before.
    net.internet(v6=False)
    net.dns(*PROBE)
    net.server(f"{PROBE_V4}:80")
    tls = net.server(f"{PROBE_V4}:443", tls="probe", extra=["--report-sessions"])
    net.start_roamd(net.probe_config())
    wait_for(lambda: net.verdicts()[:2] == ("online", "ok"), what="IPv4 online")
    assert tls_sessions(tls) == "full"
    first = net.link_prop("d0", "NetworkId")
    assert first
    net.carrier(False)
    wait_for(lambda: net.verdicts()[0] == "offline", what="IPv4 offline")
    net.innet("ip link set n0 address 02:00:00:00:45:02")
    net.carrier(True)
    wait_for(lambda: net.verdicts()[:2] == ("online", "ok"), what="IPv4 online again")
    assert tls_sessions(tls) == "full"
    assert net.link_prop("d0", "NetworkId") not in ("", first)


def reprobe(net):
    """One probe round on d0 (Link.Reprobe), waited for (LastProbe moves)."""
    before = net.link_prop("d0", "LastProbe")
    r = net.busctl("call", "org.roam1", net.link_path("d0"), "org.roam1.Link", "Reprobe",
                   check=False)
    assert r.returncode == 0, r.stderr
    wait_for(lambda: net.link_prop("d0", "LastProbe") > before, what="a new probe round")


def fastopen_server(net):
    # TCP Fast Open on the server's side, in the network's namespace only (the device's
    # namespace keeps the kernel's default, 1: the client side on)
    net.innet("sysctl -qw net.ipv4.tcp_fastopen=3")
    net.internet(v6=False)
    net.dns(*PROBE)
    net.server(f"{PROBE_V4}:80")
    return net.server(f"{PROBE_V4}:443", tls="probe", extra=["--report-sessions",
                                                             "--fastopen"])


def test_recheck_sends_its_hello_in_the_syn(net):
    # The first contact asks for a TCP Fast Open cookie; a re-check sends its ClientHello,
    # resuming the session, with the cookie in the SYN: TCP and TLS in one round trip, the
    # request in the next (2 RTT, where a plain-HTTP check after a lookup takes 3).
    tls = fastopen_server(net)
    net.start_roamd(net.probe_config())
    wait_for(lambda: net.verdicts()[:2] == ("online", "ok"), what="IPv4 online")
    assert tls_sessions(tls, syn=True) == ("full", "syn")
    reprobe(net)
    assert tls_sessions(tls, syn=True) == ("resumed", "syn-data")
    assert net.verdicts()[:2] == ("online", "ok")


def test_another_network_gets_no_fastopen_cookie_of_the_last(net):
    # The kernel keeps a server's cookie per address pair, whatever the network: shown from
    # another network it would tell the server where this device was. The same server
    # behind another gateway (another NetworkId) sees a plain SYN, then a new cookie is used.
    tls = fastopen_server(net)
    net.start_roamd(net.probe_config())
    wait_for(lambda: net.verdicts()[:2] == ("online", "ok"), what="IPv4 online")
    assert tls_sessions(tls, syn=True) == ("full", "syn")
    reprobe(net)
    assert tls_sessions(tls, syn=True) == ("resumed", "syn-data")
    assert "fo_cookie" in net.netns(f"ip tcp_metrics show {PROBE_V4}").stdout
    net.carrier(False)
    wait_for(lambda: net.verdicts()[0] == "offline", what="IPv4 offline")
    net.innet("ip link set n0 address 02:00:00:00:45:03")
    net.carrier(True)
    wait_for(lambda: net.verdicts()[:2] == ("online", "ok"), what="IPv4 online again")
    assert tls_sessions(tls, syn=True) == ("full", "syn")
    reprobe(net)
    assert tls_sessions(tls, syn=True) == ("resumed", "syn-data")


def test_path_dropping_syns_with_data_ends_fastopen_there(net):
    # A middlebox that drops SYNs carrying data: the kernel (6.x, default sysctls) resends
    # the SYN without data after its timeout, each time, and keeps trying. roamd sees the
    # loss once and connects without Fast Open on this network from then on.
    tls = fastopen_server(net)
    net.start_roamd(net.probe_config())
    wait_for(lambda: net.verdicts()[:2] == ("online", "ok"), what="IPv4 online")
    assert tls_sessions(tls, syn=True) == ("full", "syn")
    # (IPv4 header 20 + TCP header with options <= 60: a SYN of more than 80 bytes has data)
    net.innet("nft add table inet tfo")
    net.innet("nft add chain inet tfo in '{ type filter hook prerouting priority -300; }'")
    net.innet("nft 'add rule inet tfo in iifname n0 tcp flags syn ip length > 80 counter drop'")

    def dropped():
        out = net.innet("nft list chain inet tfo in").stdout
        return int(out.split("counter packets ")[1].split()[0])
    reprobe(net)
    assert tls_sessions(tls, syn=True) == ("resumed", "syn")  # the retransmitted SYN
    assert dropped() == 1
    assert "no more Fast Open on this network" in net.log()
    reprobe(net)
    assert tls_sessions(tls, syn=True) == ("resumed", "syn")
    assert dropped() == 1, "a SYN with data was sent again on the path that drops them"
    assert net.verdicts()[:2] == ("online", "ok")


def test_path_dropping_syns_asking_for_a_cookie_ends_fastopen_there(net):
    # A middlebox that drops SYNs carrying the Fast Open option (here: any SYN longer than
    # Linux's plain one, 60 bytes) from the first contact on: its SYN asking for a cookie is
    # lost, the retransmission without the option gets through. roamd connects without Fast
    # Open on this network from then on: no SYN of a re-check is dropped.
    net.innet("sysctl -qw net.ipv4.tcp_fastopen=3")
    net.innet("nft add table inet tfo")
    net.innet("nft add chain inet tfo in '{ type filter hook prerouting priority -300; }'")
    net.innet("nft 'add rule inet tfo in iifname n0 tcp flags syn ip length > 60 counter drop'")
    net.internet(v6=False)
    net.dns(*PROBE)
    net.server(f"{PROBE_V4}:80")
    tls = net.server(f"{PROBE_V4}:443", tls="probe", extra=["--report-sessions", "--fastopen"])

    def dropped():
        out = net.innet("nft list chain inet tfo in").stdout
        return int(out.split("counter packets ")[1].split()[0])
    net.start_roamd(net.probe_config())
    wait_for(lambda: net.verdicts()[:2] == ("online", "ok"), what="IPv4 online")
    assert tls_sessions(tls, syn=True) == ("full", "syn")
    assert dropped() == 1
    assert "no more Fast Open on this network" in net.log()
    reprobe(net)
    assert tls_sessions(tls, syn=True) == ("resumed", "syn")
    assert dropped() == 1, "a SYN asking for a cookie was sent again on the path that drops them"


def log_stamp(log, needle, since):
    """The ROAM_LOG_TIME stamp of the first log line at or after since holding needle."""
    for line in log.splitlines():
        stamp, _, text = line.partition(" ")
        try:
            t = float(stamp)
        except ValueError:
            continue
        if t >= since and needle in text:
            return t
    return None


def test_request_leaves_before_the_rest_of_the_round_is_set_up(net):
    # A round that knows the check host's address connects while DNS runs; on a link that
    # answers at once (veth: the TCP handshake is done when connect() returns) the HTTPS
    # probe's ClientHello and the HTTP probe's request leave then, before the other family's
    # probes are set up (and the lookups, `checking`, a sync's signals), not when the event
    # loop comes round to their sockets after all that.
    healthy(net)
    net.env["ROAM_LOG_TIME"] = "1"
    try:
        net.start_roamd(net.probe_config())
    finally:
        net.env.pop("ROAM_LOG_TIME", None)
    net.wait_verdicts(("online", "ok", "online", "ok"))
    cap = subprocess.Popen(["ip", "netns", "exec", net.name, "/usr/bin/python3",
                            os.path.join(os.path.dirname(__file__), "capture.py"), "d0"],
                           stdout=subprocess.PIPE, text=True)
    net.procs.append(cap)
    assert cap.stdout.readline().strip() == "ready"
    since = time.time()
    before = net.link_prop("d0", "LastProbe")
    net.busctl("call", "org.roam1", net.link_path("d0"), "org.roam1.Link", "Reprobe")
    wait_for(lambda: net.link_prop("d0", "LastProbe") > before, what="the second round")
    v6 = log_stamp(net.log(), "d0: IPv6 probe round starts", since)
    assert v6, net.log()[-3000:]
    cap.terminate()
    sent = {}
    for line in cap.stdout.read().splitlines():
        stamp, way, dst, port, head = line.split()
        # the first TLS handshake record (the ClientHello), the first request line
        kind = {("443", "16"): "ClientHello", ("80", "47455420"): "request"}.get(
            (port, head[:2] if port == "443" else head[:8])) if way == "out" else None
        if kind and dst == PROBE_V4 and float(stamp) >= since:
            sent.setdefault(kind, float(stamp))
    assert sent.get("ClientHello") and sent["ClientHello"] < v6, (sent, v6)
    assert sent.get("request") and sent["request"] < v6, (sent, v6)

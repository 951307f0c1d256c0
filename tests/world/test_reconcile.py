# SPDX-License-Identifier: LGPL-2.1-or-later
"""Kernel state under failure: what roamd does when the kernel refuses it (no CAP_NET_ADMIN,
an nftables commit or a route that fails: `roamd --test-faults=FILE`, docs/ARCHITECTURE.md),
that nothing leaks while it does, and that it says so on the bus (Manager.Degraded) and
recovers. Outcomes are what captures on every uplink saw and what clients got."""
import subprocess
import time

import pytest

from roamworld import (CG_ROAMD, DBusCallError, MANAGER_IFACE, MANAGER_PATH, PROPS_IFACE, ROAM,
                       ROAMD, VPN_ONLY_ADDRS, VPN_ONLY_NAME, WHOAMI, wait_for)
from test_apps import (REFUSED, ROAM_SLICE, SENDER_PY, app_cgroup, app_props, dns_from,
                       remove_cgroups, reset_apps, set_policy, wait_app_route)

WORLD = "trecon"


def test_no_cap_net_admin_exits_with_the_cause(w):
    """The kernel refuses the whole first transaction (with the batch-begin's sequence number):
    roamd must stop with a message naming the cause, not wait for an ACK that never comes."""
    w.roamd_stop()
    try:
        r = w.dev_run(["setpriv", "--bounding-set=-net_admin", "--inh-caps=-net_admin",
                       str(ROAMD), "--config", "/etc/roam/roamd.conf"],
                      cgroup=CG_ROAMD, check=False, timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail("roamd without CAP_NET_ADMIN hangs instead of exiting")
    assert r.returncode != 0, r
    assert "CAP_NET_ADMIN" in r.stderr and "Operation not permitted" in r.stderr, r.stderr


@pytest.fixture
def apps(w):
    yield w
    remove_cgroups(w, ROAM_SLICE)
    remove_cgroups(w, "roam-test")
    reset_apps(w)


def ping(w, host, fam, cgroup=None, ns="dev"):
    cmd = ["ping", "-%d" % fam, "-n", "-c", "1", "-W", "3", host]
    if ns == "dev":
        return w.dev_run(cmd, cgroup=cgroup, check=False, timeout=20).returncode == 0
    return w.exec(ns, *cmd, check=False, timeout=20).returncode == 0


def test_icmp_passes_only_for_the_kernels_own_packets(apps):
    """Under default=deny a process in no app cannot ping (nor tunnel over ICMP); the kernel's
    own answers (echo replies to the LAN's pings) still leave."""
    w = apps
    other = "roam-test/session-1.scope"
    for fam in (4, 6):
        assert ping(w, WHOAMI["inet"][fam], fam, cgroup=other), fam
    set_policy(w, "default", access="deny")
    for fam in (4, 6):
        assert not ping(w, WHOAMI["inet"][fam], fam, cgroup=other), fam
        assert not w.whoami(fam, "udp", cgroup=other).ok, fam
        # the kernel answers a ping from the home network: its echo reply has no process
        assert ping(w, w.dev_addr("wifi0", fam), fam, ns="home"), fam
    # an app allowed online may ping; the default's deny stays for the rest
    set_policy(w, "org.test.Ping", access="allow")
    cg = app_cgroup(w, "org.test.Ping")
    for fam in (4, 6):
        assert ping(w, WHOAMI["inet"][fam], fam, cgroup=cg), fam
        assert not ping(w, WHOAMI["inet"][fam], fam, cgroup=other), fam


def test_lan_with_vpn_required_goes_only_through_the_vpn(apps):
    """access=lan with vpn=required: privacy wins (docs/apps.md). Without a VPN nothing
    leaves; with one, local destinations and DNS go only into the tunnel, the rest is
    refused, and no uplink ever sees the app's packets."""
    w = apps
    app = "org.test.LanVpn"
    set_policy(w, app, access="lan", vpn="required")
    cg = app_cgroup(w, app)
    assert app_props(w, app)["State"] == "blocked: VPN down"
    with w.capture(["wifi0", "cell0", "eth0"]) as cap:
        for fam in (4, 6):
            r = w.whoami(fam, server="tv", cgroup=cg)
            assert not r.ok and r.error in REFUSED, (fam, r)
        w.vpn_up()
        wait_for(lambda: app_props(w, app)["State"] == "local networks only, through the VPN",
                 10, what="the app follows the VPN")
        for fam in (4, 6):
            w.whoami(fam, server="tv", cgroup=cg, timeout=2)  # into the tunnel, or nowhere
            r = w.whoami(fam, cgroup=cg)
            assert not r.ok and r.error in REFUSED, (fam, r)
        # the LAN's resolver is asked; the VPN's answers
        assert dns_from(w, cg, "192.0.2.1", VPN_ONLY_NAME, "A") == (0, [VPN_ONLY_ADDRS[4]])
    leaks = [p for p in cap.packets if 7000 in (p.sport, p.dport) or 40053 in (p.sport, p.dport)]
    assert leaks == [], leaks[:5]


# ---- faults: the kernel refuses a commit or a route; nothing leaks, Degraded says so ----

def degraded(w):
    return w.call(MANAGER_PATH, PROPS_IFACE, "Get", "ss", [MANAGER_IFACE, "Degraded"])


@pytest.fixture
def faults(w):
    """roamd with --test-faults=FILE; yields FILE (empty: no faults)."""
    f = w.path("faults")
    f.write_text("")
    w.roamd_stop()
    w.roamd_start("--test-faults=%s" % f)
    w.wait_default_state()
    try:
        yield f
    finally:
        f.write_text("")
        remove_cgroups(w, ROAM_SLICE)
        reset_apps(w)


def refused_passes(w):
    """How many of the reconciler's passes the kernel refused so far (roamd's log)."""
    return w.roamd_log().count("Cannot bring nftables up to date")


def wait_refused_passes(w, base, n=3):
    """The window in which the old code leaked, as events: passes refused one after another
    (the one the change made, then the retries: 250 ms, then 500 ms later), while the sender
    sends on."""
    wait_for(lambda: refused_passes(w) >= base + n, 10,
             what="%d refused passes" % n)
    assert degraded(w).startswith("nftables transaction"), degraded(w)


def sender(w, cgroup, host, sport, seconds=60):
    script = SENDER_PY.replace("40123", str(sport))
    return w.dev_popen(["/usr/bin/python3", "-c", script, host, str(seconds)], cgroup=cgroup,
                       stdout=subprocess.DEVNULL)


def test_bearer_app_link_gone_while_the_kernel_refuses(w, faults):
    """A wifi-only app sends while wifi0 loses its carrier and every nftables commit fails:
    its packets never reach another uplink (routing is changed only after nftables, and a
    freed slot keeps its prohibit rules). Then its new link's ip rules fail: it stays
    blocked, not routed by main. Each fault shows in Degraded and heals by itself."""
    set_policy(w, "org.test.Wifi", bearers="wifi")
    cg = app_cgroup(w, "org.test.Wifi")
    wait_app_route(w, "org.test.Wifi", "wifi0", "wifi0")
    assert degraded(w) == ""
    p = sender(w, cg, WHOAMI["inet"][4], 40131)
    try:
        with w.capture(["cell0", "eth0"]) as cap:
            base = refused_passes(w)
            faults.write_text("nft-commit:100000")
            w.carrier("wifi0", False)
            wait_for(lambda: degraded(w).startswith("nftables transaction"), 10,
                     what="Degraded names the refused commit")
            wait_refused_passes(w, base)  # the window in which the old code leaked
            faults.write_text("")
            wait_for(lambda: degraded(w) == "", 10, what="the retry heals")
            wait_app_route(w, "org.test.Wifi", "", "")
            assert app_props(w, "org.test.Wifi")["State"] == "blocked: no allowed link"
            # the new link's rules are refused: no slot, so still blocked, never via main
            faults.write_text("rule-add:100000 route-add:100000")
            w.carrier("wifi0", True)
            wait_for(lambda: degraded(w).startswith("routes and ip rules"), 15,
                     what="Degraded names the refused ip rules")
            assert app_props(w, "org.test.Wifi")["State"] == "blocked: no allowed link"
            r = w.whoami(4, "udp", cgroup=cg)
            assert not r.ok and r.error in REFUSED, r
            faults.write_text("")
            wait_app_route(w, "org.test.Wifi", "wifi0", timeout=15)
            wait_for(lambda: degraded(w) == "", 10, what="the retry heals")
    finally:
        p.kill()
        p.wait()
    leaks = [x for x in cap.packets if 40131 in (x.sport, x.dport)]
    assert leaks == [], leaks[:5]
    r = w.whoami(4, "udp", cgroup=cg)
    assert r.ok and r.addr == w.dev_addr("wifi0", 4), r


def test_vpn_app_vpn_gone_while_the_kernel_refuses(w, faults):
    set_policy(w, "org.test.Vpn", vpn="required")
    cg = app_cgroup(w, "org.test.Vpn")
    w.vpn_up()
    wait_app_route(w, "org.test.Vpn", "vpn0", "vpn0")
    p = sender(w, cg, WHOAMI["inet"][4], 40132)
    try:
        with w.capture(["wifi0", "cell0", "eth0"]) as cap:
            base = refused_passes(w)
            faults.write_text("nft-commit:100000")
            w.vpn_down()
            wait_for(lambda: degraded(w).startswith("nftables transaction"), 10,
                     what="Degraded names the refused commit")
            wait_refused_passes(w, base)
            faults.write_text("")
            wait_for(lambda: degraded(w) == "", 10, what="the retry heals")
            wait_for(lambda: app_props(w, "org.test.Vpn")["State"] == "blocked: VPN down", 10,
                     what="the app is blocked")
    finally:
        p.kill()
        p.wait()
    leaks = [x for x in cap.packets if 40132 in (x.sport, x.dport)]
    assert leaks == [], leaks[:5]


def test_failed_class_and_element_are_retried(w, faults):
    """An app whose class cannot be made (its drop-in arrives while commits fail) and whose
    cgroup appears meanwhile: roamd neither crashes nor wedges the app; once the kernel
    accepts again, its class and element are installed and later policy changes work."""
    app, plain = "org.test.Late", "org.test.Plain"
    d = w.path("etc-roam", "apps.d")
    d.mkdir(exist_ok=True)
    faults.write_text("nft-commit:100000")
    (d / "50-late.conf").write_text("[App]\nID=%s\nAccess=lan\nHandover=move\n" % app)
    w.call(MANAGER_PATH, MANAGER_IFACE, "Reload")
    rel = "%s/app-%s.scope" % (ROAM_SLICE, app)
    rel_plain = "%s/app-%s.scope" % (ROAM_SLICE, plain)  # its class exists: the element fails
    (w.cgroup / rel).mkdir(parents=True)
    (w.cgroup / rel_plain).mkdir(parents=True)
    wait_for(lambda: degraded(w) != "", 10, what="Degraded says what failed")
    for a, r in ((app, rel), (plain, rel_plain)):
        wait_for(lambda: "/roam-world-%s/%s" % (w.name, r) in app_props(w, a)["Cgroups"], 10,
                 what="roamd knows the cgroup of %s" % a)
    assert w.roamd_running()
    faults.write_text("")
    wait_for(lambda: degraded(w) == "", 10, what="the retry installs class and element")
    # the element failed once: later moves of the app must still work
    set_policy(w, plain, access="deny")
    r = w.whoami(4, cgroup=rel_plain)
    assert not r.ok and r.error in REFUSED, r
    set_policy(w, plain, access="allow")
    assert w.whoami(4, cgroup=rel_plain).ok
    assert app_props(w, app)["State"] == "local networks only"
    r = w.whoami(4, cgroup=rel)
    assert not r.ok and r.error in REFUSED, r
    assert w.whoami(4, server="tv", cgroup=rel).ok
    set_policy(w, app, access="allow")
    assert w.whoami(4, cgroup=rel).ok
    set_policy(w, app, access="deny")
    r = w.whoami(4, server="tv", cgroup=rel)
    assert not r.ok and r.error in REFUSED, r
    (d / "50-late.conf").unlink()


def test_refused_policy_change_keeps_the_last_good_state(w, faults):
    """SetAppPolicy while the kernel refuses every commit: the caller gets Failed, the app's
    last good state stays in force (it still reaches the Internet), Degraded names the app
    and since when; once the kernel accepts, the reconciler applies the change by itself.
    The same for the default policy and for ResetAppPolicy."""
    app = "org.test.Refused"
    set_policy(w, app, access="allow")
    cg = app_cgroup(w, app)
    assert w.whoami(4, cgroup=cg).ok
    assert manager_prop(w, "DegradedSince") == 0
    faults.write_text("nft-commit:100000")
    with pytest.raises(DBusCallError) as e:
        set_policy(w, app, access="deny")
    assert "The kernel refused the change" in str(e.value), e.value
    assert degraded(w).startswith("policy of app %s: Input/output error" % app), degraded(w)
    since = manager_prop(w, "DegradedSince")
    assert abs(since / 1e6 - time.time()) < 300, since  # a wall clock time, not 0
    props = app_props(w, app)
    assert props["Access"] == "deny" and props["State"] == "online", props
    # roam status says it in words, with the time it began
    out = " ".join(w.dev_run([str(ROAM), "status"]).stdout.split())
    assert "Warning: Enforcement degraded since " in out, out
    assert ("policy of app %s: Input/output error; retrying. The last good state stays in "
            "force." % app) in out, out
    assert w.whoami(4, cgroup=cg).ok  # the last good state: allowed
    # the default policy too: its change waits, nothing in it is half applied
    with pytest.raises(DBusCallError):
        set_policy(w, "default", access="lan")
    other = "roam-test/session-2.scope"
    assert w.whoami(4, cgroup=other).ok
    faults.write_text("")
    wait_for(lambda: degraded(w) == "", 10, what="the retry applies the changes")
    assert manager_prop(w, "DegradedSince") == 0
    assert app_props(w, app)["State"] == "blocked: access denied"
    r = w.whoami(4, cgroup=cg)
    assert not r.ok and r.error in REFUSED, r
    r = w.whoami(4, cgroup=other)
    assert not r.ok and r.error in REFUSED, r
    assert app_props(w, "default")["State"] == "local networks only"
    # a refused reset: the configured (builtin) policy is what roamd wants from now on
    faults.write_text("nft-commit:100000")
    with pytest.raises(DBusCallError):
        w.call(MANAGER_PATH, MANAGER_IFACE, "ResetAppPolicy", "s", [app])
    assert degraded(w).startswith("policy of app %s" % app)
    r = w.whoami(4, cgroup=cg)
    assert not r.ok and r.error in REFUSED, r
    faults.write_text("")
    wait_for(lambda: app_props(w, app)["State"] == "local networks only", 10,
             what="the reset applied (the default is lan)")
    wait_for(lambda: degraded(w) == "", 10, what="Degraded clears")


def test_unanswered_commit_is_not_assumed(w, faults):
    """A commit the kernel applied but whose answer never came (and one never sent): roamd
    assumes neither outcome. Before its next transaction it reads the ruleset's generation;
    when it moved, the whole table is rebuilt from what roamd wants, so later changes build
    on what the kernel really holds (the old code retried a move the kernel had already made,
    and every later change of the app failed)."""
    app = "org.test.Lost"
    # a policy no other app has: its class chain goes with the move
    set_policy(w, app, access="allow", handover="move", bearers="wifi,cellular")
    cg = app_cgroup(w, app)
    assert w.whoami(4, cgroup=cg).ok
    faults.write_text("nft-commit-lost:1")
    with pytest.raises(DBusCallError) as e:
        set_policy(w, app, access="deny")
    assert "Connection timed out" in str(e.value), e.value
    wait_for(lambda: degraded(w) == "", 10, what="the retry settles the unknown state")
    assert app_props(w, app)["State"] == "blocked: access denied"
    log = w.roamd_log()
    assert "fault injection: answer lost" in log
    assert "since the unanswered commit: rebuilding table inet roam" in log, log[-3000:]
    assert app_props(w, app)["State"] == "blocked: access denied"
    r = w.whoami(4, cgroup=cg)
    assert not r.ok and r.error in REFUSED, r
    # later changes work: the model is what the kernel holds
    set_policy(w, app, access="allow")
    assert w.whoami(4, cgroup=cg).ok
    set_policy(w, app, access="deny")
    r = w.whoami(4, cgroup=cg)
    assert not r.ok and r.error in REFUSED, r
    # a commit never sent: the generation did not move, nothing is rebuilt
    faults.write_text("nft-commit-unsent:1")
    with pytest.raises(DBusCallError):
        set_policy(w, app, access="allow")
    wait_for(lambda: degraded(w) == "", 10, what="the retry applies the change")
    assert "the unanswered commit was not applied" in w.roamd_log()
    assert w.whoami(4, cgroup=cg).ok


def test_loop_answers_the_bus_while_a_commit_awaits_its_answer(w, faults):
    """A pass's nftables commit is asynchronous: while the kernel's answer is awaited, roamd's
    loop answers others. Shown by events, not by time: the fault nft-answer-hold keeps the
    commit's outcome untold until the fault file is written again; meanwhile a property Get
    is answered and SetLocation (answered by the pass that commits it) is not; once released,
    SetLocation succeeds and its rules are in force."""
    faults.write_text("nft-answer-hold:1")
    setloc = subprocess.Popen(
        ["dbus-send", "--bus=" + w.address, "--print-reply", "--reply-timeout=20000",
         "--dest=org.roam1", MANAGER_PATH, MANAGER_IFACE + ".SetLocation", "string:wifi0",
         "string:public"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: "the nftables answer is held until" in w.roamd_log(), 10,
                 what="a commit sent, its answer held")
        # the loop serves the bus: answered while the commit is outstanding
        assert degraded(w) == ""
        assert manager_prop(w, "DegradedSince") == 0
        assert setloc.poll() is None, setloc.communicate()  # its pass has not ended
        assert "the held nftables answer is read now" not in w.roamd_log()
        faults.write_text("")
        out, err = setloc.communicate(timeout=10)
        assert setloc.returncode == 0, err
    finally:
        faults.write_text("")
        if setloc.poll() is None:
            setloc.kill()
            setloc.wait()
    log = w.roamd_log()
    assert log.index("the nftables answer is held until") < \
        log.index("the held nftables answer is read now"), log[-3000:]
    r = w.call(MANAGER_PATH, MANAGER_IFACE, "CheckInbound", "sqss", ("udp", 5353, "", "wifi0"))
    assert not r[0] and r[2] == "public", r  # home's mDNS no longer let in
    w.call(MANAGER_PATH, MANAGER_IFACE, "SetLocation", "ss", ("wifi0", "home"))


# ---- coexistence: others' mark bits inside roamd's FirewallMask are reported ----

CLASHING = """table ip clash {
    chain out {
        type route hook output priority -160; policy accept;
        udp dport 9 meta mark set meta mark | 0x01000000
    }
}
"""


def manager_prop(w, name):
    return w.call(MANAGER_PATH, PROPS_IFACE, "Get", "ss", [MANAGER_IFACE, name])


def test_foreign_mark_bits_inside_the_mask_are_reported(w):
    assert manager_prop(w, "MarkConflicts") == []
    assert manager_prop(w, "FirewallMaskSuggestion") == ""
    w.dev("nft", "-f", "-", input=CLASHING)
    w.dev("ip", "rule", "add", "pref", "101", "fwmark", "0x2000000/0x2000000", "lookup", "main")
    try:
        w.call(MANAGER_PATH, MANAGER_IFACE, "Reload")
        wait_for(lambda: len(manager_prop(w, "MarkConflicts")) == 2, 10,
                 what="both conflicts on the bus")
        conflicts = manager_prop(w, "MarkConflicts")
        assert "table ip clash chain out writes meta mark bits 0x01000000" in conflicts
        assert "ip rule priority 101 fwmark 0x2000000/0x2000000 matches bits 0x02000000" \
            in conflicts
        # the highest 7 bits that nobody else uses
        assert manager_prop(w, "FirewallMaskSuggestion") == "0x00fe0000"
        out = w.dev_run([str(ROAM), "status"]).stdout
        assert "Warning: Nobody else uses FirewallMask=0x00fe0000: set it in roamd.conf." \
            in out, out
        assert "Warning: Mark conflict: table ip clash chain out writes meta mark bits" in out
        log = w.roamd_log()
        assert "Mark conflict: table ip clash chain out writes meta mark bits 0x01000000" in log
        assert "FirewallMask=0x00fe0000 is free" in log
    finally:
        w.dev("nft", "delete", "table", "ip", "clash", check=False)
        w.dev("ip", "rule", "del", "pref", "101", check=False)
    w.call(MANAGER_PATH, MANAGER_IFACE, "Reload")
    wait_for(lambda: manager_prop(w, "MarkConflicts") == [], 10, what="the conflicts clear")
    assert manager_prop(w, "FirewallMaskSuggestion") == ""


def test_other_programs_rules_at_our_priorities_are_left_alone(w):
    """An ip rule at roamd's priority with another mask is not roamd's: a restart keeps it
    (and lists it as a conflict only when its bits overlap)."""
    w.dev("ip", "rule", "add", "pref", "29000", "fwmark", "0x1/0x1", "lookup", "main")
    try:
        w.roamd_restart()
        w.wait_default_state()
        rules = w.dev("ip", "rule").stdout
        assert "29000:\tfrom all fwmark 0x1/0x1 lookup main" in rules, rules
        assert "ip rule priority 29000 fwmark 0x1/0x1 is not roamd's; left alone." in \
            w.roamd_log()
        assert manager_prop(w, "MarkConflicts") == []
        # roamd's own pairs are there, with its protocol
        assert "fwmark 0x7f000000/0x7f000000 lookup 29127 proto 82" in rules, rules
    finally:
        w.dev("ip", "rule", "del", "pref", "29000", "fwmark", "0x1/0x1", check=False)


@pytest.mark.parametrize("fam,prefix,gateway", [
    (4, "198.51.100.0/24", "203.0.113.77"), (6, "2001:db8:77::/64", "2001:db8:99::1")])
def test_a_route_whose_gateway_no_prefix_covers_is_copied_not_refused(w, fam, prefix, gateway):
    """A main-table route via a gateway that no prefix of its link covers (`onlink`, as hosting
    providers' default routes are; or one the kernel kept after the address it came with went)
    is copied into the link's app table like any other: the copy is not refused on every pass,
    and Degraded stays empty."""
    ip = ["ip", "-%d" % fam, "route"]
    w.dev(*ip, "add", prefix, "via", gateway, "dev", "wifi0", "onlink")
    try:
        def copied():
            out = w.dev(*ip, "show", "table", "all", prefix).stdout
            return [x for x in out.splitlines() if " table 29" in x]
        rows = wait_for(copied, 10, what="the route copied into wifi0's app table")
        assert len(rows) == 1 and "via %s dev wifi0" % gateway in rows[0], rows
        assert manager_prop(w, "Degraded") == ""
        assert "Failed to add route %s" % prefix not in w.roamd_log()
    finally:
        w.dev(*ip, "del", prefix, "via", gateway, "dev", "wifi0", check=False)
    wait_for(lambda: not w.dev(*ip, "show", "table", "all", prefix).stdout.strip(), 10,
             what="the copy goes with main's route")

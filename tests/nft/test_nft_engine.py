# SPDX-License-Identifier: LGPL-2.1-or-later
"""roamd's nftables engine against the real kernel, in a throwaway network namespace: the
ruleset it builds, that a change carries only the changed element, and that a refused
transaction changes nothing. (Packets and policies are tested in tests/world/test_apps.py.)"""
import os
import subprocess

import pytest

BUILD = os.environ.get("ROAM_BUILD", os.path.join(os.path.dirname(__file__), "../../build"))
DEMO = os.path.join(BUILD, "tests/nft/nft-engine-demo")

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists(DEMO),
                                reason="needs root and a build")


def run_demo():
    script = f"{DEMO}; echo rc=$?; nft list table inet roam; nft -j list ruleset >/dev/null"
    p = subprocess.run(["unshare", "-n", "sh", "-c", script], capture_output=True, text=True,
                       timeout=30)
    return p.stdout, p.stderr


def test_ruleset_shape_and_transactions():
    out, err = run_demo()
    assert "start: 83 messages: ok" in out
    assert "change: 2 messages: ok" in out  # one policy change = delete + add of one element
    assert "bad: 2 messages: failed" in out
    assert "rc=0" in out
    assert "nftables refused the transaction" in err
    # the refused transaction left the element where the good one put it
    assert "1234 counter packets 0 bytes 0 : jump c_lan" in out
    assert "socket cgroupv2 level 2 vmap @app_l2" in out
    assert out.index("socket cgroupv2 level 2") < out.index("socket cgroupv2 level 0")
    # a process's packets (its socket has a file: meta skuid loads) meet the default policy
    # first, ICMP too; only the kernel's own ICMP/NDP/IGMP pass before the root's policy
    assert out.index("socket cgroupv2 level 2") < \
        out.index("meta skuid >= 0 socket cgroupv2 level 0 vmap @app_l0") < \
        out.index("meta l4proto icmp accept") < \
        out.index("\t\tsocket cgroupv2 level 0 vmap @app_l0")
    assert "meta l4proto ipv6-icmp accept" in out and "meta l4proto igmp accept" in out
    assert "type route hook output priority mangle; policy accept;" in out
    # loopback is handled first in each class chain, not before the class lookup: it passes,
    # except DNS where the class refuses it (a local stub would forward it) ...
    assert "socket cgroupv2 level 2" in out.split("chain output {")[1].split("\n")[2]
    assert 'chain c_deny {\n\t\toif "lo" meta l4proto != tcp meta l4proto != udp accept\n' \
        '\t\toif "lo" th dport != 53 accept\n\t\tmeta l4proto tcp reject' in out
    assert 'chain c_route {\n\t\toif "lo" accept\n' in out
    assert 'chain c_lan {\n\t\toif "lo" meta l4proto != tcp meta l4proto != udp accept\n' \
        '\t\toif "lo" th dport != 53 accept\n' \
        '\t\toif "lo" meta l4proto tcp reject with tcp reset\n' \
        '\t\toif "lo" reject with icmpx admin-prohibited\n' in out
    assert 'chain c_vpn {\n\t\toif "lo" meta l4proto != tcp meta l4proto != udp accept\n' \
        '\t\toif "lo" th dport != 53 accept\n\t\toif "lo" meta l4proto tcp reject' in out
    # ... and the portal-login class gets loopback DNS only (the host's own addresses are
    # reached through lo too)
    assert 'chain c_portal {\n\t\toif "lo" tcp dport 53 accept\n' \
        '\t\toif "lo" udp dport 53 accept\n' \
        '\t\toif "lo" meta l4proto tcp reject with tcp reset\n' \
        '\t\toif "lo" reject with icmpx admin-prohibited\n\t\tmeta nfproto ipv4' in out
    # the mark keeps others' bits: our mask is 0x7f000000
    assert "meta mark set meta mark & 0x81ffffff | 0x01000000" in out
    assert "ct state established,related ct mark & 0x7f000000 vmap @restore" in out
    # packets already on their slot's link are only recorded in conntrack (no reroute) ...
    assert "meta nfproto ipv4 oif 2 ct mark set ct mark & 0x81ffffff | 0x01000000\n" in out
    # ... the others are marked and routed again; an existing flow on its link passes as is
    assert "meta nfproto ipv6 oif != 3 meta mark set meta mark & 0x82ffffff | 0x02000000 " \
        "ct mark set" in out
    assert "chain restore_1 {\n\t\toif 2 accept\n" in out
    assert "meta mark & 0x7f000000 != 0x00000000 masquerade" in out
    assert "elements = { 169.254.0.0/16, 192.0.2.0/24 }" in out
    assert "elements = { 2001:db8::/64 }" in out
    assert "dnat ip to 203.0.113.65" in out


def _set_size(name):
    return "import json, sys; d = json.load(sys.stdin); " \
        "print(len([x for x in d['nftables'] if 'set' in x][0]['set'].get('elem', [])))"


@pytest.mark.parametrize("build", [BUILD, BUILD + "-asan"])
def test_many_lan_prefixes_span_messages(build):
    """500 separate IPv4 and 500 IPv6 LAN prefixes (docker bridges, several IPv6 prefixes per
    link): split over many messages, none overruns the batch page (the sanitizer build
    catches an overflow), and the kernel holds every one."""
    demo = os.path.join(build, "tests/nft/nft-engine-demo")
    if not os.path.exists(demo):
        pytest.skip("no %s" % demo)
    script = (f"{demo} lan 500 && "
              f"nft -j list set inet roam lan4 | python3 -c \"{_set_size('lan4')}\" && "
              f"nft -j list set inet roam lan6 | python3 -c \"{_set_size('lan6')}\"")
    p = subprocess.run(["unshare", "-n", "sh", "-c", script], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.split()
    assert lines[0] == "lan:" and "ok" in p.stdout, p.stdout
    assert lines[-2:] == ["500", "500"], p.stdout


@pytest.mark.parametrize("build", [BUILD, BUILD + "-asan"])
def test_async_commit(build):
    """The asynchronous commit (roamd's reconciler passes) against the real kernel: it is told
    the kernel's answer from the loop; a refused transaction changes nothing and its outcome
    says why; one asynchronous commit at a time; a synchronous commit made while one awaits
    its answer reads the socket for both, and the asynchronous one is told after, on its own
    turn of the loop (also when a new transaction read its answer: on the next turn, not at
    its deadline); a transaction freed mid-commit leaves nothing running (the sanitizer
    build catches a use after free or a leak) and the next transaction settles its unknown
    outcome by the generation (the owner's rebuild runs)."""
    demo = os.path.join(build, "tests/nft/nft-engine-demo")
    if not os.path.exists(demo):
        pytest.skip("no %s" % demo)
    p = subprocess.run(["unshare", "-n", "sh", "-c", f"{demo} async; echo rc=$?"],
                       capture_output=True, text=True, timeout=60)
    out, err = p.stdout, p.stderr
    assert "rc=0" in out, (out, err)
    assert "async start: sent, busy=1\nasync start: 36 messages: ok" in out
    assert "async bad: 2 messages: refused\nasync bad: result No such file or directory" in out
    assert "nftables refused the transaction (2 messages, at message 2)" in err
    # the refused transaction left the element where the good one put it
    assert "1234 counter packets 0 bytes 0 : jump c_lan" in out
    assert "second async: Device or resource busy" in out
    assert "order: sync,async, async result 0" in out
    assert "read by a new transaction: told on the next turn=1 result 0" in out
    assert "settled: 1 told=1 result 0 busy=0" in out  # nft_engine_settle(): told at once
    assert "freed mid-commit: busy=0" in out
    assert "next transaction: ok, resyncs 1" in out
    assert "rebuilding table inet roam from what roamd wants" in err
    assert "ERROR: AddressSanitizer" not in err and "runtime error" not in err, err

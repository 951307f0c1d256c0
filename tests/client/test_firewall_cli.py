"""`roam network`, `roam network trust`, `roam firewall` and `roam firewall check` against
fake_roamd.py's side of FIREWALL-API.md on a private system bus."""
import json
import subprocess

from fakebus import ROAM
from firewall_scenario import CAFE_ID, FIREWALL, HOME_ID

NOT_RUNNING = "roam: roamd is not running (no owner of org.roam1 on the system bus)"


def test_network_text(roamd, roam):
    roamd(FIREWALL)
    res = roam("network")
    assert res.rc == 0, res.err
    assert res.out.split("\n\n") == [
        "eth0 (ethernet): no network\n"
        "  Why:          no carrier or no address: no rules of a location",
        "wlan0 (wifi): home, from networks.d\n"
        f"  Network:      {HOME_ID}\n"
        "  Location:     home\n"
        "  Means:        a network you trust, like your own\n"
        "  Lets in:      mDNS (udp 5353), Samba browsing (udp 137, 138), DHCPv6 (udp 546); "
        "SSH (tcp 22, SSH=always)\n"
        '  Why:          ssid "HomeNet" and gateway 02:00:00:00:01:fe matched '
        "/etc/roam/networks.d/home.conf:3\n"
        "  Interface:    wlan0\n"
        "  Bearer:       wifi\n"
        "  SSID:         HomeNet\n"
        "  BSSID:        02:00:00:00:01:01\n"
        "  Gateway MAC:  02:00:00:00:01:fe\n"
        "  DHCP server:  192.0.2.1\n"
        "  Domain:       home.example",
        "eth1 (ethernet): untrusted until you choose\n"
        f"  Network:      {CAFE_ID}\n"
        "  Location:     untrusted\n"
        "  Means:        not trusted at all, the strictest rules\n"
        "  Lets in:      no service of its own; SSH (tcp 22, SSH=always)\n"
        "  Why:          unknown network: untrusted until you choose\n"
        "  Interface:    eth1\n"
        "  Bearer:       ethernet\n"
        "  Gateway MAC:  02:00:00:00:02:01\n"
        "  DHCP server:  198.51.100.1\n"
        "  Choose:       roam network trust home|work|public eth1\n",
    ]


def test_network_json(roamd, roam):
    roamd(FIREWALL)
    res = roam("network", "--json")
    assert res.rc == 0, res.err
    doc = json.loads(res.out)
    assert doc["firewall_error"] == ""
    assert doc["locations"] == ["home", "work", "public", "untrusted"]
    assert [link["name"] for link in doc["links"]] == ["eth0", "wlan0", "eth1"]
    wlan0 = doc["links"][1]
    assert wlan0 == {
        "name": "wlan0", "bearer": "wifi", "network_id": HOME_ID,
        "identity": FIREWALL["links"][1]["NetworkIdentity"], "location": "home",
        "location_source": "config",
        "location_reason": FIREWALL["links"][1]["LocationReason"], "location_wanted": "",
        "needs_choice": False,
    }
    assert doc["links"][2]["needs_choice"] is True
    assert doc["links"][0]["network_id"] == "" and doc["links"][0]["identity"] == {}


def test_network_trust(roamd, roam):
    fake = roamd(FIREWALL)
    res = roam("network", "trust", "public", "eth1")
    assert res.rc == 0, res.err
    assert res.out == (f"eth1: network {CAFE_ID} is now public (set by you); its rules are "
                       "in force.\n")
    assert fake.send(op="location_calls") == [["eth1", "public"]]
    # The rules swapped with the location.
    rules = json.loads(roam("firewall", "--json").out)["rules"]
    assert [r["id"] for r in rules if r["link"] == "eth1"] == [
        "built-in:established", "public.conf:2", "built-in:default"]
    # Without a link: the link with the default route (wlan0), named by roamd's answer.
    res = roam("network", "trust", "work")
    assert res.rc == 0, res.err
    assert res.out.startswith(f"wlan0: network {HOME_ID} is now work (set by you)")
    assert fake.send(op="location_calls")[-1] == ["", "work"]


def test_network_trust_refused(roamd, roam):
    """Refusals are said in words with a non-zero exit; nothing changes."""
    fake = roamd(dict(FIREWALL, _deny_uids=[0]))
    res = roam("network", "trust", "home", "eth1")
    assert res.rc == 1
    assert res.out == ""
    assert res.err == ("roam: Not allowed to make this network home on eth1: Only root or "
                       "members of group netdev may do this (polkit is not running).\n")
    assert json.loads(roam("network", "--json").out)["links"][2]["location"] == "untrusted"
    fake.send(op="deny", uids=[])
    for args, err in (
            (("home", "eth9"), "roam: Cannot make this network home on eth9: No link named "
                               "'eth9'.\n"),
            (("cellar", "eth1"), "roam: Cannot make this network cellar on eth1: Unknown "
                                 "location 'cellar' (known: home, work, public, untrusted).\n"),
            (("home", "eth0"), "roam: Cannot make this network home on eth0: eth0 is on no "
                               "network now: nothing to remember.\n")):
        res = roam("network", "trust", *args)
        assert (res.rc, res.out, res.err) == (1, "", err)


def test_network_usage_errors(roamd, roam):
    roamd(FIREWALL)
    for args, err in (
            (("network", "trust"), "'roam network trust' needs a location"),
            (("network", "trust", "home", "eth1", "x"), "'network' takes at most 3 arguments"),
            (("network", "forget"), "unknown action 'forget' for 'roam network'"),
            (("network", "trust", "home", "--json"), "--json goes with 'roam network' alone"),
            (("firewall", "check", "sctp", "80"), "'sctp' is not a protocol roam checks"),
            (("firewall", "check", "tcp", "0"), "'0' is not a port: 1 to 65535"),
            (("firewall", "check", "tcp", "65536"), "'65536' is not a port"),
            (("firewall", "check", "tcp", "1x"), "'1x' is not a port"),
            (("firewall", "check", "tcp"), "needs PROTO PORT [LINK]"),
            (("firewall", "--app", "x"), "--app goes with 'roam firewall check'"),
            (("firewall", "flush"), "unknown action 'flush' for 'roam firewall'"),
            (("network", "--app", "x"), "--app and --online-for go with 'roam run'")):
        res = roam(*args)
        assert res.rc != 0, args
        assert err in res.err, (args, res.err)
        assert res.out == ""


def test_firewall_text(roamd, roam):
    roamd(FIREWALL)
    res = roam("firewall")
    assert res.rc == 0, res.err
    head = "  Dir Action  Match                               Packets      Bytes  From"
    assert res.out == (
        "Rules in force, in the order they are evaluated; counters since they were loaded.\n"
        "\n"
        "wlan0: home, from networks.d\n"
        f"{head}\n"
        "  in  accept  established,related                    1520     1.8 MB  "
        "built-in:established\n"
        "  in  accept  icmp and icmpv6 essentials               12     1.0 kB  built-in:icmp\n"
        "  in  accept  tcp 22000 app org.syncthing              87    52.3 kB  "
        "/etc/roam/firewall.d/home.conf:4\n"
        "  in  accept  tcp 22                                    4      240 B  "
        "/etc/roam/firewall.d/home.conf:6\n"
        "  in  drop    any                                      31     2.5 kB  built-in:default\n"
        "\n"
        "eth1: untrusted until you choose\n"
        f"{head}\n"
        "  in  accept  established,related                     301   402.1 kB  "
        "built-in:established\n"
        "  in  accept  tcp 22                                    0        0 B  built-in:ssh\n"
        "  in  drop    any                                       9      540 B  built-in:default\n")


def test_firewall_columns_stay_aligned(roamd, roam):
    """issue 39: roamd's own words for a match are longer than the Match column was wide
    (34): every column still starts where its header does, whatever the match's length or
    the counters' size."""
    rows = [
        ["", "", "in", "accept", "icmpv6 essentials (errors, echo request, ND, RA, MLD)", "",
         "built-in", "built-in:icmpv6", 12_345_678_901, 9_876_543_210_123],
        ["", "", "in", "accept", "udp 68 from 67, udp 546 from 547 (DHCP, DHCPv6)", "",
         "built-in", "built-in:dhcp", 3, 1_000],
        ["wlan0", "home", "in", "accept",
         "mdns: udp 5353 to 224.0.0.251, ff02::fb (printers, shares, Avahi, Bonjour)", "",
         "built-in", "built-in:mdns", 7, 700],
        ["wlan0", "home", "in", "accept", "tcp 22 caf\u00e9", "", "built-in", "built-in:ssh",
         0, 0],
    ]
    roamd(dict(FIREWALL, firewall_rules=rows))
    res = roam("firewall")
    assert res.rc == 0, res.err
    lines = [l for l in res.out.split("\n") if l.startswith("  ")]
    heads = [l for l in lines if l.startswith("  Dir ")]
    assert len(heads) == 2 and heads[0] == heads[1], lines
    head = heads[0]
    cols = [head.index(w) for w in ("Action", "Match")]
    packets_end = head.index("Packets") + len("Packets")
    bytes_end = head.index("Bytes") + len("Bytes")
    from_col = head.index("From")
    for line in lines:
        if line in heads:
            continue
        assert line[cols[0] - 1] == " " and line[cols[0]] != " ", (line, head)
        assert line[cols[1] - 1] == " " and line[cols[1]] != " ", (line, head)
        assert line[packets_end - 1].isdigit() and line[packets_end] == " ", (line, head)
        assert line[bytes_end - 1] == "B" and line[bytes_end] == " ", (line, head)
        assert line[from_col - 1] == " " and line[from_col:].startswith("built-in"), (line, head)


def test_firewall_json(roamd, roam):
    fake = roamd(FIREWALL)
    res = roam("firewall", "--json")
    assert res.rc == 0, res.err
    doc = json.loads(res.out)
    assert doc["firewall_error"] == ""
    assert len(doc["rules"]) == 8
    assert doc["rules"][2] == {
        "link": "wlan0", "location": "home", "direction": "in", "action": "accept",
        "match": "tcp 22000 app org.syncthing", "app": "org.syncthing",
        "source": "/etc/roam/firewall.d/home.conf:4", "id": "home.conf:4", "packets": 87,
        "bytes": 52344}
    # A broken profile file: said first, the rules in force stay.
    error = "/etc/roam/firewall.d/home.conf:9: unknown action 'alow'; the rules in force stay"
    fake.send(op="manager", props={"FirewallError": error})
    assert json.loads(roam("firewall", "--json").out)["firewall_error"] == error
    res = roam("firewall")
    assert res.out.startswith(f"Firewall files refused: {error}\n\nRules in force")
    fake.send(op="rules", rules=[])
    assert roam("firewall").out.endswith("No firewall rules in force.\n")


def test_firewall_check(roamd, roam):
    roamd(FIREWALL)
    res = roam("firewall", "check", "tcp", "22000", "--app", "org.syncthing", "wlan0")
    assert res.rc == 0, res.err
    assert res.out == (
        "tcp 22000 to app org.syncthing on wlan0 (home): let in\n"
        "  Rule:         home.conf:4\n"
        "  Why:          accept by rule home.conf:4 (/etc/roam/firewall.d/home.conf:4): "
        "tcp 22000 app org.syncthing\n")
    # Another process on the same port: the app rule does not let it in.
    res = roam("firewall", "check", "tcp", "22000")
    assert res.out.startswith("tcp 22000 on wlan0 (home): not let in\n  Rule:         "
                              "built-in:default\n")
    res = roam("firewall", "check", "udp", "5353", "eth1", "--json")
    assert json.loads(res.out) == {
        "protocol": "udp", "port": 5353, "app": "", "link": "eth1", "location": "untrusted",
        "accepted": False, "rule": "built-in:default",
        "reason": "drop by rule built-in:default (built-in): any"}
    res = roam("firewall", "check", "tcp", "80", "eth9")
    assert (res.rc, res.err) == (1, "roam: Cannot check tcp 80 on eth9: No link named "
                                    "'eth9'.\n")


def test_not_running(bus, roam):
    for args in (("network",), ("network", "trust", "home"), ("firewall",),
                 ("firewall", "check", "tcp", "22")):
        res = roam(*args)
        assert (res.rc, res.err.strip()) == (3, NOT_RUNNING), args


def test_older_roamd_without_firewall(roamd, roam):
    """An older roamd: no firewall properties (nothing to show) and no methods (said so)."""
    roamd({"manager": {"State": "online"}, "links": [{"Index": 2, "Name": "eth0"}]})
    res = roam("network")
    assert res.rc == 0 and res.out.startswith("eth0 (ethernet): no network"), res.err


def test_help_lists_the_firewall_commands(tmp_path):
    out = subprocess.run([ROAM, "--help"], capture_output=True, text=True).stdout
    for words in ("network trust home|work|public|untrusted [LINK]",
                  "firewall check tcp|udp PORT [--app ID] [LINK]", "  firewall  "):
        assert words in out


def test_network_never_prints_control_characters(roamd, roam):
    """An SSID is whatever the access point says: escape sequences become '?'."""
    wlan0 = dict(FIREWALL["links"][1], NetworkIdentity={"ssid": "Home\x1b[2J\x07Net"},
                 LocationReason='ssid "Home\x1b]52;c;eA==\x07Net" matched x.conf:1')
    roamd(dict(FIREWALL, links=[wlan0]))
    res = roam("network")
    assert res.rc == 0, res.err
    assert "\x1b" not in res.out and "\x07" not in res.out
    assert "  SSID:         Home?[2J?Net\n" in res.out
    # JSON keeps the value exactly (json-c escapes it).
    assert json.loads(roam("network", "--json").out)["links"][0]["identity"]["ssid"] == \
        "Home\x1b[2J\x07Net"


def test_firewall_disabled(roamd, roam):
    """[Firewall] Enable=no: roamd answers Failed; said in words, exit status 1."""
    roamd(dict(FIREWALL, _firewall_off="The firewall is off ([Firewall] Enable=no)."))
    for args, what in ((("firewall",), "read the firewall rules"),
                       (("firewall", "check", "tcp", "22"), "check tcp 22"),
                       (("network", "trust", "home", "eth1"), "make this network home on eth1")):
        res = roam(*args)
        assert (res.rc, res.out) == (1, ""), args
        assert res.err == f"roam: Cannot {what}: The firewall is off ([Firewall] Enable=no).\n"


def test_location_not_in_force(roamd, roam):
    """The kernel refused the new location's rules (LocationWanted differs from Location):
    the location in force, and the wanted one in words, in roam network and roam firewall."""
    fake = roamd(FIREWALL)
    fake.send(op="set", link=3, props={"LocationWanted": "public"})
    pending = "home, from networks.d; public wanted, not in force yet (see Degraded)"
    res = roam("network")
    assert res.rc == 0, res.err
    block = res.out.split("\n\n")[1]
    assert block.startswith(f"wlan0 (wifi): {pending}\n"
                            f"  Network:      {HOME_ID}\n"
                            "  Location:     home\n"), block
    res = roam("firewall")
    assert res.rc == 0, res.err
    assert f"\nwlan0: {pending}\n" in res.out, res.out
    for verb, links in (("network", lambda d: d["links"]), ("status", lambda d: d["links"])):
        res = roam(verb, "--json")
        assert res.rc == 0, res.err
        wlan0 = [l for l in links(json.loads(res.out)) if l["name"] == "wlan0"][0]
        assert (wlan0["location"], wlan0["location_wanted"]) == ("home", "public"), (verb, wlan0)
    # Taken: nothing pending any more.
    fake.send(op="set", link=3, props={"Location": "public", "LocationSource": "user"})
    res = roam("network")
    assert res.out.split("\n\n")[1].startswith("wlan0 (wifi): public, set by you\n"), res.out


def test_network_says_where_ssh_comes_in(roamd, roam):
    """Lets in names SSH as roamd publishes [Firewall] SSH= for each location."""
    roamd(dict(FIREWALL, manager=dict(FIREWALL["manager"], SSH="trusted",
                                      SSHLetIn=["home", "work"])))
    out = roam("network").out
    assert "(udp 546); SSH (tcp 22, SSH=trusted)\n" in out, out
    assert "  Lets in:      no service of its own; not SSH (tcp 22, SSH=trusted)\n" in out, out

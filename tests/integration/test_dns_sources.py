"""roamd's DNS sources over D-Bus (systemd-resolved, NetworkManager), resolv.conf and config
pins, in a namespace of their own with test doubles of resolved and NetworkManager."""
import json
import os
import signal

import pytest

from minienv import MiniEnv, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_dns_services.py")


@pytest.fixture
def env():
    e = MiniEnv("dns")
    try:
        e.netns("ip link add v0 type veth peer name v1")
        e.netns("ip link set v0 up")
        e.netns("ip link set v1 up")
        e.netns("ip addr add 192.0.2.5/24 dev v0")
        e.netns("ip route add default via 192.0.2.1 dev v0")
        e.ifindex = int(e.netns("cat /sys/class/net/v0/ifindex").stdout)
        yield e
        # Clean shutdown on SIGTERM; with a sanitizer build this also fails on leaks.
        rc = e.stop_roamd()
        assert rc in (None, 0), f"roamd exited with {rc}:\n{e.log()[-4000:]}"
    finally:
        e.close()


def start_fake(env, kind, state):
    path = env.write(f"{kind}.json", json.dumps(state))
    p = env.spawn(["/usr/bin/python3", FAKE, kind, path])
    assert p.stdout.readline().strip() == "ready"
    return p, path


def update_fake(env, proc, path, state):
    with open(path, "w") as f:
        json.dump(state, f)
    proc.send_signal(signal.SIGHUP)


def dns_of(env, ifname="v0"):
    return (env.link_prop(ifname, "DNSSource"), env.link_prop(ifname, "DNS"),
            env.link_prop(ifname, "Domains"))


def test_resolved_then_resolv_conf_then_networkmanager_then_pin(env):
    resolv = env.write("resolv.conf", "nameserver 198.51.100.1\nsearch fallback.test\n")
    base = f"[DNS]\nResolvConf={resolv}\nDhcpcdLeaseDir={env.dir}/none\n"

    res, res_state = start_fake(env, "resolved", {
        "dns": [[env.ifindex, "192.0.2.53"], [env.ifindex, "2001:db8::53"], [999, "192.0.2.99"]],
        "domains": [[env.ifindex, "res.test", False], [env.ifindex, "route.test", True]],
    })
    env.start_roamd(base)
    wait_for(lambda: dns_of(env) == ("resolved", [[4, "192.0.2.53"], [6, "2001:db8::53"]],
                                     ["res.test"]), what="DNS from resolved")

    # resolved changes its servers: PropertiesChanged reaches roamd.
    update_fake(env, res, res_state, {"dns": [[env.ifindex, "192.0.2.54"]], "domains": []})
    wait_for(lambda: dns_of(env) == ("resolved", [[4, "192.0.2.54"]], []),
             what="updated DNS from resolved")

    # resolved goes away: the next source that knows v0 is resolv.conf.
    res.terminate()
    res.wait(5)
    wait_for(lambda: dns_of(env) == ("resolv.conf", [[4, "198.51.100.1"]], ["fallback.test"]), what="fallback to resolv.conf")

    # resolv.conf is replaced (rename, as resolvconf does): inotify picks it up.
    tmp = env.write("resolv.conf.new", "nameserver 198.51.100.2\n")
    os.rename(tmp, resolv)
    wait_for(lambda: dns_of(env)[1] == [[4, "198.51.100.2"]],
             what="rewritten resolv.conf")

    # NetworkManager appears and knows v0.
    start_fake(env, "networkmanager", {"configuration": [
        {"interface": "v0", "nameservers": ["192.0.2.77"], "domains": ["nm.test"]},
        {"interface": "other", "nameservers": ["192.0.2.78"]}]})
    wait_for(lambda: dns_of(env) == ("networkmanager", [[4, "192.0.2.77"]], ["nm.test"]), what="DNS from NetworkManager")

    # A pin in the configuration wins over everything, applied by reload.
    env.write("roamd.conf", base + "[LinkDNS]\nv0=203.0.113.53\n")
    env.roamd.send_signal(signal.SIGHUP)
    wait_for(lambda: dns_of(env)[:2] == ("config", [[4, "203.0.113.53"]]),
             what="pinned DNS")


def test_resolv_conf_only_for_links_with_a_route(env):
    resolv = env.write("resolv.conf", "nameserver 198.51.100.1\n")
    env.start_roamd(f"[DNS]\nSources=resolv.conf\nResolvConf={resolv}\n")
    assert env.link_prop("v0", "DNSSource") == "resolv.conf"
    # v1 has no address and no default route: resolv.conf does not describe it.
    assert env.link_prop("v1", "DNSSource") == "none"
    assert env.link_prop("v1", "DNS") == []


def test_resolv_conf_hostile_search_domains(env):
    """Search domains that are not clean text (broken UTF-8, ESC, a bidi override) are left
    out: one broken byte failed every reply with the link in it (sd-bus refuses it)."""
    resolv = os.path.join(env.dir, "resolv.conf")
    with open(resolv, "wb") as f:
        f.write(b"nameserver 198.51.100.1\n"
                b"search good.test bad\xc3\x28.test esc\x1b]0;x\x07.test "
                b"rlo\xe2\x80\xaemoc.test also.test\n")
    env.start_roamd(f"[DNS]\nSources=resolv.conf\nResolvConf={resolv}\n")
    assert dns_of(env) == ("resolv.conf", [[4, "198.51.100.1"]], ["good.test", "also.test"])
    objects = env.rb.managed_objects()
    assert any(str(p) == env.link_path("v0") for p in objects)
    log = env.log()
    assert "search domain \"bad\\xc3(.test\" is not valid text, ignored" in log
    assert "\x1b" not in log and "\xe2\x80\xae" not in log


def test_malformed_bus_data_is_ignored(env):
    # Addresses of the wrong length, unknown families and bad ifindexes must be skipped.
    env.start_roamd("[DNS]\nSources=resolved\n")
    res, path = start_fake(env, "resolved", {"dns": [[-1, "192.0.2.1"], [0, "192.0.2.2"]],
                                             "dns_raw": [[env.ifindex, 2, "c00002"],
                                                         [env.ifindex, 10, "c0000201"],
                                                         [env.ifindex, 99, "c0000201"]],
                                             "domains": [[env.ifindex, "x" * 300, False]]})
    # Only the valid entry of the next update shows; the bad ones never do.
    # Domains with ESC or a bidi override are not clean text: left out (roam-text.c).
    update_fake(env, res, path, {"dns": [[env.ifindex, "192.0.2.9"]],
                                 "dns_raw": [[env.ifindex, 2, "c00002"]],
                                 "domains": [[env.ifindex, "esc\x1b[2J.test", False],
                                             [env.ifindex, "rlo\u202emoc.test", False],
                                             [env.ifindex, "ok.test", False]]})
    wait_for(lambda: dns_of(env) == ("resolved", [[4, "192.0.2.9"]], ["ok.test"]),
             what="valid entries after malformed ones")
    assert env.roamd.poll() is None

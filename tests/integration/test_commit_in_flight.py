"""roamd while one of its reconciler's nftables commits awaits the kernel's answer (the fault
nft-answer-hold keeps the outcome untold until the fault file is written again: events, not
time): its loop answers the bus meanwhile, the commit ends when the answer is read, and roamd
stopped mid-commit exits cleanly (run with ROAMD=build-asan/service/roamd, the sanitizers
fail the exit on a use after free or a leak)."""
import json
import os

import pytest

from minienv import wait_until
from roambus import CallError
from probenet import GW_V4, GW_V6, PROBE_V4, PROBE_V6, ProbeNet

PROBE = [("probe.roam.test", PROBE_V4), ("probe.roam.test", PROBE_V6)]
HELD = "the nftables answer is held until"
READ = "the held nftables answer is read now"


@pytest.fixture
def net():
    n = ProbeNet("commit")
    try:
        yield n
    finally:
        n.close()


def wait_log(net, text):
    """roamd's log is a file: re-read it (no bus signal announces a log line)."""
    wait_until(lambda: text in net.log(), what=f"{text!r} in roamd's log", recheck=0.1)


def start_held(net):
    """roamd whose first pass after start (the verdicts change the class chains) is held."""
    net.internet()
    net.dns(*PROBE)
    net.server(f"{PROBE_V4}:80,[{PROBE_V6}]:80")
    faults = net.write("faults", "nft-answer-hold:1")
    net.start_roamd(net.probe_config(), extra=[f"--test-faults={faults}"])
    wait_log(net, HELD)


def test_bus_answered_while_a_commit_is_held_then_it_ends(net):
    start_held(net)
    # answered by roamd's loop while the commit is outstanding
    assert net.prop("/org/roam1", "org.roam1.Manager", "Degraded") == ""
    assert net.link_prop("d0", "Connectivity") in ("online", "partial", "checking",
                                                   "unknown", "offline")
    assert READ not in net.log()
    net.write("faults", "")
    wait_log(net, READ)
    log = net.log()
    assert log.index(HELD) < log.index(READ)
    assert "Cannot bring nftables up to date" not in log, log[-3000:]
    rc = net.stop_roamd()
    assert rc in (None, 0), f"roamd exited with {rc}:\n{net.log()[-4000:]}"


def test_stopped_mid_commit_exits_cleanly(net):
    start_held(net)
    rc = net.stop_roamd()
    log = net.log()
    assert rc == 0, f"roamd exited with {rc}:\n{log[-4000:]}"
    assert READ not in log  # it never learnt the answer: freed with the commit in flight
    assert "AddressSanitizer" not in log and "runtime error" not in log, log[-4000:]


def cgroup2_mount():
    """The host's cgroup2 mount (/sys/fs/cgroup, or .../unified on hybrid systems): the one
    roamd mounts in its namespace."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if fields[sep + 1] == "cgroup2":
                return fields[4]
    pytest.skip("no cgroup2 mount")


@pytest.fixture
def apps_dir(net):
    """<cgroup2>/roam-it-NAME.slice/app.slice: an app's scope made below it is roamd's to govern."""
    top = os.path.join(cgroup2_mount(), net.name + ".slice")  # slices are watched
    os.makedirs(os.path.join(top, "app.slice"))
    try:
        yield os.path.join(top, "app.slice")
    finally:
        for d, _, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
            os.rmdir(d)


def element(net, ino):
    """Whether a verdict map of table inet roam holds an element for the cgroup whose id
    (its directory's inode) is ino."""
    out = net.netns("nft -j list table inet roam").stdout
    return any(str(ino) == str(e) or str(ino) in json.dumps(e)
               for obj in json.loads(out)["nftables"] if "map" in obj
               for e in obj["map"].get("elem", []))


def member(net, ino):
    """Whether the usage counters' member set (table inet usage_by_roamd) holds cgroup ino."""
    out = net.netns("nft -j list set inet usage_by_roamd stats_cg").stdout
    return any(str(ino) == str(e) or str(ino) in json.dumps(e)
               for obj in json.loads(out)["nftables"] if "set" in obj
               for e in obj["set"].get("elem", []))


def usage(net):
    """GetUsage (it reads the counters from the kernel): answered, as a list."""
    return list(net.rb.call("/org/roam1", "org.roam1.Usage", "GetUsage", "a{sv}", ({},)))


def get_app(net, app_id):
    try:
        return str(net.rb.call("/org/roam1", "org.roam1.Manager", "GetApp", "s", (app_id,)))
    except CallError:
        return None


def test_app_start_and_exit_while_a_commit_is_held(net, apps_dir):
    """A cgroup appearing and ending is the loop's business while the kernel's answer is
    awaited: the bus answers meanwhile, and the element is counted, and removed, only in step
    with what the kernel accepted."""
    start_held(net)
    scope = os.path.join(apps_dir, "app-test-org.test.Held-1.scope")
    os.mkdir(scope)
    ino = os.stat(scope).st_ino
    path = "/" + os.path.relpath(scope, cgroup2_mount())
    app = wait_until(lambda: get_app(net, "org.test.Held"), what="the app's object")
    # answered while the first commit is held; its element waits for the next pass
    assert net.prop(app, "org.roam1.App", "Cgroups") == [path]
    assert isinstance(usage(net), list)  # a stats read, during the held commit
    assert READ not in net.log()
    assert not element(net, ino) and not member(net, ino)
    # released; the next commit is held again (a new text: roamd re-reads a changed file)
    net.write("faults", "nft-answer-hold:1\n")
    wait_log(net, READ)
    wait_until(lambda: net.log().count(HELD) == 2, what="the element's commit held",
               recheck=0.1)
    net.write("faults", "nft-answer-hold:1\n\n")
    wait_until(lambda: net.log().count(READ) == 2, what="its answer read", recheck=0.1)
    wait_until(lambda: element(net, ino), what="the element in the kernel", recheck=0.1)
    assert member(net, ino)  # the usage counters' member came with the same pass

    os.rmdir(scope)
    # gone from the bus at once; the element leaves with the next (held) commit
    wait_until(lambda: net.prop(app, "org.roam1.App", "Cgroups") == [], what="Cgroups empty")
    wait_until(lambda: net.log().count(HELD) == 3, what="the exit's commit held", recheck=0.1)
    assert get_app(net, "org.test.Held") == app  # kept until the kernel dropped the element
    assert isinstance(usage(net), list)
    net.write("faults", "")
    wait_until(lambda: net.log().count(READ) == 3, what="the exit's answer read", recheck=0.1)
    wait_until(lambda: not element(net, ino), what="the element gone", recheck=0.1)
    assert not member(net, ino)
    wait_until(lambda: get_app(net, "org.test.Held") is None, what="the app forgotten",
               recheck=0.1)
    assert "Cannot bring nftables up to date" not in net.log(), net.log()[-3000:]
    rc = net.stop_roamd()
    log = net.log()
    assert rc in (None, 0), f"roamd exited with {rc}:\n{log[-4000:]}"
    assert "AddressSanitizer" not in log and "runtime error" not in log, log[-4000:]

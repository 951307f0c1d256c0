"""roamd while one of its reconciler's nftables commits awaits the kernel's answer (the fault
nft-answer-hold keeps the outcome untold until the fault file is written again: events, not
time): its loop answers the bus meanwhile, the commit ends when the answer is read, and roamd
stopped mid-commit exits cleanly (run with ROAMD=build-asan/service/roamd, the sanitizers
fail the exit on a use after free or a leak)."""
import pytest

from minienv import wait_until
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

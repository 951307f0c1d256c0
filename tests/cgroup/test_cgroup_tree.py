# SPDX-License-Identifier: LGPL-2.1-or-later
"""The live cgroup tree (service/kernel/roamd-cgroup.c) against the kernel, through its test program
run inside a private subtree <mount>/roam-cgtest-PID-N/system.slice/roamd.service."""
import os
import shutil
import signal
import subprocess
import tempfile

import pytest

from conftest import wait_unpopulated

APPS = "user.slice/user-1000.slice/user@1000.service/app.slice"


def by_path(events):
    return {e["path"]: e for e in events}


def reply_value(line, key):
    for word in line.split():
        if word.startswith(key + "="):
            return word[len(key) + 1:]
    raise AssertionError("%s not in %r" % (key, line))


def test_scan_then_watch(subtree, start):
    sub = subtree
    ids = {
        "system.slice/roamd.service": ("system", "-", "-"),
        "system.slice/foo.service": ("system", "-", "-"),
        "system.slice/system-getty.slice/getty@tty1.service": ("system", "-", "-"),
        "user.slice/user-1000.slice": ("user", "-", "1000"),
        # the user's delegated subtree: its policy user:1000 governs what below is no app
        "user.slice/user-1000.slice/user@1000.service": ("user", "-", "1000"),
        APPS + "/app-gnome-org.example.Foo-1234.scope": ("app", "org.example.Foo", "1000"),
        APPS + "/app-gnome-my\\x2dapp@abc.service": ("app", "my-app", "1000"),
    }
    expected = {}
    for rel, (kind, app, uid) in ids.items():
        ino = sub.mkdir(rel)
        expected[sub.ns_of(rel)] = dict(id=ino, kind=kind, app=app, uid=uid)
    # Not nodes, or below one: never reported.
    for rel in ("other/x.service", "system.slice/foo.service/child", APPS + "/app-x.scope",
                APPS + "/app-gnome-bad\\x2e\\x2eid@1.service", "user.slice/user-1000.slice/session-2.scope"):
        sub.mkdir(rel)

    p = start()
    assert p.command("ping scan", "pong") == "pong scan"
    got = by_path(p.events("ADDED"))
    assert set(got) == set(expected)
    for path, want in expected.items():
        e = got[path]
        assert (e["id"], e["kind"], e["app"], e["uid"]) == (want["id"], want["kind"], want["app"], want["uid"]), e
        assert e["level"] == path.count("/")
    # Parents first.
    paths = [e["path"] for e in p.events("ADDED")]
    assert paths.index(sub.ns_of("user.slice/user-1000.slice")) < paths.index(sub.ns_of(APPS + "/app-gnome-org.example.Foo-1234.scope"))

    # Live: a new service, a new user with an app made in one go (the watch on each new
    # directory races its own children), and names that mean nothing.
    bar = sub.mkdir("system.slice/bar.service")
    p.wait_event("ADDED", sub.ns_of("system.slice/bar.service"))
    user_app = "user.slice/user-1001.slice/user@1001.service/app.slice/app-kde-org.kde.K-9.scope"
    k = sub.mkdir(user_app)
    p.wait_event("ADDED", sub.ns_of(user_app))
    sub.mkdir("system.slice/not-a-service")
    sub.mkdir("system.slice/bar.service/inner.service")  # inside a node: not watched
    p.barrier()
    got = by_path(p.events("ADDED"))
    assert got[sub.ns_of("system.slice/bar.service")]["id"] == bar
    assert got[sub.ns_of(user_app)]["id"] == k
    assert (got[sub.ns_of(user_app)]["app"], got[sub.ns_of(user_app)]["uid"]) == ("org.kde.K", "1001")
    assert got[sub.ns_of("user.slice/user-1001.slice")]["kind"] == "user"
    assert sub.ns_of("system.slice/not-a-service") not in got
    assert sub.ns_of("system.slice/bar.service/inner.service") not in got

    # Removal: each node once, the children before their parents.
    os.rmdir(sub.fs_of("system.slice/bar.service/inner.service"))
    os.rmdir(sub.fs_of("system.slice/bar.service"))
    sub.rmtree("user.slice/user-1001.slice")
    p.wait_event("REMOVED", sub.ns_of("user.slice/user-1001.slice"))
    # A name that comes back at once is a new cgroup with a new id.
    baz = sub.mkdir("system.slice/baz.service")
    os.rmdir(sub.fs_of("system.slice/baz.service"))
    baz2 = sub.mkdir("system.slice/baz.service")
    assert baz2 != baz
    p.barrier()
    assert [e["id"] for e in p.events() if e["path"] == sub.ns_of("system.slice/baz.service")][-1] == baz2
    assert p.command("get %d" % baz2, "get") == "get %d path=%s" % (baz2, sub.ns_of("system.slice/baz.service"))
    assert p.command("get %d" % baz, "get") == "get %d path=-" % baz
    os.rmdir(sub.fs_of("system.slice/baz.service"))
    p.wait_event("REMOVED", sub.ns_of("system.slice/baz.service"))
    p.barrier()

    removed = [e["path"] for e in p.events("REMOVED")]
    for rel in ("system.slice/bar.service", "user.slice/user-1001.slice", user_app):
        assert removed.count(sub.ns_of(rel)) == 1, rel
    assert removed.index(sub.ns_of(user_app)) < removed.index(sub.ns_of("user.slice/user-1001.slice"))
    # Whatever the program saw of baz's first life, each id was added and removed once at most.
    baz_events = [(e["ev"], e["id"]) for e in p.events() if e["path"] == sub.ns_of("system.slice/baz.service")]
    assert baz_events[-2:] == [("ADDED", baz2), ("REMOVED", baz2)], baz_events

    # foreach replays exactly the live nodes.
    line = p.command("foreach", "foreach done")
    assert reply_value(line, "count") == reply_value(line, "live")
    live = {e["path"] for e in p.events("FOREACH")}
    assert sub.ns_of("system.slice/foo.service") in live
    assert sub.ns_of("system.slice/bar.service") not in live
    assert sub.ns_of(APPS + "/app-gnome-my\\x2dapp@abc.service") in live
    assert not p.bugs()


def test_names_that_are_not_text_are_not_adopted(subtree, start):
    """Issue 40: a directory a user makes in its subtree, named like an app scope but not
    clean text (a byte that is not UTF-8, ESC, a bidi override), is no node, and nothing
    below it is one either (its path carries the name): at the scan and when made later."""
    sub = subtree
    bad = [APPS + "/app-gnome-org.example.Other@1\udcff.scope",
           APPS + "/app-gnome-org.example.Other@2\x1b]0;x\x07.scope",
           APPS + "/app-gnome-org.example.Other@3\u202e.scope",
           APPS + "/x\udcff.slice/app.slice/app-gnome-org.example.Deep@1.scope"]
    sub.mkdir(bad[0])
    sub.mkdir(bad[3])
    p = start()
    assert p.command("ping scan", "pong") == "pong scan"
    for rel in bad[1:3]:
        sub.mkdir(rel)
    sub.mkdir(APPS + "/x\udcff.slice/app.slice/app-gnome-org.example.Deep@2.scope")
    sub.mkdir(APPS + "/app-gnome-org.example.Other@4.scope")
    p.barrier()
    apps = [e["app"] for e in p.events("ADDED") if e["kind"] == "app"]
    assert apps == ["org.example.Other"], p.events("ADDED")
    assert not p.bugs()


def test_make_app_move_remove(subtree, start):
    sub = subtree
    p = start()
    scope = "system.slice/roamd.service/roam.slice/app-org.test.Mail.scope"
    line = p.command("make org.test.Mail", "make org.test.Mail")
    assert reply_value(line, "r") == "0"
    node = int(reply_value(line, "id"))
    assert node == os.stat(sub.fs_of(scope)).st_ino
    # Reported at once, before the reply, and only once though inotify sees it later.
    added = p.events("ADDED")
    assert [e for e in added if e["path"] == sub.ns_of(scope)][0]["app"] == "org.test.Mail"
    again = p.command("make org.test.Mail", "make org.test.Mail")
    assert reply_value(again, "id") == str(node)
    p.barrier()
    assert [e["path"] for e in p.events("ADDED")].count(sub.ns_of(scope)) == 1

    child = subprocess.Popen(["sleep", "60"])
    try:
        # A pidfd whose process is not the caller is refused, and nothing moves.
        assert p.command("move %d %d %d" % (node, child.pid, child.pid + 1), "move") == "move r=-EPERM"
        assert open(sub.fs_of(scope) + "/cgroup.procs").read() == ""
        # nor one of another user's processes (the caller's uid against the process's real
        # and saved uid, as kill(2) decides; no signal is sent to find out)
        assert p.command("move-as 65534 %d %d %d" % (node, child.pid, child.pid),
                         "move") == "move r=-EPERM"
        assert open(sub.fs_of(scope) + "/cgroup.procs").read() == ""
        assert p.command("move %d %d %d" % (node, child.pid, child.pid), "move") == "move r=0"
        with open("/proc/%d/cgroup" % child.pid) as f:
            assert "0::" + sub.ns_of(scope) + "\n" in f.read()
        assert p.command("remove org.test.Mail", "remove") == "remove org.test.Mail r=-EBUSY"
    finally:
        child.kill()
        child.wait()
    # the cgroup empties a moment after the exit (cgroup.events says when)
    assert wait_unpopulated(sub.fs_of(scope))
    line = p.command("remove org.test.Mail", "remove")
    assert line == "remove org.test.Mail r=0"
    assert not os.path.exists(sub.fs_of(scope))
    p.barrier()
    assert [e["path"] for e in p.events("REMOVED")].count(sub.ns_of(scope)) == 1
    assert p.command("get %d" % node, "get") == "get %d path=-" % node
    assert p.command("remove org.test.Mail", "remove") == "remove org.test.Mail r=-ENOENT"

    # roam.slice removed behind its back: made again.
    os.rmdir(sub.fs_of("system.slice/roamd.service/roam.slice"))
    line = p.command("make org.test.Again", "make org.test.Again")
    assert reply_value(line, "r") == "0"
    p.barrier()
    again = sub.ns_of("system.slice/roamd.service/roam.slice/app-org.test.Again.scope")
    assert [e["path"] for e in p.events("ADDED")].count(again) == 1

    # IDs that would leave the slice or are not IDs at all.
    for bad in ("../evil", "a/b", "..", ".hidden", "x..y", "a\\x2fb"):
        assert p.command("make " + bad, "make ") == "make %s r=-EINVAL id=0" % bad
        assert p.command("remove " + bad, "remove ") == "remove %s r=-EINVAL" % bad
    assert sorted(os.listdir(sub.fs_of("system.slice/roamd.service"))).count("evil") == 0
    assert not os.path.exists(sub.fs_of("system.slice/evil"))
    assert not p.bugs()


def test_cgroup_deleted_mid_change(subtree, start):
    sub = subtree
    p = start()
    line = p.command("make org.test.Gone", "make org.test.Gone")
    node = int(reply_value(line, "id"))
    fs = sub.fs_of("system.slice/roamd.service/roam.slice/app-org.test.Gone.scope")
    child = subprocess.Popen(["sleep", "60"])
    try:
        # The node is still registered (no event handled in between), its directory gone.
        assert p.command("rmdir-move %d %s %d" % (node, fs, child.pid), "rmdir-move") == "rmdir-move r=-ENOENT"
    finally:
        child.kill()
        child.wait()
    p.wait_event("REMOVED", sub.ns_of("system.slice/roamd.service/roam.slice/app-org.test.Gone.scope"))
    p.barrier()
    assert len([e for e in p.events("REMOVED") if e["id"] == node]) == 1
    assert not p.bugs()


def test_overflow_rescans(subtree, start):
    with open("/proc/sys/fs/inotify/max_queued_events") as f:
        limit = int(f.read())
    if limit > 50000:
        pytest.skip("max_queued_events is %d: overflowing takes too long" % limit)
    sub = subtree
    sub.mkdir("system.slice/old.service")
    p = start()
    p.wait_event("ADDED", sub.ns_of("system.slice/old.service"))
    os.kill(p.proc.pid, signal.SIGSTOP)
    try:
        # Fill the queue with meaningless events, then change what matters: those events are
        # lost, only the rescan can find them.
        churn = sub.fs_of("system.slice/churn")
        for i in range(limit // 2 + 100):
            os.mkdir(churn)
            os.rmdir(churn)
        os.rmdir(sub.fs_of("system.slice/old.service"))
        new = sub.mkdir("system.slice/new.service")
    finally:
        os.kill(p.proc.pid, signal.SIGCONT)
    p.wait_event("REMOVED", sub.ns_of("system.slice/old.service"))
    p.wait_event("ADDED", sub.ns_of("system.slice/new.service"))
    assert by_path(p.events("ADDED"))[sub.ns_of("system.slice/new.service")]["id"] == new
    p.wait_line(lambda l: "overflow" in l, stderr=True)
    p.barrier()
    assert not p.bugs()


def test_id_is_what_nftables_matches(subtree, start):
    """The id reported for an app is the value nftables compares for `socket cgroupv2`, and a
    socket made in that cgroup matches, in a network namespace of our own."""
    if not shutil.which("nft") or not shutil.which("unshare"):
        pytest.skip("needs nft and unshare")
    sub = subtree
    base = "/sys/fs/cgroup"
    if not (sub.fs + "/").startswith(base + "/"):
        pytest.skip("cgroup2 is not mounted below %s, where nft looks" % base)
    p = start()
    line = p.command("make org.test.Net", "make org.test.Net")
    node = int(reply_value(line, "id"))
    scope = sub.ns_of("system.slice/roamd.service/roam.slice/app-org.test.Net.scope")
    ev = by_path(p.events("ADDED"))[scope]
    fs = sub.fs_of("system.slice/roamd.service/roam.slice/app-org.test.Net.scope")
    rel = os.path.relpath(fs, base)
    rules = """
table inet roamcgtest {
    chain out {
        type filter hook output priority 0; policy accept;
        udp dport 9 socket cgroupv2 level %d "%s" counter
    }
}
""" % (ev["level"], rel)
    script = """
set -e
ip link set lo up
nft -f - <<'EOF'
%s
EOF
nft --debug=netlink list chain inet roamcgtest out
# This shell joins the app's cgroup, then makes its socket: three datagrams.
echo $$ > "%s/cgroup.procs"
/usr/bin/python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); [s.sendto(b"x", ("127.0.0.1", 9)) for _ in range(3)]'
nft list chain inet roamcgtest out
""" % (rules, fs)
    r = subprocess.run(["unshare", "-n", "/bin/sh", "-c", script], capture_output=True, text=True, timeout=20)
    if r.returncode != 0 and "Operation not permitted" in r.stderr:
        pytest.skip("cannot make a network namespace: " + r.stderr)
    assert r.returncode == 0, r.stderr
    # nft resolved the path to the cgroup id: a 64-bit value, printed as two 32-bit words.
    want = "cmp eq reg 1 0x%08x 0x%08x" % (node & 0xFFFFFFFF, node >> 32)
    assert want in r.stdout, r.stdout
    assert "packets 3 " in r.stdout, r.stdout
    assert ev["level"] == scope.count("/")


@pytest.fixture
def mountpoint():
    d = tempfile.mkdtemp(prefix="roam-cgtest-mnt-")
    yield d
    os.rmdir(d)


def other_cgroup2_mounts():
    with open("/proc/self/mountinfo") as f:
        return [l.split()[4] for l in f if " - cgroup2 " in l]


def test_mount_root_is_a_subpath(subtree, start, mountpoint):
    """Only a subtree of the hierarchy is mounted (mountinfo's root field is not "/"), in a
    mount namespace of our own: the paths stay relative to the namespace root."""
    sub = subtree
    foo = sub.mkdir("system.slice/foo.service")
    if subprocess.run(["unshare", "-m", "--propagation", "private", "true"]).returncode != 0:
        pytest.skip("cannot make a mount namespace")
    # Everything below happens in the new mount namespace only: the inner script refuses to
    # run in ours.
    umounts = " && ".join("umount -l %s" % m for m in other_cgroup2_mounts())
    inner = ('[ "$(readlink /proc/self/ns/mnt)" != "%s" ] && mount --bind "%s" "%s" && %s && exec "$@"' %
             (os.readlink("/proc/self/ns/mnt"), sub.fs, mountpoint, umounts))
    script = ('echo $$ > "%s/cgroup.procs" && exec unshare -m --propagation private sh -c \'%s\' sh "$@"' %
              (sub.fs_of("system.slice/roamd.service"), inner))
    p = start(script=script)
    assert p.header() == ["mount " + mountpoint, "own " + sub.ns_of("system.slice/roamd.service"),
                           "roam-slice " + sub.ns_of("system.slice/roamd.service/roam.slice")]
    assert by_path(p.events("ADDED"))[sub.ns_of("system.slice/foo.service")]["id"] == foo
    bar = sub.mkdir("system.slice/bar.service")
    p.wait_event("ADDED", sub.ns_of("system.slice/bar.service"))
    assert by_path(p.events("ADDED"))[sub.ns_of("system.slice/bar.service")]["id"] == bar
    line = p.command("make org.test.Sub", "make org.test.Sub")
    assert int(reply_value(line, "id")) == os.stat(
        sub.fs_of("system.slice/roamd.service/roam.slice/app-org.test.Sub.scope")).st_ino
    assert not p.bugs()


def test_cgroup_namespace(subtree, start, mountpoint):
    """In a cgroup namespace rooted at <subtree>/ns, paths and levels count from there."""
    sub = subtree
    sub.mkdir("ns/system.slice/roamd.service")
    foo = sub.mkdir("ns/system.slice/foo.service")
    user = sub.mkdir("ns/user.slice/user-1000.slice")
    if subprocess.run(["unshare", "-C", "-m", "--propagation", "private", "true"]).returncode != 0:
        pytest.skip("cannot make cgroup and mount namespaces")
    inner = ('[ "$(readlink /proc/self/ns/mnt)" != "%s" ] && mount -t cgroup2 none "%s" && '
             'echo $$ > "%s/system.slice/roamd.service/cgroup.procs" && exec "$@"' %
             (os.readlink("/proc/self/ns/mnt"), mountpoint, mountpoint))
    script = ('echo $$ > "%s/cgroup.procs" && exec unshare -C -m --propagation private sh -c \'%s\' sh "$@"' %
              (sub.fs_of("ns"), inner))
    p = start(script=script, filter="/")
    assert p.header() == ["mount " + mountpoint, "own /system.slice/roamd.service",
                           "roam-slice /system.slice/roamd.service/roam.slice"]
    got = by_path(p.events("ADDED"))
    assert set(got) == {"/system.slice/roamd.service", "/system.slice/foo.service",
                        "/user.slice/user-1000.slice"}
    assert (got["/system.slice/foo.service"]["id"], got["/system.slice/foo.service"]["level"]) == (foo, 2)
    assert (got["/user.slice/user-1000.slice"]["id"], got["/user.slice/user-1000.slice"]["uid"]) == (user, "1000")
    line = p.command("make org.test.Ns", "make org.test.Ns")
    assert reply_value(line, "r") == "0"
    app = by_path(p.events("ADDED"))["/system.slice/roamd.service/roam.slice/app-org.test.Ns.scope"]
    assert app["level"] == 4
    assert app["id"] == os.stat(sub.fs_of("ns/system.slice/roamd.service/roam.slice/app-org.test.Ns.scope")).st_ino
    assert not p.bugs()

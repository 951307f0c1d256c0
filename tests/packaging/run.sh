#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Debian packages, built and installed as a user would: builds roam and roamd with
# dpkg-buildpackage from a copy of the tree, runs lintian (no errors, no warnings), then
# installs them in a throwaway root (an overlay over / in a mount namespace of its own, and
# a network namespace of its own: the host's / and network stay untouched; the prerm's
# roamd --flush-kernel-state meets an empty namespace) and checks the files, the unit, the
# D-Bus policy, the polkit actions, the man pages and the completions; removes and purges
# them and checks that nothing is left. Needs root. Prints how long it took.
# Usage: tests/packaging/run.sh [--keep]   (--keep leaves the build and the overlay's upper dir)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
start=$(date +%s)
keep=0
[ "${1:-}" = "--keep" ] && keep=1
[ "$(id -u)" = 0 ] || { echo "packaging: needs root (the throwaway root is a mount namespace)" >&2; exit 1; }

work=$(mktemp -d /tmp/roam-pkg.XXXXXX)
# The overlay's upper and work dirs must not be on the filesystem they cover: /dev/shm is a
# tmpfs of its own.
layer=$(mktemp -d /dev/shm/roam-pkg.XXXXXX)
cleanup() {
        if [ $keep = 1 ]; then
                echo "packaging: kept $work and $layer"
        else
                rm -rf "$work" "$layer"
        fi
}
trap cleanup EXIT

# 1. The .debs: built here (tests/packaging/build-debs.sh), or those of an earlier build.
if [ -n "${ROAM_PKG_DEBS:-}" ]; then
        # run-tests builds them once for this test and tests/system; also for working on
        # this script: the .debs and .changes of an earlier build.
        cp "$ROAM_PKG_DEBS"/roam*.deb "$ROAM_PKG_DEBS"/roam_*.changes "$ROAM_PKG_DEBS"/roam_*.buildinfo "$work/"
else
        "$top/tests/packaging/build-debs.sh" "$work" || { keep=1; exit 1; }
fi

# 2. lintian: no errors and no warnings (overrides, each with its reason, are in debian/).
if [ -n "${ROAM_PKG_SKIP_LINTIAN:-}" ]; then
        # For checking that the install test catches broken .debs (repacked by hand).
        echo "packaging: lintian skipped (ROAM_PKG_SKIP_LINTIAN)"
elif ! lintian --fail-on error,warning "$work"/roam_*.changes >"$work/lintian.log" 2>&1; then
        grep -v '^running with root privileges' "$work/lintian.log" >&2
        echo "packaging: lintian reported errors or warnings (above)" >&2
        exit 1
else
        echo "packaging: lintian: no errors, no warnings"
fi

# 3. The throwaway root.
mkdir "$layer/upper" "$layer/work" "$layer/root"
cp "$work"/roam_*.deb "$work"/roamd_*.deb "$work"/roam-gio_*.deb "$layer/"
cp "$top/tests/packaging/in-root.sh" "$layer/"
unshare --mount --net --propagation private /bin/bash -euo pipefail -c '
        layer=$1
        root=$layer/root
        mount -t overlay overlay -o "lowerdir=/,upperdir=$layer/upper,workdir=$layer/work" "$root"
        mount -t proc proc "$root/proc"
        mount --rbind /dev "$root/dev"
        # An empty /run: no systemd and no system bus of the host is reachable from inside.
        mount -t tmpfs tmpfs "$root/run"
        mount -t tmpfs tmpfs "$root/tmp"
        mkdir "$root/tmp/debs"
        cp "$layer"/*.deb "$layer/in-root.sh" "$root/tmp/debs/"
        exec chroot "$root" /bin/bash /tmp/debs/in-root.sh /tmp/debs
' unshare-root "$layer"

echo "packaging: took $(($(date +%s) - start)) s"

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds roam's .debs as a Debian user would (dpkg-buildpackage -us -uc -b) out of a copy of
# the tree (committed and new files, as git sees them; the worktree gets no debian/ build
# litter), and leaves the .debs, .changes and .buildinfo in OUTDIR. tests/packaging/run.sh
# and tests/system/run.sh use it; run-tests builds once and hands the .debs to both.
# Usage: tests/packaging/build-debs.sh OUTDIR
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: build-debs.sh OUTDIR}
start=$SECONDS
mkdir -p "$out"
src=$(mktemp -d /tmp/roam-debs.XXXXXX)
trap 'rm -rf "$src"' EXIT
mkdir "$src/roam"
git -C "$top" ls-files -z --cached --others --exclude-standard |
        tar -C "$top" -cf - --null -T - | tar -xf - -C "$src/roam"
echo "packaging: dpkg-buildpackage -us -uc -b"
# nocheck: debian/rules runs the unit suite, which run-tests has run already.
if ! (cd "$src/roam" &&
        DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=$(nproc)" dpkg-buildpackage -us -uc -b \
                >"$src/build.log" 2>&1); then
        tail -40 "$src/build.log"
        echo "packaging: dpkg-buildpackage failed" >&2
        exit 1
fi
mv "$src"/*.deb "$src"/roam_*.changes "$src"/roam_*.buildinfo "$out/"
echo "packaging: built in $((SECONDS - start)) s: $(cd "$out" && echo *.deb)"

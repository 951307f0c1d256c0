#!/bin/bash
# Unpacks Debian's chrony package (never installs it) for the tests and benchmarks that run a
# real chronyd inside the test world: tests/world/test_time.py and bench/bench_time.py. They
# run it with -x (it never touches the clock), their own config, pidfile and sockets, in
# network namespaces only. Installing the package instead would start a chronyd service on
# the host, which may set the host's clock, and would replace systemd-timesyncd.
#
# Usage: tools/fetch-chronyd.sh [DIR]     (default /var/cache/roam-test/chrony)
# Prints the path of the unpacked chronyd (DIR/root/usr/sbin/chronyd; chronyc is in
# DIR/root/usr/bin). Does nothing but print it when the unpacked version is apt's candidate.
set -euo pipefail

dir=${1:-/var/cache/roam-test/chrony}
chronyd=$dir/root/usr/sbin/chronyd

candidate() {
        apt-cache policy chrony 2>/dev/null | awk '$1 == "Candidate:" { print $2 }'
}

mkdir -p "$dir"
# two runs at once (two worktrees' suites) take turns
exec 9>"$dir/lock"
flock 9

have=$(cat "$dir/version" 2>/dev/null || true)
want=$(candidate)
if [ -x "$chronyd" ] && { [ -z "$want" ] || [ "$want" = "(none)" ] || [ "$want" = "$have" ]; }; then
        echo "$chronyd"
        exit 0
fi

tmp=$(mktemp -d "$dir/fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# apt-get download as root writes as root when _apt cannot enter the directory: let it in.
chmod 755 "$tmp"
if ! (cd "$tmp" && apt-get download -qq chrony >/dev/null 2>&1); then
        # a fresh machine may have no package lists yet
        apt-get update -qq >/dev/null
        (cd "$tmp" && apt-get download -qq chrony >/dev/null)
fi
deb=$(ls "$tmp"/chrony_*.deb)
mkdir "$tmp/root"
dpkg-deb -x "$deb" "$tmp/root"
"$tmp/root/usr/sbin/chronyd" -v >/dev/null || {
        echo "fetch-chronyd: the unpacked chronyd does not run (its libraries: ldd $chronyd)" >&2
        exit 1
}
rm -rf "$dir/root"
mv "$tmp/root" "$dir/root"
dpkg-deb -f "$deb" Version >"$dir/version"
echo "$chronyd"

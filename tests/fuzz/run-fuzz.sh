#!/bin/bash
# Runs every libFuzzer target for a while (default 30 s each) from its seed corpus.
# Usage: tests/fuzz/run-fuzz.sh [SECONDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-30}
build="$top/build-fuzz"
if [ ! -d "$build" ]; then
        CC=clang meson setup "$build" "$top" -Dfuzz=true -Db_sanitize=address,undefined \
                -Db_lundef=false >/dev/null
fi
ninja -C "$build" tests/fuzz/fuzz-config tests/fuzz/fuzz-dhcp-lease tests/fuzz/fuzz-capport \
        tests/fuzz/fuzz-cgroup-path tests/fuzz/fuzz-http-answer tests/fuzz/fuzz-app-policy \
        tests/fuzz/fuzz-stats-history tests/fuzz/fuzz-wispr tests/fuzz/fuzz-wpa \
        tests/fuzz/fuzz-ndef tests/fuzz/fuzz-firewall tests/fuzz/fuzz-ndopt tests/fuzz/fuzz-http-date \
        tests/fuzz/fuzz-nitz tests/fuzz/fuzz-gpsd-tpv tests/fuzz/fuzz-chrony-reply >/dev/null
for t in config dhcp-lease capport cgroup-path http-answer app-policy stats-history wispr wpa ndef firewall \
        ndopt http-date nitz gpsd-tpv chrony-reply; do
        work=$(mktemp -d)
        cp -r "$top/tests/fuzz/corpus/$t/." "$work/"
        echo "fuzz-$t: ${secs}s"
        "$build/tests/fuzz/fuzz-$t" -max_total_time="$secs" -max_len=8192 \
                -artifact_prefix="$top/tests/fuzz/artifacts-" "$work" 2>&1 | tail -n 2
        rm -rf "$work"
done

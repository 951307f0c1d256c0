#!/bin/bash
# Runs every libFuzzer target for a while (default 30 s each) from its seed corpus.
# Every directory under corpus/ is one target, fuzz-NAME (tests/fuzz/meson.build builds the
# same list): a new target cannot be forgotten here. They run as many at a time as there are
# CPUs, each output kept apart and printed whole when it ends. The targets are those of the
# sanitizer build, build-asan (clang, ASan and UBSan; tools/setup-build-asan.sh sets it up
# when it is missing): the build run-tests runs the unit tests and roamd under.
# Usage: tests/fuzz/run-fuzz.sh [SECONDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-30}
build="$top/build-asan"
"$top/tools/setup-build-asan.sh"
targets=()
for d in "$top"/tests/fuzz/corpus/*/; do
        targets+=("$(basename "$d")")
done
ninja -C "$build" --quiet "${targets[@]/#/tests/fuzz/fuzz-}"

run_one() {
        local t=$1 work out r=0
        work=$(mktemp -d)
        out=$(mktemp)
        cp -r "$top/tests/fuzz/corpus/$t/." "$work/"
        "$build/tests/fuzz/fuzz-$t" -max_total_time="$secs" -max_len=8192 \
                -artifact_prefix="$top/tests/fuzz/artifacts-" "$work" >"$out" 2>&1 || r=$?
        echo "fuzz-$t: ${secs}s, exit $r"
        tail -n 2 "$out"
        # A crash: its whole report, not the last two lines.
        [ $r = 0 ] || cat "$out"
        rm -rf "$work" "$out"
        return $r
}
export -f run_one
export top build secs
printf '%s\n' "${targets[@]}" | xargs -P "$(nproc)" -I{} bash -c 'run_one "$1"' _ {}

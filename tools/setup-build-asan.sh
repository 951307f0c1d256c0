#!/bin/bash
# The sanitizer build, build-asan: clang, ASan and UBSan, and libFuzzer's coverage
# instrumentation (-Dfuzz=true). One build serves the unit tests under the sanitizers, the
# sanitized roamd of the integration tests and the fuzz targets (tests/fuzz/run-fuzz.sh).
# Sets it up when it is missing, and again when it was set up otherwise (an older checkout's
# gcc build-asan, which has no fuzz targets). Does not build: ninja -C build-asan [TARGETS].
# Usage: tools/setup-build-asan.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build-asan

set_up_as_wanted() {
        meson introspect "$build" --buildoptions 2>/dev/null | /usr/bin/python3 -c '
import json, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
sys.exit(0 if o.get("fuzz") is True and o.get("b_sanitize") == "address,undefined" else 1)'
}

[ -d "$build" ] && ! set_up_as_wanted && rm -rf "$build"
if [ ! -d "$build" ]; then
        CC=clang meson setup "$build" "$top" -Dfuzz=true -Db_sanitize=address,undefined \
                -Db_lundef=false >/dev/null
fi

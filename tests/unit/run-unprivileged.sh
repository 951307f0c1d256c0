#!/bin/sh
# Runs one unit test as a normal user: as root (CI, the developers' machines), through setpriv
# as nobody without supplementary groups; as anyone else, as is. The test's own
# `runs_unprivileged` case checks the ids it got.
#
# As root the binary is run from a copy in a directory of its own that nobody may enter: the
# build tree may sit below a directory that only root can (a 0700 temporary directory).
set -eu
export ROAM_TEST_UNPRIVILEGED=1
if [ "$(id -u)" != 0 ]; then
        exec "$@"
fi
test=$1
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/roam-unit.XXXXXX")
trap 'rm -rf "$dir"' EXIT
chmod 0755 "$dir"
cp "$test" "$dir/"
chmod 0755 "$dir/${test##*/}"
cd "$dir"
rc=0
setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$dir/${test##*/}" "$@" || rc=$?
exit "$rc"

#!/bin/sh
# Runs one unit test as a normal user: as root (CI, the developers' machines), through setpriv
# as nobody without supplementary groups; as anyone else, as is. The test's own
# `runs_unprivileged` case checks the ids it got.
set -e
export ROAM_TEST_UNPRIVILEGED=1
if [ "$(id -u)" = 0 ]; then
        exec setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
fi
exec "$@"

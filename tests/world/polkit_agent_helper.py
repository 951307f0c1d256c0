#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Stands in for polkit-agent-helper-1 (bind-mounted over it in the device's mount namespace)
so that the real pkttyagent can answer polkit's questions in the world: the same protocol
with the agent library (argv: USER [COOKIE]; else the cookie is the first line on stdin;
"PAM_PROMPT_ECHO_OFF Password: " out, the answer in, then SUCCESS or FAILURE), but where the
setuid helper runs PAM and tells polkitd with AuthenticationAgentResponse2 as root, this one
hands the password to the polkit double (tests/dbusmock/polkitd.py, HelperResponse), which
checks it against the test's password for that user."""
import pwd
import sys

import dbus


def main():
    if len(sys.argv) < 2 or sys.stdin.isatty():
        print("FAILURE", flush=True)
        return 1
    uid = pwd.getpwnam(sys.argv[1]).pw_uid
    cookie = sys.argv[2] if len(sys.argv) > 2 else sys.stdin.readline().strip()
    print("PAM_PROMPT_ECHO_OFF Password: ", flush=True)
    password = sys.stdin.readline().rstrip("\n")
    ok = dbus.SystemBus().call_blocking(
        "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
        "org.freedesktop.DBus.Mock", "HelperResponse", "sus", [cookie, uid, password])
    print("SUCCESS" if ok else "FAILURE", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

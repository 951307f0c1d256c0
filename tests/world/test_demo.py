# SPDX-License-Identifier: LGPL-2.1-or-later
"""./roam-demo's mode (issue 32 item 18): only --check or a standard input that is not a
terminal means check mode; a terminal on stdin is interactive even when stdout is a pipe
(`./roam-demo | tee log` used to tear the world down at the first Enter). `--dry-run` says
which mode it would take and stops before anything is built or brought up."""
import os
import pty
import subprocess

from roamworld import REPO

DEMO = str(REPO / "roam-demo")


def demo_mode(args, stdin):
    """Runs ./roam-demo --dry-run ARGS with stdin (a file object or fd) and stdout a pipe:
    (exit status, what it printed)."""
    p = subprocess.run([DEMO, "--dry-run"] + args, stdin=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=30)
    return p.returncode, p.stdout


def with_tty_stdin(args):
    """The demo with a terminal (a pty's end) on stdin and a pipe on stdout."""
    master, slave = pty.openpty()
    try:
        return demo_mode(args, slave)
    finally:
        os.close(slave)
        os.close(master)


def test_terminal_stdin_with_piped_stdout_is_interactive():
    rc, out = with_tty_stdin([])
    assert rc == 0, out
    assert "interactive mode (standard input is a terminal)" in out, out
    assert "check mode" not in out, out


def test_stdin_not_a_terminal_is_check_mode():
    with open(os.devnull) as null:
        rc, out = demo_mode([], null)
    assert rc == 0, out
    assert "check mode (standard input is not a terminal)" in out, out
    rc, out = demo_mode([], subprocess.PIPE)
    assert "check mode (standard input is not a terminal)" in out, out


def test_check_option_is_check_mode_on_a_terminal():
    rc, out = with_tty_stdin(["--check"])
    assert rc == 0, out
    assert "check mode (--check)" in out, out
    assert "interactive" not in out, out


def test_unknown_argument_is_refused():
    with open(os.devnull) as null:
        rc, out = demo_mode(["--frob"], null)
    assert rc == 2 and "unknown argument --frob" in out, out


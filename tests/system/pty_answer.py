#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs CMD on a pseudo-terminal of its own, as a user at a terminal would, and answers the
first prompt matching PROMPT (a regular expression) with ANSWER (once more if the terminal
echoed it: it came before the echo went off and was flushed). Prints what CMD wrote and
exits as CMD did; 3 when no prompt came before CMD ended (unless --optional: a CMD that was
not asked is fine too), 4 when CMD did not end within TIMEOUT seconds (it is killed then).

  pty_answer.py [--optional] PROMPT ANSWER TIMEOUT -- CMD [ARGS...]
"""
import os
import pty
import re
import select
import signal
import sys
import time


def main():
    optional = len(sys.argv) > 1 and sys.argv[1] == "--optional"
    if optional:
        del sys.argv[1]
    if len(sys.argv) < 6 or sys.argv[4] != "--":
        sys.exit(__doc__)
    prompt = re.compile(sys.argv[1].encode())
    answer = sys.argv[2].encode() + b"\n"
    timeout = float(sys.argv[3])
    cmd = sys.argv[5:]

    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)

    out = b""
    answered = False
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            sys.stdout.write(out.decode(errors="replace"))
            print(f"pty_answer: {cmd[0]} did not end within {timeout:g} s", file=sys.stderr)
            sys.exit(4)
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the other side closed
            chunk = b""
        if not chunk:
            break
        out += chunk
        if not answered and prompt.search(out):
            os.write(fd, answer)
            answered, since = True, len(out)
        elif answered is True and answer.strip() in out[since:]:
            # Echoed: typed before the program turned the terminal's echo off, so its
            # tcsetattr(TCSAFLUSH) threw it away (pkttyagent prints "Password:" first). The
            # echo is off now, this one is read.
            os.write(fd, answer)
            answered = "again"
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(out.decode(errors="replace"))
    sys.stdout.flush()
    if not answered and not optional:
        print("pty_answer: no prompt matching %r came" % sys.argv[1], file=sys.stderr)
        sys.exit(3)
    sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)


if __name__ == "__main__":
    main()

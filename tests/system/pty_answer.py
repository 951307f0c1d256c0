#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs CMD on a pseudo-terminal of its own, as a user at a terminal would, and answers the
first prompt matching PROMPT (a regular expression) with ANSWER (again, after a growing
pause, each time the terminal echoes it: it came before the echo went off and was flushed).
Prints what CMD wrote and exits as CMD did; 3 when no prompt came before CMD ended (unless
--optional: a CMD that was not asked is fine too), 4 when CMD did not end within TIMEOUT
seconds (it is killed then).

  pty_answer.py [--optional] PROMPT ANSWER TIMEOUT -- CMD [ARGS...]
"""
import os
import pty
import re
import select
import signal
import sys
import time

MAX_ANSWERS = 8  # a prompt that keeps echoing is not a password prompt


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
    answers = 0
    resend_at = None  # when to type the answer again after an echo
    delay = 0.05
    deadline = time.monotonic() + timeout
    while True:
        now = time.monotonic()
        left = deadline - now
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            sys.stdout.write(out.decode(errors="replace"))
            print(f"pty_answer: {cmd[0]} did not end within {timeout:g} s", file=sys.stderr)
            sys.exit(4)
        if resend_at is not None and now >= resend_at:
            os.write(fd, answer)
            answers, resend_at = answers + 1, None
            continue
        wait = left if resend_at is None else min(left, resend_at - now)
        r, _, _ = select.select([fd], [], [], wait)
        if not r:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the other side closed
            chunk = b""
        if not chunk:
            break
        out += chunk
        if answers == 0 and prompt.search(out):
            os.write(fd, answer)
            answers, since = 1, len(out)
        elif resend_at is None and 0 < answers < MAX_ANSWERS and answer.strip() in out[since:]:
            # Echoed: typed before the program turned the terminal's echo off, so its
            # tcsetattr(TCSAFLUSH) threw it away (pkttyagent prints "Password:" first) and
            # it was not read. Nothing is printed when the echo goes off, so type it again
            # after a pause that doubles each time; one typed once the echo is off is read.
            since = out.index(answer.strip(), since) + len(answer.strip())
            resend_at, delay = time.monotonic() + delay, min(delay * 2, 2.0)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(out.decode(errors="replace"))
    sys.stdout.flush()
    if answers == 0 and not optional:
        print("pty_answer: no prompt matching %r came" % sys.argv[1], file=sys.stderr)
        sys.exit(3)
    sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)


if __name__ == "__main__":
    main()

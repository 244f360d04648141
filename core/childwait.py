"""A short child's output and exit, its exit waited for on a pidfd: a speed trick, fenced here.

Why: `Popen.communicate(timeout=…)` reads the pipes to their end, then waits for the exit
with `Popen.wait(timeout)`, which polls `waitpid` with sleeps from 0.5 ms doubling to
50 ms. A git call that has closed its output has not always exited yet, so each one slept
at least once: 1.1 ms of a 2.9 ms `git --version`, and 0.1 ms of the caller's CPU, in a
process with 100 threads. A card's build makes about 32 git calls, and at 100 drives on two
cores a sleep asked for 0.5 ms often lasts several (bench_fleet, docs/performance.md).
Here the pipes and a pidfd (Linux 5.3) are watched together, so the exit is seen the
moment it happens; without a pidfd the plain path runs.

`communicate` answers what `plain` answers (tests/test_childwait.py holds it to that):
both outputs whole, the exit code, and past the timeout `stop(child)` called once, then the
rest of the output read to its end, the timeout said.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from collections.abc import Callable

USE_PIDFD = True  # False: `plain` only (what `communicate` is held equal to)
READ = 65536


def plain(
    child: subprocess.Popen[bytes], timeout: float | None, stop: Callable[[], None]
) -> tuple[bytes, bytes, bool]:
    """Popen's own: `communicate(timeout)`, and past it `stop()` and the rest read."""
    try:
        out, err = child.communicate(timeout=timeout)
        return out or b"", err or b"", False
    except subprocess.TimeoutExpired:
        stop()
        out, err = child.communicate()
        return out or b"", err or b"", True


def communicate(
    child: subprocess.Popen[bytes], timeout: float | None, stop: Callable[[], None]
) -> tuple[bytes, bytes, bool]:
    """(stdout, stderr, timed out) of a child whose stdin is not a pipe and whose stdout
    and stderr are; the child reaped."""
    if not USE_PIDFD or timeout is None or child.stdin is not None:
        return plain(child, timeout, stop)
    assert child.stdout is not None and child.stderr is not None
    try:
        pidfd = os.pidfd_open(child.pid)
    except (AttributeError, OSError):  # no pidfd here: Popen's own way
        return plain(child, timeout, stop)
    pipes = {child.stdout.fileno(): bytearray(), child.stderr.fileno(): bytearray()}
    timed_out = False
    try:
        with selectors.DefaultSelector() as sel:
            for fd in pipes:
                sel.register(fd, selectors.EVENT_READ)
            sel.register(pidfd, selectors.EVENT_READ)
            open_pipes, running = len(pipes), True
            deadline = time.monotonic() + timeout
            while open_pipes or running:
                left = None if timed_out else deadline - time.monotonic()
                if left is not None and left <= 0:
                    timed_out = True
                    stop()  # the group killed and the leader reaped; the pipes' rest read
                    if running:
                        sel.unregister(pidfd)
                        running = False
                    continue
                for key, _ in sel.select(left):
                    if key.fd == pidfd:
                        sel.unregister(pidfd)
                        running = False
                        continue
                    data = os.read(key.fd, READ)
                    if data:
                        pipes[key.fd] += data
                    else:
                        sel.unregister(key.fd)
                        open_pipes -= 1
    finally:
        os.close(pidfd)
        out, err = bytes(pipes[child.stdout.fileno()]), bytes(pipes[child.stderr.fileno()])
        child.stdout.close()
        child.stderr.close()
    child.wait()  # it has exited (or `stop` reaped it): no sleep
    return out, err, timed_out

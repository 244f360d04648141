"""Cross-process locks: an exclusive fcntl lock on a file, waited for with a deadline.

Each call opens its own file description, so threads of one process exclude each other
as well as other processes, and the kernel drops the lock if the holder dies: a
crashed `board run` never leaves a lock behind.

Threads of one process wait for a lock on a thread lock of this process (`_queue`)
before they poll the file: one of them polls, the others sleep until it is their turn.
With 100 drives folding at once, each polling the run lock every POLL_S, the waiters
woke 5,000 times a second, each taking the interpreter's lock from the thread that held
the run lock and was folding.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from board.core.errors import Refused

POLL_S = 0.02
_queues: dict[str, threading.Lock] = {}  # a lock file's path: its waiters in this process
_queues_mu = threading.Lock()


def _queue(path: Path) -> threading.Lock:
    key = os.path.abspath(path)
    with _queues_mu:
        return _queues.setdefault(key, threading.Lock())


class FileLock:
    """An exclusive lock on `path`, held from `acquire` to `release` (the loop holds its
    board's lock for its whole run; `file_lock` below holds one for a block).

    `holder` (e.g. a pid and host) is written into the file for whoever finds it locked;
    a callable `busy` is given what the current holder wrote, to name it in the refusal.
    """

    def __init__(self, path: Path, holder: str = "") -> None:
        self.path = path
        self.holder = holder
        self.fd: int | None = None
        self._queued: threading.Lock | None = None

    def acquire(self, timeout: float, busy: str | Callable[[str], str]) -> None:
        """Take the lock; after `timeout` seconds (0: at once) refuse with `busy`."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + max(timeout, 0.0)
        queue = _queue(self.path)
        try:
            queued = (
                queue.acquire(timeout=max(timeout, 0.0)) if timeout > 0 else queue.acquire(False)
            )
        except BaseException:
            os.close(fd)
            raise
        if not queued:  # another thread of ours holds it, or waits for it first
            said = holder_of(fd)
            os.close(fd)
            raise Refused(busy(said) if callable(busy) else busy)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    said = holder_of(fd)
                    os.close(fd)
                    queue.release()
                    raise Refused(busy(said) if callable(busy) else busy) from None
                time.sleep(POLL_S)
            except BaseException:
                os.close(fd)
                queue.release()
                raise
        self._queued = queue
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{self.holder or os.getpid()}\n".encode())
        except OSError:
            pass
        self.fd = fd

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            os.close(self.fd)
            self.fd = None
            queued, self._queued = self._queued, None
            if queued is not None:
                queued.release()


def holder_of(fd: int) -> str:
    """What the lock's holder wrote into the file ('' if nothing)."""
    try:
        return os.pread(fd, 300, 0).decode("utf-8", "replace").strip()
    except OSError:
        return ""


def is_held(path: Path) -> str | None:
    """None when nobody holds the lock at `path` (or it does not exist); else what its
    holder wrote. Takes and drops the lock at once, so it never waits."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return holder_of(fd) or "?"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


@contextmanager
def file_lock(
    path: Path, timeout: float, busy: str | Callable[[str], str], holder: str = ""
) -> Iterator[None]:
    """Hold an exclusive lock on `path` for a block; after `timeout` seconds refuse with
    `busy` (see FileLock)."""
    lock = FileLock(path, holder)
    lock.acquire(timeout, busy)
    try:
        yield
    finally:
        lock.release()

"""Cross-process locks: an exclusive fcntl lock on a file, waited for with a deadline.

Each call opens its own file description, so threads of one process exclude each other
as well as other processes, and the kernel drops the lock if the holder dies: a
crashed `board run` never leaves a lock behind.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from board.core.errors import Refused

POLL_S = 0.02


@contextmanager
def file_lock(
    path: Path, timeout: float, busy: str | Callable[[str], str], holder: str = ""
) -> Iterator[None]:
    """Hold an exclusive lock on `path`; after `timeout` seconds refuse with `busy`.

    `holder` (e.g. a pid and host) is written into the file for whoever finds it locked;
    a callable `busy` is given what the current holder wrote, to name it in the refusal.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    if callable(busy):
                        busy = busy(os.pread(fd, 300, 0).decode("utf-8", "replace").strip())
                    raise Refused(busy) from None
                time.sleep(POLL_S)
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{holder or os.getpid()}\n".encode())
        except OSError:
            pass
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)

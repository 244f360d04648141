"""The board's one-loop lock: one `board run` per board (core/loop.py), kept apart from the
loop so the loop's own module stays the tick and its drives."""

from __future__ import annotations

import os
from pathlib import Path

from board.core import hosts, locks
from board.core.config import Config
from board.core.git.runbranch import lock_path


class BoardLock:
    """The board's one-loop lock, `.board/locks/loop.lock`, holding the owner's pid; the
    kernel frees it when the process dies, so a crashed loop never blocks the next one."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self._lock: locks.FileLock | None = None

    @property
    def path(self) -> Path:
        """`.board/locks/loop.lock`, made when first asked for (a loop refused at start
        leaves nothing behind)."""
        return lock_path(self.cfg, "loop")

    def acquire(self) -> None:
        def busy(holder: str) -> str:
            pid = holder.split()[0] if holder else ""
            who = f"pid {pid}" if pid else "another process"
            return (
                f"another `board run` is already running on this board ({who}); "
                f"one loop per board — stop it first (kill -TERM {pid or 'PID'})"
            )

        lock = locks.FileLock(self.path, f"{os.getpid()} {hosts.this_host()}")
        lock.acquire(0, busy)
        self._lock = lock

    def release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None


__all__ = ["BoardLock"]

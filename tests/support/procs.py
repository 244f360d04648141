"""Process groups, read from /proc: is anything of a coder's group still alive?

A group is named by its leader's pid, so what one test looks at is its own processes, even
with other tests' coders running beside it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.repos import GIT_ENV
from tests.support.waiting import wait_for


def group_members(pgid: int) -> list[int]:
    """Every process in group `pgid`, read from /proc (zombies excluded: they hold nothing)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state != "Z":
            found.append(int(entry.name))
    return found


def wait_gone(pgid: int, timeout: float = 5.0) -> list[int]:
    """Wait for group `pgid` to end; what is left of it then (empty when it ended)."""
    with contextlib.suppress(AssertionError):
        wait_for(lambda: not group_members(pgid), timeout, f"group {pgid} to end")
    return group_members(pgid)


def kill_group_quietly(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def python_child(
    args: list[str], cwd: Path | None = None, timeout: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """This interpreter run on `args` as a fresh process (no stdin, its own session, the
    tests' git identity): what a test reads a start's imports or output from."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        timeout=timeout,
        env=env or {**os.environ, **GIT_ENV},
    )

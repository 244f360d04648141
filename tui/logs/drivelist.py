"""The drive list's entries, read off the UI thread; no Textual here.

A live drive's row shows its log's last line, which costs a file read: the list is read
in a worker, as are the elapsed times (the clock is injected for tests).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from board.core.config import Config
from board.core.errors import BoardError
from board.core.logs import last_line, log_path
from board.core.model import Drive
from board.core.records import Frozen

from ..times import drive_elapsed, format_elapsed


class DriveRow(Frozen):
    """One entry of the drive list, read in a worker (the last line costs a file read)."""

    drive: Drive
    path: Path
    elapsed: str
    last: str


def drive_path(cfg: Config, drive: Drive) -> Path:
    """Where the drive's log is: as its record says, else where its card's attempt writes."""
    if drive.log:
        return Path(cfg.root) / drive.log
    try:
        return log_path(cfg, drive.card, drive.attempt)
    except BoardError:  # a record naming no valid card: show it, with no log
        return Path(cfg.logs_dir) / "missing.log"


def drive_rows(
    cfg: Config, drives: Sequence[Drive], clock: Callable[[], datetime]
) -> list[DriveRow]:
    """The drive list's entries: live drives first (newest started first), then the
    finished ones (newest ended first); a live drive's last line is read from its log."""
    live = sorted((d for d in drives if d.live), key=lambda d: d.started_at, reverse=True)
    done = sorted(
        (d for d in drives if not d.live),
        key=lambda d: (d.ended_at or d.started_at, d.attempt),
        reverse=True,
    )
    now = clock()
    rows = []
    for drive in live + done:
        path = drive_path(cfg, drive)
        last = last_line(path) if drive.live else ""
        rows.append(DriveRow(drive, path, drive_elapsed(drive, now), last))
    return rows


__all__ = ["DriveRow", "drive_elapsed", "drive_path", "drive_rows", "format_elapsed"]

"""The drive list's entries, read off the UI thread; no Textual here.

A live drive's row shows its log's last line, which costs a file read: the list is read
in a worker, as are the elapsed times (the clock is injected for tests).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from board.core.config import Config
from board.core.errors import BoardError
from board.core.logs import last_line, log_path
from board.core.model import Drive


def _parse_time(text: str) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def format_elapsed(seconds: float) -> str:
    """`45s`, `12m04s`, `3h07m`, `4d02h`: short enough for a list row."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    if seconds < 48 * 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 86400}d{seconds % 86400 // 3600:02d}h"


def drive_elapsed(drive: Drive, now: datetime) -> str:
    """How long a drive has run (live) or ran (finished); the clock is injected for tests."""
    start = _parse_time(drive.started_at)
    if start is None:
        return ""
    end = now if drive.live else (_parse_time(drive.ended_at) or now)
    return format_elapsed((end - start).total_seconds())


@dataclass(frozen=True)
class DriveRow:
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

"""Elapsed times as the lists and the header show them (`45s`, `12m04s`, `3h07m`), judged
against an injected clock; no Textual and nothing else to import, so the header's first
words cost nothing to start."""

from __future__ import annotations

from datetime import UTC, datetime

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


__all__ = ["drive_elapsed", "format_elapsed"]

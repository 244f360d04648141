"""Ending a card's live drives, and what a salvage's drive row says about its card.

`end_drives` is what `stop`, `cancel` and `done` share: each live drive row of the card is
ended first (so the drive, re-reading, stands aside), then its whole process group is
killed, and a child the drive starts late is caught for a short while. A drive on another
host is only told through its row.

A salvage records the card's lane and block in its own drive row while it runs
(`before_note`): a salvage killed with -9 is recovered by the loop, which puts the card
back as it was (a held card stays held) instead of in `ready`, free to run.
"""

from __future__ import annotations

import json
import os
import signal
import time

from board.core import hosts, proc
from board.core.model import Blocked, Card, Drive
from board.core.records import Record, field
from board.core.store import Store

SALVAGE_TIER = "salvage"
STOP_SETTLE_S = 0.5  # after the kill, how long a child the drive starts late is still caught
GROUP_GONE_S = 3.0  # how long to wait for a killed group to leave /proc


class Ended(Record):
    """What `end_drives` did: the rows ended, the process groups killed, lines to say."""

    drives: list[str] = field(default_factory=list)
    killed: list[int] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


def _here(row: Drive) -> bool:
    return not row.host or row.host == hosts.this_host()


def end_drives(store: Store, card_id: str, why: str, status: str = "stopped") -> Ended:
    """End the card's live drives: their rows first (so they stand aside), then their groups.

    A row's group is killed, and for a short while any child the drive starts late (it
    had not yet seen the card move) is killed too, until the drive's owner is gone or the
    window closes. A drive on another host is only told through its row and the card.
    """
    result = Ended()
    rows = [d for d in store.list_drives(card_id, limit=50) if d.live]
    for row in rows:
        store.update_drive(row.id, status=status, result=why[:500])
        result.drives.append(row.id)
    local = [r for r in rows if _here(r)]
    for row in rows:
        if not _here(row):
            result.lines.append(f"drive {row.id} runs on {row.host}; it stands aside there")
    killed: set[int] = set()
    settle_until = time.monotonic() + (
        STOP_SETTLE_S if any(proc.pid_alive(r.owner_pid) for r in local) else 0
    )
    while True:
        for row in local:
            pgid = store.get_drive(row.id).pgid or row.pgid
            if pgid and pgid not in killed and pgid != os.getpgrp():
                if proc.kill_group(pgid, signal.SIGKILL):
                    result.lines.append(f"killed drive {row.id}'s process group {pgid}")
                killed.add(pgid)
        if time.monotonic() >= settle_until:
            break
        time.sleep(0.05)
    deadline = time.monotonic() + GROUP_GONE_S
    while any(proc.group_alive(g) for g in killed) and time.monotonic() < deadline:
        time.sleep(0.02)
    for row in local:
        store.update_drive(row.id, pgid=0)
    result.killed = sorted(killed)
    return result


BEFORE_SALVAGE = "before salvage: "


def before_note(card: Card) -> str:
    """What the card was before a salvage took it, kept in the salvage's drive row while it
    runs: a salvage that dies (kill -9) is recovered by the loop, which puts the card back
    as it was (a held card stays held) instead of in ready, free for the loop to run."""
    blocked = [card.blocked.cls, card.blocked.reason] if card.blocked else None
    return BEFORE_SALVAGE + json.dumps({"lane": card.lane, "blocked": blocked})


def _before_part(result: str) -> str:
    """The before-salvage note a row's result starts with ('' if none)."""
    if not result.startswith(BEFORE_SALVAGE):
        return ""
    try:
        _, end = json.JSONDecoder().raw_decode(result, len(BEFORE_SALVAGE))
    except ValueError:
        return ""
    return result[:end]


def state_before(row: Drive) -> tuple[str, Blocked | None] | None:
    """(lane, block) a salvage's row says its card had before; None if it says nothing."""
    note = _before_part(row.result) if row.tier == SALVAGE_TIER else ""
    if not note:
        return None
    try:
        data = json.loads(note[len(BEFORE_SALVAGE) :])
        lane, blocked = str(data["lane"]), data["blocked"]
        return lane, Blocked(str(blocked[0]), str(blocked[1])) if blocked else None
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def dead_result(row: Drive, why: str) -> str:
    """The result for a dead drive's row: `why`, after the before-salvage note if it had
    one, so a recovery that does not finish (the loop dies mid-way) leaves it for the next."""
    note = _before_part(row.result)
    return f"{note} {why}" if note else why


__all__ = ["Ended", "before_note", "dead_result", "end_drives", "state_before"]

"""Claiming a card: ready → working under a new drive's token, in one compare-and-set.

The drive row is created first so its token can be written onto the card in the same
transaction that moves the card; a claim that loses a race ends that row `stood-aside`,
and a card whose dependency is still open is never claimed.
"""

from __future__ import annotations

import os
from typing import Any

from board.core.cards import waits
from board.core.config import Config
from board.core.errors import BoardError, Conflict
from board.core.git import naming
from board.core.logs import log_path
from board.core.model import Card
from board.core.store import Expect, Store

WHO = "board"


# ---------------------------------------------------------------------------------------------
# claiming a card


def claim(
    cfg: Config, store: Store, card: Card, owner_pid: int = 0, tier: str | None = None
) -> str | None:
    """ready → working under a new drive's token; None if the card changed meanwhile.

    The drive row is created first so its token can be written onto the card in the
    same compare-and-set that moves the card; a lost claim ends that row `stood-aside`.
    `tier` other than a coder tier (e.g. "planner") claims without a card branch.
    """

    tier = tier or waits.rung(cfg.coder, card)
    if tier in cfg.coder.ladder and waits.active_pause(store.pauses(), tier) is not None:
        return None
    attempt = store.next_attempt(card.id)
    log_rel = cfg.rel(log_path(cfg, card.id, attempt))
    drive = store.start_drive(card.id, tier, attempt, log_rel, owner_pid or os.getpid())
    changes: dict[str, Any] = {"lane": "working", "drive": drive.id, "not_before": ""}
    if tier in cfg.coder.ladder:
        changes["branch"] = naming.branch_for(card.id)
    try:
        with store.transaction() as tx:
            now = tx.get(card.id)
            if now.lane != "ready" or now.blocked is not None or now.drive:
                found = f"blocked {now.blocked.cls}" if now.blocked else now.lane
                raise Conflict(f"{card.id} is {found} now, not claimable")
            if waits.not_before(now) is not None:
                raise Conflict(f"{card.id} waits until {now.not_before}")
            for dep in now.deps:
                if tx.get(dep).lane not in ("done", "cancelled"):
                    raise Conflict(f"{card.id} waits on {dep}")
            tx.update(
                card.id,
                Expect(version=now.version),
                changes,
                WHO,
                note=f"claimed by drive {drive.id} (attempt {attempt}, tier {tier})",
            )
    except BoardError as exc:
        store.update_drive(drive.id, status="stood-aside", result=f"claim lost: {exc.line()}")
        return None
    return drive.id

"""Who may change a card at an edge, and the edge writes that check it.

A drive owns its card only while the card is `working` under its token, unblocked, and
the drive's row is still `running`; an approve owns a `review` card at the version it
read. Every edge (block, retry, publish) re-reads the card inside the same transaction
that writes it, so a card moved under its drive is never blocked, retried or published
by that drive (invariant 4): the edge stands aside instead, saying what it found.
"""

from __future__ import annotations

from typing import Any

from board.core.errors import BoardError, Refused
from board.core.model import BLOCK_CLASSES, DRIVE_LIVE, Blocked, Card
from board.core.records import Frozen, Record, field
from board.core.store import Expect, Store

# ---------------------------------------------------------------------------------------------
# ownership: who may change a card at an edge


class Owner(Frozen):
    """What a card must look like for an edge to act on it.

    A drive owns its card while the card is in `working` under its token, unblocked,
    and the drive's own row is still `running` (a `board stop` in another process
    ends the row). Issue 5's `approve` owns a `review` card at the version it read.
    """

    lane: str = "working"
    token: str = ""
    version: int | None = None

    def why_not(self, card: Card, store: Store | None = None) -> str:
        """'' when the card is still ours; otherwise what was found, in words."""
        if card.lane != self.lane:
            return f"{card.id} is in {card.lane}, not {self.lane}"
        if card.drive != self.token:
            found = f"drive {card.drive}" if card.drive else "no drive"
            want = f"drive {self.token}" if self.token else "no drive"
            return f"{card.id} is under {found}, not {want}"
        if card.blocked is not None:
            return f"{card.id} is blocked {card.blocked.cls}: {card.blocked.reason}"
        if self.version is not None and card.version != self.version:
            return f"{card.id} changed meanwhile (version {card.version}, expected {self.version})"
        if self.token and store is not None:
            try:
                row = store.get_drive(self.token)
            except BoardError:
                return f"drive {self.token} has no record"
            if row.status != DRIVE_LIVE:
                why = f" ({row.result})" if row.result else ""
                return f"drive {self.token} was ended: {row.status}{why}"
        return ""


class StoodAside(Refused):
    """The card was moved under its drive; the edge did nothing (invariant 4)."""

    def __init__(self, edge: str, found: str) -> None:
        self.edge = edge
        self.found = found
        super().__init__(f"stood aside at {edge}: {found}")


def edge_update(
    store: Store,
    card_id: str,
    owner: Owner,
    changes: dict[str, Any],
    edge: str,
    note: str = "",
    who: str = "board",
) -> Card:
    """Apply `changes` only if the card is still `owner`'s, in one transaction; else StoodAside."""
    with store.transaction() as tx:
        card = tx.get(card_id)
        found = owner.why_not(card, store)
        if found:
            raise StoodAside(edge, found)
        return tx.update(card_id, Expect(version=card.version), changes, who, note)


def release_working(
    store: Store, card_id: str, token: str, changes: dict[str, Any], note: str, who: str
) -> bool:
    """Apply `changes` if the card is still `working` under drive `token`, blocked or not
    (a drive giving back a held card, the loop recovering a dead drive's); else False."""
    with store.transaction() as tx:
        card = tx.get(card_id)
        if card.lane != "working" or card.drive != token:
            return False
        tx.update(card_id, Expect(version=card.version), changes, who, note)
        return True


def block_owned(
    store: Store,
    card_id: str,
    owner: Owner,
    cls: str,
    reason: str,
    edge: str = "block",
    lane: str = "ready",
) -> Card:
    """The drive's block as it ends: flag set, card back to `lane`, drive released.

    Raises StoodAside (and blocks nothing) when the card is no longer the owner's.
    """
    if cls not in BLOCK_CLASSES:
        raise Refused(f"unknown block class {cls!r}")
    if not reason.strip():
        raise Refused("a block needs a reason")
    return edge_update(
        store,
        card_id,
        owner,
        {"blocked": Blocked(cls, reason), "lane": lane, "drive": ""},
        edge,
    )


class PublishResult(Record):
    """What a publish did: `done`, `review`, `blocked` (with cls/reason) or `stood-aside`."""

    outcome: str
    card: Card | None = None
    commit: str = ""  # the run branch's new tip (fold)
    reason: str = ""
    cls: str = ""
    paths: list[str] = field(default_factory=list)  # conflicting paths on a fold-conflict

    @property
    def published(self) -> bool:
        return self.outcome in ("done",)

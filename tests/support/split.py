"""Helpers for the split tests: cards in the states a drive leaves them, the merged timeline."""

from __future__ import annotations

from board.core.cards import actions
from board.core.model import Card, CardDraft, Event
from board.core.store import Expect, SQLiteStore


def add(
    st: SQLiteStore, title: str = "t", spec: str = "build it", ready: bool = True, **kw
) -> Card:
    draft = CardDraft(title=title, spec=spec, lane="ready" if ready else "backlog", **kw)
    return actions.add_card(st, draft)


def claim(st: SQLiteStore, card_id: str) -> str:
    """Claim a card as the loop does: a drive row and the card `working` under its token."""
    attempt = st.next_attempt(card_id)
    drive = st.start_drive(card_id, "default", attempt, f".board/logs/{card_id}/{attempt}.log", 0)
    st.update(card_id, Expect(lane="ready"), {"lane": "working", "drive": drive.id}, "loop")
    return drive.id


def end_drive(st: SQLiteStore, card_id: str, token: str) -> Card:
    """The drive's end edge after a timeout: back to ready, any block kept, drive released."""
    return st.update(
        card_id, Expect(lane="working", drive=token), {"lane": "ready", "drive": ""}, "drive"
    )


def events(st: SQLiteStore, *card_ids: str) -> list[Event]:
    """The timelines of several cards merged in write order (the global event sequence)."""
    merged = [e for cid in card_ids for e in st.timeline(cid)]
    return sorted(merged, key=lambda e: e.seq)


def first_seq(evs: list[Event], card_id: str, needle: str) -> int:
    for e in evs:
        if e.card == card_id and needle in e.text:
            return e.seq
    raise AssertionError(f"no event on {card_id} containing {needle!r}: {[e.text for e in evs]}")


def tasks_for(st: SQLiteStore, card_id: str) -> list[Card]:
    return [c for c in st.list_cards() if c.title.startswith(f"Split {card_id}: ")]


def state(st: SQLiteStore) -> list[tuple[Card, list[Event]]]:
    """Everything the store holds, to prove a refused or failed verb changed nothing."""
    return [(c, st.timeline(c.id)) for c in st.list_cards()]

"""Notices: a toast when a card newly needs the operator, or the run goes idle; with
`[tui] notify`, a terminal bell or a desktop notice (OSC 9) beside it.

An operator watching another window learns that a card is blocked on them, that a pull
request was closed, or that the fleet ran out of work, without polling the header. Only
changes are told: what needs the operator when the board opens is in the header already.
A notice says the card's id and its class, nothing of the card's text: a title or a
reason is written by a user or a coder and may hold anything, and a desktop notice
leaves the terminal (to the window manager, to a phone); the OSC 9 payload is further
kept to plain ASCII so no byte of it can end the sequence early or start another.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from board.core.cards import waits
from board.core.config import PublishSection
from board.core.model import Card
from board.core.records import Record, field

MODES = ("none", "bell", "osc9")
_UNSAFE = re.compile(r"[^A-Za-z0-9 ._:-]")


def needs_of(publish: PublishSection, cards: Iterable[Card]) -> dict[str, str]:
    """Each card that needs the operator, with why in one word: its block's class (a
    closed pull request is `pr-closed`), or `approve` for a build waiting in review."""
    found = {}
    for card in cards:
        if waits.needs_operator(publish, card):
            found[card.id] = card.blocked.cls if card.blocked is not None else "approve"
    return found


def notice_text(card_id: str, cls: str) -> str:
    return f"{card_id} needs you: {cls}"


IDLE_TEXT = "the run is idle: no drive runs and no card is ready to run"


def osc9(text: str) -> str:
    """The desktop-notice escape (iTerm2, kitty, WezTerm, foot, Windows Terminal…) for
    `text`, reduced to plain ASCII letters, digits and ` ._:-`."""
    return f"\x1b]9;board: {_UNSAFE.sub('?', text)[:120]}\x07"


class Notices(Record):
    """What was last seen, so only what is new is told (the first look tells nothing)."""

    known: dict[str, str] | None = None
    idle: bool | None = None
    told: list[str] = field(default_factory=list)  # every notice given, in order

    def new_needs(self, current: dict[str, str]) -> list[tuple[str, str]]:
        """The cards that need the operator now and did not (or for another class) before."""
        before, self.known = self.known, dict(current)
        if before is None:
            return []
        return [(c, cls) for c, cls in current.items() if before.get(c) != cls]

    def went_idle(self, idle: bool) -> bool:
        """True once when the run goes from working to idle (not when it opens idle)."""
        before, self.idle = self.idle, idle
        return before is False and idle


__all__ = ["IDLE_TEXT", "MODES", "Notices", "needs_of", "notice_text", "osc9"]

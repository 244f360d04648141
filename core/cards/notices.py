"""Notices: what the operator is told, recorded once in the store by the loop, whether or
not a TUI is open, then sent (`[notify]`, core/ops/notify.py) and shown by every TUI.

The operator who runs agents overnight is not at the terminal: a notice raised by a TUI
reached nobody once its window was closed, and two open TUIs each told it again. So the
loop records each notice as a row (`Store.record_notice`) under a key that says what makes
it new, and a second loop (another host) that sees the same thing writes the same key,
which the store ignores. A card that needs the operator is keyed by the card, its class
and the card's version at the moment the loop first told it (`Card.told` set, the same
moment the timeline says "the operator is told"): a later comment or edit of the card
records nothing, a new block later records a new notice. The run going idle is keyed by
the newest drive, so each stretch of work ends in one notice whichever loop saw it.

A notice's text is plain and short: a card's id, a class, a tier or a host, each cut and
reduced to ASCII letters, digits and ` ._:@/+-`, joined by a fixed phrase. Never a title,
a spec, a block's reason or a log line: those are written by a user or a coder and may
hold anything, and a notice leaves the machine (to a phone, a chat).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from board.core.cards import waits
from board.core.config import PublishSection
from board.core.model import BUDGET_PAUSE, BUDGET_RESUMED, SETUP_PAUSE, Card, Pause
from board.core.records import Record, field
from board.core.store import Store

FIELD_MOST = 64  # a card id, a class, a tier or a host, at most
TEXT_MOST = 200  # a notice's whole text, at most
_UNSAFE = re.compile(r"[^A-Za-z0-9 ._:@/+-]+")
_SPACES = re.compile(r"\s+")

IDLE_TEXT = "the run is idle: no drive runs and no card is ready to run"


def plain(text: str, most: int = FIELD_MOST) -> str:
    """`text` as a notice may carry it: control characters, markup and anything but ASCII
    letters, digits and ` ._:@/+-` removed, spaces collapsed, cut to `most` characters."""
    kept = _SPACES.sub(" ", _UNSAFE.sub("", text.replace("\n", " ").replace("\t", " ")))
    kept = kept.strip()
    return kept if len(kept) <= most else kept[: most - 1].rstrip() + "~"


def needs_of(publish: PublishSection, cards: Iterable[Card]) -> dict[str, str]:
    """Each card that needs the operator, with why in one word: its block's class (a
    closed pull request is `pr-closed`), or `approve` for a build waiting in review."""
    found = {}
    for card in cards:
        if waits.needs_operator(publish, card):
            found[card.id] = card.blocked.cls if card.blocked is not None else "approve"
    return found


def notice_text(card_id: str, cls: str) -> str:
    return f"{plain(card_id)} needs you: {plain(cls)}"


def record(store: Store, kind: str, key: str, text: str, card: str = "", cls: str = "") -> bool:
    """Record one notice unless one of `key` is recorded already; True when this call did."""
    return store.record_notice(
        kind, plain(card), plain(cls), plain(text, TEXT_MOST), key[:TEXT_MOST]
    )


def needs(store: Store, card_id: str, cls: str, version: int) -> bool:
    """A card newly needs the operator: told at its `version` (see the module's docstring)."""
    return record(
        store, "needs", f"needs:{card_id}:{cls}:{version}", notice_text(card_id, cls), card_id, cls
    )


def idle(store: Store) -> bool:
    """The run has gone idle: one notice per stretch of work, keyed by its newest drive (a
    board that never ran a drive has nothing to say)."""
    last = store.list_drives(limit=1)
    if not last or last[0].live:
        return False
    return record(store, "idle", f"idle:{last[0].id}", IDLE_TEXT)


def _pause_kind(pause: Pause) -> str:
    if pause.tier == BUDGET_PAUSE:
        return "budget"
    if pause.tier == SETUP_PAUSE:
        return "setup"
    return "paused"


def _pause_text(pause: Pause, resumed: bool) -> str:
    tier, cls = plain(pause.tier), plain(pause.cls)
    if pause.tier == BUDGET_PAUSE:
        return "claims resume: the day budget" if resumed else "claims paused: the day budget"
    if pause.tier == SETUP_PAUSE:
        if resumed:
            return "claims resume: tree setup"
        return f"claims paused: tree setup failed (card {plain(pause.card)})"
    return f"tier {tier} resumed" if resumed else f"tier {tier} paused: {cls}"


class Watch(Record):
    """What the loop saw at its last tick, so what changed since is recorded: the pauses
    that held (their going is a `resumed`), and each review card's attempt by version (so
    the store is asked again only when the card changed)."""

    pauses: dict[str, Pause] = field(default_factory=dict)  # by key
    attempts: dict[str, tuple[int, int]] = field(default_factory=dict)  # card: (version, n)

    def held(self, store: Store, pauses: Iterable[Pause]) -> bool:
        """The pauses that hold now: each new one is recorded (a tier `paused`, the day
        `budget`, a broken `setup`), each gone since the last tick `resumed`. True when a
        notice was recorded (as for each method here)."""
        told = False
        now: dict[str, Pause] = {}
        for pause in pauses:
            if pause.tier == BUDGET_PAUSE and pause.cls == BUDGET_RESUMED:
                continue  # the operator's resume of the day's budget: not a pause
            now[f"{pause.tier}:{pause.cls}:{pause.since}"] = pause
        for key, pause in now.items():
            if key not in self.pauses:
                kind = _pause_kind(pause)
                told |= record(store, kind, f"{kind}:{key}", _pause_text(pause, False), pause.card,
                       pause.cls)  # fmt: skip
        for key, pause in self.pauses.items():
            if key not in now:
                told |= record(store, "resumed", f"resumed:{key}", _pause_text(pause, True),
                               "", pause.cls)  # fmt: skip
        self.pauses = now
        return told

    def review(self, store: Store, publish: PublishSection, cards: Iterable[Card]) -> bool:
        """Each card built and waiting in review for the operator's approve: once per
        attempt that brought it there."""
        told = False
        if publish.review != "operator":
            return told
        seen: dict[str, tuple[int, int]] = {}
        for card in cards:
            if card.lane != "review" or not waits.needs_operator(publish, card):
                continue
            known = self.attempts.get(card.id)
            if known is not None and known[0] == card.version:
                seen[card.id] = known
                continue
            n = store.next_attempt(card.id) - 1
            seen[card.id] = (card.version, n)
            if known is None or known[1] != n:
                told |= record(store, "needs", f"needs:{card.id}:approve:{n}",
                       notice_text(card.id, "approve"), card.id, "approve")  # fmt: skip
        self.attempts = seen
        return told

    def hosts_lost(self, store: Store, lost: dict[str, str]) -> bool:
        """Each host whose heartbeat went stale (its cards given back), once per death."""
        told = False
        for host, heard in lost.items():
            told |= record(store, "host-lost", f"host-lost:{host}:{heard}",
                   f"host {plain(host)} lost: its cards went back to ready")  # fmt: skip
        return told


__all__ = [
    "FIELD_MOST",
    "IDLE_TEXT",
    "TEXT_MOST",
    "Watch",
    "idle",
    "needs",
    "needs_of",
    "notice_text",
    "plain",
    "record",
]

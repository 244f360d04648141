"""The board's data, without Textual: literal text, rows, lanes, and the early read.

`board tui` starts reading the store (`Preload`) before Textual is imported. That first
read is cheap whatever the board's size: each lane's count and its first rows in board
order (`Store.lane_heads`, served by an index), as many as the terminal has lines, so
every visible row is painted from it. The board paints from it, then reads every card
in a worker. Nothing here imports Textual; the widgets import this.
"""

from __future__ import annotations

import gc
import shutil
import threading
from collections.abc import Iterable
from typing import Any

from board.core.errors import CorruptCard
from board.core.model import LANES, TERMINAL, Card
from board.core.store import Store
from board.core.text import sanitize as _core_sanitize

HEAD_ROWS = 200  # rows per lane in the first read when the terminal's height is unknown


def head_rows() -> int:
    """Rows per lane the first paint can show: the terminal's height (a lane shows fewer,
    under its heading), or HEAD_ROWS when there is no terminal to ask (nor LINES)."""
    lines = shutil.get_terminal_size(fallback=(0, 0)).lines
    return lines if lines > 0 else HEAD_ROWS


def sanitize(text: str) -> str:
    """Text from a user or a coder, safe to paint: every escape and control char visible.

    ESC [2J shows as `␛[2J`, a bell as `^G`; line breaks are kept for multi-line text.
    """
    if not text:
        return ""
    return _core_sanitize(text.replace("\r\n", "\n"), keep_newlines=True)


def one_line(text: str) -> str:
    """Sanitized text for a single row: line breaks shown as ⏎ so a row stays one row."""
    return sanitize(text).replace("\n", " ⏎ ")


class Row:
    """One card as a lane shows it. The sanitized title and the filter's haystack are made
    on first use: a 10,000-card board sanitizes only the rows it paints."""

    __slots__ = ("card", "_title", "_hay")

    def __init__(self, card: Card) -> None:
        self.card = card
        self._title: str | None = None
        self._hay: str | None = None

    @classmethod
    def of(cls, card: Card) -> Row:
        return cls(card)

    @property
    def title(self) -> str:
        if self._title is None:
            self._title = one_line(self.card.title)
        return self._title

    @property
    def hay(self) -> str:
        """What the filter searches: id, title, block class and labels, lower-cased."""
        if self._hay is None:
            card = self.card
            blocked = card.blocked.cls if card.blocked else ""
            self._hay = " ".join((card.id, card.title, blocked, *card.labels)).lower()
        return self._hay


Lanes = dict[str, list[Row]]


Totals = dict[str, tuple[int, int]]  # lane -> (cards, blocked cards), for a partial read


def build_lanes(cards: Iterable[Card]) -> Lanes:
    """Rows per lane: blocked first; open lanes by priority then age, closed ones newest first."""
    lanes: Lanes = {lane: [] for lane in LANES}
    for card in cards:
        lanes.setdefault(card.lane, []).append(Row(card))
    for lane, rows in lanes.items():
        if lane in TERMINAL:
            rows.sort(key=lambda r: (r.card.updated_at, r.card.seq), reverse=True)
        else:
            rows.sort(key=lambda r: (r.card.priority, r.card.seq))
        rows.sort(key=lambda r: r.card.blocked is None)  # stable: keeps the order above
    return lanes


def read_board(store: Store, unreadable: list[CorruptCard] | None = None) -> tuple[Lanes, int]:
    """The whole board as lanes of rows, with the change count it is at least as new as.

    A card whose row cannot be read is left out and noted in `unreadable` (given or
    not), so one corrupt row never blanks the whole board."""
    count = store.change_count()
    return build_lanes(store.list_cards(unreadable=[] if unreadable is None else unreadable)), count


def read_heads(
    store: Store, limit: int = HEAD_ROWS, unreadable: list[CorruptCard] | None = None
) -> tuple[Lanes, int, Totals | None]:
    """Each lane's first `limit` rows in board order, the change count, and the lanes'
    real totals when some lane was cut short (None: these rows are the whole board).
    Unreadable cards as in `read_board`."""
    heads = store.lane_heads(limit, unreadable=[] if unreadable is None else unreadable)
    lanes: Lanes = {lane: [] for lane in LANES}
    for lane, cards in heads.cards.items():
        lanes[lane] = [Row(card) for card in cards]
    if heads.complete:
        return lanes, heads.changes, None
    totals = {lane: (heads.totals.get(lane, 0), heads.blocked.get(lane, 0)) for lane in lanes}
    return lanes, heads.changes, totals


def matches(row: Row, words: list[str]) -> bool:
    return all(word in row.hay for word in words)


_gc_paused = False  # the cyclic collector is off until the first board is painted


def pause_gc() -> None:
    """Start-up allocates a great deal and frees almost nothing (imports, widgets, styles,
    the first rows), yet the cyclic collector rescans it all, again and again: tens of
    milliseconds before the first paint. It is paused until the board is painted
    (`resume_gc`, also called when the app exits); nothing is lost, only deferred."""
    global _gc_paused
    if not _gc_paused and gc.isenabled():
        gc.disable()
        _gc_paused = True


def resume_gc() -> None:
    """Turn the collector back on if `pause_gc` turned it off (idempotent).

    What start-up made is frozen first (`gc.freeze`): modules, classes, widgets and
    styles live as long as the app, and the collector's first pass over all of them
    cost some 20 ms just after the first paint, and more at every full collection. The
    price: start-up's own cyclic garbage is frozen with them and never freed (about
    4,000 of 62,000 objects, measured on a 10,000-card board; a one-time cost)."""
    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        gc.freeze()
        gc.enable()


class Preload:
    """The first read of the board (its lane heads), started in a thread at once;
    `result()` waits for it. `totals` is set when the heads are not the whole board."""

    def __init__(self, store: Store, rows: int | None = None) -> None:
        pause_gc()  # until the first paint: the app resumes it (see pause_gc)
        self.rows = head_rows() if rows is None else rows
        self._done = threading.Event()
        self._value: tuple[Lanes, int] | None = None
        self.totals: Totals | None = None
        self.unreadable: list[CorruptCard] = []  # cards the read left out
        self._error: BaseException | None = None
        threading.Thread(
            target=self._read, args=(store,), name="board-preload", daemon=True
        ).start()

    def _read(self, store: Store) -> None:
        try:
            lanes, count, self.totals = read_heads(store, self.rows, self.unreadable)
            self._value = (lanes, count)
        except BaseException as exc:  # handed to whoever asks, who says it in one line
            self._error = exc
        finally:
            self._done.set()

    def result(self, timeout: float | None = None) -> tuple[Lanes, int]:
        if not self._done.wait(timeout):
            raise TimeoutError("the board is still being read")
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value


__all__ = [
    "HEAD_ROWS",
    "Preload",
    "Row",
    "Totals",
    "build_lanes",
    "head_rows",
    "matches",
    "one_line",
    "pause_gc",
    "read_board",
    "read_heads",
    "resume_gc",
    "sanitize",
]
_ = Any

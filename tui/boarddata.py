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
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from board.core.cards.candidates import running_greens
from board.core.cards.waits import needs_operator
from board.core.config import Config, PublishSection
from board.core.errors import BoardError, CorruptCard
from board.core.model import LANES, TERMINAL, Card, UsageSum
from board.core.store import Store

from .painttext import one_line, sanitize
from .usagetext import day_start, known, sum_cost

if TYPE_CHECKING:
    from .health import Clock, Health

HEAD_ROWS = 200  # rows per lane in the first read when the terminal's height is unknown
# How long `Preload` waits for a read of an embedded store before it returns. Run beside
# Textual's import, such a read fetches each row with the GIL let go and taken back, and
# each time waits on the import for it: a 10,000-card board's heads (about 6 ms alone) then
# cost the first paint some 30 ms more than reading them first. A store on a server is
# read beside the import: its read waits on the network, not on our CPU.
SETTLE_S = 0.1


def head_rows() -> int:
    """Rows per lane the first paint can show: the terminal's height (a lane shows fewer,
    under its heading), or HEAD_ROWS when there is no terminal to ask (nor LINES)."""
    lines = shutil.get_terminal_size(fallback=(0, 0)).lines
    return lines if lines > 0 else HEAD_ROWS


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


class Spend:
    """What the agents spent, as the board shows it: each card's cost over all its
    attempts (card id -> its words, only cards whose drives said something) for the rows,
    and today's sum (UTC) for the header; with it, read by the same worker, each racing
    card's green candidates so far (card id -> count) for its row's `3/5 green`."""

    __slots__ = ("costs", "today", "day", "races")

    def __init__(
        self,
        costs: dict[str, str],
        today: UsageSum | None,
        day: str,
        races: dict[str, int] | None = None,
    ) -> None:
        self.costs = costs
        self.today = today
        self.day = day  # the UTC day (YYYY-MM-DD) `today` is of
        self.races = races or {}  # working card whose race runs -> its green candidates


def read_spend(store: Store, at: datetime) -> Spend:
    """Three queries whatever the board's size, two summed by the store: every card's
    drives (`usage_sums(by="card")`), and today's (`usage_sums(by="day")` since today's UTC
    midnight, which is `spend_since` with its unpriced drives counted, so a partial sum
    never reads as the whole); and the working cards' candidate and live drive rows
    (`race_drives`), whose running races' green candidates the rows show. Run in the
    board's worker, never on the UI thread."""
    costs = {u.key: sum_cost(u) for u in store.usage_sums(by="card") if known(u)}
    since = day_start(at)
    day = since[:10]
    today = next((u for u in store.usage_sums(by="day", since=since) if u.key == day), None)
    return Spend(costs, today, day, running_greens(store.race_drives()))


def matches(row: Row, words: list[str]) -> bool:
    return all(word in row.hay for word in words)


def all_cards(lanes: Lanes) -> list[Card]:
    return [row.card for rows in lanes.values() for row in rows]


def start_lane(publish: PublishSection, lanes: Lanes, visible: Sequence[str]) -> str:
    """The lane the board opens on: where the work needs the operator. The first lane
    holding a card that waits for a human (`waits.needs_operator`: a block the sweep does
    not heal, a build waiting for approval), else `working` if a drive runs, else the first
    lane with cards: never an empty backlog while the work sits two lanes over."""
    for lane in visible:
        if any(needs_operator(publish, row.card) for row in lanes.get(lane, ())):
            return lane
    if lanes.get("working") and "working" in visible:
        return "working"
    return next((lane for lane in visible if lanes.get(lane)), visible[0])


def lane_heights(room: int, wants: Mapping[str, int], focused: str) -> dict[str, int]:
    """Lines for each stacked lane, heading included, in `room` lines (lazygit's side
    panels, the focused one expanded). Every lane keeps its heading; the others show up to
    a share of the rows that keeps at least half the room for the focused lane; room the
    focused lane does not fill goes back to the others, in lane order; what is left is the
    focused lane's. `wants` is how many rows each lane has to show."""
    lanes = list(wants)
    others = [lane for lane in lanes if lane != focused]
    rest = max(0, room - len(lanes))  # the lines under the headings
    cap = rest // (2 * len(others)) if others else 0  # 0: a short screen shows headings
    give = {lane: min(wants[lane], cap) for lane in others}
    left = rest - sum(give.values())
    focus_wants = max(1, wants.get(focused, 0))
    if left > focus_wants:
        spare = left - focus_wants
        for lane in others:
            more = min(wants[lane] - give[lane], spare)
            give[lane] += more
            spare -= more
        left = focus_wants + spare
    heights = {lane: 1 + give[lane] for lane in others}
    heights[focused] = 1 + max(0, left)
    return heights


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


def _first_health(store: Store, cfg: Config, clock: Clock | None) -> Health | None:
    """The header's first reading; None when it cannot be had (the app's own reading,
    which follows at once, says why and tries again)."""
    try:
        from .health import read_health, utc_now

        return read_health(cfg, store, clock or utc_now)
    except (BoardError, ImportError):
        return None


class Preload:
    """The first read of the board (its lane heads), started in a thread at once;
    `result()` waits for it. `totals` is set when the heads are not the whole board.
    For an embedded store the constructor waits for the read (`SETTLE_S` at most)."""

    def __init__(
        self,
        store: Store,
        rows: int | None = None,
        cfg: Config | None = None,
        clock: Clock | None = None,
    ) -> None:
        pause_gc()  # until the first paint: the app resumes it (see pause_gc)
        self.rows = head_rows() if rows is None else rows
        self._done = threading.Event()
        self._value: tuple[Lanes, int] | None = None
        self.totals: Totals | None = None
        self.unreadable: list[CorruptCard] = []  # cards the read left out
        self.health: Health | None = None  # the header's first words (with a cfg)
        self._error: BaseException | None = None
        threading.Thread(
            target=self._read, args=(store, cfg, clock), name="board-preload", daemon=True
        ).start()
        if store.reads_in_process:
            self._done.wait(SETTLE_S)

    def _read(self, store: Store, cfg: Config | None, clock: Clock | None) -> None:
        try:
            lanes, count, self.totals = read_heads(store, self.rows, self.unreadable)
            self._value = (lanes, count)
            if cfg is not None:  # the header, so the first paint says whether a loop runs
                self.health = _first_health(store, cfg, clock)
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
    "Spend",
    "Totals",
    "all_cards",
    "build_lanes",
    "head_rows",
    "lane_heights",
    "matches",
    "one_line",
    "pause_gc",
    "read_board",
    "read_heads",
    "read_spend",
    "resume_gc",
    "sanitize",
    "start_lane",
]
_ = Any

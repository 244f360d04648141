"""A listing's cards made again only where their rows changed: a speed trick, fenced here.

Why: `board run` reads every card each tick (the sweep) and, with `loop_interval_s` at its
minimum and 100 drives writing, ticks up to 20 times a second. At 300 cards a listing took
3.5 ms, 2 of it making the cards from their rows (every field's type checked, the lists
parsed), nearly all for rows no one had written since the last tick: a fifth of the loop's
CPU in bench_fleet (py-spy, docs/performance.md). Here a store keeps the cards of its last
whole listing with the rows they were made from, and a row equal to its last one (every
column, its deps and its counts; a write changes at least `version` and `updated`) gives
its card back without being read again. Cards are frozen records, so one may be handed out
twice. Only whole listings (no lane) use it, and what it keeps is one listing's worth.

tests/test_cardcache.py holds it equal to making every card afresh, over edits of every
kind, corrupt rows (never kept, always named), and cards added and deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from board.core.errors import CorruptCard
from board.core.model import Card
from board.core.store.cardrow import _card_from_row

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any

    _Kept = tuple[tuple[Any, ...], tuple[str, ...], tuple[Any, ...] | None, Card]


class CardCache:
    """The cards of the last whole listing, by id, with what each was made from."""

    def __init__(self) -> None:
        # replaced whole by each listing, never changed in place: a listing in another
        # thread reads one or the other, and a dict's assignment is one step
        self._last: dict[str, _Kept] = {}

    def cards(
        self,
        rows: Iterable[tuple[Any, ...]],
        deps: Mapping[str, list[str]],
        unreadable: list[CorruptCard] | None,
        states: Mapping[str, tuple[Any, ...]] | None = None,
    ) -> list[Card]:
        """`cardrow._cards`, with the cards of unchanged rows taken from the last listing."""
        last = self._last
        now: dict[str, _Kept] = {}
        cards: list[Card] = []
        lists: dict[str, tuple[str, ...]] = {}
        states = states or {}
        for row in rows:
            cid = row[0]
            card_deps = tuple(deps.get(cid, ()))
            state = states.get(cid)
            kept = last.get(cid)
            if kept is not None and kept[0] == row and kept[1] == card_deps and kept[2] == state:
                card = kept[3]
            else:
                try:
                    card = _card_from_row(row, card_deps, lists, state)
                except CorruptCard as exc:
                    if unreadable is None:
                        raise
                    unreadable.append(exc)
                    continue
            if type(cid) is str:
                now[cid] = (row, card_deps, state, card)
            cards.append(card)
        self._last = now
        return cards

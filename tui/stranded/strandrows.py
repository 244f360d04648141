"""The stranded browser's rows, read and prepared off the UI thread; no Textual here.

Every stranded branch and husk becomes a `StrandedRow`, its card's title and lane looked
up and every string sanitized once, in a worker. Operators meet the browser with thousands
of saves, so the newest screenful is read first (`first_rows`): git sorts the refs by the
stamp in their names and cuts them (`--count`), their stats are looked up in the stats file
for those commits only, their cards found one by one. The whole list (`load_rows`: one
`git for-each-ref`, stats recorded at save time, one store read) follows it. Saves made by
the loop meanwhile are noticed by the core's `stranded.refs_signature`, a few stat calls.

A drive's failed attempts (saves marked `kind=attempt`) and the best-of-N candidates a race
did not choose (`kind=candidate`, issue 42) are folded under their card, one row per card,
closed (`fold_attempts`): they are kept so no coder's work is thrown away, but they are not
what the operator must act on first. `enter` on the fold opens or closes it; its saves then
follow it, each one a branch like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from board.core.config import Config
from board.core.errors import CorruptCard
from board.core.git import stranded
from board.core.model import Card
from board.core.records import Record, field
from board.core.safetext import sanitize
from board.core.store import Store

from ..boarddata import one_line

LANE_ORDER = {"backlog": 0, "ready": 1, "working": 2, "review": 3, "done": 4, "cancelled": 5}
GONE = "gone"  # the lane column of a branch whose card is no longer on the board
SORTS = ("age", "card", "tree", "files", "changes", "lane")


def parse_stamp(stamp: str) -> datetime | None:
    """`20260102T030405.678Z` (the save's UTC stamp) as a datetime, or None.

    Sliced by hand: `strptime` costs 30 µs, which is 60 ms over 2,000 branches.
    """
    if len(stamp) < 20 or stamp[8] != "T" or stamp[15] != "." or stamp[19] != "Z":
        return None
    try:
        return datetime(
            int(stamp[0:4]),
            int(stamp[4:6]),
            int(stamp[6:8]),
            int(stamp[9:11]),
            int(stamp[11:13]),
            int(stamp[13:15]),
            int(stamp[16:19]) * 1000,
            tzinfo=UTC,
        )
    except ValueError:
        return None


def age_text(seconds: float | None) -> str:
    """`45s`, `12m`, `3h`, `5d`, `2y`: the age of a save, short enough for a column."""
    if seconds is None:
        return "?"
    s = max(0, int(seconds))
    for unit, size in (("y", 365 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{s // size}{unit}"
    return f"{s}s"


def _card_key(card_id: str) -> tuple[str, int, str]:
    """`c-2` before `c-10`."""
    head, _, tail = card_id.rpartition("-")
    return (head, int(tail), "") if tail.isascii() and tail.isdigit() else (card_id, -1, card_id)


class StrandedRow(Record, slots=True):
    """One stranded branch or husk as the browser shows it; every string already sanitized.

    A fold (`kind` "fold") stands for one card's failed attempts and unchosen candidates,
    which it holds in `fold`.
    """

    kind: str  # "branch" | "husk" | "fold"
    name: str  # the branch's short name, or the husk's directory name (raw: passed to core)
    label: str  # `name`, sanitized for the screen
    card_id: str  # "" when the tree names no card
    card: Card | None  # None: no card id, or the card is gone
    title: str
    lane: str  # the card's lane, GONE, or "" (no card id)
    tree: str
    stamp: str
    seconds: float | None
    files: int | None = None
    insertions: int | None = None
    deletions: int | None = None
    commit: str = ""
    path: str = ""  # a husk's directory
    hay: str = ""
    attempt: bool = False  # a branch saved from a drive's own failed attempt
    candidate: bool = False  # a branch saved from a best-of-N candidate not chosen
    foreign: bool = False  # a branch under stranded/ the board did not make (no trailer)
    fold: list[StrandedRow] = field(default_factory=list)  # a fold's saves, in list order
    opened: bool = False  # a fold whose saves are shown below it

    @property
    def is_husk(self) -> bool:
        return self.kind == "husk"

    @property
    def is_fold(self) -> bool:
        return self.kind == "fold"

    @property
    def card_exists(self) -> bool:
        return self.card is not None

    @property
    def folds(self) -> bool:
        """Folded under its card: a failed attempt or an unchosen candidate of a card."""
        return (self.attempt or self.candidate) and bool(self.card_id)

    def stat_text(self) -> str:
        """`2 files +3 −1`, or why there is none."""
        if self.is_husk:
            return "husk: a directory moved aside, bytes intact"
        if self.is_fold:
            return _fold_count(self.fold)
        if self.foreign:
            return "no save trailer"
        if self.files is None:
            return "no stats recorded"
        s = "" if self.files == 1 else "s"
        return f"{self.files} file{s} +{self.insertions} −{self.deletions}"

    def describe(self) -> str:
        """What the row is, in words: used in questions and the detail line."""
        card = f"{self.card_id} “{self.title}”" if self.card else self.card_id or "no card"
        if self.card_id and not self.card:
            card = f"{self.card_id}, no longer on the board"
        if self.is_husk:
            return f"husk {sanitize(self.path)} ({card})"
        if self.is_fold:
            how = "enter closes them" if self.opened else "folded: enter opens them"
            return f"{self.stat_text()} of {card}, each saved to a branch ({how})"
        what = "a failed attempt, " if self.attempt else ""
        if self.candidate:
            what = "a candidate not chosen, "
        if self.foreign:
            what = "not made by the board, "
        return f"{self.label} ({what}{card}, {self.stat_text()}, commit {self.commit[:10]})"


def _cards_for(store: Store, ids: set[str], few: int = 40) -> dict[str, Card]:
    """The cards the rows name: a few lookups, or one read of the board when there are many."""
    if len(ids) <= few:
        found = {}
        for card_id in ids:
            try:
                card = store.find(card_id)
            except CorruptCard:  # shown as a branch without its card, like a deleted one
                continue
            if card is not None:
                found[card_id] = card
        return found
    return {c.id: c for c in store.list_cards(unreadable=[]) if c.id in ids}


def _row(
    kind: str,
    name: str,
    card_id: str | None,
    cards: dict[str, tuple[Card, str]],
    tree: str,
    stamp: str,
    now: datetime,
) -> StrandedRow:
    card, title = cards.get(card_id, (None, "")) if card_id else (None, "")
    when = parse_stamp(stamp)
    lane = card.lane if card else (GONE if card_id else "")
    label = one_line(name)
    ident = one_line(card_id) if card_id else ""
    tree_text = one_line(tree)
    row = StrandedRow(
        kind=kind,
        name=name,
        label=label,
        card_id=ident,
        card=card,
        title=title,
        lane=lane,
        tree=tree_text,
        stamp=stamp,
        seconds=(now - when).total_seconds() if when else None,
    )
    row.hay = f"{label} {ident} {title} {lane} {tree_text} {kind}".lower()
    return row


def load_rows(
    cfg: Config, store: Store, now: datetime, refs: stranded.StrandedRefs | None = None
) -> list[StrandedRow]:
    """Every stranded branch, then every husk, with its card's title and lane (in a worker)."""
    branches = (refs or stranded.read_refs(cfg, stats=True)).all()
    return _rows_of(store, branches, stranded.list_husks(cfg), now)


def first_rows(
    cfg: Config, store: Store, now: datetime, refs: stranded.StrandedRefs, count: int
) -> list[StrandedRow]:
    """The `count` newest branches (then the husks): the head of the list as sorted by age.

    Their stats are looked up for those commits only and their cards found one by one, so the
    first screenful costs a screenful's work, not 2,000 rows'.
    """
    return _rows_of(store, refs.newest(count), stranded.list_husks(cfg), now, few=count + 20)


def branch_rows(
    store: Store, branches: Sequence[stranded.StrandedBranch], now: datetime
) -> list[StrandedRow]:
    """These branches' rows as the browser makes them (in a worker: it reads their cards),
    for a screen that opens one's diff without the whole listing (the card's candidates)."""
    return _rows_of(store, branches, [], now)


def _rows_of(
    store: Store,
    branches: Sequence[stranded.StrandedBranch],
    husks: Sequence[stranded.Husk],
    now: datetime,
    few: int = 40,
) -> list[StrandedRow]:
    ids = {b.card for b in branches if b.card} | {h.card for h in husks if h.card}
    found = _cards_for(store, ids, few)
    cards = {cid: (card, one_line(card.title)) for cid, card in found.items()}
    rows = []
    for b in branches:
        row = _row("branch", b.branch, b.card, cards, b.tree, b.stamp, now)
        row.files, row.insertions, row.deletions = b.files, b.insertions, b.deletions
        row.commit = b.commit
        if b.is_attempt:
            row.attempt = True
            row.hay += " attempt"
        elif b.is_candidate:
            row.candidate = True
            row.hay += " candidate"
        elif b.is_foreign:
            row.foreign = True
            row.hay += " foreign"
        rows.append(row)
    for h in husks:
        row = _row("husk", h.name, h.card, cards, h.tree, h.stamp, now)
        row.path = str(h.path)
        rows.append(row)
    return rows


def sort_rows(rows: Iterable[StrandedRow], by: str, reverse: bool = False) -> list[StrandedRow]:
    """Branches first, then husks; each by `by` in its natural order (newest, most changes…)."""
    keys: dict[str, tuple[Callable[[StrandedRow], Any], bool]] = {
        "age": (lambda r: (r.stamp, r.name), True),  # newest first
        "card": (lambda r: (not r.card_id, _card_key(r.card_id), r.stamp), False),
        "tree": (lambda r: (r.tree, r.stamp), False),
        "files": (lambda r: (r.files or 0, r.stamp), True),  # most first
        "changes": (lambda r: ((r.insertions or 0) + (r.deletions or 0), r.stamp), True),
        "lane": (lambda r: (LANE_ORDER.get(r.lane, 9 if r.lane == GONE else 10), r.stamp), False),
    }
    key, natural = keys.get(by, keys["age"])
    out = sorted(rows, key=key, reverse=natural != reverse)
    out.sort(key=lambda r: r.is_husk)  # stable: husks after branches, whatever the order
    return out


def _fold_count(rows: Sequence[StrandedRow]) -> str:
    """`2 failed attempts`, `3 candidates`, `1 failed attempt, 2 candidates`."""
    tried = sum(1 for r in rows if r.attempt)
    raced = len(rows) - tried
    parts = [f"{tried} failed attempt{'s' * (tried != 1)}"] if tried else []
    if raced:
        parts.append(f"{raced} candidate{'s' * (raced != 1)}")
    return ", ".join(parts)


def _fold_name(rows: Sequence[StrandedRow], card_id: str) -> str:
    """`attempts of c-1`, `candidates of c-1`, or `attempts and candidates of c-1`."""
    tried, raced = any(r.attempt for r in rows), any(r.candidate for r in rows)
    what = "attempts and candidates" if tried and raced else "candidates" if raced else "attempts"
    return f"{what} of {card_id}"


def fold_attempts(rows: Sequence[StrandedRow], opened: set[str]) -> list[StrandedRow]:
    """The sorted rows with each card's failed attempts and unchosen candidates folded into
    one row, closed unless the card is in `opened` (then its saves follow the fold).

    The fold takes the place of the card's first such save in the sorted list, so a sort by
    age puts it where its newest one was. One with no card id stays a row.
    """
    by_card: dict[str, list[StrandedRow]] = {}
    for row in rows:
        if row.folds:
            by_card.setdefault(row.card_id, []).append(row)
    if not by_card:
        return list(rows)
    out: list[StrandedRow] = []
    for row in rows:
        if not row.folds:
            out.append(row)
            continue
        attempts = by_card.get(row.card_id)
        if attempts is None or attempts[0] is not row:
            continue  # placed with its fold
        first = attempts[0]
        name = _fold_name(attempts, first.card_id)
        fold = StrandedRow(
            kind="fold",
            name=name,
            label=name,
            card_id=first.card_id,
            card=first.card,
            title=first.title,
            lane=first.lane,
            tree=first.tree,
            stamp=max(a.stamp for a in attempts),
            seconds=min((a.seconds for a in attempts if a.seconds is not None), default=None),
            fold=attempts,
            opened=first.card_id in opened,
        )
        out.append(fold)
        if fold.opened:
            out.extend(attempts)
    return out


def matches(row: StrandedRow, words: Sequence[str]) -> bool:
    return all(word in row.hay for word in words)

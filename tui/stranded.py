"""The stranded-work browser: every stranded/… branch and husk, its diff, one key to act.

A coder died, a drive was stopped, a card was cancelled: the board saved the tree to a
`stranded/<tree>/<stamp>` branch (or moved a husk aside) before removing it. This screen
is where the operator brings that work home or lets it go. Each key is one call into the
core verbs the CLI offers too (`stranded.pick`, `operator.salvage`, `stranded.discard`),
run in a worker and reported as one line, never a traceback.

Keys (each a Binding with an id, rebindable in board.toml `[tui.keys]`): `enter` the diff,
`p` cherry-pick onto a branch (asks which; the run branch by default, the base in push
mode), `S` salvage (publishes through the gate), `d` discard (asks, naming the branch and
its diffstat), `y` copy the recovery commands (OSC 52, and shown on screen), `o` the card,
`/` filter, `s`/`r` sort, `esc` back. After each verb the list is read again.

Speed, because operators meet this screen with thousands of saves and million-line diffs:

- the list is read in a thread started with the screen. First the newest screenful:
  git sorts the refs by the stamp in their names and cuts them (`--count`), their stats
  are looked up in the stats file for those commits only, their cards found one by one;
  the screen waits briefly for them in `on_mount`, so its first frame has real rows.
  Once that frame is out, the whole list (one `git for-each-ref`, stats recorded at save
  time, one store read) replaces it. Rows are drawn with the line API, so 2,000 branches
  cost a list, not widgets; the result panel and the filter field are mounted when first
  needed, the footer after the whole list is painted;
- the diff streams from `git diff` through a thread into `DiffBuffer`, which indexes
  whole blocks of lines at C speed (a `count` per block, no Python call per line); the
  view (`DiffView`, the line API as in `tui/logs.py`) pages the first screen while the
  rest is still arriving, and redraws for new lines at most five times a second, so
  keys are not queued behind repaints; leaving the diff kills git;
- new saves made by the loop show up live: a worker stats the refs and the stats file
  every second and reloads when they changed (and once at the first look, so a save that
  landed during the first read is not missed).

A drive's failed attempts (saves marked `kind=attempt`) are folded under their card, one
row per card, closed: they are kept so no coder's work is thrown away, but they are not
what the operator must act on first. `enter` on the fold opens or closes it; the attempts
then follow it, each one a branch like any other.

Everything that came from a coder or a user (branch names, titles, paths, diff lines) is
painted as plain text through `sanitize`: no markup, no escape sequence (invariant 5).
"""

from __future__ import annotations

import bisect
import os
import re
import shlex
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from board.core import ops as operator
from board.core import proc
from board.core.config import Config
from board.core.errors import BoardError, CorruptCard
from board.core.git import naming, pick, runbranch, saves, stranded
from board.core.logs import LINE_CAP, decode_line, sanitize
from board.core.model import Card
from board.core.store import Store
from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.containers import Vertical
from textual.geometry import Size
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer
from textual.widgets import Footer, Input, Static
from textual.worker import get_current_worker

from .dialogs import ConfirmDialog
from .widgets import LineList, StatusLine, one_line

FIRST_ROWS = 20  # at least this many of the newest rows are painted before the rest is read
HEAD_WAIT_S = 0.15  # the screen waits this long at most for its first rows before mounting
FILL_WAIT_S = 1.0  # the whole list is built once the first rows are painted, or after this
POLL_S = 1.0  # how often the screen looks for saves made by the loop (a few stat calls)
LANE_ORDER = {"backlog": 0, "ready": 1, "working": 2, "review": 3, "done": 4, "cancelled": 5}
GONE = "gone"  # the lane column of a branch whose card is no longer on the board
SORTS = ("age", "card", "tree", "files", "changes", "lane")
HINT = "enter diff · p pick · S salvage · d discard · y recovery · o card · / filter · s sort"


def _utc_now() -> datetime:
    return datetime.now(UTC)


# ---------------------------------------------------------------------------------------------
# rows, read and prepared off the UI thread


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
    return (head, int(tail), "") if tail.isdigit() else (card_id, -1, card_id)


@dataclass(slots=True)
class StrandedRow:
    """One stranded branch or husk as the browser shows it; every string already sanitized.

    A fold (`kind` "fold") stands for one card's failed attempts, which it holds in `fold`.
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
    fold: list[StrandedRow] = field(default_factory=list)  # a fold's attempts, in list order
    opened: bool = False  # a fold whose attempts are shown below it

    @property
    def is_husk(self) -> bool:
        return self.kind == "husk"

    @property
    def is_fold(self) -> bool:
        return self.kind == "fold"

    @property
    def card_exists(self) -> bool:
        return self.card is not None

    def stat_text(self) -> str:
        """`2 files +3 −1`, or why there is none."""
        if self.is_husk:
            return "husk: a directory moved aside, bytes intact"
        if self.is_fold:
            n = len(self.fold)
            return f"{n} failed attempt{'s' * (n != 1)}"
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
    branches = (refs or stranded.read_refs(cfg)).all()
    return _rows_of(store, branches, stranded.list_husks(cfg), now)


def first_rows(
    cfg: Config, store: Store, now: datetime, refs: stranded.StrandedRefs, count: int
) -> list[StrandedRow]:
    """The `count` newest branches (then the husks): the head of the list as sorted by age.

    Their stats are looked up for those commits only and their cards found one by one, so the
    first screenful costs a screenful's work, not 2,000 rows'.
    """
    return _rows_of(store, refs.newest(count), stranded.list_husks(cfg), now, few=count + 20)


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


def fold_attempts(rows: Sequence[StrandedRow], opened: set[str]) -> list[StrandedRow]:
    """The sorted rows with each card's failed attempts folded into one row, closed unless
    the card is in `opened` (then its attempts follow the fold).

    The fold takes the place of the card's first attempt in the sorted list, so a sort by
    age puts it where its newest attempt was. An attempt with no card id stays a row.
    """
    by_card: dict[str, list[StrandedRow]] = {}
    for row in rows:
        if row.attempt and row.card_id:
            by_card.setdefault(row.card_id, []).append(row)
    if not by_card:
        return list(rows)
    out: list[StrandedRow] = []
    for row in rows:
        if not (row.attempt and row.card_id):
            out.append(row)
            continue
        attempts = by_card.get(row.card_id)
        if attempts is None or attempts[0] is not row:
            continue  # placed with its fold
        first = attempts[0]
        fold = StrandedRow(
            kind="fold",
            name=f"attempts of {first.card_id}",
            label=f"attempts of {first.card_id}",
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


def refs_signature(cfg: Config, common: Path | None) -> tuple[Any, ...]:
    """Cheap fingerprint of the stranded refs, the stats file and the husks (stat calls only).

    A save writes a loose ref under refs/heads/stranded/<tree>/ and a stats line; a discard
    deletes a loose ref or rewrites packed-refs. Any of those changes the fingerprint.
    """

    def stat(path: Path) -> tuple[int, int]:
        try:
            st = os.stat(path)
        except OSError:
            return (0, -1)
        return (st.st_mtime_ns, st.st_size)

    parts: list[Any] = [stat(saves.stats_file(cfg)), stat(stranded.husk_dir(cfg))]
    if common is not None:
        parts += [stat(common / "packed-refs"), stat(common / "reftable" / "tables.list")]
        top = common / "refs" / "heads" / "stranded"
        parts.append(stat(top))
        try:
            with os.scandir(top) as entries:
                parts += sorted((e.name, e.stat().st_mtime_ns) for e in entries)
        except OSError:
            pass
    return tuple(parts)


def _start_name(cfg: Config) -> str:
    """What a saved tree's diff is against, by name, without a git call on the UI thread:
    the run branch where the tree started (fold), or the base (push)."""
    return cfg.run_branch if runbranch.folds(cfg) else cfg.base


def recovery_commands(cfg: Config, row: StrandedRow) -> list[str]:
    """Shell commands an operator can paste to look at or recover the work by hand."""
    q = shlex.quote
    if row.is_husk:
        rescue = f"rescued-{row.name}"
        return [
            "# a husk: the tree's bytes, moved aside intact (its git admin entry was gone)",
            f"ls -la {q(row.path)}",
            f"cp -a {q(row.path)} {q(rescue)}",
        ]
    start = q(runbranch.start_ref(cfg))
    target = q(runbranch.pick_target(cfg))
    branch = q(row.name)
    mine = q(f"rescue/{row.tree or 'stranded'}")
    return [
        f"# {row.name}: {row.stat_text()}",
        f"git diff {start}...{branch}",
        f"board stranded pick {branch} --onto {target}",
        f"git switch -c {mine} {branch}",
    ]


# ---------------------------------------------------------------------------------------------
# what a verb did, in one line (and the details for the result panel)


@dataclass
class Outcome:
    """A verb's result: one status line, optional detail lines, and whether it was refused."""

    line: str
    details: list[str] = field(default_factory=list)
    error: bool = False


def pick_outcome(result: pick.PickResult) -> Outcome:
    """The new commits on the target, or the conflicting paths with the target unchanged."""
    target = result.target
    if result.conflicts:
        return Outcome(
            f"{result.branch} does not apply onto {target}: conflicts in "
            f"{', '.join(result.conflicts)}; {target} was left as it was",
            [f"conflict: {p}" for p in result.conflicts]
            + [f"{target} is still at {result.old[:12]}"],
            error=True,
        )
    if result.failed_on:
        return Outcome(
            f"{result.branch} could not be picked onto {target} ({result.failed_on}); "
            f"{target} was left as it was",
            error=True,
        )
    if not result.picked:
        return Outcome(f"{target} already holds everything in {result.branch}: nothing changed")
    n = len(result.picked)
    details = [f"{target}: {result.old[:12]} → {result.new[:12]} ({n} new commit{'s' * (n != 1)})"]
    details += [f"picked {c[:12]}" for c in result.picked]
    details += [f"skipped {c[:12]} (nothing new in it)" for c in result.skipped]
    return Outcome(
        f"picked {n} commit{'s' * (n != 1)} of {result.branch} onto {target}: "
        f"{result.old[:12]} → {result.new[:12]}",
        details,
    )


def salvage_outcome(result: operator.SalvageResult) -> Outcome:
    """Published or not, and the gate's verdict with its tail."""
    gate = f"gate {result.gate}" + (f": {result.gate_reason}" if result.gate_reason else "")
    if result.published:
        where = result.pr_url or (result.commit[:12] if result.commit else "")
        line = f"salvaged {result.target}: {result.outcome}, {gate}" + (
            f" ({where})" if where else ""
        )
    else:
        line = f"salvage of {result.target} published nothing: {result.outcome}, {gate}"
    details = list(result.lines)
    if result.gate_tail.strip():
        details += ["gate tail:", *("    " + x for x in result.gate_tail.splitlines())]
    return Outcome(line, details, error=not result.published)


# ---------------------------------------------------------------------------------------------
# a list drawn with the line API


def _fit(text: str, width: int, right: bool = False) -> str:
    """`text` in exactly `width` cells: cut with … or padded."""
    if width <= 0:
        return ""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…" if width > 1 else text[:1]
    pad = " " * (width - cell_len(text))
    return pad + text if right else text + pad


def content_widths(rows: Sequence[StrandedRow]) -> dict[str, int]:
    """How wide the card, lane, tree and +/− columns must be for `rows` (capped)."""
    changes = max(
        [7, *(len(f"+{r.insertions} −{r.deletions}") for r in rows if r.files is not None)]
    )
    if any(r.is_husk for r in rows):
        changes = max(changes, len("moved aside"))
    return {
        "card": min(max([4, *(cell_len(r.card_id) for r in rows)]), 10),
        "lane": min(max([4, *(len(r.lane) for r in rows)]), 9),
        "tree": min(max([4, *(cell_len(r.tree) for r in rows)]), 28),
        "changes": changes,
    }


@dataclass(frozen=True)
class _Columns:
    card: int
    lane: int
    tree: int
    age: int
    files: int
    changes: int
    title: int


class StrandedTable(LineList):
    """The stranded branches and husks: card, lane, title, tree, age, files, +/−."""

    header_rows = 1
    COMPONENT_CLASSES = {
        "list--cursor",
        "list--cursor-blurred",
        "stranded--header",
        "stranded--sorted",
        "stranded--card",
        "stranded--gone",
        "stranded--husk",
        "stranded--add",
        "stranded--del",
        "stranded--muted",
    }
    DEFAULT_CSS = """
    StrandedTable {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
        background: $background;
        color: $foreground;
    }
    StrandedTable > .list--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    StrandedTable > .list--cursor-blurred {
        background: $block-cursor-blurred-background;
        color: $block-cursor-blurred-foreground;
        text-style: $block-cursor-blurred-text-style;
    }
    StrandedTable > .stranded--header { background: $panel; text-style: bold; }
    StrandedTable > .stranded--sorted { text-style: bold underline; }
    StrandedTable > .stranded--card { text-style: bold; }
    StrandedTable > .stranded--gone { color: $error; text-style: bold; }
    StrandedTable > .stranded--husk { color: $warning; text-style: italic; }
    StrandedTable > .stranded--add { color: $success; }
    StrandedTable > .stranded--del { color: $error; }
    StrandedTable > .stranded--muted { color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.sort_by = "age"
        self.reverse = False
        self.empty_text = "loading…"
        self._widths: tuple[int, _Columns] | None = None
        self.content: dict[str, int] | None = None

    def key_of(self, item: Any) -> Any:
        return (item.kind, item.name)

    def set_items(self, items: Sequence[Any], content: dict[str, int] | None = None) -> None:
        """`content`: the column widths the rows need, measured in the worker (2,000 rows)."""
        self._widths = None
        self.content = content
        super().set_items(items)

    def columns(self, width: int) -> _Columns:
        if self._widths is not None and self._widths[0] == width:
            return self._widths[1]
        content = self.content or content_widths(self.items)
        card, lane, tree, changes = (content[k] for k in ("card", "lane", "tree", "changes"))
        age, files = 4, 5
        fixed = 1 + card + 1 + lane + 1 + 1 + age + 1 + files + 1 + changes + 1
        title = width - fixed - tree - 1
        if title < 12:  # narrow: the tree gives way first, then the title
            tree = max(4, tree - (12 - title))
            title = max(0, width - fixed - tree - 1)
        cols = _Columns(card, lane, tree, age, files, changes, title)
        self._widths = (width, cols)
        return cols

    def _cells(self, c: _Columns, values: dict[str, str]) -> list[tuple[str, str]]:
        """(column name, text) in drawing order, each fitted to its width."""
        return [
            ("", " "),
            ("card", _fit(values["card"], c.card)),
            ("", " "),
            ("lane", _fit(values["lane"], c.lane)),
            ("", " "),
            ("title", _fit(values["title"], c.title)),
            ("", " "),
            ("tree", _fit(values["tree"], c.tree)),
            ("", " "),
            ("age", _fit(values["age"], c.age, right=True)),
            ("", " "),
            ("files", _fit(values["files"], c.files, right=True)),
            ("", " "),
            ("changes", _fit(values["changes"], c.changes)),
        ]

    def render_header(self, y: int, width: int, base: Style) -> Strip:
        part = self.get_component_rich_style
        style = base + part("stranded--header")
        arrow = "↑" if self.reverse else "↓"
        names = {"card": "card", "lane": "lane", "title": "title", "tree": "tree"}
        names.update({"age": "age", "files": "files", "changes": "+/−"})
        names[self.sort_by] = names[self.sort_by] + arrow
        c = self.columns(width)
        segs = []
        for col, text in self._cells(c, names):
            sorted_col = col == self.sort_by
            segs.append(Segment(text, style + part("stranded--sorted") if sorted_col else style))
        return Strip(segs).adjust_cell_length(width, style)

    def render_empty(self, width: int, base: Style) -> Strip:
        style = base + self.get_component_rich_style("stranded--muted")
        return Strip([Segment(f" {self.empty_text}", style)]).adjust_cell_length(width, base)

    def render_row(self, item: Any, at_cursor: bool, width: int, base: Style) -> Strip:
        row: StrandedRow = item
        part = self.get_component_rich_style
        if at_cursor:
            base = self.cursor_style(base)
        c = self.columns(width)
        if row.is_husk:
            files, changes = "husk", "moved aside"
        elif row.is_fold:
            files, changes = "", ""
        elif row.files is None:
            files, changes = "?", "no stats"
        else:
            files, changes = str(row.files), f"+{row.insertions} −{row.deletions}"
        title = row.title if row.card else ("(card gone)" if row.card_id else "")
        if row.is_fold:
            title = f"{'▾' if row.opened else '▸'} {row.stat_text()} · {title}"
        elif row.attempt:
            title = f"  ↳ attempt · {title}"
        values = {
            "card": row.card_id or "—",
            "lane": row.lane or "—",
            "title": title,
            "tree": row.tree,
            "age": age_text(row.seconds),
            "files": files,
            "changes": changes,
        }
        segs = []
        for col, text in self._cells(c, values):
            style = base
            if col == "card":
                style = base + part("stranded--card", partial=True)
            elif col == "lane" and row.lane == GONE:
                style = base + part("stranded--gone", partial=True)
            elif col in ("files", "changes") and row.is_husk:
                style = base + part("stranded--husk", partial=True)
            elif col == "title" and (not row.card or row.is_fold or row.attempt):
                style = base + part("stranded--muted", partial=True)
            if col == "changes" and not row.is_husk and row.files is not None:
                plus, _, minus = text.partition(" ")
                segs.append(Segment(plus, base + part("stranded--add", partial=True)))
                segs.append(Segment(" " + minus, base + part("stranded--del", partial=True)))
                continue
            segs.append(Segment(text, style))
        return Strip(segs).adjust_cell_length(width, base)


# ---------------------------------------------------------------------------------------------
# the diff, streamed


_FILE_RE = re.compile(rb"^diff --git ", re.M)
_HUNK_RE = re.compile(rb"^@@", re.M)
_BINARY_RE = re.compile(rb"^Binary files ", re.M)
LONG_LINE = 1024 * 1024  # bytes without a newline before a line is kept as its head only
BLOCK_CACHE = 16
SYNC_S = 0.2  # the diff view redraws for new lines at most this often while git writes


def _decode(raw: bytes) -> str:
    """One diff line as text: long lines cut with a marker, and a CR kept (shown as ^M).

    A diff that only changes line endings must still show a difference.
    """
    if raw.endswith(b"\r"):
        return decode_line(raw[:-1], len(raw) - 1) + "\r"
    return decode_line(raw)


@dataclass(slots=True)
class DiffFile:
    """One file of the diff: where its header is, where its hunks start, its +/− so far."""

    line: int
    path: str
    hunk: int = -1
    added: int = 0
    deleted: int = 0
    binary: bool = False


def _header_path(header: bytes) -> str:
    """`diff --git a/x b/y` → `y` (sanitized); odd or quoted headers are shown as git wrote them."""
    text = decode_line(header)[len("diff --git ") :]
    cut = text.rfind(" b/")
    if cut >= 0 and text.startswith("a/"):
        return sanitize(text[cut + 3 :])
    return sanitize(text)


class DiffBuffer:
    """A diff's bytes as they stream in, readable by line number while they grow.

    Bytes arrive in chunks from the reader thread. Each chunk's whole lines become a block
    (one `bytes`); the index is the first line number of each block, so feeding a 50 MB,
    million-line diff costs a few C calls per 64 KB, not a Python call per line (which would
    starve the UI of the GIL). Lines are split out of a block only when drawn, and a few
    split blocks are cached. The files (`diff --git` headers) and their +/− counts are
    found per block with regular expressions and `count`, at the same C speed.
    """

    def __init__(self, on_grow: Callable[[], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._feed_lock = threading.Lock()  # git's reader and the preview feed in turn
        self._preview: bytes | None = None  # shown ahead of git, not yet all matched by it
        self._matched = 0  # bytes of the preview git has written the same
        self._git_started = False
        self.previewed = False  # a preview was shown (tests, status)
        self.generation = 0  # bumped when the lines are replaced: a viewer drops its cache
        self.on_grow = on_grow
        self._clear()
        self.done = False
        self.result: proc.Result | None = None
        self.error = ""

    def _clear(self) -> None:
        self._blocks: list[bytes] = []
        self._starts = array("q")
        self._count = 0
        self._pending = bytearray()
        self._long_head = bytearray()
        self._long_len = 0
        self._split: OrderedDict[int, list[bytes]] = OrderedDict()
        self.files: list[DiffFile] = []
        self._file_lines = array("q")
        self.bytes = 0

    @property
    def count(self) -> int:
        """Complete lines known (a partial last line counts once the diff has ended)."""
        return self._count

    # feeding (the reader thread) --------------------------------------------------------------

    @property
    def preview_replaced(self) -> bool:
        """git wrote something else than the preview showed: its bytes replaced it."""
        return self.generation > 0

    @property
    def previewing(self) -> bool:
        """Lines from a preview are shown that git has not yet written itself."""
        return self._preview is not None

    def preview(self, data: bytes) -> bool:
        """Show `data` (what git is expected to write first, `stranded.diff_preview`)
        before git writes anything; False if git has already begun, so it is not used."""
        with self._feed_lock:
            if self._git_started or self.done:
                return False
            self._preview = data
            self.previewed = True
            self._take(data)
        return True

    def feed(self, data: bytes) -> None:
        """Bytes as read from git. What a preview already showed is checked, not added
        again; at the first byte that differs, git's bytes replace the preview's lines."""
        with self._feed_lock:
            self._git_started = True
            shown = self._preview
            if shown is not None:
                n = min(len(data), len(shown) - self._matched)
                if data[:n] != shown[self._matched : self._matched + n]:
                    self._replace(shown[: self._matched] + data)
                    return
                self._matched += n
                if self._matched == len(shown):
                    self._preview = None
                data = data[n:]
            if data:
                self._take(data)

    def _replace(self, data: bytes) -> None:
        """Drop every line (the preview was wrong) and index `data`, git's own bytes."""
        self._preview = None
        with self._lock:
            self._clear()
            self.generation += 1
        self._take(data)
        if self.on_grow is not None:
            self.on_grow()

    def _take(self, data: bytes) -> None:
        """Whole lines are indexed at once, a partial line waits."""
        self.bytes += len(data)
        if self._long_len:
            nl = data.find(b"\n")
            if nl < 0:
                self._long_len += len(data)
                return
            self._long_len += nl
            text = decode_line(bytes(self._long_head), self._long_len)
            self._long_head.clear()
            self._long_len = 0
            self._add(text.encode("utf-8", "replace") + b"\n")
            data = data[nl + 1 :]
        buf = self._pending
        buf += data
        cut = buf.rfind(b"\n")
        if cut >= 0:
            block = bytes(buf[: cut + 1])
            del buf[: cut + 1]
            self._add(block)
        if len(buf) > LONG_LINE:  # a line with no end in sight: keep its head only
            self._long_head = bytearray(buf[: LINE_CAP // 2])
            self._long_len = len(buf)
            buf.clear()
        if cut >= 0 and self.on_grow is not None:
            self.on_grow()

    def finish(self, result: proc.Result | None = None, error: str = "") -> None:
        """The stream ended: the last partial line becomes a line; say how git ended."""
        with self._feed_lock:
            if self._preview is not None:  # git wrote less than the preview showed
                self._replace(self._preview[: self._matched])
            self._git_started = True
            self._finish(result, error)

    def _finish(self, result: proc.Result | None, error: str) -> None:
        if self._long_len:
            text = decode_line(bytes(self._long_head), self._long_len)
            self._add(text.encode("utf-8", "replace") + b"\n")
            self._long_head.clear()
            self._long_len = 0
        if self._pending:
            self._add(bytes(self._pending) + b"\n")
            self._pending.clear()
        self.result = result
        self.error = error
        self.done = True
        if self.on_grow is not None:
            self.on_grow()

    def _add(self, block: bytes) -> None:
        start = self._count
        self._index_files(block, start)
        with self._lock:
            self._blocks.append(block)
            self._starts.append(start)
            self._count = start + block.count(b"\n")

    def _index_files(self, block: bytes, start: int) -> None:
        """Find the files whose headers are in `block`, and count +/− lines per file."""
        heads = [m.start() for m in _FILE_RE.finditer(block)]
        bounds = [0, *heads, len(block)]
        line, pos = start, 0
        new_files = []
        for i in range(len(bounds) - 1):
            seg, end = bounds[i], bounds[i + 1]
            if i > 0:  # a new file starts at `seg`
                line += block.count(b"\n", pos, seg)
                pos = seg
                eol = block.find(b"\n", seg)
                new_files.append(DiffFile(line, _header_path(block[seg:eol])))
                current: DiffFile | None = new_files[-1]
            else:
                current = self.files[-1] if self.files else None
            if current is None or seg == end:
                continue
            body = seg
            if current.hunk < 0:
                if _BINARY_RE.search(block, seg, end):
                    current.binary = True
                hunk = _HUNK_RE.search(block, seg, end)
                if hunk is None:
                    continue
                body = hunk.start()
                current.hunk = line + block.count(b"\n", pos, body)
            first = block[body : body + 1]
            current.added += block.count(b"\n+", body, end) + (first == b"+")
            current.deleted += block.count(b"\n-", body, end) + (first == b"-")
        if new_files:
            with self._lock:
                self.files.extend(new_files)
                self._file_lines.extend(f.line for f in new_files)

    # reading (the UI thread) ----------------------------------------------------------------

    def _block_lines(self, b: int) -> list[bytes]:
        lines = self._split.get(b)
        if lines is None:
            lines = self._blocks[b].split(b"\n")
            self._split[b] = lines
            if len(self._split) > BLOCK_CACHE:
                self._split.popitem(last=False)
        else:
            self._split.move_to_end(b)
        return lines

    def lines(self, start: int, stop: int) -> list[str]:
        """Decoded text of lines `start..stop-1` (long lines cut with a marker, \\r dropped)."""
        with self._lock:
            stop = min(stop, self._count)
            start = max(0, start)
            if start >= stop:
                return []
            out: list[str] = []
            b = bisect.bisect_right(self._starts, start) - 1
            k = start
            while k < stop:
                first = self._starts[b]
                lines = self._block_lines(b)
                n = len(lines) - 1
                take = min(stop, first + n)
                out.extend(_decode(raw) for raw in lines[k - first : take - first])
                k = take
                b += 1
            return out

    def file_at(self, line: int) -> int:
        """Index of the file the line belongs to, -1 before the first file header."""
        with self._lock:
            return bisect.bisect_right(self._file_lines, line) - 1

    def in_header(self, line: int) -> bool:
        """True for the header lines of a file (`diff --git`, `index`, `---`, `+++`, …)."""
        with self._lock:  # one look: a replaced preview swaps the file list meanwhile
            i = bisect.bisect_right(self._file_lines, line) - 1
            if i < 0 or i >= len(self.files):
                return False
            f = self.files[i]
        return f.hunk < 0 or line < f.hunk


class DiffView(ScrollView, can_focus=True):
    """A diff of any length, drawn line by line while it streams in; colours by line kind.

    One `Strip` per visible row, an LRU cache of rendered lines; the buffer is read only
    for the rows on screen. Content is sanitized plain text; only the colour says what a
    line is, and every line keeps its own `+`/`-`/`@@` marker, so nothing needs colour.
    """

    ALLOW_SELECT = False
    BINDINGS = [
        Binding("down,j", "scroll_lines(1)", "down", show=False, id="diff.down"),
        Binding("up,k", "scroll_lines(-1)", "up", show=False, id="diff.up"),
        Binding("pagedown,space", "scroll_page(1)", "page down", show=False, id="diff.page_down"),
        Binding("pageup,b", "scroll_page(-1)", "page up", show=False, id="diff.page_up"),
        Binding("home,g", "scroll_end(0)", "top", show=False, id="diff.top"),
        Binding("end,G", "scroll_end(1)", "bottom", show=False, id="diff.bottom"),
        Binding("left,h", "columns(-8)", "left", show=False, id="diff.left"),
        Binding("right,l", "columns(8)", "right", show=False, id="diff.right"),
    ]
    COMPONENT_CLASSES = {"diff--add", "diff--del", "diff--hunk", "diff--file", "diff--meta"}
    DEFAULT_CSS = """
    DiffView {
        height: 1fr;
        background: $surface;
        color: $foreground;
        scrollbar-size-vertical: 1;
    }
    DiffView > .diff--add { color: $success; }
    DiffView > .diff--del { color: $error; }
    DiffView > .diff--hunk { color: $accent; }
    DiffView > .diff--file { color: $primary; text-style: bold; }
    DiffView > .diff--meta { color: $text-muted; text-style: bold; }
    """

    class Grew(Message, bubble=False):
        """The buffer grew (posted from the reader thread, at most one waiting at a time)."""

    class Status(Message):
        """Lines known, files, done: the screen updates its status line and file list."""

        def __init__(self, view: DiffView) -> None:
            super().__init__()
            self.view = view

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.buffer: DiffBuffer | None = None
        self._pending = False
        self._last_sync = 0.0
        self._sync_timer: Timer | None = None
        self._known = 0
        self._max_width = 0
        self._cache: LRUCache[int, Strip] = LRUCache(2048)
        self._rows_key: tuple[Any, ...] | None = None
        self._rows: list[Strip] = []
        self._generation = 0
        self.paint_count = 0
        self.painted_top = -1  # the first line id drawn at the last layout (tests, bench)
        self.painted_rows = 0  # how many diff lines that layout drew

    @property
    def line_count(self) -> int:
        return self._known

    @property
    def top_line(self) -> int:
        return int(self.scroll_y)

    def attach(self, buffer: DiffBuffer) -> None:
        """Show `buffer` (already or soon growing in another thread)."""
        self.buffer = buffer
        buffer.on_grow = self.notify_grew
        self._generation = buffer.generation
        self._known = buffer.count
        self._cache.clear()
        self._rows_key = None
        self._set_virtual()
        self.refresh()

    def notify_grew(self) -> None:
        """From the reader thread: tell the view, unless a notice is already waiting."""
        if not self._pending:
            self._pending = True
            self.post_message(self.Grew())

    def on_diff_view_grew(self, message: Grew) -> None:
        """Redraw for the new lines, at most every SYNC_S: keys stay quick while git writes.

        Lines arriving below the screen change only the scrollbar and the counts, so ten
        redraws a second are plenty; redrawing per chunk would queue keys behind repaints.
        """
        wait = self._last_sync + SYNC_S - time.monotonic()
        if wait <= 0:
            self._pending = False
            self.sync()
        elif self._sync_timer is None:  # `_pending` stays set: the reader waits for the timer
            self._sync_timer = self.set_timer(wait, self._timed_sync)

    def _timed_sync(self) -> None:
        self._sync_timer = None
        self._pending = False
        self.sync()

    def sync(self) -> None:
        """Take the buffer's current length and redraw."""
        if self.buffer is None:
            return
        if self.buffer.generation != self._generation:  # its lines were replaced
            self._forget()
        self._last_sync = time.monotonic()
        self._known = self.buffer.count
        self._set_virtual()
        self.refresh()
        self.post_message(self.Status(self))

    def _set_virtual(self) -> None:
        self.virtual_size = Size(self._max_width, self._known)

    def _forget(self) -> None:
        """Drop every cached line: the buffer's lines were replaced (a wrong preview)."""
        assert self.buffer is not None
        self._generation = self.buffer.generation
        self._known = min(self._known, self.buffer.count)
        self._cache.clear()
        self._rows_key = None
        self._max_width = 0

    def text_lines(self) -> list[str]:
        """The rows as drawn, as plain text (tests)."""
        return [strip.text for strip in self._layout()]

    # moving ---------------------------------------------------------------------------------

    def action_scroll_lines(self, delta: int) -> None:
        self.scroll_to(y=self.scroll_y + delta, animate=False, immediate=True)

    def action_scroll_page(self, direction: int) -> None:
        step = max(1, self.scrollable_content_region.height - 1)
        self.scroll_to(y=self.scroll_y + direction * step, animate=False, immediate=True)

    def action_scroll_end(self, end: int) -> None:
        self.scroll_to(y=self.max_scroll_y if end else 0, animate=False, immediate=True)

    def action_columns(self, delta: int) -> None:
        self.scroll_to(x=max(0, self.scroll_x + delta), animate=False, immediate=True)

    def show_line(self, line: int) -> None:
        self.scroll_to(y=line, animate=False, immediate=True, force=True)

    # drawing --------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        rows = self._layout()
        if y < len(rows):
            return rows[y]
        return Strip.blank(self.scrollable_content_region.width, self.rich_style)

    def _layout(self) -> list[Strip]:
        region = self.scrollable_content_region
        width, height = region.width, region.height
        base = self.rich_style
        top, x = int(self.scroll_y), int(self.scroll_x)
        if self.buffer is not None and self.buffer.generation != self._generation:
            self._forget()  # replaced since the last sync: no cached line of it is drawn
        key = (self._known, top, x, width, height, base)
        if key == self._rows_key:
            return self._rows
        strips: list[Strip] = []
        buffer = self.buffer
        if buffer is not None and width > 0 and height > 0:
            texts = buffer.lines(top, min(top + height, self._known))
            widest = self._max_width
            for k, text in enumerate(texts, top):
                strip = self._cache.get(k)
                if strip is None:
                    strip = self._render(k, text, base)
                    self._cache.set(k, strip)
                widest = max(widest, strip.cell_length)
                strips.append(strip.crop_extend(x, x + width, base))
            if widest > self._max_width:
                self._max_width = widest
                self.call_later(self._set_virtual)
            self.painted_rows = len(texts)
        self.painted_top = top
        self.paint_count += 1
        strips += [Strip.blank(width, base)] * (height - len(strips))
        self._rows_key, self._rows = key, strips
        return strips

    def _kind(self, k: int, text: str) -> str:
        assert self.buffer is not None
        if self.buffer.in_header(k):
            return "diff--file" if text.startswith("diff --git ") else "diff--meta"
        if text.startswith("@@"):
            return "diff--hunk"
        if text.startswith("+"):
            return "diff--add"
        if text.startswith("-"):
            return "diff--del"
        if text.startswith("\\"):
            return "diff--meta"
        return ""

    def _render(self, k: int, text: str, base: Style) -> Strip:
        kind = self._kind(k, text)
        style = base + self.get_component_rich_style(kind) if kind else base
        line = Text(sanitize(text), no_wrap=True, end="")  # plain text: never markup
        return Strip(line.render(self.app.console), line.cell_len).apply_style(style)


class FileList(LineList):
    """The diff's files with their +/−, growing while the diff loads; enter jumps to one."""

    COMPONENT_CLASSES = {"list--cursor", "list--cursor-blurred", "files--add", "files--del"}
    DEFAULT_CSS = """
    FileList {
        height: auto;
        max-height: 30%;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
        border-bottom: solid $panel;
        background: $background;
    }
    FileList > .list--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    FileList > .list--cursor-blurred { background: $panel; }
    FileList > .files--add { color: $success; }
    FileList > .files--del { color: $error; }
    """

    def key_of(self, item: Any) -> Any:
        return item.line

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        return max(1, len(self.items))

    def render_empty(self, width: int, base: Style) -> Strip:
        return Strip([Segment(" no files yet", base)]).adjust_cell_length(width, base)

    def render_row(self, item: Any, at_cursor: bool, width: int, base: Style) -> Strip:
        f: DiffFile = item
        part = self.get_component_rich_style
        if at_cursor:
            base = self.cursor_style(base)
        if f.binary:
            stats = [Segment(" binary", base)]
        else:
            stats = [
                Segment(f" +{f.added}", base + part("files--add", partial=True)),
                Segment(f" −{f.deleted}", base + part("files--del", partial=True)),
            ]
        room = width - 1 - sum(cell_len(s.text) for s in stats) - 1
        segs = [Segment(" " + _fit(f.path, max(room, 1)), base), *stats]
        return Strip(segs).adjust_cell_length(width, base)


class DiffScreen(Screen[None]):
    """A stranded branch against the base: its files, then its hunks, streamed as git writes."""

    BINDINGS = [
        Binding("escape", "back", "back", tooltip="back to the stranded list", id="diff.back"),
        Binding("tab", "switch_pane", "files/diff", tooltip="files or hunks", id="diff.pane"),
        Binding("enter", "open_file", "go to file", show=False, id="diff.open_file"),
        Binding("right_square_bracket", "file(1)", "next file", id="diff.next_file"),
        Binding("left_square_bracket", "file(-1)", "previous file", id="diff.prev_file"),
    ]

    class Ended(Message):
        """git finished (or could not start); the buffer says how."""

    def __init__(self, cfg: Config, row: StrandedRow) -> None:
        super().__init__()
        self.cfg = cfg
        self.row = row
        self.buffer = DiffBuffer()
        self._files_generation = 0
        self._pgid = 0
        self._left = threading.Event()
        self._footer = False

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="diff-title")
        yield FileList(id="diff-files")
        yield DiffView(id="diff-view")
        yield Static(Text("starting git diff…"), id="diff-status")

    def _title(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(self.row.label, "bold")
        text.append(f"  against {sanitize(_start_name(self.cfg))} · {self.row.stat_text()}")
        if self.row.card_id:
            text.append(f" · {self.row.card_id}")
            if self.row.title:
                text.append(f" “{self.row.title}”")
        return text

    @property
    def view(self) -> DiffView:
        return self.query_one(DiffView)

    @property
    def files(self) -> FileList:
        return self.query_one(FileList)

    def on_mount(self) -> None:
        self.view.attach(self.buffer)
        self.view.focus()
        self._stream()
        self._preview()

    def on_unmount(self) -> None:
        self._left.set()
        if self._pgid and not self.buffer.done:
            proc.kill_group(self._pgid)  # nobody is watching: git stops now

    @work(thread=True, exclusive=True, group="diff-stream", exit_on_error=False)
    def _stream(self) -> None:
        def started(pid: int) -> None:
            self._pgid = pid
            if self._left.is_set():
                proc.kill_group(pid)

        try:
            result = stranded.stream_diff(self.cfg, self.row.name, self.buffer.feed, started)
        except BoardError as exc:
            self.buffer.finish(None, exc.line())
        except Exception as exc:  # one line on the screen, never a traceback
            self.buffer.finish(None, f"internal error: {type(exc).__name__}: {exc}")
        else:
            self.buffer.finish(result)
        if not self._left.is_set():
            self.post_message(self.Ended())

    @work(thread=True, exclusive=True, group="diff-preview", exit_on_error=False)
    def _preview(self) -> None:
        """While git diffs a big new file, show its start from the blob (checked against
        git's bytes as they come, and replaced if they differ). Only ever a head start:
        if it cannot be had, git's own output is all there is."""
        try:
            data = stranded.diff_preview(self.cfg, self.row.name)
        except BoardError:
            return
        if data and not self._left.is_set():
            self.buffer.preview(data)

    async def _mount_footer(self) -> None:
        await self.mount(Footer(compact=True))
        self.refresh_bindings()  # a footer draws its keys when the bindings next change

    def on_diff_screen_ended(self, message: Ended) -> None:
        self.view.sync()

    def on_diff_view_status(self, message: DiffView.Status) -> None:
        if not self._footer:
            # after the first lines are on screen: the footer costs a restyle per key
            self._footer = True
            self.call_after_refresh(self._mount_footer)
        files = self.buffer.files
        replaced = self.buffer.generation != self._files_generation  # a preview was replaced
        if len(files) != len(self.files.items) or self.buffer.done or replaced:
            self._files_generation = self.buffer.generation
            self.files.set_items(files)
        else:
            self.files.refresh()  # the last file's counts grew
        self.query_one("#diff-status", Static).update(self.status_text())

    def status_text(self) -> Text:
        b = self.buffer
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        n = len(b.files)
        text.append(f"{b.count:,} lines · {n:,} file{'s' * (n != 1)}")
        if b.previewing:
            text.append(" · git is diffing; the new file's start is shown from it", "bold")
        elif not b.done:
            text.append(f" · reading… {b.bytes / 1e6:,.1f} MB", "bold")
        elif b.error:
            text.append(f" · {one_line(b.error)}", "bold red")
        elif b.result is not None and (b.result.returncode != 0 or b.result.timed_out):
            why = "timed out" if b.result.timed_out else f"exit {b.result.returncode}"
            text.append(f" · git diff failed ({why}): see its words above", "bold red")
        elif b.count == 0:
            text.append(f" · nothing differs from {sanitize(_start_name(self.cfg))}")
        else:
            text.append(" · all read")
        return text

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_switch_pane(self) -> None:
        if self.view.has_focus:
            self.files.focus()
        else:
            self.view.focus()

    def action_open_file(self) -> None:
        current = self.files.current
        if self.files.has_focus and current is not None:
            self.view.show_line(current.line)
            self.view.focus()

    def action_file(self, step: int) -> None:
        lines = [f.line for f in self.buffer.files]
        if not lines:
            return
        top = self.view.top_line
        if step > 0:
            i = bisect.bisect_right(lines, top)
            target = lines[i] if i < len(lines) else lines[-1]
        else:
            i = bisect.bisect_left(lines, top) - 1
            target = lines[max(i, 0)]
        self.view.show_line(target)
        index = lines.index(target)
        self.files.cursor = index


# ---------------------------------------------------------------------------------------------
# the pick target question


class TargetDialog(ModalScreen[str | None]):
    """Which branch to pick onto: the base by default; `esc` abandons."""

    BINDINGS = [Binding("escape", "abandon", "cancel", id="dialog.abandon")]
    DEFAULT_CSS = """
    TargetDialog {
        align: center middle;
        background: $background 60%;
    }
    TargetDialog #dialog {
        width: 72;
        max-width: 100%;
        height: auto;
        border: thick $primary;
        background: $surface;
        padding: 1 2;
    }
    TargetDialog #question { width: 1fr; margin-bottom: 1; }
    TargetDialog #target { width: 1fr; }
    TargetDialog #hint { color: $text-muted; margin-top: 1; }
    """

    def __init__(self, question: Text, default: str, hint: str) -> None:
        super().__init__()
        self.question = question
        self.default = default
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.question, id="question")
            field_ = Input(value=self.default, placeholder="branch", id="target")
            field_.cursor_blink = getattr(self.app, "cursor_blink", True)
            yield field_
            yield Static(Text(self.hint), id="hint")

    def on_mount(self) -> None:
        self.query_one("#target", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_abandon(self) -> None:
        self.dismiss(None)


# ---------------------------------------------------------------------------------------------
# the screen


class StrandedScreen(Screen[None]):
    """Every stranded branch and husk; one key to look, pick, salvage, discard or copy."""

    CSS_PATH = "stranded.tcss"
    BINDINGS = [
        Binding(
            "enter",
            "diff",
            "diff",
            tooltip="the branch against the base (on a fold of attempts: open or close it)",
            id="stranded.diff",
        ),
        Binding("p", "pick", "pick", tooltip="cherry-pick onto a branch", id="stranded.pick"),
        Binding(
            "S",
            "salvage",
            "salvage",
            tooltip="publish it through the gate, with no coder",
            id="stranded.salvage",
        ),
        Binding("d", "discard", "discard", tooltip="delete it (asks first)", id="stranded.discard"),
        Binding("y", "copy", "recovery", tooltip="copy the recovery commands", id="stranded.copy"),
        Binding("o", "open_card", "card", tooltip="the card's screen", id="stranded.open_card"),
        Binding(
            "slash", "filter", "filter", tooltip="card, title, tree, lane", id="stranded.filter"
        ),
        Binding("s", "sort", "sort", tooltip="next sort column", id="stranded.sort"),
        Binding(
            "r", "reverse", "reverse", show=False, tooltip="flip the order", id="stranded.reverse"
        ),
        Binding(
            "escape", "back", "back", tooltip="clear the filter, then back", id="stranded.back"
        ),
    ]

    class Loaded(Message):
        """Rows read in a worker."""

        def __init__(
            self,
            rows: list[StrandedRow],
            error: str,
            widths: dict[str, int],
            head_of: int | None = None,
        ) -> None:
            super().__init__()
            self.rows = rows
            self.error = error
            self.widths = widths
            self.head_of = head_of  # set: only the first screenful, of this many branches

    class Changed(Message):
        """The poll saw the refs, the stats file or the husks change (or looked first)."""

        def __init__(self, signature: Any) -> None:
            super().__init__()
            self.signature = signature

    class VerbDone(Message):
        def __init__(self, verb: str, outcome: Outcome) -> None:
            super().__init__()
            self.verb = verb
            self.outcome = outcome

    def __init__(
        self,
        cfg: Config,
        store: Store,
        *,
        card_id: str | None = None,
        clock: Callable[[], datetime] = _utc_now,
        poll_s: float = POLL_S,
    ) -> None:
        super().__init__()
        self.cfg = cfg
        self.store = store
        self.clock = clock
        self.poll_s = poll_s
        self.rows: list[StrandedRow] = []
        self.widths: dict[str, int] | None = None
        self.card_only = card_id or ""  # the card screen opens the list on one card's saves
        self.opened: set[str] = set()  # cards whose fold of failed attempts is open
        self.filter_words: list[str] = []
        self.loaded = False
        self.load_count = 0
        self.busy = ""
        self.result_lines: list[str] = []
        self._signature: Any = None
        self._common: Path | None = None
        self._polling = False
        self.head_of: int | None = None  # while only the first screenful is shown: branches
        self._footer = False
        self._head_painted = threading.Event()
        self._head: Future[tuple[list[StrandedRow], int] | None] | None = Future()
        self._first: Future[list[StrandedRow]] | None = self._start_first_read(self._head)

    def _head_count(self) -> int:
        """Rows enough to fill the screen (the terminal's height), before the rest is read."""
        try:
            return max(FIRST_ROWS, self.app.size.height - 3)
        except Exception:  # no app yet: a tall terminal's worth
            return 3 * FIRST_ROWS

    def _start_first_read(
        self, head: Future[tuple[list[StrandedRow], int] | None]
    ) -> Future[list[StrandedRow]]:
        """Read the list in a thread now, while the screen mounts (as the app's board does).

        One `git for-each-ref`; the newest screenful (the age order is in the ref names) is
        handed over first with its stats and cards looked up for those rows only, and the
        whole list is built once that screenful is painted, so it does not compete with
        the first paint for the interpreter.
        """
        future: Future[list[StrandedRow]] = Future()
        count = self._head_count()

        def read() -> None:
            try:
                now = self.clock()
                if self.card_only:  # one card's saves: not the newest screenful of all
                    head.set_result(None)
                else:
                    newest = stranded.read_refs(self.cfg, newest=count)
                    head.set_result((first_rows(self.cfg, self.store, now, newest, count), count))
                    self._head_painted.wait(FILL_WAIT_S)
                future.set_result(load_rows(self.cfg, self.store, now))
            except BaseException as exc:  # handed to the loader, which says it in one line
                if not head.done():
                    head.set_result(None)
                future.set_exception(exc)

        threading.Thread(target=read, name="stranded-first-read", daemon=True).start()
        return future

    # layout ---------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(Text("stranded work  loading…"), id="stranded-title")
        yield StrandedTable(id="stranded-table")
        yield Static(Text(""), id="stranded-detail")
        # the result panel and the filter field are mounted when first needed (fewer
        # widgets to style and lay out before the first paint)
        yield StatusLine(id="status")

    def _take_head(self, timeout: float) -> tuple[list[StrandedRow], int] | None:
        """The newest screenful if it is read within `timeout` (else the loader posts it).

        Waiting here, for a read that takes a few milliseconds, lets the first frame show
        rows instead of "loading…", and the reader runs without competing for the
        interpreter with the mounting widgets; a slow read does not hold the screen longer.
        """
        head = self._head
        if head is None:
            return None
        try:
            got = head.result(timeout=timeout)
        except TimeoutError:
            return None
        self._head = None
        return got

    @property
    def table(self) -> StrandedTable:
        return self.query_one(StrandedTable)

    def on_mount(self) -> None:
        self.table.focus()
        early = self._take_head(HEAD_WAIT_S)
        if early is not None:
            rows, self.head_of = early
            self.rows, self.widths = rows, content_widths(rows)
            self._show()
            self.table.on_painted = self._head_drawn
        self.reload()  # the rest of the first read (or all of it) comes through the loader
        last = getattr(self.app, "last_status", ("", False))
        self.query_one(StatusLine).show(last[0] or HINT, last[1])
        if self.poll_s > 0:
            self.set_interval(self.poll_s, self._poll, name="stranded-watch")

    def _say(self, text: str, error: bool = False) -> None:
        say = getattr(self.app, "say", None)
        if say is not None:
            say(text, error)
        else:
            self.query_one(StatusLine).show(text, error)

    # loading --------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the list again (the app calls this after any store change, too)."""
        self._load()

    @work(thread=True, exclusive=True, group="stranded-load", exit_on_error=False)
    def _load(self) -> None:
        worker = get_current_worker()
        error = ""
        rows: list[StrandedRow] = []
        first, self._first = self._first, None
        head, self._head = self._head, None
        got = head.result() if head is not None else None
        if got is not None and not worker.is_cancelled:
            self.post_message(self.Loaded(got[0], "", content_widths(got[0]), head_of=got[1]))
        try:
            rows = first.result() if first else load_rows(self.cfg, self.store, self.clock())
        except BoardError as exc:
            error = exc.line()
        except Exception as exc:  # one line, never a traceback
            error = f"stranded list: internal error: {type(exc).__name__}: {exc}"
        if not worker.is_cancelled:
            self.post_message(self.Loaded(rows, error, content_widths(rows)))

    def on_stranded_screen_loaded(self, message: Loaded) -> None:
        if message.head_of is not None:  # the first screenful; the rest follows
            if not self.loaded:
                self.rows = message.rows
                self.widths = message.widths
                self.head_of = message.head_of
                self._show()
                self.table.on_painted = self._head_drawn
            else:
                self._head_painted.set()
            return
        if message.error:
            self._say(message.error, True)
            if self.loaded:
                return
        self.rows = message.rows
        self.widths = message.widths
        self.head_of = None
        self.loaded = True
        self.load_count += 1
        self._show()
        if not self._footer:
            self.table.on_painted = self._rows_painted

    def _head_drawn(self) -> None:
        """The newest rows are being drawn: once the frame is out, build the whole list."""
        self.call_later(self._head_painted.set)

    def _rows_painted(self) -> None:
        """The whole list is being drawn: now the footer.

        The footer restyles a widget per key each time the bindings change (~60 ms here);
        it comes after the rows are on screen, not before.
        """
        self._head_painted.set()
        if not self._footer:
            self._footer = True
            self.call_later(self._mount_footer)

    async def _mount_footer(self) -> None:
        await self.mount(Footer(compact=True))
        self.refresh_bindings()  # a footer draws its keys when the bindings next change

    def _poll(self) -> None:
        if not self._polling and self.loaded:
            self._polling = True
            self._check()

    @work(thread=True, group="stranded-watch", exit_on_error=False)
    def _check(self) -> None:
        """Stat the refs; reload when they changed since the last look.

        The fingerprint is taken here, not before the first read (2,000 stat calls would
        delay the first paint), so the first look always reloads once: a save that landed
        between the first read and the first look is never missed.
        """
        try:
            if self._common is None:
                self._common = naming.common_dir(self.cfg)
            signature = refs_signature(self.cfg, self._common)
        except BoardError as exc:
            signature = ("unreadable", exc.line())
        finally:
            self._polling = False
        if self._signature is None or signature != self._signature:
            self.post_message(self.Changed(signature))

    def on_stranded_screen_changed(self, message: Changed) -> None:
        self._signature = message.signature
        self.reload()

    def _show(self) -> None:
        """Filter and sort the rows into the table; the cursor stays on its branch."""
        table = self.table
        shown = [
            r
            for r in self.rows
            if matches(r, self.filter_words) and (not self.card_only or r.card_id == self.card_only)
        ]
        table.empty_text = (
            "nothing matches the filter"
            if self.rows
            else "no stranded branches or husks: nothing was left behind"
        )
        sorted_rows = sort_rows(shown, table.sort_by, table.reverse)
        table.set_items(fold_attempts(sorted_rows, self.opened), self.widths)
        branches = sum(1 for r in self.rows if not r.is_husk)
        attempts = sum(1 for r in self.rows if r.attempt)
        husks = len(self.rows) - branches
        title = Text(no_wrap=True, overflow="ellipsis", end="")
        title.append("stranded work", "bold")
        if self.head_of is not None:
            title.append(f"  the newest {branches:,} branch{'es' * (branches != 1)} (reading all…)")
        else:
            title.append(f"  {branches:,} branch{'es' * (branches != 1)}")
            if attempts:
                title.append(f" ({attempts:,} failed attempt{'s' * (attempts != 1)})")
            title.append(f" · {husks:,} husk" + "s" * (husks != 1))
        if self.filter_words or self.card_only:
            title.append(f" · {len(shown):,} shown")
        if self.card_only:
            title.append(f" · card {one_line(self.card_only)}")
        if self.filter_words:
            title.append(f" · filter: {one_line(' '.join(self.filter_words))}")
        title.append(f" · sort: {table.sort_by}{' reversed' * table.reverse}")
        self.query_one("#stranded-title", Static).update(title)
        self._show_detail()

    def on_line_list_moved(self, message: LineList.Moved) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        row = self.current_row()
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if row is not None:
            text.append(row.describe())
        self.query_one("#stranded-detail", Static).update(text)

    def _show_result(self, title: str, lines: Sequence[str]) -> None:
        found = self.query("#stranded-result")
        if found:
            panel = found.first(Static)
        else:
            panel = Static(Text(""), id="stranded-result")
            self.mount(panel, after=self.query_one("#stranded-detail"))
        self.result_lines = [title, *lines]
        panel.update(Text("\n".join(one_line(x) for x in self.result_lines)))
        panel.display = True

    # selection ------------------------------------------------------------------------------

    def current_row(self) -> StrandedRow | None:
        return self.table.current

    def current_card(self) -> Card | None:
        """The selected row's card (the palette offers its verbs)."""
        row = self.current_row()
        return row.card if row else None

    def _selected(self, verb: str) -> StrandedRow | None:
        row = self.current_row()
        if row is None:
            self._say(f"{verb}: nothing selected", True)
        elif row.is_fold and verb != "open":
            self._say(
                f"{verb}: {row.stat_text()} of {row.card_id} are folded here; enter opens "
                "them, then choose one",
                True,
            )
            return None
        return row

    # keys -----------------------------------------------------------------------------------

    def action_sort(self) -> None:
        table = self.table
        table.sort_by = SORTS[(SORTS.index(table.sort_by) + 1) % len(SORTS)]
        table.reverse = False
        self._show()

    def action_reverse(self) -> None:
        self.table.reverse = not self.table.reverse
        self._show()

    def _filter_field(self) -> Input | None:
        found = self.query("#stranded-filter")
        return found.first(Input) if found else None

    async def action_filter(self) -> None:
        field_ = self._filter_field()
        if field_ is None:
            field_ = Input(placeholder="filter: card, title, tree, lane", id="stranded-filter")
            field_.cursor_blink = getattr(self.app, "cursor_blink", True)
            await self.mount(field_, before=self.query_one(StatusLine))
        field_.display = True
        field_.focus()

    @on(Input.Changed, "#stranded-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_words = event.value.lower().split()
        self._show()

    @on(Input.Submitted, "#stranded-filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            event.input.display = False
        self.table.focus()

    def action_back(self) -> None:
        field_ = self._filter_field()
        shown = field_ is not None and field_.display
        if shown or self.filter_words or self.card_only:
            if field_ is not None:
                field_.value = ""
                field_.display = False
            self.filter_words = []
            self.card_only = ""
            self._show()
            self.table.focus()
            return
        self.app.pop_screen()

    def action_diff(self) -> None:
        row = self.current_row()
        if row is not None and row.is_fold:
            self.toggle_fold(row)
            return
        row = self._selected("diff")
        if row is None:
            return
        if row.is_husk:
            self._say(f"{row.label} is a husk (a directory), not a branch: y shows how to reach it")
            return
        self.app.push_screen(DiffScreen(self.cfg, row))

    def toggle_fold(self, row: StrandedRow) -> None:
        """Open or close a card's fold of failed attempts; the cursor stays on the fold."""
        if row.card_id in self.opened:
            self.opened.discard(row.card_id)
        else:
            self.opened.add(row.card_id)
        self._show()
        verb = "opened" if row.card_id in self.opened else "closed"
        self._say(f"{verb} the {row.stat_text()} of {row.card_id}")

    def action_open_card(self) -> None:
        row = self._selected("open")
        if row is None:
            return
        if row.card is None:
            why = "is no longer on the board" if row.card_id else "names no card"
            self._say(f"{row.label}: {row.card_id or 'its tree'} {why}", True)
            return
        from .card import CardScreen

        self.app.push_screen(CardScreen(row.card.id))

    def action_copy(self) -> None:
        row = self._selected("copy")
        if row is None:
            return
        commands = recovery_commands(self.cfg, row)
        self.app.copy_to_clipboard("\n".join(commands) + "\n")
        self._show_result("recovery commands (copied to the clipboard where the terminal allows):",
                          commands)  # fmt: skip
        self._say(f"copied the recovery commands for {row.label} (also shown above)")

    def action_pick(self) -> None:
        row = self._selected("pick")
        if row is None or not self._free("pick"):
            return
        if row.is_husk:
            self._say(f"{row.label} is a husk: it has no commits to pick (y shows its path)", True)
            return
        question = Text()
        question.append("Cherry-pick ")
        question.append(row.label, "bold")
        question.append(f" ({row.stat_text()}) onto which branch?")
        default, why_not = pick.default_target(self.cfg)
        hint = "enter picks · esc cancels · a branch checked out anywhere is refused"
        if why_not:
            hint += f" ({one_line(why_not)}, so no branch is filled in)"
        titles = pick.titles_from(self.store)

        def answered(target: str | None) -> None:
            if target is None:
                self._say(f"pick {row.label}: not done (abandoned)")
                return
            self._run_verb(
                "pick",
                row,
                lambda: pick_outcome(pick.pick(self.cfg, row.name, onto=target, title_of=titles)),
            )

        self.app.push_screen(TargetDialog(question, default, hint), answered)

    def action_salvage(self) -> None:
        row = self._selected("salvage")
        if row is None or not self._free("salvage"):
            return
        if row.is_husk:
            self._say(f"{row.label} is a husk: salvage publishes branches (y shows its path)", True)
            return
        self._say(f"salvaging {row.label}: running the gate…")
        self._run_verb(
            "salvage",
            row,
            lambda: salvage_outcome(operator.salvage(self.store, self.cfg, row.name)),
        )

    def action_discard(self) -> None:
        row = self._selected("discard")
        if row is None or not self._free("discard"):
            return
        question = Text()
        question.append("Discard ")
        question.append(row.describe(), "bold")
        question.append("?\n")
        if row.is_husk:
            question.append(
                "The directory and every byte in it are deleted. This cannot be undone."
            )
        else:
            question.append(
                "The branch is deleted: its work is gone for good. It cannot be undone."
            )

        def confirmed(yes: bool | None) -> None:
            if not yes:
                self._say(f"discard {row.label}: not done (you said no)")
                return

            def call() -> Outcome:
                target = pick.discard(self.cfg, row.name)
                what = f"stranded branch {row.label}" if target.kind == "branch" else row.describe()
                return Outcome(f"discarded {what}")

            self._run_verb("discard", row, call)

        self.app.push_screen(ConfirmDialog(question, "Yes, discard it"), confirmed)

    # running a verb -------------------------------------------------------------------------

    def _free(self, verb: str) -> bool:
        if self.busy:
            self._say(f"{verb}: wait, {self.busy} is still running", True)
            return False
        return True

    def _run_verb(self, verb: str, row: StrandedRow, call: Callable[[], Outcome]) -> None:
        self.busy = f"{verb} of {row.label}"
        self._verb_worker(verb, row.label, call)

    @work(thread=True, group="stranded-verb", exit_on_error=False)
    def _verb_worker(self, verb: str, label: str, call: Callable[[], Outcome]) -> None:
        try:
            outcome = call()
        except BoardError as exc:
            outcome = Outcome(exc.line(), error=True)
        except Exception as exc:  # one line on the operator's screen, never a traceback
            outcome = Outcome(
                f"{verb} {label}: internal error: {type(exc).__name__}: {exc}", error=True
            )
        if self.is_attached:
            self.post_message(self.VerbDone(verb, outcome))
        else:  # the operator left the screen meanwhile: the result still gets said
            say = getattr(self.app, "say", None)
            if say is not None:
                self.app.call_from_thread(say, outcome.line, outcome.error)

    def on_stranded_screen_verb_done(self, message: VerbDone) -> None:
        self.busy = ""
        outcome = message.outcome
        self._say(outcome.line, outcome.error)
        if outcome.details:
            self._show_result(f"{message.verb}:", outcome.details)
        self.reload()


def binding_classes() -> list[type]:
    """The classes whose bindings this module adds (for `[tui.keys]` ids)."""
    return [StrandedScreen, LineList, DiffView, DiffScreen, TargetDialog]


__all__ = [
    "DiffBuffer",
    "DiffScreen",
    "DiffView",
    "FileList",
    "StrandedRow",
    "StrandedScreen",
    "StrandedTable",
    "TargetDialog",
    "age_text",
    "binding_classes",
    "load_rows",
    "pick_outcome",
    "recovery_commands",
    "salvage_outcome",
    "sort_rows",
]

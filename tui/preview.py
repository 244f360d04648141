"""The preview beside the lanes (`v`; on by default from 140 columns): the selected card's
full title, its block, its drive, its tree's diffstat against its start point, and the
last lines of its log, following while it grows.

claude-squad and agent-deck put the selected agent's live output beside the list, and an
operator of a fleet watches that rather than opening each card. Everything it shows is read
in a worker (the log's tail, the last drive, the tree's snapshot), never on the UI thread:
the cursor moves at the lanes' speed and the preview catches up. The log is read from its
end, a bounded tail, so a coder writing 50,000 lines a second costs the preview what one
writing a line a minute does; the tree's diffstat (a few git processes) is read at most
every TREE_EVERY_S while the same card stays selected.
"""

from __future__ import annotations

import time
from pathlib import Path

from board.core.config import Config
from board.core.errors import BoardError
from board.core.model import Card
from board.core.records import Frozen, field
from board.core.store import Store
from rich.console import Group, RenderableType
from rich.text import Text
from textual.widget import Widget

from .health import LiveDrive
from .painttext import one_line, sanitize

TAIL_LINES = 200  # read from the log's end; the pane shows what fits
TREE_EVERY_S = 3.0  # how often a selected card's tree diffstat is read again


class PreviewData(Frozen, slots=True):
    """What the preview shows of one card, read at one moment."""

    card: str
    version: int
    head: list[tuple[str, str]]  # (text, style) lines above the log
    tree: str  # the tree's diffstat line, or why there is none
    log_name: str
    log: list[str] = field(default_factory=list)
    tree_read_at: float = 0.0  # time.monotonic() of the diffstat's reading


def card_head(card: Card, live: LiveDrive | None, last_drive: str) -> list[tuple[str, str]]:
    """The lines above the log: id and full title, lane and block, the drive."""
    lines = [(f"{card.id}  {sanitize(card.title)}", "bold")]
    lane = f"lane {card.lane}"
    if card.blocked is not None:
        lines.append((f"{lane} · blocked {one_line(card.blocked.cls)}", "warn"))
        lines.append((one_line(card.blocked.reason), ""))
    else:
        lines.append((lane, ""))
    if live is not None:
        lines.append((f"drive {live.text()}", ""))
    elif last_drive:
        lines.append((last_drive, "dim"))
    return lines


def read_preview(
    cfg: Config,
    store: Store,
    card: Card,
    live: LiveDrive | None,
    previous: PreviewData | None = None,
) -> PreviewData:
    """Read what the preview shows of `card` (in a worker): the log's tail each time, the
    tree's diffstat when it is older than TREE_EVERY_S or the card changed."""
    # here, not at the top: the first paint does not read a log (the preview reads it once
    # the cursor rests), and the log modules were a hundredth of the board's own imports
    from board.core.logs import latest_log, split_stamp, tail_lines

    last_drive = ""
    log_path: Path | None = None
    try:
        drives = store.list_drives(card.id, limit=1)
    except BoardError as exc:
        drives = []
        last_drive = f"drives: {exc.line()}"
    if drives:
        row = drives[0]
        from .logs.drivelist import drive_path

        log_path = drive_path(cfg, row)
        if not row.live:
            said = f": {one_line(row.result)}" if row.result else ""
            last_drive = f"last drive {row.tier} #{row.attempt} {row.status}{said}"
    else:
        try:
            log_path = latest_log(cfg, card.id)
        except BoardError:
            log_path = None
    log = []
    if log_path is not None:
        log = [one_line(split_stamp(line)[1]) for line in tail_lines(log_path, TAIL_LINES)]
    now = time.monotonic()
    same = previous is not None and previous.card == card.id
    if same and previous is not None and now - previous.tree_read_at < TREE_EVERY_S:
        tree, read_at = previous.tree, previous.tree_read_at
    else:
        tree, read_at = tree_line(cfg, card), now
    return PreviewData(
        card=card.id,
        version=card.version,
        head=card_head(card, live, last_drive),
        tree=tree,
        log_name=log_path.name if log_path is not None else "",
        log=log,
        tree_read_at=read_at,
    )


def tree_line(cfg: Config, card: Card) -> str:
    """`tree: 3 files changed, +40 -2 against board/run`, or that it has no tree."""
    from board.core.git import naming
    from board.core.git.snapshot import unpublished_work

    try:
        tree = naming.card_worktree(cfg, card.id, card.branch)
        if tree is None:
            return "no tree"
        work = unpublished_work(cfg, tree)
    except BoardError as exc:
        return f"tree: {exc.line()}"
    against = f" against {work.base_ref}" if work.base_ref else ""
    return f"tree: {work.stats.text()}{against}"


class Preview(Widget):
    """The pane: the card's head lines, its tree, then as much of the log's tail as fits."""

    COMPONENT_CLASSES = {"preview--warn", "preview--dim", "preview--rule"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data: PreviewData | None = None
        # nothing until the board says what is selected (the first paint comes before its
        # card's read, with that card under the cursor)
        self.empty = ""

    def show(self, data: PreviewData | None, empty: str = "no card selected") -> None:
        self.data, self.empty = data, empty
        self.refresh()

    def _style(self, kind: str) -> str:
        if kind == "bold":
            return "bold"
        if kind in ("warn", "dim"):
            return str(self.get_component_rich_style(f"preview--{kind}"))
        return ""

    def render(self) -> RenderableType:
        data = self.data
        if data is None:
            return Text(self.empty, style=self._style("dim"))
        width = max(1, self.size.width)
        parts: list[Text] = []
        title, *rest = data.head
        parts.append(Text(title[0], style=self._style(title[1])))  # the full title, wrapped
        for text, kind in rest:
            parts.append(Text(text, style=self._style(kind), no_wrap=True, overflow="ellipsis"))
        parts.append(Text(data.tree, style=self._style("dim"), no_wrap=True, overflow="ellipsis"))
        rule = f"── {data.log_name or 'no log yet'} "
        parts.append(Text(rule + "─" * max(0, width - len(rule)), style=self._style("dim")))
        used = sum(len(p.wrap(self.app.console, width)) for p in parts)
        room = max(0, self.size.height - used)
        for line in data.log[-room:] if room else []:
            parts.append(Text(line, no_wrap=True, overflow="ellipsis"))
        return Group(*parts)


__all__ = ["Preview", "PreviewData", "card_head", "read_preview", "tree_line"]

"""The stranded list, drawn with the line API: card, lane, title, tree, age, files, +/−.

2,000 branches cost a list, not widgets (`StrandedTable` is a `LineList`). The column
widths the rows need are measured in the worker that read them (`content_widths`), so the
UI thread only fits each row's cells to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from board.core.records import Frozen
from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from ..widgets import LineList
from .strandrows import GONE, StrandedRow, age_text


def fit(text: str, width: int, right: bool = False) -> str:
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


class _Columns(Frozen):
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
            ("card", fit(values["card"], c.card)),
            ("", " "),
            ("lane", fit(values["lane"], c.lane)),
            ("", " "),
            ("title", fit(values["title"], c.title)),
            ("", " "),
            ("tree", fit(values["tree"], c.tree)),
            ("", " "),
            ("age", fit(values["age"], c.age, right=True)),
            ("", " "),
            ("files", fit(values["files"], c.files, right=True)),
            ("", " "),
            ("changes", fit(values["changes"], c.changes)),
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
        elif row.foreign:
            files, changes = "-", "not a save"
        elif row.files is None:
            files, changes = "?", "no stats"
        else:
            files, changes = str(row.files), f"+{row.insertions} −{row.deletions}"
        title = row.title if row.card else ("(card gone)" if row.card_id else "")
        if row.is_fold:
            title = f"{'▾' if row.opened else '▸'} {row.stat_text()} · {title}"
        elif row.attempt:
            title = f"  ↳ attempt · {title}"
        elif row.candidate:
            title = f"  ↳ candidate · {title}"
        elif row.foreign:
            title = f"not made by the board · {title}"
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
            elif col == "title" and (not row.card or row.is_fold or row.attempt or row.candidate):
                style = base + part("stranded--muted", partial=True)
            if col == "changes" and not row.is_husk and row.files is not None:
                plus, _, minus = text.partition(" ")
                segs.append(Segment(plus, base + part("stranded--add", partial=True)))
                segs.append(Segment(" " + minus, base + part("stranded--del", partial=True)))
                continue
            segs.append(Segment(text, style))
        return Strip(segs).adjust_cell_length(width, base)

"""The diff drawn while it streams in, and its files with their +/−.

`DiffView` pages the first screen while git is still writing and redraws for new lines
at most five times a second, so keys are not queued behind repaints. `FileList` grows
with the diff; enter on a file jumps to it.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from typing import Any

from board.core.safetext import sanitize
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.timer import Timer

from ..lines import LineView
from ..movement import EDGES, movement_bindings
from ..widgets import LineList
from .buffer import DiffBuffer, DiffFile
from .table import fit

PAGE_MOVES_DIFF = {
    "down": "scroll_lines(1)",
    "up": "scroll_lines(-1)",
    "page_down": "scroll_page(1)",
    "page_up": "scroll_page(-1)",
    "first": "scroll_edge(0)",
    "last": "scroll_edge(1)",
}

SYNC_S = 0.2  # the diff view redraws for new lines at most this often while git writes


class DiffView(LineView):
    """A diff of any length, drawn line by line while it streams in; colours by line kind.

    One `Strip` per visible row, an LRU cache of rendered lines keyed by line number (a
    `LineView`); the buffer is read only for the rows on screen. Content is sanitized
    plain text; only the colour says what a line is, and every line keeps its own
    `+`/`-`/`@@` marker, so nothing needs colour.
    """

    ALLOW_SELECT = False
    LINE_CACHE = 2048
    BINDINGS = [
        *movement_bindings("diff", PAGE_MOVES_DIFF, ids=EDGES, said=EDGES, reader=True),
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
        self._generation = 0
        self.painted_top = -1  # the first line id drawn at the last layout (tests, bench)
        self.painted_rows = 0  # how many diff lines that layout drew

    @property
    def line_count(self) -> int:
        return self._known

    @property
    def virtual_lines(self) -> int:
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
        self.line_cache.clear()
        self.forget_frame()
        self.update_virtual_size()
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
        """Take the buffer's current length; redraw the rows only if the ones on screen
        changed (lines arriving below it move only the scrollbar, which redraws itself)."""
        if self.buffer is None:
            return
        replaced = self.buffer.generation != self._generation
        if replaced:  # its lines were replaced
            self._forget()
        self._last_sync = time.monotonic()
        bottom = int(self.scroll_y) + self.scrollable_content_region.height
        shown = min(self._known, bottom)
        self._known = self.buffer.count
        self.grow_virtual_size()  # the view fills its container: no layout
        if replaced or min(self._known, bottom) != shown or not self.size:
            self.refresh()
        self.post_message(self.Status(self))

    def _forget(self) -> None:
        """Drop every cached line: the buffer's lines were replaced (a wrong preview)."""
        assert self.buffer is not None
        self._generation = self.buffer.generation
        self._known = min(self._known, self.buffer.count)
        self.forget_lines()

    def text_lines(self) -> list[str]:
        """The rows as drawn, as plain text (tests)."""
        return [strip.text for strip in self.frame()]

    # moving ---------------------------------------------------------------------------------

    def keys_first(self) -> None:
        """A moving key: while git still writes, its output waits a moment (`DiffBuffer.hold`)
        so that the keys that follow are answered at idle speed."""
        if self.buffer is not None and not self.buffer.done:
            self.buffer.hold()

    def action_scroll_lines(self, delta: int) -> None:
        self.keys_first()
        self.scroll_to(y=self.scroll_y + delta, animate=False, immediate=True)

    def action_scroll_page(self, direction: int) -> None:
        self.keys_first()
        step = max(1, self.scrollable_content_region.height - 1)
        self.scroll_to(y=self.scroll_y + direction * step, animate=False, immediate=True)

    def action_scroll_edge(self, end: int) -> None:
        self.keys_first()
        self.scroll_to(y=self.max_scroll_y if end else 0, animate=False, immediate=True)

    def action_columns(self, delta: int) -> None:
        self.keys_first()
        self.scroll_to(x=max(0, self.scroll_x + delta), animate=False, immediate=True)

    def show_line(self, line: int) -> None:
        self.keys_first()
        self.scroll_to(y=line, animate=False, immediate=True, force=True)

    # drawing --------------------------------------------------------------------------------

    def frame(self) -> list[Strip]:
        if self.buffer is not None and self.buffer.generation != self._generation:
            self._forget()  # replaced since the last sync: no cached line of it is drawn
        return super().frame()

    def frame_key(self, width: int, height: int, base: Style) -> Hashable:
        # the lines known as far as the screen reaches: more of them below it changes nothing
        top = int(self.scroll_y)
        shown = min(self._known, top + height)
        return (shown, self._generation, top, int(self.scroll_x), width, height, base)

    def draw_frame(self, width: int, height: int, base: Style) -> list[Strip]:
        strips: list[Strip] = []
        top = int(self.scroll_y)
        buffer = self.buffer
        if buffer is not None and width > 0 and height > 0:
            texts = buffer.lines(top, min(top + height, self._known))
            strips = self.draw_lines(top, texts, width, base, self._line)
            self.painted_rows = len(texts)
        self.painted_top = top
        return strips

    def _line(self, k: int, text: str, base: Style) -> Strip:
        """Diff line `k`, rendered once (the cache is keyed by line number)."""
        strip = self.line_cache.get(k)
        if strip is None:
            strip = self._render_text(k, text, base)
            self.line_cache.set(k, strip)
        return strip

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

    def _render_text(self, k: int, text: str, base: Style) -> Strip:
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

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._grow_only = False
        self._reserved = 0

    def key_of(self, item: Any) -> Any:
        return item.line

    def reserve(self, rows: int) -> None:
        """Take the height of `rows` files before they arrive (a save's recorded count).

        The list's height is its rows up to a cap, so each file that streams in would lay
        the whole screen out again (13 ms at 120x40), and an operator's first keys, pressed
        as the diff opens, waited behind those layouts. 0 when the diff has ended: a count
        that was wrong costs one layout then, never a wrong list.
        """
        before = self._rows(len(self.items))
        self._reserved = max(0, rows)
        if self.is_mounted and self._rows(len(self.items)) != before:
            self.refresh(layout=True)

    def _rows(self, items: int) -> int:
        return max(1, items, self._reserved)

    def set_items(self, items: Sequence[Any]) -> None:
        """A list whose height does not change (its reserved rows, or at its cap and only
        growing) keeps it without a layout."""
        old, new = self._rows(len(self.items)), self._rows(len(items))
        at_cap = self.scrollable_content_region.height < old <= new
        self._grow_only = old == new or at_cap
        super().set_items(items)

    def update_virtual_size(self) -> None:
        if self._grow_only:
            self.grow_virtual_size()
        else:
            super().update_virtual_size()

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        return self._rows(len(self.items))

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
        segs = [Segment(" " + fit(f.path, max(room, 1)), base), *stats]
        return Strip(segs).adjust_cell_length(width, base)

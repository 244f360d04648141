"""Widgets shared by the screens: the lane (line API), the header, the status line, and
literal text.

Everything a user or a coder wrote (titles, specs, reasons, labels, comments) reaches
the screen through `sanitize`/`literal` as plain `Text`, never as a markup string, so
`[@click=app.quit]` is just characters and an escape sequence is shown, not obeyed
(invariant 5).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from board.core.model import SELF_HEALING, Card, UsageSum
from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.geometry import Region
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from .boarddata import Row, one_line, sanitize
from .health import Health, header_parts
from .lines import LineView
from .movement import movement_bindings

# a list's movements: its cursor's actions (LineList)
LIST_MOVES = {
    "down": "move(1)",
    "up": "move(-1)",
    "page_down": "page(1)",
    "page_up": "page(-1)",
    "first": "jump(0)",
    "last": "jump(-1)",
}

# -- literal text ---------------------------------------------------------------------------


def literal(text: str, style: str | Style = "") -> Text:
    """A Rich `Text` holding `text` literally (never parsed as markup), sanitized."""
    return Text(sanitize(text), style=style, no_wrap=False)


_BOLD = Style(bold=True)
NARROW = 24  # below this many cells a lane row leaves out the priority
TITLE_MIN = 16  # a row with something to say after its title keeps this much of the title
TITLE_MAX = 80  # and lines its details up at most this far along (a column, as k9s's)
DETAIL_MIN = 12  # a detail with less room than this is left for the card screen
COST_FROM = 100  # a lane this many cells wide shows what each card's attempts spent, at its right
COST_MAX = 22  # the cost column's widest (`$12.35 + 2 unpriced`)
ROW_CACHE = 512  # drawn rows a lane keeps: a few screenfuls, for scrolling back and forth

Detail = tuple[str, str]  # what a row says after its title, and its kind (health.row_detail)

# -- the lane -------------------------------------------------------------------------------


def _title_cells(row: Row) -> int:
    title = row.card.title
    return len(title) if title.isascii() and title.isprintable() else cell_len(row.title)


def fit_heading(parts: list[tuple[str, bool]], room: int) -> list[tuple[str, bool]]:
    """A lane heading (name, count[, blocked]) in `room` cells. The count stays longest:
    the blocked part goes first, then the name is cut (`re… 2000`)."""
    if room <= 0:
        return []
    if sum(cell_len(text) for text, _ in parts) <= room:
        return parts
    name, count = parts[0][0].rstrip(), parts[1]
    name_room = room - cell_len(count[0]) - 1  # the cells left for the name
    if cell_len(name) <= name_room:
        return [(name + " ", False), count]
    if name_room >= 2:
        return [(set_cell_size(name, name_room - 1) + "… ", False), count]
    if cell_len(count[0]) <= room:
        return [count]
    return [(set_cell_size(count[0], room - 1) + "…", True)]


class LineList(LineView, can_focus=True, inherit_bindings=False):
    """Rows drawn line by line (only the visible ones) with a cursor that stays on its item
    across reloads: the board's lanes and the stranded browser's lists.

    Subclasses draw a row (`render_row`), may draw fixed header lines (`header_rows`) and
    say how an item is known across reloads (`key_of`). Unlike the log and the diff, a
    list draws each row as Textual asks for it, not a frame at a time: a cursor move
    repaints its two rows only, and a row is cheap to draw, so none is cached. The cursor's
    moves clamp; pages and jumps keep it in view below the header rows.
    """

    LINE_CACHE = 0  # rows are drawn as asked (see above)
    header_rows = 0

    BINDINGS = [
        *movement_bindings("list", LIST_MOVES),
    ]

    cursor: reactive[int] = reactive(0, repaint=False, init=False)

    class Moved(Message):
        """The cursor moved to another item (or the list changed under it)."""

        def __init__(self, widget: LineList) -> None:
            super().__init__()
            self.widget = widget

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[Any] = []
        self.selected_key: Any = None
        self.painted_items = -1  # how many items the list held when it last drew a row (bench)
        self.drawing = 0  # the index of the row being drawn
        # the content region and the scroll offset, while render_lines draws (else None)
        self.frame_region: Region | None = None
        self.frame_top = 0
        self.on_painted: Callable[[], None] | None = None  # called once, at the next line drawn

    def key_of(self, item: Any) -> Any:
        return item

    def index_of(self, key: Any) -> int | None:
        return next((i for i, it in enumerate(self.items) if self.key_of(it) == key), None)

    def select(self, key: Any) -> bool:
        """Put the cursor on the item known as `key` if the list holds it."""
        index = self.index_of(key)
        if index is None:
            return False
        self.cursor = index
        return True

    def set_items(self, items: Sequence[Any]) -> None:
        """Replace the rows; the cursor stays on the item it was on if that is still here."""
        keep = self.selected_key
        self.items = list(items)
        index = self.index_of(keep) if keep is not None else None
        if index is None:
            index = min(self.cursor, max(len(self.items) - 1, 0))
        self.set_reactive(LineList.cursor, index)
        self.selected_key = self.key_of(self.items[index]) if self.items else None
        self.update_virtual_size()
        self._scroll_cursor_into_view()
        self.refresh()
        self.post_message(self.Moved(self))

    @property
    def current(self) -> Any:
        if not self.items:
            return None
        return self.items[min(self.cursor, len(self.items) - 1)]

    def watch_cursor(self, old: int, new: int) -> None:
        self.selected_key = self.key_of(self.items[new]) if self.items else None
        self.repaint_cursor(old, new)
        self._scroll_cursor_into_view()
        self.post_message(self.Moved(self))

    def repaint_cursor(self, old: int, new: int) -> None:
        """What to redraw when the cursor moves or the focus changes: all of it here."""
        self.refresh()

    def refresh_row(self, index: int) -> None:
        """Repaint the line showing row `index` (rows sit below the header lines)."""
        self.refresh_line(index + self.header_rows)

    def row_count(self) -> int:
        return len(self.items)

    def _scroll_cursor_into_view(self) -> None:
        height = self.scrollable_content_region.height - self.header_rows
        if height <= 0:
            return
        top = int(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def action_move(self, delta: int) -> None:
        if self.row_count():
            self.cursor = max(0, min(self.row_count() - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        region = self.scrollable_content_region
        self.action_move(direction * max(1, region.height - self.header_rows - 1))

    def action_jump(self, where: int) -> None:
        if self.row_count():
            self.cursor = 0 if where == 0 else self.row_count() - 1

    @property
    def virtual_lines(self) -> int:
        return len(self.items) + self.header_rows

    def on_focus(self) -> None:
        self.repaint_cursor(self.cursor, self.cursor)

    def on_blur(self) -> None:
        self.repaint_cursor(self.cursor, self.cursor)

    def on_resize(self) -> None:
        self._scroll_cursor_into_view()

    def render_lines(self, crop: Region) -> list[Strip]:
        """Draw the lines in `crop`, with the view's place worked out once for all of them:
        the content region and the scroll offset are computed properties (the region is
        looked up in the compositor), and asking for both at every line cost a scroll that
        redraws forty lines more than the rows themselves."""
        self.frame_region = self.scrollable_content_region
        self.frame_top = int(self.scroll_offset.y)
        try:
            return super().render_lines(crop)
        finally:
            self.frame_region = None

    def render_line(self, y: int) -> Strip:
        region = self.frame_region or self.scrollable_content_region
        width = region.width
        base = self.base_style
        if y == 0:
            self.paint_count += 1
        if self.on_painted is not None:
            hook, self.on_painted = self.on_painted, None
            hook()
        if y < self.header_rows:
            return self.render_header(y, width, base)
        top = self.frame_top if self.frame_region else int(self.scroll_offset.y)
        index = top + y - self.header_rows
        if not self.items:
            if y == self.header_rows:
                return self.render_empty(width, base)
            return Strip.blank(width, base)
        if index >= len(self.items):
            return Strip.blank(width, base)
        self.painted_items = len(self.items)
        self.drawing = index  # which row render_row draws (a subclass may want its place)
        return self.render_row(self.items[index], index == self.cursor, width, base)

    def cursor_style(self, base: Style) -> Style:
        part = "list--cursor" if self.has_focus else "list--cursor-blurred"
        return base + self.get_component_rich_style(part)

    def render_header(self, y: int, width: int, base: Style) -> Strip:
        return Strip.blank(width, base)

    def render_empty(self, width: int, base: Style) -> Strip:
        return Strip.blank(width, base)

    def render_row(self, item: Any, at_cursor: bool, width: int, base: Style) -> Strip:
        raise NotImplementedError


LANE_PARTS = frozenset(
    {
        "lane--header",
        "lane--header-current",
        "lane--cursor",
        "lane--cursor-blurred",
        "lane--id",
        "lane--prio",
        "lane--urgent",
        "lane--badge",
        "lane--heal",
        "lane--empty",
        "lane--live",
        "lane--wait",
        "lane--detail",
        "lane--thumb",
    }
)


def backdrop_lines(widget: Widget, crop: Region) -> list[Strip] | None:
    """A plain backdrop's lines (no border, padding, tint or content of its own): one
    blank strip in its colours, repeated. Textual draws a container line by line through
    its styles cache like any widget, and the board's three (the screen, the body and the
    lanes) were 138 of the 231 lines its first paint drew, each then covered by the
    widgets in front of it. What shows of them between those widgets is this strip.
    None when Textual must draw them: under a translucent background, or one in the
    terminal's own colours (which Textual's filters turn into the theme's)."""
    for node, own in ((widget, True), (widget.screen, False)):
        background = node.styles.background
        if background.ansi is not None or (0 < background.a < 1 if own else background.a < 1):
            return None
    style = Style.from_color(bgcolor=widget.rich_style.bgcolor)  # spaces: no foreground
    return [Strip.blank(crop.width, style)] * crop.height


class Backdrop(Widget):
    """A container the widgets it holds cover: the board's body and its lanes, laid out
    by board.tcss (drawn by `backdrop_lines`)."""

    def render_lines(self, crop: Region) -> list[Strip]:
        lines = backdrop_lines(self, crop)
        return super().render_lines(crop) if lines is None else lines


class LaneStyles(Widget):
    """The lanes' component styles (`LaneStyles > .lane--cursor` and the rest), held once
    for every lane: they are the same for each. When each lane carried its own fourteen,
    Textual styled all of them as the board started (a tenth of its first paint) and a
    lane's fourteen again at each change of its focus. Never shown. A theme change
    restyles it and every lane, and each lane then forgets the rows it drew."""

    COMPONENT_CLASSES = set(LANE_PARTS)


class LaneView(LineList, inherit_bindings=False):
    """One lane: its heading (`ready 12 !3`) and its cards, one widget however many cards.

    A row is a table row the full width of the board, as k9s draws one: `id  pN  !class
    title  detail`, the block classes in a column as wide as the lane's widest, the detail
    (why it waits, what its drive is doing, a block's reason: `detail_of`) lined up after
    the titles. The cursor row is highlighted (dimmer when the lane is not focused).
    Holding 10,000 rows costs a list, not 10,000 widgets. The heading is the first line
    and stays put while the rows scroll under it; the current lane (class `-current`)
    draws it highlighted.
    """

    header_rows = 1

    BINDINGS = [
        *movement_bindings("lane", LIST_MOVES, said={"first": "first card", "last": "last card"}),
    ]

    def __init__(self, lane: str, parts: LaneStyles, *, id: str | None = None) -> None:
        self.parts = parts  # the component styles, shared by the lanes
        self._row_styles: dict[tuple[Style, tuple[str, ...]], Style] = {}
        self._strips: LRUCache[tuple[Any, ...], Strip] = LRUCache(ROW_CACHE)  # drawn rows
        self._base_style: Style | None = None  # rich_style walks every ancestor: once
        super().__init__(id=id)
        self.lane = lane
        self.total = 0
        self.blocked = 0
        self.empty_text = "empty"
        self.id_width = 4
        self.badge_width = 0  # the widest `!class` of the lane: the badge column
        self.title_width = 0  # the longest title of the lane: the title column, up to a cap
        # what each card's attempts spent (card id -> `usagetext.sum_cost`), read with the
        # board's rows (`BoardScreen._read_usage`); shown from COST_FROM cells, right-aligned
        self.costs: Mapping[str, str] = {}
        self.cost_width = 0  # the widest cost of the lane's rows (0: none known)
        # what a row says after its title (set by the board screen); each row's answer is
        # kept until `refresh_details` or new rows, so a repaint does not ask again
        self.detail_of: Callable[[Card], Detail] | None = None
        self._details: dict[str, Detail] = {}
        # the heading: (text, bold) parts of `lane N !B`, or `lane shown/N` while filtered
        self._heading_parts: list[tuple[str, bool]] = [(lane, False)]

    @property
    def allow_vertical_scroll(self) -> bool:
        """Whether its rows overflow it: the lane draws its own thumb (`_thumb`) and says
        `overflow-y: hidden`, where Textual would ask whether its scrollbar shows. With
        `overflow-y: auto` Textual started a hidden ScrollBar widget (registered, styled,
        composed) for every lane that overflowed: five at the first paint of a full board."""
        return not (self.disabled or self.loading) and self.max_scroll_y > 0

    # data ----------------------------------------------------------------------------------

    def key_of(self, item: Row) -> str:
        return item.card.id

    @property
    def rows(self) -> list[Row]:
        return self.items

    def set_rows(self, rows: Sequence[Row], total: int, blocked: int, empty_text: str) -> None:
        """Replace the rows, keeping the cursor on the card it was on if it is still here."""
        self.total = total
        self.blocked = blocked
        self.empty_text = empty_text
        self.id_width = max((len(r.card.id) for r in rows), default=4)
        classes = {r.card.blocked.cls for r in rows if r.card.blocked is not None}
        self.badge_width = max((cell_len(one_line(c)) + 1 for c in classes), default=0)
        # the title column is as wide as the lane's longest title (up to TITLE_MAX), as k9s
        # sizes a column to its content: a plain ASCII title's length is its width, and only
        # the others are sanitized and measured (10,000 titles stay unsanitized until drawn)
        self.title_width = max((_title_cells(r) for r in rows), default=0)
        self.cost_width = self._cost_width(rows)
        self._details.clear()
        self._strips.clear()
        self.set_items(rows)

    def set_costs(self, costs: Mapping[str, str]) -> None:
        """New figures of what each card spent (a store change, or the first read after the
        first paint): the rows on screen are drawn again only if the lane's costs changed."""
        old = {r.card.id: self.costs.get(r.card.id) for r in self.items}
        self.costs = costs
        if old != {r.card.id: costs.get(r.card.id) for r in self.items}:
            self.cost_width = self._cost_width(self.items)
            self._strips.clear()
            self.refresh()

    def _cost_width(self, rows: Sequence[Row]) -> int:
        costs = self.costs
        if not costs:
            return 0
        found = (cell_len(costs[r.card.id]) for r in rows if r.card.id in costs)
        return min(COST_MAX, max(found, default=0))

    def detail(self, card: Card) -> Detail:
        """What the card's row says after its title (kept until the next refresh_details)."""
        found = self._details.get(card.id)
        if found is None:
            found = self.detail_of(card) if self.detail_of is not None else ("", "")
            self._details[card.id] = found
        return found

    def refresh_details(self) -> None:
        """Ask again what the rows on screen say after their titles (the loop died, a
        second passed on a drive, a pause lifted) and repaint only the rows whose words
        changed; rows off screen are asked when they are drawn."""
        if self.detail_of is None:
            return
        old = self._details
        self._details = {}
        top = int(self.scroll_offset.y)
        height = max(0, self.scrollable_content_region.height - self.header_rows)
        for index in range(top, min(len(self.items), top + height)):
            card = self.items[index].card
            new = self.detail_of(card)
            self._details[card.id] = new
            if old.get(card.id) != new:
                self.refresh_row(index)

    def set_heading(self, shown: int, total: int, blocked: int, filtering: bool) -> None:
        """The first line: the lane's name, its count (`shown/total` while filtering) and
        how many of its cards are blocked."""
        parts = [(f"{self.lane} ", False), (f"{shown}/{total}" if filtering else f"{total}", True)]
        if blocked:
            parts.append((f" !{blocked}", True))
        if parts != self._heading_parts:
            self._heading_parts = parts
            self.refresh(Region(0, 0, self.size.width, self.header_rows))

    @property
    def heading(self) -> str:
        """The heading as plain text: `ready 12 !3`."""
        return "".join(text for text, _ in self._heading_parts)

    @property
    def current(self) -> Card | None:
        row = super().current
        return row.card if row is not None else None

    @property
    def painted(self) -> bool:
        """A row has been drawn (the bench and the first-paint hook ask)."""
        return self.painted_items > 0

    # drawing -------------------------------------------------------------------------------

    def repaint_cursor(self, old: int, new: int) -> None:
        self.refresh_row(old)  # only the two rows: a key costs two lines, not the lane
        self.refresh_row(new)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._row_styles.clear()
        self._strips.clear()
        self._base_style = None

    @property
    def base_style(self) -> Style:
        """`rich_style`, cached until the styles change (it was computed for every line)."""
        if self._base_style is None:
            self._base_style = self.rich_style
        return self._base_style

    def _style(self, base: Style, *names: str) -> Style:
        """base + the named component styles, cached until the styles change (theme, focus)."""
        key = (base, names)
        style = self._row_styles.get(key)
        if style is None:
            style = base
            for name in names:
                style = style + self.parts.get_component_rich_style(name, partial=True)
            self._row_styles[key] = style
        return style

    def render_header(self, y: int, width: int, base: Style) -> Strip:
        return self._heading_strip(width, base)

    def render_empty(self, width: int, base: Style) -> Strip:
        style = self._style(base, "lane--empty")
        return Strip([Segment(f" {self.empty_text}", style)]).adjust_cell_length(width, base)

    def render_row(self, item: Row, at_cursor: bool, width: int, base: Style) -> Strip:
        top = self.frame_top if self.frame_region else int(self.scroll_offset.y)
        thumb = self._thumb(top)
        room = width if thumb is None else width - 1
        card = item.card
        # A scroll by one line draws every row again, all but one of them as they were:
        # they come from here, not from _row_strip. Anything a row's look depends on is in
        # the key, or clears the cache (new rows, new styles).
        text, kind = self.detail(card)
        focused = at_cursor and self.has_focus
        cost = self.costs.get(card.id, "")
        key = (card.id, card.version, at_cursor, focused, room, base, text, kind, cost)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._strips[key] = self._row_strip(item, at_cursor, room, base)
        if thumb is None:
            return strip
        on_thumb = thumb[0] <= self.drawing - top < thumb[1]
        cell = Segment("▐", self._style(base, "lane--thumb")) if on_thumb else Segment(" ", base)
        return Strip([*strip, cell], width)

    def _thumb(self, top: int) -> tuple[int, int] | None:
        """The rows (first, past the last) of the lane's own scrollbar, drawn in the rows'
        last cell; None when every row fits.

        The lane draws its scrollbar itself rather than keep Textual's: that widget redrew
        all its lines at every scrolled line, which made a key that scrolls cost three
        times a key that does not (bench_tui's walk); the rows are drawn anew when the
        lane scrolls anyway, so their last cell comes for free."""
        rows = (self.frame_region or self.scrollable_content_region).height - self.header_rows
        total = len(self.items)
        if rows <= 0 or total <= rows:
            return None
        size = max(1, round(rows * rows / total))
        first = round((rows - size) * top / max(1, total - rows))
        return first, first + size

    def _heading_strip(self, width: int, base: Style) -> Strip:
        """` ready 12 !3`; a narrow lane keeps the count: the blocked part goes first, then
        the name is cut (`re… 2000`)."""
        part = "lane--header-current" if self.has_class("-current") else "lane--header"
        style = self._style(base, part)
        bold = style + _BOLD
        parts = fit_heading(self._heading_parts, width - 2)  # a space either side
        segments = [Segment(" ", style)]
        segments += [Segment(text, bold if strong else style) for text, strong in parts]
        # one segment per style run, as a Static would paint it (an SVG of the screen
        # draws a lone leading space as nothing)
        return Strip(Segment.simplify(segments)).adjust_cell_length(width, style)

    def _row_strip(self, row: Row, at_cursor: bool, width: int, base: Style) -> Strip:
        """` id  pN  !class  title  detail  cost`; a narrow lane drops the priority so the
        class shows, and only a lane of COST_FROM cells shows the cost column (what the
        card's attempts spent, at the right edge). The title keeps at least TITLE_MIN cells
        when a detail follows it; a detail with no room is left for the card screen rather
        than squeezing the title."""
        card = row.card
        if at_cursor:
            base = self._style(base, "lane--cursor" if self.has_focus else "lane--cursor-blurred")
        if self.cost_width and width >= COST_FROM:
            cost_room = self.cost_width + 2
            left = self._row_left(row, at_cursor, width - cost_room, base)
            cost = self.costs.get(card.id, "")
            if cell_len(cost) > self.cost_width:
                cost = set_cell_size(cost, self.cost_width - 1) + "…"
            style = base if at_cursor else self._style(base, "lane--detail")
            pad = Segment(" " * (cost_room - cell_len(cost)), base)
            return Strip([*left, pad, Segment(cost, style)], width)
        return self._row_left(row, at_cursor, width, base)

    def _row_left(self, row: Row, at_cursor: bool, width: int, base: Style) -> Strip:
        """The row less its cost column, in `width` cells (`_row_strip`)."""
        card = row.card
        narrow = width < NARROW
        ident = card.id if narrow else f"{card.id:<{self.id_width}}"
        segments = [Segment(" ", base), Segment(f"{ident} ", self._style(base, "lane--id"))]
        used = 2 + cell_len(ident)
        if not narrow:
            # on the cursor row the cursor's colours win (a muted colour would not read)
            prio = "lane--urgent" if card.priority <= 1 else "lane--prio"
            style = base if at_cursor else self._style(base, prio)
            segments.append(Segment(f"p{card.priority} ", style))
            used += 3
        if card.blocked is not None:
            cls = card.blocked.cls
            badge = "lane--heal" if cls in SELF_HEALING else "lane--badge"
            text = f"!{one_line(cls)}"
            pad = 1 if narrow else max(1, self.badge_width - cell_len(text) + 1)
            segments.append(Segment(text, self._style(base, badge)))
            segments.append(Segment(" " * pad, base))
            used += cell_len(text) + pad
        elif self.badge_width and not narrow:
            segments.append(Segment(" " * (self.badge_width + 1), base))
            used += self.badge_width + 1
        room = width - used
        title = row.title
        detail, kind = self.detail(card)
        column = max(TITLE_MIN, min(self.title_width, room * 2 // 5, TITLE_MAX))
        if detail and room - column - 2 >= DETAIL_MIN:
            if cell_len(title) > column:
                title = set_cell_size(title, column - 1) + "…"
            segments.append(Segment(set_cell_size(title, column), base))
            detail_room = room - column - 2
            if cell_len(detail) > detail_room:
                detail = set_cell_size(detail, detail_room - 1) + "…"
            style = base if at_cursor else self._style(base, f"lane--{kind or 'detail'}")
            segments.append(Segment("  ", base))
            segments.append(Segment(detail, style))
        else:
            if room > 0 and cell_len(title) > room:
                title = set_cell_size(title, room - 1) + "…"
            segments.append(Segment(title, base))
        return Strip(segments).adjust_cell_length(width, base)


class HealthBar(Widget):
    """The header: is a loop running (where, which pid, since when), the drives in use of
    `max_concurrent`, today's spend and the day budget's pause, the paused tiers with a
    countdown, the cards that need the operator.
    With no loop running, or its heartbeat stale, it says "loop not running" on the
    warning colour (class `-down`), since every ready card then waits for nothing; with
    the store's server unreachable, "store unreachable, retrying", on the same colour."""

    COMPONENT_CLASSES = {"health--up", "health--down", "health--warn"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.health: Health | None = None
        self.needs = 0
        self.unseen = 0  # notices no operator has seen (the notices screen marks them)
        self.spend: UsageSum | None = None  # today's (UTC), as the board's worker read it
        self.day_usd = 0.0  # the day's money budget, 0: none set
        self._shown: list[tuple[str, str]] = []  # the words as last drawn

    def show(self, health: Health | None, needs: int) -> None:
        """New words for the header (a health read, or a new count of cards needing you);
        repainted only when the words changed (a reading twice a second mostly says the
        same: a key pressed meanwhile should not pay for a header that did not change)."""
        self.health = health
        self.needs = needs
        down = health is not None and (not health.loop_up or bool(health.store_down))
        self.set_class(down, "-down")
        self._repaint()

    def show_unseen(self, unseen: int) -> None:
        """The count of notices no operator has seen, as the app last read it."""
        self.unseen = unseen
        self._repaint()

    def show_spend(self, spend: UsageSum | None, day_usd: float = 0.0) -> None:
        """Today's spend as read with the board's rows (and the day budget, if set)."""
        self.spend = spend
        self.day_usd = day_usd
        self._repaint()

    def _parts(self) -> list[tuple[str, str]]:
        return header_parts(
            self.health, self.needs, self._room(), self.spend, self.day_usd, self.unseen
        )

    def _repaint(self) -> None:
        parts = self._parts()
        if parts != self._shown:
            self._shown = parts
            self.refresh()

    @property
    def text(self) -> str:
        """The header as plain text, at its width."""
        return "".join(text for text, _ in self._parts())

    def _room(self) -> int:
        return max(0, self.content_size.width) or 80

    def render(self) -> Text:
        out = Text(no_wrap=True, end="")
        self._shown = self._parts()
        for text, kind in self._shown:
            style = self.get_component_rich_style(f"health--{kind}", partial=True) if kind else ""
            out.append(text, style)
        return out


class StatusLine(Static):
    """One line at the bottom: the last verb's result, or its refusal, or the filter."""

    def show(self, text: str, error: bool = False) -> None:
        self.set_class(error, "-error")
        self.update(Text(one_line(text)))

"""One base for the views drawn with the line API: the lists, the drive log, the diff.

A lane of 10,000 cards, a gigabyte log and a million-line diff are each one widget: a
`ScrollView` whose `virtual_size` is its line count, asked by Textual for the rows on
screen only (`render_line`), one `Strip` per row, never a widget per line (toolong's
`LogLines` is the model). What the three views share lives here, so the pattern is written
once, and each keeps what is its own (the log's following and wrapping, the diff's
streaming, the list's cursor):

- the frame: the rows on screen are drawn together, once per position and state
  (`frame_key` says what they depend on, `draw_frame` draws them), so the forty
  `render_line` calls of one repaint read their source once, and a repaint that changed
  nothing costs a key comparison;
- a small LRU cache of rendered lines (`line_cache`), dropped with `forget_lines` when
  what they were drawn from changed (a replaced preview); `forget_frame` when only the
  frame must be drawn again (a resize, a reset log);
- the virtual size: the line count (`virtual_lines`) and the widest line drawn so far
  (`widen`), for the horizontal scrollbar, grown after the frame, never during it.

A list whose rows repaint one at a time (a cursor move redraws two rows, not the screen)
draws line by line instead: `LineList` overrides `render_line`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from rich.style import Style
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget


class LineView(ScrollView, can_focus=True):
    """A `ScrollView` drawn with the line API: a frame of rows, a cache of rendered lines.

    Subclasses say how many lines there are (`virtual_lines`), what the rows on screen
    depend on (`frame_key`) and how to draw them (`draw_frame`, usually through
    `draw_lines`), and drop what no longer holds (`forget_frame`, `forget_lines`).
    """

    LINE_CACHE = 1024  # rendered lines kept (a few screenfuls, and the lines scrolled past)
    inherits_bindings = True  # False: defined with inherit_bindings=False (see below)

    def __init_subclass__(cls, inherit_bindings: bool = True, **kwargs: Any) -> None:
        """Textual's, noting `inherit_bindings` on the class as `inherits_bindings`, for the
        keymap check (`app.class_bindings`): Textual keeps its own note to itself."""
        super().__init_subclass__(inherit_bindings=inherit_bindings, **kwargs)
        cls.inherits_bindings = inherit_bindings

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.line_cache: LRUCache[Hashable, Any] = LRUCache(self.LINE_CACHE)
        self._frame_key: Hashable | None = None
        self._frame: list[Strip] = []
        self._max_width = 0
        self.paint_count = 0  # frames drawn (tests, benches: key-to-repaint)

    # the virtual size ---------------------------------------------------------------------

    @property
    def virtual_lines(self) -> int:
        """How many rows the virtual space holds (the scrollbar's length)."""
        raise NotImplementedError

    @property
    def virtual_width(self) -> int:
        """How wide the virtual space is: the widest line drawn so far."""
        return self._max_width

    def update_virtual_size(self) -> None:
        """Set `virtual_size` from the line count and the widest line."""
        self.virtual_size = Size(self.virtual_width, self.virtual_lines)

    def grow_virtual_size(self) -> None:
        """`update_virtual_size` for a view whose own size does not depend on its lines (it
        fills its container, or is at its height cap): only its scrollbars and scroll limits
        follow, as Textual does for a resize without layout, and the screen is not laid out
        again. A diff streaming in grows five times a second, and a layout of the whole
        screen each time kept the UI thread busy more than half the time, so keys waited
        behind it. The caller repaints what changed; the scrollbars repaint themselves.
        """
        size = Size(self.virtual_width, self.virtual_lines)
        if size != self.virtual_size:
            self.set_reactive(Widget.virtual_size, size)
            self.update_scrollbars(size)

    def update_scrollbars(self, size: Size) -> None:
        """The scrollbars for a virtual size `size` set without a layout (`set_reactive`),
        as Textual updates them after a resize that needs none, through its public API:
        which bars show (a bar that appears or goes takes or gives room, so the screen is
        laid out, as for any change of `show_vertical_scrollbar`), their thumbs, and the
        scroll offsets kept within the new limits."""
        styles = self.styles
        width, height = self.container_size
        if self.is_scrollable and self.container_size:
            over_x, over_y = styles.overflow_x, styles.overflow_y
            show_x = over_x == "scroll" or (over_x == "auto" and size.width > width)
            show_y = over_y == "scroll" or (over_y == "auto" and size.height > height)
            # one bar takes room from the other direction (Textual's own second look)
            if over_x == "auto" and show_y and not show_x:
                show_x = size.width > width - styles.scrollbar_size_vertical
            if over_y == "auto" and show_x and not show_y:
                show_y = size.height > height - styles.scrollbar_size_horizontal
            shown_x, shown_y = self.show_horizontal_scrollbar, self.show_vertical_scrollbar
            self.show_horizontal_scrollbar = show_x
            self.show_vertical_scrollbar = show_y
            if show_x or shown_x:  # a bar never shown is never made
                self.horizontal_scrollbar.display = show_x
            if show_y or shown_y:
                self.vertical_scrollbar.display = show_y
        if self.show_vertical_scrollbar and styles.scrollbar_size_vertical:
            bar = self.vertical_scrollbar
            bar.window_virtual_size = size.height
            bar.window_size = height - self.scrollbar_size_horizontal
            bar.refresh()
        if self.show_horizontal_scrollbar and styles.scrollbar_size_horizontal:
            bar = self.horizontal_scrollbar
            bar.window_virtual_size = size.width
            bar.window_size = width - self.scrollbar_size_vertical
            bar.refresh()
        self.scroll_x = self.validate_scroll_x(self.scroll_x)
        self.scroll_y = self.validate_scroll_y(self.scroll_y)

    def widen(self, widest: int) -> None:
        """A line `widest` cells wide was drawn: grow the virtual width after this frame."""
        if widest > self._max_width:
            self._max_width = widest
            self.call_later(self.update_virtual_size)

    # what was drawn, and forgetting it ----------------------------------------------------

    def forget_frame(self) -> None:
        """Draw the rows on screen again at the next repaint, whatever the key says."""
        self._frame_key = None

    def forget_width(self) -> None:
        """Measure the width again from the lines drawn next (another file is shown)."""
        self._max_width = 0

    def forget_lines(self) -> None:
        """Drop every rendered line, the frame and the width: the lines themselves changed."""
        self.line_cache.clear()
        self._frame_key = None
        self._max_width = 0

    # drawing ------------------------------------------------------------------------------

    @property
    def base_style(self) -> Style:
        """The style every line starts from."""
        return self.rich_style

    def render_line(self, y: int) -> Strip:
        frame = self.frame()
        if y < len(frame):
            return frame[y]
        return Strip.blank(self.scrollable_content_region.width, self.base_style)

    def frame(self) -> list[Strip]:
        """The rows on screen, drawn once per `frame_key`, padded with blank rows."""
        region = self.scrollable_content_region
        width, height = region.width, region.height
        base = self.base_style
        key = self.frame_key(width, height, base)
        if key == self._frame_key:
            return self._frame
        strips = self.draw_frame(width, height, base)
        self.paint_count += 1
        strips += [Strip.blank(width, base)] * (height - len(strips))
        self._frame_key, self._frame = key, strips
        return strips

    def frame_key(self, width: int, height: int, base: Style) -> Hashable:
        """Everything the rows on screen depend on: the frame is drawn again when it changes."""
        raise NotImplementedError

    def draw_frame(self, width: int, height: int, base: Style) -> list[Strip]:
        """The rows on screen, top to bottom (fewer than `height`: blanks follow)."""
        raise NotImplementedError

    def draw_lines(
        self,
        first: int,
        texts: Sequence[str],
        width: int,
        base: Style,
        render: Callable[[int, str, Style], Strip],
    ) -> list[Strip]:
        """Lines `first`… drawn unwrapped by `render` (which may cache them), each cut to
        the view at the horizontal scroll; the widest line widens the virtual size."""
        x = int(self.scroll_x)
        widest = self._max_width
        strips = []
        for k, text in enumerate(texts, first):
            strip = render(k, text, base)
            widest = max(widest, strip.cell_length)
            strips.append(strip.crop_extend(x, x + width, base))
        self.widen(widest)
        return strips


__all__ = ["LineView"]

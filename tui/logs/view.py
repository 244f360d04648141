"""A log of any size, drawn line by line, followed as it grows (toolong's `LogLines`).

The view reads no more of a file than it draws: it draws only the visible lines through
the line API, opening a regular file reads its last chunk (the tail's lines, `index_tail`),
the rest of the index is built from the end by a worker thread
(`board.core.logs.LogFile.scan`), and a watcher thread indexes appended bytes and tells
the view, one pending notice at a time, backing off while the app has not caught up.
Every line is run through `sanitize`: log content never becomes markup or a terminal
escape (invariant 5).
"""

from __future__ import annotations

import bisect
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Hashable
from pathlib import Path

from board.core.logs import LogFile, split_stamp
from board.core.safetext import sanitize
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.worker import get_current_worker

from ..lines import LineView
from ..movement import movement_bindings

POLL_S = 0.1  # how often the watcher looks for appended bytes
MAX_BACKOFF_S = 1.0  # the longest it waits while the app is still busy with the last notice
TAIL_FIRST_WAIT_S = 0.25  # the longest the scan waits for the tail to be painted
REPAINT_S = 0.25  # appended lines repaint the view at most this often (a quiet log's at once)
FLOOD_REPAINT_S = 0.5  # ... and this often when each repaint would replace every row shown


class RepaintGate:
    """When the watcher tells the view that lines were appended: at once after a quiet
    spell, then at most once per `interval` while they keep coming.

    Why: at 50,000 lines a second each repaint draws a screenful of new lines, its
    scrollbar and the status line (about 15 ms of the UI thread); ten a second took
    keys' time for frames no eye reads. The lines are indexed on every poll all the
    same; only the telling is spaced, so nothing is lost, only shown a moment later.
    A flood (more new lines than rows since the last telling: no row of one frame
    survives to the next, so nothing on screen can be read anyway) is told at most
    once per `flood_interval`: the keys get the time, the eye loses nothing.
    """

    def __init__(
        self,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
        flood_interval: float | None = None,
    ) -> None:
        self.interval = interval
        self.flood_interval = interval if flood_interval is None else flood_interval
        self._clock = clock
        self._told = float("-inf")
        self.waiting = False  # lines were indexed that the view was not told of yet
        self.flood = False  # ... more of them than the view has rows

    def grew(self, flood: bool = False) -> None:
        self.waiting = True
        self.flood = self.flood or flood

    def reset(self) -> None:
        """Another file, or the same one anew: what was waiting is told some other way."""
        self.waiting = self.flood = False

    def _spacing(self) -> float:
        return max(self.interval, self.flood_interval) if self.flood else self.interval

    def due(self) -> bool:
        """True (and counted as told) when waiting lines should be told now."""
        if not self.waiting:
            return False
        now = self._clock()
        if now - self._told < self._spacing():
            return False
        self._told, self.waiting, self.flood = now, False, False
        return True

    def wait_s(self, default: float) -> float:
        """How long the watcher may sleep: no later than when waiting lines fall due."""
        if not self.waiting:
            return default
        return max(0.0, min(default, self._told + self._spacing() - self._clock()))


def index_tail(log: LogFile) -> bool:
    """Open a regular file and index its last chunk on the spot; False leaves it all to the
    scan thread (a FIFO, whose open would block, or a file that cannot be opened).

    Why: drawing reads the visible lines on the UI thread anyway, and the tail's one read
    (`SCAN_FIRST_CHUNK` bytes) costs about what drawing them does. Left to the thread, the
    tail came a frame after the one that opened the log (the drive list's highlight, a
    blank view): Textual paints a second frame 17-33 ms after the first, so a log's last
    screenful took 8 or 40 ms by chance, whatever its size.
    """
    try:
        if not stat.S_ISREG(os.stat(log.path).st_mode):
            return False
        log.open()
    except OSError:
        return False
    log.scan(chunks=1)
    return True


class LogView(LineView):
    """A log of any size, drawn line by line; follows the end while the operator is at it.

    Scroll unit: one log line. Without wrapping a line is one row; with wrapping
    the first visible line is the scroll position (or, at the end, the last line
    sits on the last row), so a gigabyte never needs its wrapped height known.
    """

    ALLOW_SELECT = False
    BINDINGS = [
        Binding("left,h", "column_left", "left", show=False, id="logs.left"),
        Binding("right,l", "column_right", "right", show=False, id="logs.right"),
        *movement_bindings(
            "logs",
            {
                "down": "line_down",
                "up": "line_up",
                "page_down": "page_down",
                "page_up": "page_up",
                "first": "top",
                "last": "bottom",
            },
            ids={"first": "top", "last": "follow"},
            said={"first": "top", "last": "follow"},
            more={
                "first": {"key_display": "g", "tooltip": "the first line"},
                "last": {
                    "show": True,
                    "key_display": "G",
                    "tooltip": "go to the end and follow it",
                },
            },
            reader=True,
        ),
        Binding("n", "next_match", "next match", id="logs.next", show=False),
        Binding("N", "previous_match", "previous match", id="logs.previous", show=False),
        Binding("w", "toggle_wrap", "wrap", id="logs.wrap", tooltip="wrap long lines"),
        Binding(
            "t", "toggle_stamps", "times", id="logs.stamps", tooltip="show or hide each line's time"
        ),
    ]
    COMPONENT_CLASSES = {"log-view--stamp", "log-view--match", "log-view--current"}
    DEFAULT_CSS = """
    LogView {
        background: $surface;
        color: $foreground;
        scrollbar-size-vertical: 1;
    }
    LogView > .log-view--stamp { color: $text-muted; }
    LogView > .log-view--match { background: $warning 60%; color: $text; }
    LogView > .log-view--current { background: $accent 25%; }
    """

    follow: reactive[bool] = reactive(True)
    wrap: reactive[bool] = reactive(False)
    show_stamps: reactive[bool] = reactive(True)

    class Status(Message):
        """What the view shows changed: line count, scan progress, following, search."""

        def __init__(self, view: LogView) -> None:
            super().__init__()
            self.view = view

    class Grew(Message, bubble=False):
        """The index of the open log changed (posted from the scan or watcher thread)."""

        def __init__(self, session: int) -> None:
            super().__init__()
            self.session = session

    class Reset(Message, bubble=False):
        """The open log was truncated or replaced: scan it again."""

        def __init__(self, session: int) -> None:
            super().__init__()
            self.session = session

    class Found(Message, bubble=False):
        """A search finished (`line` is None when nothing matched)."""

        def __init__(self, session: int, needle: str, line: int | None) -> None:
            super().__init__()
            self.session = session
            self.needle = needle
            self.line = line

    def __init__(
        self,
        poll_s: float = POLL_S,
        *,
        repaint_s: float = REPAINT_S,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.poll_s = poll_s
        self.repaint_s = repaint_s
        self.path: Path | None = None
        self._log: LogFile | None = None
        self._session = 0
        self._ready = -1  # the session whose file is open (the watcher polls only that one)
        self._scan_stop = threading.Event()
        self._tail_shown = threading.Event()  # set once the open log's tail is painted
        self._watch_stop = threading.Event()
        self._pending = False  # a Grew notice is in the queue; the watcher waits for it
        self._bars_late = False  # the scrollbars wait for the tail's first frame
        self._gen = 0
        self._lo = 0
        self._hi = 0
        self._programmatic = False
        self.search_term = ""
        self._search_re: re.Pattern[str] | None = None
        self.match_line: int | None = None
        self.searching = False
        self.search_failed = False
        self.match_lines: list[int] | None = None  # every matching line, once counted
        self.painted_through: int | None = None  # id of the last line drawn (tests, bench)
        # Set by the screen: shows the status at once. A Status message arrives after the
        # view's repaint is drawn, so each batch of appended lines cost two frames, not one.
        self.status_hook: Callable[[], None] | None = None
        self.painted_options: tuple[bool, bool] = (False, True)  # (wrap, stamps) last drawn
        self._component_base: Style | None = None
        self._component_cache: tuple[Style, Style, Style] = (Style(), Style(), Style())

    # lines and state ------------------------------------------------------------------------

    @property
    def line_count(self) -> int:
        return max(0, self._hi - self._lo)

    @property
    def lines_known(self) -> tuple[int, int]:
        """`(lo, hi)` ids the view currently shows (a snapshot of the index)."""
        return self._lo, self._hi

    @property
    def scanning(self) -> bool:
        return self._log is not None and not self._log.scanned

    @property
    def scan_fraction(self) -> float:
        return self._log.scan_fraction if self._log is not None else 1.0

    @property
    def top_line(self) -> int:
        """Id of the first visible line."""
        if self.follow and not self.wrap:
            return max(self._lo, self._hi - self.scrollable_content_region.height)
        return self._lo + int(self.scroll_y)

    @property
    def lines_below(self) -> int:
        """Lines after the last visible one (what is waiting while not following)."""
        height = self.scrollable_content_region.height
        return max(0, self._hi - (self.top_line + height))

    def visible_text(self) -> list[str]:
        """The rows as drawn, as plain text (for tests and for copying)."""
        return [strip.text for strip in self.frame()]

    # opening a log ------------------------------------------------------------------------

    def open(self, path: Path | None) -> None:
        """Show `path` (None: nothing). The file is opened and scanned in a worker thread."""
        self._scan_stop.set()
        self._tail_shown.set()
        if self._log is not None:
            self._log.close()
        self._session += 1
        self._scan_stop = threading.Event()
        self._tail_shown = threading.Event()
        self.path = path
        self._log = LogFile(path) if path is not None else None
        tail_read = self._log is not None and index_tail(self._log)
        if tail_read:
            self._ready = self._session
        self._gen = 0
        self._lo = self._hi = 0
        self.forget_width()
        self.match_line = None
        self.match_lines = None
        self.search_failed = False
        self.forget_frame()
        self._pending = False
        self._bars_late = False
        self.follow = True
        self.update_virtual_size()
        self._jump(0, 0)
        if tail_read:
            self._sync()  # the tail is in the same frame as whatever else this key changed
        else:
            self.refresh()
        if self._log is not None:
            self._scan(self._log, self._session, self._scan_stop, not tail_read)
        self.post_message(self.Status(self))

    def on_mount(self) -> None:
        self._watch()

    def on_unmount(self) -> None:
        self._watch_stop.set()
        self._scan_stop.set()
        self._tail_shown.set()
        if self._log is not None:
            self._log.close()

    def _notify(self, session: int) -> None:
        """From a thread: tell the view the index changed, unless a notice is still queued."""
        if session == self._session and not self._pending:
            self._pending = True
            self.post_message(self.Grew(session))

    @work(thread=True, exclusive=True, group="log-scan", exit_on_error=False)
    def _scan(self, log: LogFile, session: int, stop: threading.Event, first: bool) -> None:
        if first:
            log.open()
            if session != self._session:
                log.close()
                return
            self._ready = session
        shown = self._tail_shown
        gate = RepaintGate(self.repaint_s)  # the tail at once, then the lines above spaced

        def progress(_added: int) -> None:
            gate.grew()
            if gate.due():
                self._notify(session)
            # Tail first: hold the rest of the scan (it competes for the GIL) until the
            # lines just found are on screen, or a moment has passed.
            shown.wait(TAIL_FIRST_WAIT_S)

        if first:
            self._notify(session)
        else:
            shown.wait(TAIL_FIRST_WAIT_S)  # the tail read on the spot is painted first
        log.scan(progress=progress, stop=stop)
        self._notify(session)

    @work(thread=True, group="log-watch", exit_on_error=False)
    def _watch(self) -> None:
        """Index appended bytes; wait longer while the app has not handled the last notice."""
        worker = get_current_worker()
        interval = self.poll_s
        gate = RepaintGate(self.repaint_s, flood_interval=FLOOD_REPAINT_S)
        gate_session = self._session
        told_hi: int | None = None  # the last line id the view was told of
        while not worker.is_cancelled and not self._watch_stop.is_set():
            log, session = self._log, self._session
            if session != gate_session:
                gate.reset()  # opening a file tells the view itself
                gate_session, told_hi = session, None
            busy = self._pending
            if log is not None and self._ready == session and not busy:
                if told_hi is None:
                    told_hi = log.bounds()[1]
                result = log.poll()
                if result == "grew":
                    hi = log.bounds()[1]
                    gate.grew(flood=hi - told_hi > self.size.height)
                elif result == "reset":
                    gate.reset()
                    told_hi = None
                    self.post_message(self.Reset(session))
                if gate.due():
                    told_hi = log.bounds()[1]
                    self._notify(session)
            interval = min(interval * 2, MAX_BACKOFF_S) if busy else self.poll_s
            self._watch_stop.wait(interval if busy else gate.wait_s(interval))

    def on_log_view_grew(self, message: Grew) -> None:
        self._pending = False  # even a stale notice: a stuck flag would stop the watcher
        if message.session == self._session:
            self._sync()

    def on_log_view_reset(self, message: Reset) -> None:
        if message.session != self._session or self._log is None:
            return
        self.forget_frame()
        self.match_line = None
        self._scan(self._log, self._session, self._scan_stop, False)
        self._sync()

    def _sync(self) -> None:
        """Take a fresh snapshot of the index and keep the same lines in view."""
        log = self._log
        if log is None:
            return
        lo, hi = log.bounds()
        if log.generation != self._gen:
            self._gen = log.generation
            shift = 0
        else:
            shift = self._lo - lo  # lines the scan found above
        self._lo, self._hi = lo, hi
        self.update_virtual_size()
        if self.follow:
            self._pin_end()
        elif shift:
            self._jump(None, self.scroll_y + shift)
        if self.status_hook is not None:  # drawn in this repaint's frame, not one more
            self.status_hook()
        else:
            self.post_message(self.Status(self))
        self.refresh()

    @property
    def virtual_lines(self) -> int:
        return self.line_count

    @property
    def virtual_width(self) -> int:
        return 0 if self.wrap else super().virtual_width

    def update_virtual_size(self) -> None:
        size = Size(self.virtual_width, self.virtual_lines)
        bars = (self.show_horizontal_scrollbar, self.show_vertical_scrollbar)
        if size != self.virtual_size:
            if self.is_mounted and self.container_size:
                # Setting `virtual_size` lays out the whole screen, every time: at 50,000
                # lines/s that reflow is what makes keys wait. Only the scrollbars depend
                # on it, so update them alone; they ask for a layout if one appears.
                self.set_reactive(LogView.virtual_size, size)
                if self._tail_shown.is_set() or not self.follow or self._hi <= self._lo:
                    self.update_scrollbars(size)
                else:
                    # A log's first lines: a scrollbar appearing lays out the whole screen
                    # (Textual), a frame twice the cost of the lines alone. The tail is
                    # drawn first and the bars once that frame is out (`draw_frame`).
                    self._bars_late = True
            else:
                self.virtual_size = size
        if self.follow:
            self._pin_end()
            if bars != (self.show_horizontal_scrollbar, self.show_vertical_scrollbar):
                self.call_after_refresh(self._pin_end)  # the end moves once the bar is laid out

    def _late_scroll_update(self) -> None:
        """The scrollbars held back for the tail's first frame, now that it is out."""
        if not self._bars_late:
            return
        self._bars_late = False
        bars = (self.show_horizontal_scrollbar, self.show_vertical_scrollbar)
        self.update_scrollbars(self.virtual_size)
        if self.follow:
            self._pin_end()
            if bars != (self.show_horizontal_scrollbar, self.show_vertical_scrollbar):
                self.call_after_refresh(self._pin_end)

    # scrolling ------------------------------------------------------------------------------

    def _jump(self, x: float | None, y: float | None) -> None:
        """Scroll without it counting as the operator's move."""
        self._programmatic = True
        try:
            self.scroll_to(x=x, y=y, animate=False, force=True, immediate=True)
        finally:
            self._programmatic = False

    def _pin_end(self) -> None:
        self._jump(None, self.max_scroll_y)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if not self._programmatic:
            self.follow = new_value >= self.max_scroll_y

    def watch_follow(self, following: bool) -> None:
        if following:
            self._pin_end()
        self.post_message(self.Status(self))

    def watch_wrap(self) -> None:
        self.update_virtual_size()
        if self.wrap:
            self._jump(0, None)
        if self.follow:
            self._pin_end()
        self.refresh()
        self.post_message(self.Status(self))

    def watch_show_stamps(self) -> None:
        self.refresh()
        self.post_message(self.Status(self))

    def on_resize(self) -> None:
        self.forget_frame()
        if self.follow:
            self.call_after_refresh(self._pin_end)

    def _user_scroll(self, y: float) -> None:
        self._jump(None, y)
        self.follow = self.scroll_y >= self.max_scroll_y

    @property
    def _y(self) -> float:
        """Where the view is: while following, the end, whatever scroll_y still says."""
        return self.max_scroll_y if self.follow else self.scroll_y

    def action_line_up(self) -> None:
        self._user_scroll(self._y - 1)

    def action_line_down(self) -> None:
        self._user_scroll(self._y + 1)

    def action_page_up(self) -> None:
        self._user_scroll(self._y - max(1, self.scrollable_content_region.height - 1))

    def action_page_down(self) -> None:
        self._user_scroll(self._y + max(1, self.scrollable_content_region.height - 1))

    def action_top(self) -> None:
        self._user_scroll(0)

    def action_bottom(self) -> None:
        self.follow = True
        self._pin_end()

    def action_column_left(self) -> None:
        self._jump(max(0, self.scroll_x - 8), None)

    def action_column_right(self) -> None:
        self._jump(self.scroll_x + 8, None)

    def action_toggle_wrap(self) -> None:
        self.wrap = not self.wrap

    def action_toggle_stamps(self) -> None:
        self.show_stamps = not self.show_stamps

    # searching ------------------------------------------------------------------------------

    def search(self, needle: str, backward: bool = False) -> None:
        """Find `needle` from the top visible line (wrapping around); runs in a worker."""
        self.search_term = needle
        flags = re.IGNORECASE if needle == needle.lower() else 0
        self._search_re = re.compile(re.escape(needle), flags) if needle else None
        self.match_line = None
        self.search_failed = False
        self.match_lines = None
        self.refresh()
        if needle and self._log is not None:
            self._find(needle, self.top_line, backward)
            self._count_worker(self._log, self._session, needle)

    def action_next_match(self) -> None:
        if self.search_term:
            start = self.match_line + 1 if self.match_line is not None else self.top_line
            self._find(self.search_term, start, False)

    def action_previous_match(self) -> None:
        if self.search_term:
            start = self.match_line - 1 if self.match_line is not None else self.top_line
            self._find(self.search_term, start, True)

    def _find(self, needle: str, start: int, backward: bool) -> None:
        if self._log is None:
            return
        self.searching = True
        self.post_message(self.Status(self))
        self._find_worker(self._log, self._session, needle, start, backward)

    @work(thread=True, exclusive=True, group="log-find", exit_on_error=False)
    def _find_worker(
        self, log: LogFile, session: int, needle: str, start: int, backward: bool
    ) -> None:
        worker = get_current_worker()
        stop = threading.Event()
        lo, hi = log.bounds()
        found = None
        if hi > lo:
            start = min(max(start, lo), hi - 1)
            found = log.find(needle, start, backward, stop)
            if found is None and not worker.is_cancelled:  # wrap around
                found = log.find(needle, hi - 1 if backward else lo, backward, stop)
        if not worker.is_cancelled:
            self.post_message(self.Found(session, needle, found))

    MATCH_COUNT_MAX = 10_000  # past this the count says "10,000+" (a worker's scan, bounded)

    class Counted(Message, bubble=False):
        """Every line matching the search, counted in a worker (for `3/17`)."""

        def __init__(self, session: int, needle: str, lines: list[int]) -> None:
            super().__init__()
            self.session = session
            self.needle = needle
            self.lines = lines

    @work(thread=True, exclusive=True, group="log-count", exit_on_error=False)
    def _count_worker(self, log: LogFile, session: int, needle: str) -> None:
        """The lines matching `needle`, front to back: each find starts past the last."""
        worker = get_current_worker()
        stop = threading.Event()
        lo, hi = log.bounds()
        lines: list[int] = []
        k = lo
        while k < hi and len(lines) <= self.MATCH_COUNT_MAX and not worker.is_cancelled:
            found = log.find(needle, k, False, stop)
            if found is None or found < k:
                break
            lines.append(found)
            k = found + 1
        if not worker.is_cancelled:
            self.post_message(self.Counted(session, needle, lines))

    def on_log_view_counted(self, message: Counted) -> None:
        if message.session == self._session and message.needle == self.search_term:
            self.match_lines = message.lines
            self.post_message(self.Status(self))

    def match_position(self) -> str:
        """`3/17`: the current match among every match ('' until counted)."""
        lines = self.match_lines
        if lines is None or self.match_line is None:
            return ""
        total = (
            f"{self.MATCH_COUNT_MAX:,}+" if len(lines) > self.MATCH_COUNT_MAX else f"{len(lines):,}"
        )
        index = bisect.bisect_left(lines, self.match_line)
        if index >= len(lines) or lines[index] != self.match_line:
            return f"?/{total}"
        return f"{index + 1:,}/{total}"

    def on_log_view_found(self, message: Found) -> None:
        if message.session != self._session or message.needle != self.search_term:
            return
        self.searching = False
        self.search_failed = message.line is None
        if message.line is not None:
            self.show_line(message.line)
        self.post_message(self.Status(self))

    def show_line(self, line: int) -> None:
        """Bring line `line` into view (a third from the top) and stop following."""
        self._sync()
        self.match_line = line
        self.follow = False
        height = self.scrollable_content_region.height
        self._jump(None, max(0, line - self._lo - height // 3))
        self.follow = self.scroll_y >= self.max_scroll_y and line >= self._hi - height
        self.refresh()

    # drawing --------------------------------------------------------------------------------

    @property
    def base_style(self) -> Style:
        return self.visual_style.rich_style  # cached; `rich_style` walks the DOM per call

    def frame_key(self, width: int, height: int, base: Style) -> Hashable:
        return (
            self._session,
            self._gen,
            self._lo,
            self._hi,
            int(self.scroll_y),
            int(self.scroll_x),
            width,
            height,
            self.wrap,
            self.show_stamps,
            self.search_term,
            self.match_line,
            self.follow,
            base,
        )

    def draw_frame(self, width: int, height: int, base: Style) -> list[Strip]:
        if self.follow and int(self.scroll_y) != self.max_scroll_y:
            self.call_later(self._pin_end)  # the tail is drawn below; the scrollbar catches up
        strips: list[Strip] = []
        last: int | None = None  # the id of the last line drawn
        log = self._log
        if log is not None and height > 0 and width > 0 and self._hi > self._lo:
            if self.wrap:
                rows = self._wrapped_rows(log, width, height, base)
                strips = [strip for _, strip in rows]
                last = rows[-1][0] if rows else None
            else:
                # while following, the tail is drawn whatever the scroll position says
                top = self.top_line
                texts = log.lines(top, min(top + height, self._hi), self._gen)
                strips = self.draw_lines(top, texts, width, base, self._unwrapped)
                last = top + len(strips) - 1 if strips else None
        self.painted_through = last
        if self._bars_late:  # registered while drawing: run once this frame is out
            self.call_after_refresh(self._late_scroll_update)
        if strips and not self._tail_shown.is_set():
            # once this frame is out, not while it is drawn: the scan resumed at once would
            # take the GIL from the rest of this first paint
            self.call_after_refresh(self._tail_shown.set)
        self.painted_options = (self.wrap, self.show_stamps)
        return strips

    def _unwrapped(self, k: int, text: str, base: Style) -> Strip:
        return self._render_text(k, text, None, base)[0]

    def _wrapped_rows(
        self, log: LogFile, width: int, height: int, base: Style
    ) -> list[tuple[int, Strip]]:
        at_end = self.follow or self.scroll_y >= self.max_scroll_y
        rows: list[tuple[int, Strip]] = []
        if at_end:  # the last line on the last row, lines above as far as they fit
            stop = self._hi
            while len(rows) < height and stop > self._lo:
                start = max(self._lo, stop - height)
                texts = log.lines(start, stop, self._gen)
                block: list[tuple[int, Strip]] = []
                for k, text in zip(range(start, stop), texts, strict=False):
                    block += [(k, s) for s in self._render_text(k, text, width, base)]
                rows = block + rows
                stop = start
            return rows[-height:]
        start = self.top_line
        while len(rows) < height and start < self._hi:
            stop = min(self._hi, start + height)
            texts = log.lines(start, stop, self._gen)
            for k, text in zip(range(start, stop), texts, strict=False):
                rows += [(k, s) for s in self._render_text(k, text, width, base)]
            start = stop
        return rows[:height]

    def _render_text(self, k: int, text: str, width: int | None, base: Style) -> list[Strip]:
        """One log line as strips (one, or several when wrapped to `width`); cached."""
        current = k == self.match_line
        key = (text, width, self.show_stamps, self.search_term, current, base)
        cached: list[Strip] | None = self.line_cache.get(key)
        if cached is not None:
            return cached
        stamp_style, match_style, current_style = self._line_styles(base)
        style = base + current_style if current else base
        stamp, body = split_stamp(text)
        body = sanitize(body)  # plain text: no markup parsed, no escape passed on
        prefix = stamp[11:19] + " " if self.show_stamps and stamp else ""
        if width is None and (self._search_re is None or not self._search_re.search(body)):
            # the common case, drawn without Rich's Text machinery: it runs for every new
            # line of a log growing by thousands of lines a second
            segments = [Segment(body, style)]
            if prefix:
                segments.insert(0, Segment(prefix, style + stamp_style))
            strips = [Strip(segments, len(prefix) + cell_len(body))]
        else:
            line = Text(no_wrap=width is None, end="")
            if prefix:
                line.append(prefix, stamp_style)
            line.append(body)
            if self._search_re is not None:
                line.highlight_regex(self._search_re, match_style)
            console = self.app.console
            if width is None:
                strips = [Strip(line.render(console), line.cell_len).apply_style(style)]
            else:
                pieces = line.wrap(console, width, overflow="fold") or [Text("")]
                strips = []
                for piece in pieces:
                    piece.end = ""
                    strip = Strip(piece.render(console), piece.cell_len)
                    strips.append(strip.apply_style(style).extend_cell_length(width, style))
        self.line_cache.set(key, strips)
        return strips

    def _line_styles(self, base: Style) -> tuple[Style, Style, Style]:
        if self._component_base != base:
            self._component_base = base
            self._component_cache = (
                self.get_component_rich_style("log-view--stamp"),
                self.get_component_rich_style("log-view--match"),
                self.get_component_rich_style("log-view--current"),
            )
        return self._component_cache

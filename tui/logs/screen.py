"""The logs screen: drives on the left (live first, then recent), the log on the right."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from board.core.config import Config
from board.core.errors import BoardError
from board.core.logs import split_stamp
from board.core.safetext import sanitize
from board.core.store import Store
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ..footer import KeysFooter
from ..movement import movement_bindings
from ..stylesheets import add_stylesheet
from .drivelist import DriveRow, drive_rows
from .view import POLL_S, REPAINT_S, LogView

LOGS_CSS = Path(__file__).with_name("logs.tcss")
STATUS_MARKS = {
    "running": "●",
    "passed": "✓",
    "failed": "✗",
    "timeout": "⧗",
    "blocked": "■",
    "stopped": "■",
    "crashed": "✗",
    "stood-aside": "↷",
}


def _utc_now() -> datetime:
    return datetime.now(UTC)


class DriveList(OptionList):
    """The drive list: `j`/`k` move as in every list of the board (and `g`/`G`)."""

    BINDINGS = [
        *movement_bindings(
            "logs",
            {
                "down": "cursor_down",
                "up": "cursor_up",
                "page_down": "page_down",
                "page_up": "page_up",
                "first": "first",
                "last": "last",
            },
            ids={m: f"drives_{m}" for m in ("down", "up", "page_down", "page_up", "first", "last")},
        ),
    ]


class LogsScreen(Screen[None]):
    """Drives on the left (live first, then recent), the selected drive's log on the right."""

    BINDINGS = [
        Binding("escape", "back", "back", id="logs.back", tooltip="return to where you were"),
        Binding("slash", "search", "search", id="logs.search", tooltip="search the log"),
        Binding("tab", "switch_pane", "drives/log", id="logs.pane", show=False),
        Binding("R", "reload", "refresh", id="logs.refresh", show=False),
    ]

    class DrivesLoaded(Message, bubble=False):
        """The drive list, read in a worker; `error` when the store could not be read."""

        def __init__(self, rows: list[DriveRow], error: str = "") -> None:
            super().__init__()
            self.rows = rows
            self.error = error

    def __init__(
        self,
        cfg: Config,
        store: Store,
        card_id: str | None = None,
        *,
        clock: Callable[[], datetime] = _utc_now,
        refresh_s: float = 2.0,
        poll_s: float = POLL_S,
        repaint_s: float = REPAINT_S,
        name: str | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id)
        self.cfg = cfg
        self.store = store
        self.card_id = card_id
        self.clock = clock
        self.refresh_s = refresh_s
        self.poll_s = poll_s
        self.repaint_s = repaint_s
        self.rows: list[DriveRow] = []
        self.current: DriveRow | None = None
        self._loaded_once = False
        self._last_error = ""
        self._status_shown: str | None = None  # the status line's text as last drawn

    def compose(self) -> ComposeResult:
        add_stylesheet(self.app, LOGS_CSS)  # not a CSS_PATH: see add_stylesheet
        with Horizontal(id="logs-body"):
            yield DriveList(id="drives", markup=False)
            with Vertical(id="logs-main"):
                yield Static(id="log-title", markup=False)
                yield LogView(poll_s=self.poll_s, repaint_s=self.repaint_s, id="log-view")
                yield Static(id="log-status", markup=False)
                yield Input(id="log-search", placeholder="search (lowercase: any case)")
        yield KeysFooter()

    @property
    def view(self) -> LogView:
        return self.query_one(LogView)

    def on_mount(self) -> None:
        self.query_one("#drives", OptionList).border_title = "Drives"
        self.query_one("#log-search", Input).display = False
        self.view.status_hook = self._show_status
        self.view.focus()
        self._load()
        if self.refresh_s > 0:
            self.set_interval(self.refresh_s, self._load)

    # the drive list -------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="logs-drives", exit_on_error=False)
    def _load(self) -> None:
        try:
            drives = list(self.store.list_drives(limit=200))
        except BoardError as exc:  # e.g. the store is locked: say so, keep what is shown
            self.post_message(self.DrivesLoaded(self.rows, exc.line()))
            return
        self.post_message(self.DrivesLoaded(drive_rows(self.cfg, drives, self.clock)))

    def on_logs_screen_drives_loaded(self, message: DrivesLoaded) -> None:
        if message.error:
            if message.error != self._last_error:
                self._last_error = message.error
                self.notify(sanitize(message.error), title="drives", severity="error", markup=False)
            if self._loaded_once:
                return
        self._last_error = message.error
        option_list = self.query_one("#drives", OptionList)
        old_ids = [row.drive.id for row in self.rows]
        self.rows = message.rows
        new_ids = [row.drive.id for row in self.rows]
        if old_ids == new_ids:
            for index, row in enumerate(self.rows):
                option_list.replace_option_prompt_at_index(index, self._prompt(row))
        else:
            keep = self.current.drive.id if self.current else None
            option_list.set_options(Option(self._prompt(row), id=row.drive.id) for row in self.rows)
            if keep in new_ids:
                option_list.highlighted = new_ids.index(keep)
        if not self._loaded_once:
            self._loaded_once = True
            self._open_initial(option_list)
        elif self.current is not None:
            found = next((r for r in self.rows if r.drive.id == self.current.drive.id), None)
            if found is not None:
                self.current = found
                self._show_title()

    def _open_initial(self, option_list: OptionList) -> None:
        if not self.rows:
            self.view.open(None)
            self._show_title()
            return
        index = 0
        if self.card_id is not None:
            mine = [i for i, r in enumerate(self.rows) if r.drive.card == self.card_id]
            if mine:
                index = max(
                    mine, key=lambda i: (self.rows[i].drive.live, self.rows[i].drive.attempt)
                )
        option_list.highlighted = index
        self._select(self.rows[index])

    def _prompt(self, row: DriveRow) -> Text:
        drive = row.drive
        mark = STATUS_MARKS.get(drive.status, "·")
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        style = "bold" if drive.live else ""
        text.append(f"{mark} ", "green" if drive.live else "")
        text.append(sanitize(drive.card), style)
        text.append(f" #{drive.attempt} ")
        text.append(sanitize(drive.tier))
        text.append(f" {row.elapsed}", "dim")
        if not drive.live:
            text.append(f" {sanitize(drive.status)}", "dim")
        detail = row.last if drive.live else drive.result
        if detail:
            _, body = split_stamp(detail)
            text.append("\n  " + sanitize(body)[:200], "dim")
        return text

    @on(OptionList.OptionHighlighted, "#drives")
    def _on_highlight(self, event: OptionList.OptionHighlighted) -> None:
        row = next((r for r in self.rows if r.drive.id == event.option.id), None)
        if row is not None and (self.current is None or row.drive.id != self.current.drive.id):
            self._select(row)

    def _select(self, row: DriveRow) -> None:
        self.current = row
        self.view.open(row.path)
        self._show_title()

    def _show_title(self) -> None:
        title = self.query_one("#log-title", Static)
        row = self.current
        if row is None:
            title.update(Text("no drive logs yet: they appear here when a drive starts"))
            return
        d = row.drive
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(sanitize(d.card), "bold")
        text.append(f" · attempt {d.attempt} · {sanitize(d.tier)} · {sanitize(d.status)}")
        text.append(f" · {row.elapsed}")
        title.update(text)

    # the status line ------------------------------------------------------------------------

    def on_log_view_status(self, message: LogView.Status) -> None:
        self._show_status()

    def _show_status(self) -> None:
        view = self.view
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if view.path is None or (view.line_count == 0 and view.scanning):
            # nothing is known yet: "0 lines" would be a claim about the log, so say nothing
            self._set_status(text)
            return
        if view.follow:
            text.append("▼ following", "bold green")
        else:
            below = view.lines_below
            text.append("⏸ paused", "bold reverse yellow")
            text.append(f" {below:,} lines below · G follows" if below else " · G follows")
        text.append(f" · {view.line_count:,} lines")
        if view.scanning:
            text.append(f" · reading {view.scan_fraction:.0%}", "dim")
        if view.wrap:
            text.append(" · wrap")
        if not view.show_stamps:
            text.append(" · no times")
        if view.search_term:
            text.append(" · /" + sanitize(view.search_term))
            if view.searching:
                text.append(" searching…", "dim")
            elif view.search_failed:
                text.append(" no match", "bold red")
            elif view.match_position():
                text.append(f" {view.match_position()}", "bold")
        self._set_status(text)

    def _set_status(self, text: Text) -> None:
        status = self.query_one("#log-status", Static)
        if text.plain != self._status_shown:  # height 1: no layout needed
            self._status_shown = text.plain
            status.update(text, layout=False)

    # actions --------------------------------------------------------------------------------

    def action_back(self) -> None:
        search = self.query_one("#log-search", Input)
        if search.display:
            search.display = False
            self.view.focus()
            return
        self.app.pop_screen()

    def action_search(self) -> None:
        search = self.query_one("#log-search", Input)
        search.display = True
        search.value = self.view.search_term
        search.focus()

    @on(Input.Submitted, "#log-search")
    def _on_search(self, event: Input.Submitted) -> None:
        event.input.display = False
        self.view.focus()
        self.view.search(event.value)
        self._show_status()

    def action_switch_pane(self) -> None:
        drives = self.query_one("#drives", OptionList)
        if drives.has_focus:
            self.view.focus()
        else:
            drives.focus()

    def action_reload(self) -> None:
        self._load()

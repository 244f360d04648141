"""The notices screen (`i`): what the loop recorded for the operator, newest first, and
whether each was sent to `[notify]`; opening it marks them seen, so the header's count of
new notices goes.

A TUI opened in the morning lists what the night's loop told while nobody watched (the
toasts only tell what is recorded while the app runs). The rows are read in a worker, and
marked seen there too; each is drawn as plain text (a row of the store may hold anything).
"""

from __future__ import annotations

from board.core.model import Notice
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from .footer import KeysFooter
from .painttext import one_line
from .screenbase import BoardAppScreen

SHOWN = 200  # the newest notices listed


def notice_row(notice: Notice) -> str:
    """One notice as its row says it: `2026-01-01 00:00  needs  c-1 needs you: terminal ·
    sent`; when it was, its kind, its text, and whether `[notify]` took it."""
    at = notice.at[:16].replace("T", " ")
    if notice.sent_at:
        sent = f"sent ({notice.sent_to})"
    elif notice.error:
        sent = f"not sent, {notice.tries} tries: {notice.error}"
    else:
        sent = ""
    row = f"{at}  {notice.kind:<9} {notice.text}"
    return one_line(f"{row} · {sent}" if sent else row)


class NoticesScreen(BoardAppScreen):
    """The newest notices, newest first."""

    BINDINGS = [
        Binding(
            "escape,i", "app.pop_screen", "back", tooltip="back to the board", id="notices.back"
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.shown: list[Notice] | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text("reading the notices…"), id="notices-title")
        yield VerticalScroll(id="notices-rows")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.watch_store()
        self.reload()

    def reload(self) -> None:
        self._read()

    @work(thread=True, exclusive=True, group="notices-read", exit_on_error=False)
    def _read(self) -> None:
        app = self.board_app
        try:
            rows = app.store.notices(limit=SHOWN, newest=True)
            if rows and not all(n.seen for n in rows):
                app.store.mark_seen(rows[0].id)
        except Exception as exc:  # a store error is a line on the screen, not a crash
            app.call_from_thread(app.say, f"notices: {exc}", True)
            return
        app.call_from_thread(self.show, rows)

    def show(self, rows: list[Notice]) -> None:
        if rows == self.shown:
            return
        self.shown = rows
        title = f"notices · the newest {len(rows)}, newest first" if rows else "no notices yet"
        self.query_one("#notices-title", Static).update(Text(title))
        box = self.query_one("#notices-rows", VerticalScroll)
        box.remove_children()
        box.mount_all([Static(Text(notice_row(n)), classes="notice-row") for n in rows])


__all__ = ["SHOWN", "NoticesScreen", "notice_row"]

"""Notices in the control room: a toast for each notice the loop recorded since the app
started (and, with `[tui] notify`, a terminal bell or a desktop notice, OSC 9, beside it),
and the count of those no operator has seen yet for the header.

The notices themselves are the core's (core/cards/notices.py): the loop records each once
in the store, whether or not a TUI is open, so two open TUIs and the loop never tell one
thing twice and a TUI opened later lists what it missed (the notices screen, `i`). Nothing
is worked out here from what a TUI sees change. A notice's text is the card's id, its class
and a fixed phrase, nothing of the card's text; the OSC 9 payload is further kept to plain
ASCII so no byte of it can end the sequence early or start another.
"""

from __future__ import annotations

import re
from functools import partial
from typing import TYPE_CHECKING

from board.core.cards.notices import IDLE_TEXT, needs_of, notice_text
from board.core.errors import BoardError
from board.core.model import Notice
from board.core.records import Record, field

from .painttext import one_line
from .widgets import HealthBar

if TYPE_CHECKING:
    from .app import BoardApp

MODES = ("none", "bell", "osc9")
_UNSAFE = re.compile(r"[^A-Za-z0-9 ._:-]")


def osc9(text: str) -> str:
    """The desktop-notice escape (iTerm2, kitty, WezTerm, foot, Windows Terminal…) for
    `text`, reduced to plain ASCII letters, digits and ` ._:-`."""
    return f"\x1b]9;board: {_UNSAFE.sub('?', text)[:120]}\x07"


class Notices(Record):
    """What this app has read of the store's notices: the newest id when it started (what
    came before is not toasted: it is on the notices screen), the newest toasted since, how
    many no operator has seen, and every toast given, in order."""

    after: int | None = None  # None until the first reading
    unseen: int = 0
    told: list[str] = field(default_factory=list)

    def new(self, last: int, unseen: int, read: list[Notice]) -> list[Notice]:
        """A reading: the newest id, the unseen count and the notices after `after` (empty
        on the first reading, which only sets where the toasts start)."""
        self.unseen = unseen
        if self.after is None:
            self.after = last
            return []
        fresh = [n for n in read if n.id > self.after]
        self.after = max([self.after, *(n.id for n in fresh)])
        return fresh


Reading = tuple[int, int, list[Notice]]  # the newest id, the unseen count, the new notices


class NoticeReader:
    """Reads the store's notices for the app, in a worker, at the start and at each store
    change: toasts each new one once (`BoardApp.tell`), and gives every header the count
    of those no operator has seen. A change during a read reads again after it."""

    def __init__(self, app: BoardApp) -> None:
        self.app = app
        self.notices = Notices()
        self._reading = False
        self._again = False

    def read(self) -> None:
        if self._reading:
            self._again = True
            return
        self._reading, self._again = True, False
        work = partial(self._read, self.notices.after)
        self.app.run_worker(work, thread=True, group="notices", exit_on_error=False)

    def _read(self, after: int | None) -> None:
        store = self.app.store
        got: Reading | None = None
        try:
            last, unseen = store.notice_counts()
            got = (last, unseen, store.notices(after) if after is not None and last > after else [])
        except BoardError:  # the header or the status line says so; the next change reads
            pass
        self.app.call_from_thread(self._read_done, got)

    def _read_done(self, got: Reading | None) -> None:
        self._reading = False
        if got is not None:
            for notice in self.notices.new(*got):
                self.app.tell(one_line(notice.text))
            for screen in self.app.screen_stack:
                for bar in screen.query(HealthBar):
                    bar.show_unseen(self.notices.unseen)
        if self._again:
            self.read()


__all__ = ["IDLE_TEXT", "MODES", "NoticeReader", "Notices", "needs_of", "notice_text", "osc9"]

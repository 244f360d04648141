"""Fixtures for the logs screen: a real store with drives, fixed logs, a small app that shows them.

No wall clock anywhere: the store, the log stamps and the screen's elapsed
times all come from fixed moments, so snapshots are the same on every run.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from board.core import logs
from board.core.config import Config
from board.core.model import CardDraft
from board.core.store import SQLiteStore
from board.tui.logs.screen import LogsScreen
from board.tui.logs.view import LogView
from textual.app import App

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
T0 = datetime(2026, 3, 1, 11, 47, 56, tzinfo=UTC)


def fixed_clock() -> datetime:
    return NOW


def stamp(moment: datetime) -> str:
    return logs.format_stamp(moment)


def write_log(path: Path, lines: list[str], start: datetime = T0) -> Path:
    """A log as the drive writes it, with stamps 250 ms apart from `start`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as fh:
        for i, text in enumerate(lines):
            moment = start + timedelta(milliseconds=250 * i)
            fh.write(f"{stamp(moment)} {text}\n".encode("utf-8", "surrogateescape"))
    return path


def append_lines(path: Path, lines: list[str], start: datetime = T0) -> None:
    write_log(path, lines, start)


CODER_LINES = [
    "coder: reading the brief for c-2",
    "coder: editing app.py",
    "$ pytest -q",
    "........................................ [ 80%]",
    "..........                               [100%]",
    "50 passed in 1.02s",
    "markup stays literal: [bold red]x[/] and [link=http://e.x]y[/link]",
    "escapes are shown: \x1b[2J\x1b[H cleared? \x1b]52;c;cm0gLXJmIH4K\x07 clipboard?",
    "cursor: \x1b[10A\x1b[5;5Hmoved? tab\there bell\x07 cr\rEVIL",
    "invalid utf-8: \udcff\udcfe end",
    "a long line: " + "0123456789" * 30,
]


def build_board(root: Path, running_lines: int = 40) -> tuple[Config, SQLiteStore]:
    """Three cards, four drives (one live), each with a log, at fixed times."""
    cfg = Config(root=root)
    cfg.board_dir.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(cfg.db_path, create=True, clock=lambda: "2026-03-01T10:00:00.000Z")
    for title in ("fold the run branch", "parse board.toml", "slow gate"):
        store.create(CardDraft(title=title))

    def drive(card: str, attempt: int, tier: str, status: str, start: datetime, **kw: Any) -> str:
        path = logs.log_path(cfg, card, attempt)
        d = store.start_drive(card, tier, attempt, str(path.relative_to(root)), 0)
        fields: dict[str, Any] = {"started_at": stamp(start)}
        if status != "running":
            fields.update(status=status, **kw)
        store.update_drive(d.id, **fields)
        return str(path)

    p = drive(
        "c-1",
        1,
        "default",
        "failed",
        T0 - timedelta(hours=2),
        ended_at=stamp(T0 - timedelta(minutes=95)),
        result="gate red: 3 tests failed",
    )
    write_log(Path(p), ["attempt one", "gate: 3 failed"], T0 - timedelta(hours=2))
    p = drive(
        "c-1",
        2,
        "smart",
        "passed",
        T0 - timedelta(hours=1),
        ended_at=stamp(T0 - timedelta(minutes=50)),
        result="folded onto board/run",
    )
    write_log(Path(p), ["attempt two", "all green"], T0 - timedelta(hours=1))
    p = drive(
        "c-3",
        1,
        "default",
        "timeout",
        T0 - timedelta(minutes=40),
        ended_at=stamp(T0 - timedelta(minutes=10)),
        result="coder timed out after 1800s",
    )
    write_log(Path(p), ["waiting on the network"] * 3, T0 - timedelta(minutes=40))
    p = drive("c-2", 1, "smart", "running", T0)
    body = [f"step {i}: building" for i in range(running_lines - len(CODER_LINES))]
    write_log(Path(p), body + CODER_LINES, T0)
    return cfg, store  # fmt: skip


class LogsApp(App[None]):
    """The smallest app that shows the logs screen, as the board's `l` key will."""

    def __init__(self, cfg: Config, store: Any, card_id: str | None = None, **kw: Any) -> None:
        super().__init__()
        self.cfg = cfg
        self.store = store
        self.card_id = card_id
        self.screen_kw = kw
        self.animation_level = "none"

    def on_mount(self) -> None:
        kw = {"clock": fixed_clock, "refresh_s": 0, "poll_s": 0.02, **self.screen_kw}
        self.push_screen(LogsScreen(self.cfg, self.store, self.card_id, **kw))


def view_of(app: App[Any]) -> LogView:
    return app.screen.query_one(LogView)


def settled(app: App[Any]) -> Callable[[], bool]:
    def check() -> bool:
        """the log to be read to its end and painted"""
        try:
            view = view_of(app)
        except Exception:
            return False
        lo, hi = view.lines_known
        return (
            view.path is not None
            and hi > lo
            and not view.scanning
            and view.painted_through == hi - 1
            and not view._pending
        )

    return check


def screen_text(app: App[Any]) -> list[str]:
    """The whole screen as plain text rows, as the compositor draws it."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def terminal_output(app: App[Any]) -> str:
    """What the app would write to the terminal for a full repaint (styles included)."""
    update = app.screen._compositor.render_full_update()
    return update.render_segments(app.console)

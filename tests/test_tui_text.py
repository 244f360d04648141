"""Text that fits: at 80x24 no footer cuts a label (`Q reque`, `? hel`) or leaves a stray
letter beside the palette's key (`^p palettel`); a status line expires; the logs screen
says nothing, not "0 lines", before it knows anything."""

from __future__ import annotations

from board.core.config import Config
from board.core.store import SQLiteStore
from board.tui.board import HINT
from textual.widgets import Static

from tests.support.logs import LogsApp
from tests.support.tui import (
    loaded,
    make_app,
    run_pilot,
    screen_lines,
    seeded_board,
    settle,
    status,
)
from tests.support.waiting import wait_for


def footer_fits(line: str) -> None:
    """The footer's keys end on a whole label, and nothing follows the palette's key."""
    left, bar, right = line.partition("▏")
    assert bar, f"no palette key on the footer: {line!r}"
    assert right.rstrip() == "^p palette", f"stray text beside the palette: {right!r}"
    assert left.rstrip().endswith("? help"), f"a label is cut: {left!r}"


async def test_no_footer_cuts_a_label_or_leaves_a_stray_letter_at_80x24(tmp_path) -> None:
    board = seeded_board(tmp_path)
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        footer_fits(screen_lines(app)[-1])
        await pilot.press("enter")
        await settle(pilot)
        footer_fits(screen_lines(app)[-1])
        await pilot.press("escape", "l")
        await pilot.pause(0.5)
        footer_fits(screen_lines(app)[-1])
        await pilot.press("escape", "s")
        await wait_for(pilot, lambda: "stranded" in type(app.screen).__name__.lower())
        await pilot.pause(0.5)
        footer_fits(screen_lines(app)[-1])
    board.close()


async def test_a_status_line_expires(tmp_path) -> None:
    board = seeded_board(tmp_path)
    app = make_app(board, poll=0)
    app.status_ttl = 0.3  # 8 s in use; the rule, not the number, is under test
    async with run_pilot(app, size=(80, 24)) as pilot:
        screen = await loaded(pilot)
        await pilot.press("u")  # c-10 is blocked gate-red: unblocked
        await settle(pilot)
        assert status(app).startswith("unblock c-10"), status(app)
        await wait_for(pilot, lambda: status(app) == "", what="the status to expire")
        line = str(screen.query_one("#status", Static).render())
        assert line.strip() == HINT, f"the board's idle words did not come back: {line!r}"
    board.close()


async def test_the_logs_screen_says_nothing_rather_than_0_lines(tmp_path) -> None:
    cfg = Config(root=tmp_path)
    cfg.board_dir.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(cfg.db_path, create=True)
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await pilot.pause(0.5)
        shown = str(app.screen.query_one("#log-status", Static).render())
        assert "0 lines" not in shown and shown.strip() == "", shown
        assert "no drive logs yet" in "\n".join(screen_lines(app))
    store.close()

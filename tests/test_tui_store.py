"""The board over its store: a write from another process appears without a key, R
reloads with the watch off, and an empty, slow, broken or corrupt store is a board or
one line, never a traceback."""

from __future__ import annotations

from board.core.cards import actions
from board.tui.board import BoardScreen

from tests.support.boards import make_board
from tests.support.tui import (
    add,
    cli,
    goto,
    ids,
    lane,
    loaded,
    make_app,
    run_pilot,
    screen_lines,
    settle,
    status,
)
from tests.support.waiting import wait_for


async def test_a_corrupt_card_row_is_named_and_the_rest_of_the_board_shows(board) -> None:
    """A priority edited into text by hand: the board lists every other card and the status
    line names the card and the field, on the first paint and on every reload."""
    board.store.conn.execute("UPDATE cards SET priority = 'high' WHERE id = 'c-9'")
    app = make_app(board)
    async with run_pilot(app, size=(160, 48)) as pilot:
        screen = await loaded(pilot)
        assert ids(lane(screen, "ready")) == ["c-10", "c-2", "c-1"]
        assert ids(lane(screen, "backlog")) == ["c-5", "c-11", "c-4", "c-12"]
        assert "card c-9 cannot be read: its field priority" in status(app)
        app.say("")
        actions.ready(board.store, "c-11")  # another write: the board reloads from the store
        await wait_for(pilot, lambda: "c-11" in ids(lane(screen, "ready")), what="the reload")
        await settle(pilot)
        assert "card c-9 cannot be read" in status(app)


async def test_a_write_from_another_process_appears_without_a_key(board) -> None:
    app = make_app(board)
    async with run_pilot(app) as pilot:
        screen = await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        res = cli(board, "hold", "c-1", "--reason", "from the other terminal")
        assert res.returncode == 0, res.stderr
        res = cli(board, "card", "add", "urgent thing", "--spec", "s", "--ready", "--priority", "0")
        assert res.returncode == 0, res.stderr
        await wait_for(
            pilot,
            lambda: "c-13" in ids(lane(screen, "ready")),
            timeout=3,
            what="the CLI's new card to appear with no key pressed",
        )
        await wait_for(
            pilot,
            lambda: lane(screen, "ready").current.blocked is not None,
            timeout=3,
            what="the CLI's hold to appear",
        )
        assert screen.current_card().id == "c-1", "the cursor left its card on a reload"


async def test_the_card_screen_updates_live_too(board) -> None:
    app = make_app(board)
    async with run_pilot(app, size=(100, 50)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        await pilot.press("enter")
        await settle(pilot)
        assert cli(board, "hold", "c-1", "--reason", "seen live").returncode == 0
        await wait_for(
            pilot, lambda: "seen live" in "\n".join(screen_lines(app)), timeout=3, what="live card"
        )


async def test_R_refreshes_when_the_watch_is_off(board) -> None:
    app = make_app(board, poll=0)
    async with run_pilot(app) as pilot:
        screen = await loaded(pilot)
        add(board.store, "late arrival")
        await pilot.pause(0.3)
        assert "c-13" not in ids(lane(screen, "backlog"))
        await pilot.press("R")
        await settle(pilot)
        assert "c-13" in ids(lane(screen, "backlog")), "R did not reload"


async def test_works_with_no_loop_and_an_empty_store(tmp_path) -> None:
    board = make_board(tmp_path)
    app = make_app(board)
    async with run_pilot(app) as pilot:
        screen = await loaded(pilot)
        assert all(not lane(screen, name).rows for name in ("backlog", "ready"))
        await pilot.press("r", "enter", "x")
        await settle(pilot)
        assert isinstance(app.screen, BoardScreen)
        assert "no card here" in status(app)
        assert "empty" in "\n".join(screen_lines(app))
    board.close()


async def test_a_slow_first_read_says_reading_then_shows_the_board(board) -> None:
    board.store._lock.acquire()  # the store is busy: the first read waits behind this
    try:
        app = make_app(board)
        async with run_pilot(app) as pilot:
            await pilot.pause(0.8)
            assert not app.screen.loaded, "the board claims to be loaded before its read"
            assert "reading the board" in "\n".join(screen_lines(app))
            await pilot.press("j", "r")  # keys while reading: nothing to act on, no crash
            board.store._lock.release()
            screen = await loaded(pilot)
            assert ids(lane(screen, "backlog")) == ["c-5", "c-11", "c-4", "c-12"]
    finally:
        if board.store._lock._is_owned():  # type: ignore[attr-defined]
            board.store._lock.release()


async def test_a_broken_store_is_one_line_not_a_traceback(board) -> None:
    board.store.conn.execute("DROP TABLE meta")
    app = make_app(board)
    async with run_pilot(app) as pilot:
        await pilot.pause(0.8)
        await settle(pilot)
        assert app.is_running
        assert "is not a board database" in status(app), status(app)
        assert "Traceback" not in "\n".join(screen_lines(app))

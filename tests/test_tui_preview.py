"""The preview beside the lanes (`v`): on by default from 140 columns, it follows the
cursor, says the card's full title, block and drive, follows a growing log without a key,
and gives the card's tree's diffstat against its start point. Real parts: the real store,
a real log written by the board's LogWriter, a real worktree made by the core."""

from __future__ import annotations

from pathlib import Path

from board.core.git import worktrees
from board.core.logs import LogWriter, log_path
from board.tui.app import BoardApp
from board.tui.board import BoardScreen
from board.tui.health import utc_now
from board.tui.preview import Preview

from tests.support.boards import make_board
from tests.support.loop import add_card, edit_tier
from tests.support.tui import (
    add,
    fixed_now,
    live_board,
    loaded,
    make_app,
    run_pilot,
    settle,
)
from tests.support.waiting import wait_for


def pane(app) -> Preview:
    return app.screen.query_one(Preview)


def pane_text(app) -> str:
    """What the preview paints, its lines joined (the lanes' cells left out)."""
    region = pane(app).content_region
    lines = []
    for strip in app.screen._compositor.render_strips()[region.y : region.bottom]:
        text = "".join(seg.text for seg in strip)
        lines.append(text[region.x : region.right].rstrip())
    return "\n".join(lines)


async def test_the_preview_is_on_from_140_columns_and_v_toggles_it(tmp_path) -> None:
    board = live_board(tmp_path)
    for size, shown in (((160, 40), True), ((139, 40), False), ((80, 24), False)):
        app = make_app(board, poll=0)
        async with run_pilot(app, size=size) as pilot:
            await loaded(pilot)
            assert pane(app).display is shown, f"at {size} the preview should be {shown}"
            await pilot.press("v")
            await settle(pilot)
            assert pane(app).display is not shown, f"v did not toggle the preview at {size}"
            if not shown:
                assert "c-8" in pane_text(app), "the toggled preview shows no card"
            await pilot.press("v")
            assert pane(app).display is shown
    board.close()


async def test_the_preview_follows_the_cursor_and_a_growing_log_without_a_key(tmp_path) -> None:
    board = live_board(tmp_path)
    long_title = "A card whose title runs on " + " ".join(f"word{n}" for n in range(40))
    long_id = add(board.store, long_title, "ready", blocked=None)
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(160, 40)) as pilot:
        screen = await loaded(pilot)
        assert screen.current_lane == "ready"
        text = pane_text(app)
        assert "c-8  Gate red on main" in text and "blocked gate-red" in text, text
        assert "3 tests fail" in text, text
        # the full title, wrapped, every word of it
        assert screen.lane_view("ready").select(long_id)
        await settle(pilot)
        text = " ".join(pane_text(app).split())
        assert long_title in text, f"the full title is not in the preview: {text}"
        # the working card: its drive and its log's last lines
        await pilot.press("right")
        await settle(pilot)
        text = pane_text(app)
        assert "c-1  Draw the lanes with the line API" in text, text
        assert "drive default #2 · 3m04s" in text and "running the gate: 12 passed" in text
        # the log grows: the preview follows with no key pressed
        with LogWriter(log_path(board.cfg, "c-1", 2), clock=fixed_now) as log:
            for n in range(500):
                log.write_line(f"test {n} passed")
        await wait_for(pilot, lambda: "test 499 passed" in pane_text(app), what="the new tail")
        tail = pane_text(app).splitlines()
        assert tail[-1].strip() == "test 499 passed", tail
        # the cursor moves on: the preview goes with it
        await pilot.press("left", "g", "j")
        await settle(pilot)
        assert "c-2  Needs the lanes first" in pane_text(app), pane_text(app)
    board.close()


async def test_the_preview_gives_a_live_trees_diffstat_against_its_start_point(
    tmp_path: Path,
) -> None:
    cfg, store = make_board(tmp_path, origin=True, tiers={"default": edit_tier()})
    card = add_card(store, "edit two files", surface=["work/**"])
    tree = worktrees.create_worktree(cfg, card.id)
    (tree / "work").mkdir()
    (tree / "work" / "a.txt").write_text("one\ntwo\nthree\n")
    (tree / "README.md").write_text("replaced\n")
    app = BoardApp(cfg, store, clock=utc_now, poll_interval=0, live_interval=0)
    app.animation_level = "none"
    async with run_pilot(app, size=(160, 30)) as pilot:
        await loaded(pilot)
        await wait_for(pilot, lambda: "tree: " in pane_text(app), what="the tree's line")
        text = pane_text(app)
        assert f"{card.id}  edit two files" in text, text
        assert "tree: 2 files changed, +4 -1 against" in text, text
    store.close()


async def test_the_first_paint_never_says_no_card_is_selected_while_one_is(board) -> None:
    """The preview (on from 140 columns) reads its card once the cursor has rested; until
    then the first paint left it saying "no card selected" with a card under the cursor.
    It says nothing until the read, then the card."""
    from board.tui.preview import Preview

    app = make_app(board)
    at_paint: list[tuple[str | None, str]] = []
    original = app.board_painted

    def painted() -> None:
        screen = app.screen
        assert isinstance(screen, BoardScreen)
        card = screen.current_card()
        at_paint.append((card.id if card else None, str(screen.query_one(Preview).render())))
        original()

    app.board_painted = painted  # type: ignore[method-assign]
    async with run_pilot(app, size=(160, 48)) as pilot:
        screen = await loaded(pilot)
        [(selected, said)] = at_paint
        assert selected is not None and said == "", (selected, said)
        await wait_for(
            pilot,
            lambda: screen.query_one(Preview).data is not None,
            what="the preview's read",
        )
        assert screen.query_one(Preview).data.card == selected

"""The dependency screen (`D`), driven by keys on the real SQLite store of
tests/support/deps.py: `D` on a card of the board and of the card screen opens its trees
both ways, `enter` on a node opens that card, `escape` goes back, `a` toggles every chain
of the board (blocked heads first, marked with how many wait behind them) and back; a
store change is followed; a title is drawn literally; `M` is mark done now."""

from __future__ import annotations

import pytest
from board.core.store import Expect
from board.tui.board import BoardScreen
from board.tui.card import CardScreen
from board.tui.depscreen import DepsScreen, DepTree

from tests.support.deps import deps_board
from tests.support.tui import goto, loaded, make_app, run_pilot, screen_lines, settle
from tests.support.waiting import wait_for


@pytest.fixture
def board(tmp_path):
    board = deps_board(tmp_path)
    yield board
    board.close()


def text(app) -> str:
    return "\n".join(screen_lines(app))


def rows(app) -> list[str]:
    """The tree's rows as drawn, stripped of the guides (card ids and words)."""
    tree = app.screen.query_one(DepTree)
    out = []
    for line in range(tree.last_line + 1):
        node = tree.get_node_at_line(line)
        assert node is not None
        out.append(str(node.label))
    return out


async def deps_shown(pilot, what: str) -> DepsScreen:
    app = pilot.app
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, DepsScreen) and app.screen.read is not None,
        what=what,
    )
    await settle(pilot)
    assert isinstance(app.screen, DepsScreen)
    return app.screen


async def test_D_enter_escape_and_the_board_wide_toggle(board) -> None:
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(100, 30)) as pilot:
        await loaded(pilot)
        await goto(pilot, "backlog", "c-4")
        await pilot.press("D")
        screen = await deps_shown(pilot, "c-4's trees")
        assert rows(app) == [
            "waits on",
            "c-3 backlog  Store the cards",
            "c-2 ready  held   Write the migrations  ◀ 3 wait behind it",
            "c-1 done ✓  Design the schema",
            "c-5 working  Read the gh JSON",
            "c-1 done ✓  Design the schema",
            "waited on by",
            "c-6 backlog  [bold red]x[/] [@click=app.quit]q[/] ␛[2Jwipe",
        ]
        assert "c-4 · backlog · Import from GitHub" in text(app)
        assert "\x1b" not in text(app)
        # the cursor starts on the first card; down to c-2, enter opens it
        tree = screen.query_one(DepTree)
        assert tree.cursor_node is not None and tree.cursor_node.data == "c-3"
        await pilot.press("j")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CardScreen), what="c-2's screen")
        assert app.screen.card_id == "c-2"
        await pilot.press("escape")  # the card, back to the trees
        await settle(pilot)
        assert app.screen is screen
        # every chain: the blocked head first, three behind it; c-4 under both heads
        await pilot.press("a")
        await wait_for(pilot, lambda: screen.read.card is None, what="the board's chains")
        await settle(pilot)
        assert rows(app) == [
            "c-2 ready  held   Write the migrations  ◀ 3 wait behind it",
            "c-3 backlog  Store the cards",
            "c-4 backlog  Import from GitHub",
            "c-6 backlog  [bold red]x[/] [@click=app.quit]q[/] ␛[2Jwipe",
            "c-5 working  Read the gh JSON",
            "c-4 backlog  Import from GitHub  (shown above)",
            "c-8 backlog  Docs for the import",
        ]
        assert "every chain of the board: 2 heads, 1 blocked" in text(app)
        assert "a card/board" in text(app), "the footer does not name the toggle"
        await pilot.press("a")  # and back to c-4's trees
        await wait_for(pilot, lambda: screen.read.card is not None, what="c-4 again")
        await settle(pilot)
        assert rows(app)[0] == "waits on"
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, BoardScreen)


async def test_D_on_the_card_screen_and_a_store_change_followed(board) -> None:
    app = make_app(board, poll=0.05)
    async with run_pilot(app, size=(100, 30)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-2")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CardScreen), what="c-2's screen")
        card_screen = app.screen
        await pilot.press("D")
        await deps_shown(pilot, "c-2's trees")
        assert rows(app)[:2] == ["waits on", "c-1 done ✓  Design the schema"]
        assert "c-2 · ready · blocked held · 3 wait behind it · Write the migrations" in text(app)
        # the DBA answered: unblocked elsewhere, the trees follow
        board.store.update("c-2", Expect(), {"blocked": None}, who="test")
        await wait_for(
            pilot,
            lambda: "blocked held" not in text(app) and "c-2 · ready ·" in text(app),
            what="the trees read again",
        )
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is card_screen


async def test_M_marks_done_and_D_no_longer_does(board) -> None:
    """`D` was mark done; it is the dependency view now and changes nothing."""
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(100, 30)) as pilot:
        await loaded(pilot)
        await goto(pilot, "backlog", "c-8")
        await pilot.press("D")
        await deps_shown(pilot, "c-8's trees")
        assert board.store.get("c-8").lane == "backlog"
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("M")
        await settle(pilot)
        assert "Mark done c-8" in text(app)

"""Invariant 5 on the board: nothing a user wrote (markup, escapes) is obeyed by the
terminal or run as an action, on the board, the card screen, questions and status."""

from __future__ import annotations

from board.core.model import Blocked
from board.core.store import Expect
from board.tui.app import BoardApp

from tests.support.tui import (
    CLEAR,
    MARKUP_TITLE,
    OSC52,
    add,
    goto,
    lane,
    loaded,
    make_app,
    run_pilot,
    screen_lines,
    screen_segments,
    settle,
)


def _hostile(board) -> str:
    card = add(
        board.store,
        MARKUP_TITLE + " " + OSC52 + CLEAR,
        "ready",
        priority=0,
        spec=f"spec [red]not red[/] {CLEAR}\nline two {OSC52}",
        acceptance="[link=http://evil]click[/link]",
        labels=[f"[b]lab{CLEAR}[/b]"],
    )
    board.store.update(card, Expect(), {"blocked": Blocked("held", f"[blink]why[/] {OSC52}")})
    board.store.add_comment(card, f"[@click=app.quit]comment[/] {CLEAR}\x07", "bob")
    return card


def _assert_literal(app: BoardApp, where: str) -> None:
    segments = screen_segments(app)
    text = "".join(seg.text for seg in segments)
    for bad in ("\x1b", "\x07", "\x9b"):
        assert bad not in text, f"a raw {bad!r} reached the terminal on the {where}"
    for seg in segments:
        meta = seg.style.meta if seg.style else {}
        assert not any(str(k).startswith("@") for k in meta), (
            f"markup from a card became an action on the {where}: {meta}"
        )


async def test_markup_and_escapes_are_shown_literally_on_the_board(board) -> None:
    card = _hostile(board)
    app = make_app(board)
    async with run_pilot(app, size=(200, 30)) as pilot:
        screen = await loaded(pilot)
        await goto(pilot, "ready", card)
        _assert_literal(app, "board")
        text = "\n".join(screen_lines(app))
        assert "[bold red]x[/] [@click=app.quit]q[/]" in text, "the markup title was interpreted"
        assert "␛]52;c;cm0gLXJmIH4K^G␛[2J" in text, "the escapes are not made visible"
        view = lane(screen, "ready")
        line = view.cursor - int(view.scroll_offset.y) + view.header_rows  # the card's row
        for x in range(30):  # every cell of the row's start, where the title begins
            await pilot.click("#lane-ready", offset=(x, line))
        await pilot.pause()
        assert app.is_running, "clicking the title ran the markup's action"


async def test_markup_and_escapes_are_shown_literally_on_the_card_screen(board) -> None:
    card = _hostile(board)
    app = make_app(board)
    async with run_pilot(app, size=(160, 60)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", card)
        await pilot.press("enter")
        await settle(pilot)
        _assert_literal(app, "card screen")
        text = "\n".join(screen_lines(app))
        for needle in (
            "[bold red]x[/] [@click=app.quit]q[/]",
            "spec [red]not red[/] ␛[2J",
            "line two ␛]52;c;cm0gLXJmIH4K^G",
            "[link=http://evil]click[/link]",
            "[b]lab␛[2J[/b]",
            "[blink]why[/] ␛]52;c;",
            "[@click=app.quit]comment[/] ␛[2J^G",
        ):
            assert needle in text, f"the card screen does not show {needle!r} literally"
        comment_row = next(y for y, line in enumerate(screen_lines(app)) if " bob " in line)
        cells = [(x, 1) for x in range(20)] + [(x, comment_row) for x in range(25, 60)]
        for offset in cells:  # the title's start and the comment's: where [@click] would be
            await pilot.click("#card-body", offset=offset)
        await pilot.pause()
        assert app.is_running, "clicking the card screen ran a card's markup"


async def test_markup_and_escapes_are_literal_in_questions_and_status(board) -> None:
    card = _hostile(board)
    app = make_app(board)
    async with run_pilot(app, size=(200, 30)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", card)
        await pilot.press("x")
        _assert_literal(app, "confirmation")
        assert "[bold red]x[/] [@click=app.quit]q[/]" in "\n".join(screen_lines(app))
        await pilot.press("n", "H", *"[red]r[/]", "enter")
        await settle(pilot)
        _assert_literal(app, "status line")
        assert "blocked held: [red]r[/]" in "\n".join(screen_lines(app))

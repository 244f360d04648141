"""The card form's best of (issue 42): `n` adds a card with its own best of N, blank is the
board's `[coder] best_of`, a count the core refuses stays in the form with its one line, and
`e` shows a card's own count and, emptied, gives the card back to the board's. The seeded
board (tests/support/tui.py) on the real SQLite store, through the real form."""

from __future__ import annotations

from board.core.store import Expect
from board.tui.board import BoardScreen
from board.tui.card_form import CardForm
from textual.widgets import Input, Static

from tests.support.tui import goto, loaded, make_app, run_pilot, settle
from tests.support.waiting import wait_for


def _error(app) -> str:
    return str(app.screen.query_one("#form-error", Static).render())


async def _fill(pilot, selector: str, text: str) -> None:
    field = pilot.app.screen.query_one(selector, Input)
    field.value = text
    await pilot.pause()


async def test_n_adds_a_card_with_its_own_best_of_and_refuses_one_out_of_bounds(board) -> None:
    app = make_app(board)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        before = len(board.store.list_cards())
        await pilot.press("n")
        assert isinstance(app.screen, CardForm)
        best = app.screen.query_one("#form-best-of", Input)
        assert best.value == "" and best.placeholder == "candidates at once; blank: the board's (1)"
        await pilot.press(*"Raced")
        for bad, line in (
            ("0", "--best-of must be a whole number from 1 to 16, not 0"),
            ("17", "--best-of must be a whole number from 1 to 16, not 17"),
            ("three", "best of must be a whole number 1-16 (blank: the board's), got 'three'"),
        ):
            await _fill(pilot, "#form-best-of", bad)
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda line=line: line in _error(app), what=line)
            assert isinstance(app.screen, CardForm), "a refusal closed the form"
        assert len(board.store.list_cards()) == before, "a refused form added a card"
        await _fill(pilot, "#form-best-of", "3")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, BoardScreen), what="the board")
        await settle(pilot)
    added = board.store.list_cards()[-1]
    assert (added.title, added.best_of, added.race) == ("Raced", 3, ())
    assert len(board.store.list_cards()) == before + 1


async def test_n_with_the_best_of_blank_leaves_the_card_to_the_board(board) -> None:
    app = make_app(board)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("n", *"Plain")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, BoardScreen), what="the board")
    added = board.store.list_cards()[-1]
    assert (added.title, added.best_of) == ("Plain", 0)


async def test_e_shows_the_card_s_own_best_of_and_emptied_gives_it_back_to_the_board(
    board,
) -> None:
    card = board.store.get("c-1")
    with board.store.transaction() as tx:
        tx.update(card.id, Expect(version=card.version), {"best_of": 4}, "op")
    app = make_app(board)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        await pilot.press("e")
        assert isinstance(app.screen, CardForm)
        assert app.screen.query_one("#form-best-of", Input).value == "4"
        await _fill(pilot, "#form-best-of", "")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, BoardScreen), what="the board")
    assert board.store.get("c-1").best_of == 0
    assert "best_of 4 → ∅" in board.store.timeline("c-1")[-1].text


async def test_e_on_a_raced_card_says_its_race_and_a_count_replaces_it(board) -> None:
    card = board.store.get("c-1")
    with board.store.transaction() as tx:
        tx.update(card.id, Expect(version=card.version), {"race": ("default",)}, "op")
    app = make_app(board)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        await pilot.press("e")
        best = app.screen.query_one("#form-best-of", Input)
        assert best.value == "" and best.placeholder == "blank: its race (default); N replaces it"
        await _fill(pilot, "#form-title", "kept its race")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, BoardScreen), what="the board")
        await settle(pilot)
        assert board.store.get("c-1").race == ("default",), "a blank best of dropped the race"
        await pilot.press("e")
        await _fill(pilot, "#form-best-of", "2")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, BoardScreen), what="the board")
    now = board.store.get("c-1")
    assert (now.title, now.best_of, now.race) == ("kept its race", 2, ())

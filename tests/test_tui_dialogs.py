"""Dialogs that do what they say: every question fits a 60x15 terminal even when the card's
title is 2,400 characters (the question's end and the buttons stay on screen), and the
pictures of the new-card form, the edit form with an inline error, and a dialog at 60x15.

Snapshots as in test_tui_snapshots.py: the seeded store on the fixed clock, no watcher,
no blink, no animation. Update with `--snapshot-update` after an intended change."""

from __future__ import annotations

import pytest
from board.tui.dialogs import ConfirmDialog, ConfirmReasonDialog, ReasonDialog

from tests.support.tui import (
    add,
    goto,
    loaded,
    make_app,
    run_pilot,
    screen_lines,
    seeded_board,
    settle,
)

HUGE = "A title that will not stop " + "and on " * 340  # ~2,400 characters
assert len(HUGE) > 2400


def huge_board(tmp_path):
    """The seeded board plus c-13, ready, with a 2,400-character title, and c-14 working."""
    board = seeded_board(tmp_path)
    add(board.store, HUGE, "ready", priority=0)
    add(board.store, "Working " + HUGE, "working", priority=0)
    return board


@pytest.mark.parametrize(
    ("lane", "card", "key", "dialog", "must_show"),
    [
        ("ready", "c-13", "x", ConfirmDialog, ("Yes, cancel c-13", "No, keep it", "then")),
        ("ready", "c-13", "H", ReasonDialog, ("enter to confirm", "reason")),
        ("working", "c-14", "S", ConfirmReasonDialog, ("Yes, stop c-14", "No, keep it")),
    ],
)
async def test_a_question_on_a_huge_title_fits_60x15(
    tmp_path, lane, card, key, dialog, must_show
) -> None:
    board = huge_board(tmp_path)
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(60, 15)) as pilot:
        await loaded(pilot)
        await goto(pilot, lane, card)
        await pilot.press(key)
        await settle(pilot)
        assert isinstance(app.screen, dialog)
        text = "\n".join(screen_lines(app))
        assert card in text, "the question's card id was pushed off the screen"
        for words in must_show:
            if words == "then":  # the question's last words: what happens to the card
                words = "then removed"
            assert words in text, f"{words!r} is not on the 60x15 screen:\n{text}"
    board.close()


def _snap(snap_compare, app, size, keys, board) -> bool:
    async def run_before(pilot) -> None:
        await loaded(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    try:
        return snap_compare(app, terminal_size=size, run_before=run_before)
    finally:
        board.close()


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_new_card_form_snapshot(snap_compare, tmp_path, size) -> None:
    board = seeded_board(tmp_path)
    app = make_app(board, poll=0)
    assert _snap(snap_compare, app, size, ("n", *"Add a /health endpoint"), board)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_edit_form_with_an_inline_error_snapshot(snap_compare, tmp_path, size) -> None:
    """c-10 (ready) opened with e, its priority made 9: the core's refusal in the form."""
    board = seeded_board(tmp_path)
    app = make_app(board, poll=0)
    keys = ("e", "tab", "tab", "tab", "ctrl+u", "9", "ctrl+s")
    assert _snap(snap_compare, app, size, keys, board)


def test_dialog_with_a_huge_title_at_60x15_snapshot(snap_compare, tmp_path) -> None:
    board = huge_board(tmp_path)
    app = make_app(board, poll=0)
    assert _snap(snap_compare, app, (60, 15), ("j", "j", "j", "x"), board)  # c-13

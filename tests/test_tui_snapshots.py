"""Snapshots of the board, the card screen, the help and a confirmation: 80x24 and 160x48,
dark and high-contrast, from the fixed store (fixed clock, no watcher, no blink, no
animation), so a change in what the operator sees shows up as a picture diff.

Update after an intended change with `pytest tests/test_tui_snapshots.py --snapshot-update`
and look at the pictures in the report before committing them.
"""

from __future__ import annotations

import pytest

from tests.support.tui import loaded, make_app, seeded_board, settle

SIZES = {"80x24": (80, 24), "160x48": (160, 48)}
THEMES = ("dark", "high-contrast")
SCREENS = {
    "board": (),
    "card": ("right", "j", "enter"),  # c-2: held, labels, deps, spec, acceptance, comments
    "help": ("question_mark",),
    "confirm": ("right", "j", "x"),  # cancel c-2?
}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("screen", list(SCREENS))
def test_screen_looks_as_approved(snap_compare, tmp_path, screen: str, theme: str, size: str):
    board = seeded_board(tmp_path)
    app = make_app(board, theme=theme, poll=0)

    async def run_before(pilot) -> None:
        await loaded(pilot)
        for key in SCREENS[screen]:
            await pilot.press(key)
            await settle(pilot)

    try:
        assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before), (
            f"the {screen} screen at {size} in {theme} differs from the approved picture"
        )
    finally:
        board.close()

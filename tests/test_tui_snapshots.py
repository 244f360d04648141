"""Snapshots of the board, the card screen, the help, a confirmation and the dependency
view: 80x24 and 160x48, dark and high-contrast, from the fixed store (fixed clock, no
watcher, no blink, no animation), so a change in what the operator sees shows up as a
picture diff.

Five boards: the seeded one, with no loop (the header's warning); a live one (`live_board`):
a loop's heartbeat from another host, a working card 3m04s into its drive with its log's
last line, a tier paused 4m12s more, and a ready card waiting for each of the claim's
reasons; the flow screen's fixed day, with what its agents spent; a board whose agents
said what they spent (`costs_board`: a card's attempts and its total); and a board whose
cards wait on each other (`deps_board`), for the dependency view: a card's trees both
ways, and every chain of the board. Every time on screen comes from the fixed clock the
app is given.

Update after an intended change with `pytest tests/test_tui_snapshots.py --snapshot-update`
and look at the pictures in the report before committing them.
"""

from __future__ import annotations

import pytest

from tests.support.deps import deps_board
from tests.support.flow import flow_board
from tests.support.spend import costs_board
from tests.support.tui import live_board, loaded, make_app, seeded_board, settle

SIZES = {"80x24": (80, 24), "160x48": (160, 48)}
PREVIEW_AT_80 = ("v",)  # `v` shows it at 80 columns; at 160 it is on already, `v` would hide it
THEMES = ("dark", "high-contrast")
# the board opens on the ready lane (its blocked cards need the operator): c-10, c-2, …
SCREENS = {
    "board": (seeded_board, ()),
    "card": (seeded_board, ("j", "enter")),  # c-2: held, labels, deps, spec, comments
    "help": (seeded_board, ("question_mark",)),
    "confirm": (seeded_board, ("j", "x")),  # cancel c-2?
    "live": (live_board, ()),  # the header, why each card waits, a working row
    "live-card": (live_board, ("j", "j", "j", "enter")),  # c-4: no surface, runs alone
    # the preview on the working card, its drive and log (on by default from 140 columns)
    "preview": (live_board, ("right",) + PREVIEW_AT_80),
    "flow": (flow_board, ("F",)),  # the fixed day of tests/support/flow.py, its spend rows
    # c-1: blocked over-budget after three attempts, one unpriced (tests/support/spend.py)
    "costs-card": (costs_board, ("enter",)),
    # c-2, blocked held with three behind it: its trees both ways (tests/support/deps.py)
    "deps": (deps_board, ("D",)),
    "deps-board": (deps_board, ("D", "a")),  # every chain, the blocked head first
}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("screen", list(SCREENS))
def test_screen_looks_as_approved(snap_compare, tmp_path, screen: str, theme: str, size: str):
    make, keys = SCREENS[screen]
    if screen == "preview" and size != "80x24":
        keys = tuple(k for k in keys if k not in PREVIEW_AT_80)
    board = make(tmp_path)
    app = make_app(board, theme=theme, poll=0)

    async def run_before(pilot) -> None:
        await loaded(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    try:
        assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before), (
            f"the {screen} screen at {size} in {theme} differs from the approved picture"
        )
    finally:
        board.close()

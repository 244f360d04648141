"""`[tui.keys]` is checked before anything is drawn: an id no binding has, or a rebinding
that puts two bindings of one screen on the same key (one of them would be silently
hidden, a verb gone), makes `board tui` exit non-zero with one line naming both ids. Every
screen's ids are accepted, the logs screen's included, and its drive list moves with j/k."""

from __future__ import annotations

import pytest
from board.core.errors import ConfigError
from board.tui.app import (
    SCREEN_GROUPS,
    all_binding_ids,
    binding_classes,
    group_classes,
    keymap_problem,
)
from board.tui.logs.screen import DriveList

from tests.support.logs import LogsApp, build_board, settled
from tests.support.tui import cli, make_app, seeded_board
from tests.support.waiting import wait_for


@pytest.mark.parametrize(
    ("keys", "both"),
    [
        ({"verb.hold": "s"}, ("verb.hold", "app.stranded")),  # the board's s is the browser
        ({"card.new": "x"}, ("card.new", "verb.cancel")),
        ({"logs.wrap": "t"}, ("logs.wrap", "logs.stamps")),
        ({"stranded.pick": "d"}, ("stranded.pick", "stranded.discard")),
        ({"diff.down": "k"}, ("diff.down", "diff.up")),
    ],
)
def test_a_colliding_rebinding_is_refused_naming_both_ids(keys, both) -> None:
    line = keymap_problem(keys)
    assert line and all(ident in line for ident in both), line
    assert "\n" not in line


def test_every_screens_ids_are_accepted_the_logs_screens_included() -> None:
    for ident in ("logs.search", "logs.wrap", "logs.drives_down", "diff.top", "stranded.sort"):
        assert ident in all_binding_ids()
    assert keymap_problem({"logs.search": "f", "logs.wrap": "W", "stranded.sort": "O"}) == ""
    assert keymap_problem({"lane.down": "J", "verb.hold": "b"}) == ""


def test_the_overlaps_the_board_ships_with_are_not_refused() -> None:
    """The browser's s sorts over the app's s (stranded): by design, so no keymap is needed
    to open the board, and an empty one is sound."""
    assert keymap_problem({}) == ""


def test_every_class_with_bindings_is_in_a_screen_group() -> None:
    grouped = [cls for classes in group_classes().values() for cls in classes]
    for cls in binding_classes():
        covered = any(issubclass(cls, g) or issubclass(g, cls) for g in grouped)
        assert covered, f"{cls.__qualname__} is in no SCREEN_GROUPS entry: its keys go unchecked"
    assert len(SCREEN_GROUPS) >= 10


def test_the_app_refuses_a_colliding_keymap_before_drawing(tmp_path) -> None:
    board = seeded_board(tmp_path, keys={"verb.hold": "s"})
    with pytest.raises(ConfigError, match="verb.hold and app.stranded"):
        make_app(board)
    board.close()


@pytest.mark.parametrize(
    ("keys", "needles"),
    [
        ({"verb.hold": "s"}, ("verb.hold", "app.stranded", "board screen")),
        ({"verb.hodl": "b"}, ("no binding has the id 'verb.hodl'",)),
    ],
)
def test_board_tui_exits_non_zero_with_one_line(tmp_path, keys, needles) -> None:
    board = seeded_board(tmp_path, keys=keys)
    res = cli(board, "tui")
    board.close()
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and all(n in lines[0] for n in needles), res.stderr
    assert "needs a terminal" not in res.stderr, "the keymap was not checked first"


async def test_the_logs_drive_list_moves_with_j_and_k(tmp_path) -> None:
    cfg, store = build_board(tmp_path)
    app = LogsApp(cfg, store)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, settled(app))
        drives = app.screen.query_one(DriveList)
        await pilot.press("tab")
        assert drives.has_focus
        start = drives.highlighted
        await pilot.press("j")
        assert drives.highlighted == start + 1, "j did not move down the drive list"
        await pilot.press("j", "k")
        assert drives.highlighted == start + 1, "k did not move up"
        await pilot.press("G")
        assert drives.highlighted == drives.option_count - 1
        await pilot.press("g")
        assert drives.highlighted == 0
    store.close()

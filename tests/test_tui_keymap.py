"""`[tui.keys]` is checked before anything is drawn: an id no binding has, or a rebinding
that puts two bindings of one screen on the same key (one of them would be silently
hidden, a verb gone), makes `board tui` exit non-zero with one line naming both ids. Every
screen's ids are accepted, the logs screen's included, and its drive list moves with j/k.
A rebound key works on the board and shows in the help."""

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
from board.tui.dialogs import ReasonDialog
from board.tui.logs.screen import DriveList
from textual.binding import Binding

from tests.support.logs import LogsApp, build_board, settled
from tests.support.tui import cli, lane, loaded, make_app, run_pilot, screen_lines, seeded_board
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


def test_a_key_written_as_its_character_collides_with_its_long_name() -> None:
    """Textual reads `?` in a keymap as `question_mark`, the help's key: a rebinding to `?`
    lands on it as surely as one to `question_mark` (and `, ` between keys is a list)."""
    for keys in ("?", "question_mark", "f9, ?"):
        line = keymap_problem({"verb.hold": keys})
        assert "verb.hold" in line and "app.help" in line, (keys, line)
    assert keymap_problem({"verb.hold": "f9,, f10"}) == "", "an empty key was counted"


def test_a_rebinding_is_the_key_the_palette_and_help_show(tmp_path) -> None:
    """The key shown for a binding is the user's when `[tui.keys]` rebinds it, in Textual's
    display form, else the board's."""
    board = seeded_board(tmp_path, keys={"app.stranded": "ctrl+t", "app.help": "f1,?"})
    app = make_app(board)
    assert app.key_for("app.stranded", "s") == app.get_key_display(Binding("ctrl+t", ""))
    assert app.key_for("app.help", "question_mark") == app.get_key_display(Binding("f1", ""))
    assert app.key_for("app.flow", "F") == app.get_key_display(Binding("F", ""))
    assert app.key_for("app.flow", "?") == app.get_key_display(Binding("question_mark", ""))
    board.close()


def test_a_line_view_that_keeps_its_own_keys_is_noted() -> None:
    """`inherit_bindings=False` (a lane keeps only its own keys, not the list's it derives
    from) is noted on every board class defined with it, so the keymap check counts only
    the keys Textual gives it."""
    import ast
    import inspect

    from board.tui.app import class_bindings
    from board.tui.widgets import LaneView, LineList

    for cls in binding_classes():
        tree = ast.parse(inspect.getsource(cls))
        node = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef))
        given = [k.value for k in node.keywords if k.arg == "inherit_bindings"]
        if given:
            assert isinstance(given[0], ast.Constant)
            assert cls.__dict__.get("inherits_bindings") == given[0].value, cls
    lane_ids = {b.id for b in class_bindings(LaneView)}
    list_ids = {b.id for b in LineList.BINDINGS if isinstance(b, Binding)}
    assert lane_ids and not lane_ids & list_ids, lane_ids & list_ids


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
    async with run_pilot(app, size=(100, 30)) as pilot:
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


async def test_keys_rebound_in_board_toml_work_and_show_in_help(tmp_path) -> None:
    board = seeded_board(tmp_path, keys={"verb.hold": "b", "lane.down": "J"})
    app = make_app(board)
    async with run_pilot(app, size=(160, 48)) as pilot:
        screen = await loaded(pilot)
        await pilot.press("J")
        assert lane(screen, "ready").current.id == "c-2", "the rebound down key does nothing"
        await pilot.press("right", "b")
        assert isinstance(app.screen, ReasonDialog), "the rebound hold key does nothing"
        await pilot.press("escape")
        await pilot.press("H")
        assert not isinstance(app.screen, ReasonDialog), "the old key still holds"
        await pilot.press("question_mark")
        rows = [line for line in screen_lines(app) if "verb.hold" in line]
        assert rows and " b " in rows[0], f"help shows the old key: {rows}"
    board.close()


def test_an_unknown_binding_id_in_board_toml_is_refused_before_drawing(tmp_path) -> None:
    """It used to be a status line once the board was up, the key silently unbound."""
    board = seeded_board(tmp_path, keys={"verb.nope": "z"})
    with pytest.raises(ConfigError, match="no binding has the id 'verb.nope'"):
        make_app(board)
    board.close()

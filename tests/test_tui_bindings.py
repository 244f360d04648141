"""Every key in the control room has an id, and every id can be rebound in `[tui.keys]`.

The ids a user may rebind used to be a list kept by hand, which missed the logs screen: a
`logs.wrap = "W"` in board.toml was refused as an unknown id. The app now derives the ids
from the bindings themselves; these tests walk the TUI's classes on their own (not through
the app's walk) so a walk that misses a module cannot pass by being blind.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import board.tui
from board.tui.app import all_binding_ids
from board.tui.commands import VERBS, verb_bindings
from board.tui.logs.screen import LogsScreen
from board.tui.logs.view import LogView
from textual.binding import Binding
from textual.dom import DOMNode

from tests.support.tui import loaded, make_app, run_pilot, seeded_board
from tests.support.waiting import wait_for


def tui_modules() -> list[ModuleType]:
    """Every module of board.tui, imported (the screens opened later are loaded lazily)."""
    found = [board.tui]
    for info in pkgutil.walk_packages(board.tui.__path__, prefix="board.tui."):
        found.append(importlib.import_module(info.name))
    return found


def tui_bindings() -> list[tuple[str, object]]:
    """(class name, binding) for each entry in the BINDINGS of every app, screen and widget
    class the TUI defines (each class's own list: an inherited one is its parent's)."""
    out: list[tuple[str, object]] = []
    for module in tui_modules():
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or not issubclass(cls, DOMNode):
                continue
            for binding in cls.__dict__.get("BINDINGS", []):
                out.append((f"{module.__name__}.{cls.__qualname__}", binding))
    return out


def test_the_walk_sees_every_screen() -> None:
    names = {name for name, _ in tui_bindings()}
    for cls in ("board.BoardScreen", "card.CardScreen", "logs.screen.LogsScreen"):
        assert f"board.tui.{cls}" in names, f"the walk missed {cls}: {sorted(names)}"
    assert "board.tui.stranded.diff_view.DiffView" in names, sorted(names)


def test_every_binding_in_the_tui_has_an_id() -> None:
    missing = [
        f"{name}: {getattr(b, 'key', b)!r} -> {getattr(b, 'action', '')!r}"
        for name, b in tui_bindings()
        if not (isinstance(b, Binding) and b.id)
    ]
    assert not missing, "bindings without an id (they cannot be rebound):\n" + "\n".join(missing)


def test_the_verbs_bindings_have_their_ids() -> None:
    """The bindings built from VERBS (the board and card screens carry them) have ids too."""
    built = verb_bindings()
    assert [b.id for b in built] == [f"verb.{name}" for name in VERBS]
    carried = {b.id for _, b in tui_bindings() if isinstance(b, Binding)}
    assert {b.id for b in built} <= carried, "a screen lost the verb bindings"


def test_every_binding_id_may_be_rebound() -> None:
    ids = {b.id for _, b in tui_bindings() if isinstance(b, Binding) and b.id}
    known = all_binding_ids()
    assert ids - known == set(), f"ids refused in [tui.keys]: {sorted(ids - known)}"
    assert known - ids == set(), f"ids offered that no binding has: {sorted(known - ids)}"


async def test_a_logs_key_is_rebound_from_board_toml(tmp_path) -> None:
    board = seeded_board(tmp_path, keys={"logs.wrap": "W"})
    app = make_app(board, poll=0)
    assert not any("unknown binding id" in p for p in app.problems), app.problems
    async with run_pilot(app, size=(100, 30)) as pilot:
        await loaded(pilot)
        await app.push_screen(LogsScreen(board.cfg, board.store, refresh_s=0))
        await wait_for(pilot, lambda: isinstance(app.screen, LogsScreen), what="the logs")
        view = app.screen.query_one(LogView)
        await pilot.press("w")
        assert not view.wrap, "the old key still wraps after it was rebound"
        await pilot.press("W")
        assert view.wrap, "the rebound wrap key does nothing"
    board.close()

"""Movement keys are written once (tui/movement.py) and every list and page takes them from
there: a view whose page-up drifts to its own keys (it once was `pageup,b` in one view,
`pageup,ctrl+u` in another and `pageup` in a third) fails here."""

from __future__ import annotations

import pytest
from board.tui.app import binding_classes
from board.tui.movement import MOVE_KEYS, READER_KEYS, movement_bindings
from textual.binding import Binding

# every key some movement uses: a binding on one of them is a movement binding
MOVING = {k for keys in (*MOVE_KEYS.values(), *READER_KEYS.values()) for k in keys.split(",")}


def own_bindings() -> list[tuple[str, Binding]]:
    found = []
    for cls in binding_classes():
        for b in cls.__dict__["BINDINGS"]:
            if isinstance(b, Binding):
                found.append((cls.__qualname__, b))
    return found


def test_every_binding_on_a_movement_key_has_that_movements_keys() -> None:
    allowed = set(MOVE_KEYS.values()) | {
        f"{MOVE_KEYS[m]},{extra}" for m, extra in READER_KEYS.items()
    }
    moving = [(cls, b) for cls, b in own_bindings() if MOVING & set(b.key.split(","))]
    assert len(moving) >= 6 * 6  # the lanes, lists, logs, drive list, diff, card, help
    drifted = [(cls, b.id, b.key) for cls, b in moving if b.key not in allowed]
    assert drifted == []


def test_every_list_and_page_has_all_six_movements() -> None:
    by_class: dict[str, set[str]] = {}
    for cls, b in own_bindings():
        for move, keys in MOVE_KEYS.items():
            if b.key.startswith(keys):
                by_class.setdefault(cls, set()).add(move)
    partial = {cls: moves for cls, moves in by_class.items() if moves != set(MOVE_KEYS)}
    assert partial == {}
    assert {"LineList", "LaneView", "LogView", "DiffView", "CardScreen", "HelpScreen"} <= set(
        by_class
    )


def test_a_view_missing_a_movement_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="view: no action for \\['last'\\]"):
        movement_bindings("view", {m: "x" for m in MOVE_KEYS if m != "last"})


def test_a_reader_pages_with_less_keys_and_a_list_does_not() -> None:
    reader = {
        b.id: b.key for b in movement_bindings("r", dict.fromkeys(MOVE_KEYS, "x"), reader=True)
    }
    plain = {b.id: b.key for b in movement_bindings("p", dict.fromkeys(MOVE_KEYS, "x"))}
    assert reader["r.page_down"].split(",")[-1] == "space" and reader["r.page_up"].endswith(",b")
    assert "space" not in plain["p.page_down"] and not plain["p.page_up"].endswith(",b")

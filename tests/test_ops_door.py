"""The operator's door, `board.core.ops`: one name for every verb the command line, the TUI
and the demo use, each loaded from its home module when first asked for.

The door is lazy so that a verb's start pays for its own module only (`board hold` for the
lane verbs, not the git, drive and publishing modules behind a salvage); these tests read
what a fresh interpreter has loaded. Its table is written twice, once for Python and once
for the type checker, so a test holds the two (and `__all__`) equal. That the callers come
through it is tests/test_layers.py's.
"""

from __future__ import annotations

import json
from importlib import import_module
from typing import Any

import pytest
from board.core import ops

from tests.support.layout import door_checked_imports, door_table, module_literal
from tests.support.paths import ROOT
from tests.support.procs import python_child

DOOR = ROOT / "core" / "ops" / "__init__.py"
TABLE = door_table(DOOR.read_text(encoding="utf-8"))
SERVED = [(home, name) for home, names in TABLE.items() for name in names]


def table_faults(text: str) -> list[str]:
    """Where the door's table, its type checker's imports and its `__all__` disagree."""
    table = door_table(text)
    checked = door_checked_imports(text)
    names = [name for served in table.values() for name in served]
    faults = [
        f"{name} is served from two homes" for name in sorted(set(names)) if names.count(name) > 1
    ]
    for home in sorted(set(table) | set(checked)):
        only_table = set(table.get(home, ())) - checked.get(home, set())
        only_checked = checked.get(home, set()) - set(table.get(home, ()))
        faults += [
            f"{home}.{n}: in the table, not in the TYPE_CHECKING block" for n in sorted(only_table)
        ]
        faults += [
            f"{home}.{n}: in the TYPE_CHECKING block, not in the table"
            for n in sorted(only_checked)
        ]
    listed = module_literal(text, "__all__")
    assert isinstance(listed, list)
    if sorted(listed) != sorted(names):
        faults.append(f"__all__ is not the table's names: {sorted(set(listed) ^ set(names))}")
    return faults


def test_the_table_is_what_the_type_checker_imports() -> None:
    assert len(SERVED) > 30  # the check reads something
    assert table_faults(DOOR.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    ("old", "new", "fault"),
    [
        ('        "hold",\n', "", "hold: in the TYPE_CHECKING block, not in the table"),
        ("        hold,\n", "", "hold: in the table, not in the TYPE_CHECKING block"),
        ('("SplitResult", "split")', '("SplitResult", "split", "hold")', "hold is served from two"),
        ('\n    "hold",\n', "\n", "__all__ is not the table's names: ['hold']"),
    ],
    ids=["table", "type-checking block", "two homes", "__all__"],
)
def test_the_table_check_fails_on_a_name_left_out(old: str, new: str, fault: str) -> None:
    text = DOOR.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    found = table_faults(text.replace(old, new))
    assert any(fault in f for f in found), found


@pytest.mark.parametrize(("home", "name"), SERVED, ids=[f"{h}.{n}" for h, n in SERVED])
def test_every_name_in_the_table_is_its_home_s(home: str, name: str) -> None:
    assert getattr(ops, name) is getattr(import_module(home), name)


def test_a_name_the_door_does_not_serve_is_refused_and_a_submodule_still_imports() -> None:
    with pytest.raises(AttributeError, match="'board.core.ops' has no attribute 'hodl'"):
        ops.hodl  # noqa: B018  (the look-up is the test)
    from board.core.ops import leases  # a module of this package, not a verb

    assert leases.__name__ == "board.core.ops.leases"
    assert sorted(ops.__all__) == sorted(name for _, name in SERVED)
    assert set(ops.__all__) <= set(dir(ops))


# the child imports the door, asks for the names given, and says what it had loaded before
# and after, and the module each name's value was defined in
LOADS = """\
import json, sys
homes = {}
from board.core import ops
before = sorted(sys.modules)
for name in sys.argv[1:]:
    value = getattr(ops, name)
    homes[name] = value.__module__
print(json.dumps({"before": before, "after": sorted(sys.modules), "values": homes}))
"""


def _loads(*names: str) -> dict[str, Any]:
    res = python_child(["-c", LOADS, *names])
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_the_door_loads_a_verb_s_home_when_the_verb_is_first_asked_for() -> None:
    """Opening the door loads none of the homes; `ops.hold` loads the lane verbs' module
    and no other home: `board hold` does not pay for a salvage's git and drive."""
    got = _loads("hold", "CardEdit")
    assert sorted(set(TABLE) & set(got["before"])) == []
    assert sorted(set(TABLE) & set(got["after"])) == ["board.core.cards.actions"]
    later = ("board.core.drive", "board.core.publish", "board.core.git.saves")
    assert [m for m in got["after"] if m.startswith(later)] == []
    assert got["values"] == {
        "hold": "board.core.cards.actions",
        "CardEdit": "board.core.cards.actions",
    }


# the child imports the verbs' modules first, as a salvage or the loop does, and only then
# asks the door for the verbs named as those modules are
SHADOW = """\
import importlib, json, sys
for home in sys.argv[1:]:
    importlib.import_module(home)
from board.core import ops
same = {}
for home in sys.argv[1:]:
    name = home.rsplit(".", 1)[1]
    same[name] = getattr(ops, name) is getattr(sys.modules[home], name)
print(json.dumps(same))
"""


def test_a_verb_named_as_its_module_is_the_verb_even_when_the_module_came_first() -> None:
    """`pick` lives in board.core.ops.pick: importing that module names it in the package,
    which would make `ops.pick` the module (and `ops.pick(...)` a TypeError in the TUI once
    a salvage had loaded it). The door keeps each such name for its verb."""
    same = [f"board.core.ops.{name}" for _, name in SERVED if f"board.core.ops.{name}" in TABLE]
    assert sorted(same) == [
        "board.core.ops.approve",
        "board.core.ops.pick",
        "board.core.ops.resolve",
        "board.core.ops.salvage",
        "board.core.ops.stop",
    ]
    res = python_child(["-c", SHADOW, *same])
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {home.rsplit(".", 1)[1]: True for home in same}

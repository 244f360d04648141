"""The suite's own shape: a board is made one way and an app is started under Pilot one way.

Tests used to start Textual apps each with their own set-up (a size here, animations left on
there), and three test modules and three benchmarks each had a `make_board` of their own with
its own signature. Now `make_board` is defined once (tests/support/boards.py) and every test
starts its app through `run_pilot` (tests/support/tui.py). These checks walk the AST of the
tests and the benchmarks so a new copy of either is caught at once.
"""

from __future__ import annotations

import ast

from tests.support.paths import ROOT

BOARDS = "tests/support/boards.py"
PILOT = "tests/support/tui.py"


def modules() -> list[tuple[str, ast.Module]]:
    """Every module under tests/ (the benchmarks included), by its path from the root."""
    out = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        out.append((rel, ast.parse(path.read_text(encoding="utf-8"), filename=rel)))
    return out


def where(rel: str, node: ast.AST) -> str:
    return f"{rel}:{getattr(node, 'lineno', '?')}"


def test_make_board_is_defined_once() -> None:
    defined = [
        where(rel, node)
        for rel, tree in modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "make_board"
    ]
    assert [d.split(":")[0] for d in defined] == [BOARDS], f"make_board defined at {defined}"


def test_no_test_starts_an_app_under_pilot_but_through_run_pilot() -> None:
    """`App.run_test` is called in one place; the benchmarks time their own apps, as they are."""
    calls = [
        where(rel, node)
        for rel, tree in modules()
        if rel != PILOT and not rel.startswith("tests/bench/")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "run_test"
    ]
    assert calls == [], f"run_test called outside run_pilot ({PILOT}): {calls}"

"""The import package `board` laid out as Python sees it, for the checks that read it whole.

The source tree maps `core/` to `board.core` (and so on) through pyproject.toml, which hides
the submodules from import-linter and mypy; so the layer and type checks run over a copy
laid out as board/, with core/, tui/ and themes/ under it.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from pathlib import Path

from tests.support.paths import ROOT


def package_copy(dest: Path) -> Path:
    """The import package `board` laid out as Python sees it, under `dest`."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    pkg = dest / "board"
    shutil.copytree(ROOT / "board", pkg, ignore=ignore)
    for name in ("core", "tui", "themes"):
        shutil.copytree(ROOT / name, pkg / name, ignore=ignore)
    return dest


def run_py(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `args` in `where`, with the laid-out copy first on the import path."""
    env = {**os.environ, "PYTHONPATH": str(where)}
    return subprocess.run(
        [*args],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def module_literal(text: str, name: str) -> object:
    """The value a module's text assigns to `name` at its top level, read as a literal (the
    door's `_HOMES` table and its `__all__`), without importing the module."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.AnnAssign | ast.Assign) and name in _targets(node):
            assert node.value is not None, f"{name} has no value"
            return ast.literal_eval(node.value)
    raise AssertionError(f"no {name} at the module's top level")


def door_table(text: str) -> dict[str, tuple[str, ...]]:
    """The operator's door (core/ops/__init__.py) read from its text: each home module and
    the names the door serves from it, as its `_HOMES` table says."""
    table = module_literal(text, "_HOMES")
    assert isinstance(table, dict), "the door's _HOMES is not a table"
    return {home: tuple(names) for home, names in table.items()}


def door_checked_imports(text: str) -> dict[str, set[str]]:
    """What the door's `if TYPE_CHECKING:` block imports for the type checker: each module
    and the names imported from it."""
    found: dict[str, set[str]] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module, ast.unparse(imp)
                assert all(a.asname is None for a in imp.names), ast.unparse(imp)
                found.setdefault(imp.module, set()).update(a.name for a in imp.names)
    return found


def _targets(node: ast.AnnAssign | ast.Assign) -> list[str]:
    targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
    return [t.id for t in targets if isinstance(t, ast.Name)]

"""The import package `board` laid out as Python sees it, for the checks that read it whole.

The source tree maps `core/` to `board.core` (and so on) through pyproject.toml, which hides
the submodules from import-linter and mypy; so the layer and type checks run over a copy
laid out as board/, with core/, tui/ and themes/ under it.
"""

from __future__ import annotations

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

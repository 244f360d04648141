"""core must import without Textual: the engine runs headless (harlequin's contract)."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import board.core

ABOVE = ("board.tui", "board.cli", "board.demo")  # what sits above core


def test_every_core_module_imports_without_textual_or_the_tui() -> None:
    names = sorted(m.name for m in pkgutil.walk_packages(board.core.__path__, "board.core."))
    assert "board.core.store" in names and "board.core.drive.drive" in names
    code = (
        "import importlib, json, sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == 'textual' or name.startswith(('textual.', *{ABOVE!r})):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        f"loaded = [m for m in sys.modules if m.startswith(('textual', *{ABOVE!r}))]\n"
        "print(json.dumps(sorted(loaded)))\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert res.returncode == 0, f"a core module needs Textual or the TUI: {res.stderr}"
    assert json.loads(res.stdout) == [], "Textual was loaded by core"

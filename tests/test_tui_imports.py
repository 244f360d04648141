"""The control room's start pays only for its first screen: the card verbs, the dialogs and
the screens opened later load when first used. Each module a start imports costs its share
of the first paint (bench_tui's ratio to an empty Textual app), and a module-level import
added for a key's sake would quietly put it back. The test starts the real app in a fresh
interpreter, as `board tui` does, and reads what it had loaded at its first paint. The
early read before Textual needs no Textual at all: without it, `board tui` says so in a line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from board.core import proc

from tests.support.boards import make_board
from tests.support.procs import python_child
from tests.support.tui import seed, seeded_board

# what the first paint has no use for (each is loaded by the key or verb that needs it)
LATER = (
    "board.core.cards.actions",
    "board.core.cards.enddrives",
    "board.core.loop",
    "board.core.drive",
    "board.core.git",
    "board.core.logs",  # the preview reads the selected card's log once the cursor rests
    "board.core.lineindex",
    "board.tui.dialogs",
    "board.tui.card",
    "board.tui.card_form",
    "board.tui.flowscreen",
    "board.tui.logs",
    "board.tui.stranded",
    "importlib.resources",
    "pkgutil",
    "shlex",
    "textual.widgets._footer",  # the keys' footer is mounted after the first paint
)

CHILD = """\
import dataclasses, json, sys
from pathlib import Path

def made():  # the dataclasses the board defined on its way to the first paint
    return [
        f"{value.__module__}.{value.__qualname__}"
        for name, module in list(sys.modules.items()) if name.startswith("board.")
        for value in vars(module).values()
        if isinstance(value, type) and value.__module__ == name
        and dataclasses.is_dataclass(value)
    ]
from board.core import config
from board.core.store import open_store
from board.tui.boarddata import Preload
cfg = config.load(Path(sys.argv[2]))
store = open_store(cfg)
preload = Preload(store, cfg=cfg)
from board.tui.app import BoardApp

class FirstPaint(BoardApp):
    def board_painted(self):
        with open(sys.argv[1], "w") as fh:
            json.dump({"modules": sorted(sys.modules), "dataclasses": made()}, fh)
        self.exit()

FirstPaint(cfg, store, preload=preload).run(headless=True, size=(160, 48))
"""


def test_the_first_paint_loads_no_verb_dialog_or_later_screen(tmp_path: Path) -> None:
    board = make_board(tmp_path)
    seed(board.store)
    board.store.close()
    out = tmp_path / "modules.json"
    res = python_child(["-c", CHILD, str(out), str(board.cfg.root)], timeout=120)
    assert res.returncode == 0 and out.exists(), res.stderr[-2000:]
    seen = json.loads(out.read_text())
    modules = set(seen["modules"])
    assert "board.tui.board" in modules, "the child did not start the board"
    loaded = sorted(m for m in modules if m in LATER or m.startswith(tuple(x + "." for x in LATER)))
    assert loaded == [], f"the first paint imported what it does not use: {loaded}"
    # each dataclass generated and compiled its methods at every start (some 4M
    # instructions each, eleven of them): the board's records are plain (core/records.py)
    ours = [name for name in seen["dataclasses"] if name.startswith("board.")]
    assert ours == [], f"the first paint made dataclasses: {ours}"


def test_a_start_with_its_readings_kept_imports_no_tomllib(
    kept_caches: Path, tmp_path: Path
) -> None:
    """board.toml's and the themes' readings are kept in the user's cache directory with
    their exact text (core/tomlcache.py, core/cachedir.py): once kept, the start does not
    import tomllib, whose import and regular expressions were some 9M instructions of the
    first paint."""
    board = make_board(tmp_path)
    board.store.close()
    out = tmp_path / "modules.json"
    for _ in ("first start: readings kept", "second start: from them"):
        res = python_child(["-c", CHILD, str(out), str(board.cfg.root)], timeout=120)
        assert res.returncode == 0 and out.exists(), res.stderr[-2000:]
    folder = board.cfg.cache_folder
    assert folder is not None and Path(folder.path, "themes.toml.cache").is_file()
    assert not (board.cfg.board_dir / "themes.toml.cache").exists()
    modules = set(json.loads(out.read_text())["modules"])
    assert "board.tui.board" in modules, "the child did not start the board"
    assert "tomllib" not in modules, "the second start imported tomllib"


def test_the_early_read_and_core_import_without_textual(tmp_path) -> None:
    """`board tui` reads the board before Textual loads; without Textual it says so in a line."""
    board = seeded_board(tmp_path)
    board.close()
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'textual' or name.startswith('textual.'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from board.core import config\n"
        "from board.core.store import SQLiteStore\n"
        "from board.tui.boarddata import Preload\n"
        f"cfg = config.load(__import__('pathlib').Path({str(board.root)!r}))\n"
        "lanes, count = Preload(SQLiteStore(cfg.db_path)).result(10)\n"
        "print(len(lanes['ready']), count)\n"
        "from board.cli import main\n"
        f"sys.exit(main(['-C', {str(board.root)!r}, 'tui']))\n"
    )
    res = proc.run((sys.executable, "-c", code), timeout=60)
    assert res.stdout.split()[:2] == ["4", str(board_count(board))], res.stdout + res.stderr
    assert res.returncode == 1, res.stderr
    assert res.stderr.strip() == (
        "board: board tui needs Textual (textual is not installed): pip install 'textual==8.2.8'"
    ), res.stderr


def board_count(board) -> int:
    from board.core.store import SQLiteStore

    store = SQLiteStore(board.cfg.db_path)
    try:
        return store.change_count()
    finally:
        store.close()

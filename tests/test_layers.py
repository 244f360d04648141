"""The layering a newcomer can see, checked on every run.

- import-linter's contracts (pyproject.toml): the command line above the demo, the demo
  above the TUI, the TUI above the core, and the core's own layers;
- no import cycles, counting imports inside functions (moving an import into a function
  does not remove a cycle; `if TYPE_CHECKING:` imports do not count);
- the core names neither the TUI nor the command line, not even as a string to import;
- the command line, the TUI and the demo reach the operator's verbs through one door,
  `board.core.ops`, never from the module a verb lives in;
- no module in core/ or tui/ over 800 lines.

The source tree maps `core/` to `board.core` (and so on) through pyproject.toml, which
hides the submodules from import-linter; so each check runs over a copy laid out as
Python sees the package (board/, with core/, tui/ and themes/ under it). Each check is
also run on a copy with a planted fault, so a check that cannot fail would show.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.layout import door_table, package_copy, run_py
from tests.support.paths import ROOT

MAX_LINES = 800
ABOVE_CORE = re.compile(r"\bboard\.(tui|cli|demo)\b")


def lint_imports(where: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "lint-imports"
    return run_py(where, str(exe), str(ROOT / "pyproject.toml"), "--no-cache")


CYCLES = r"""
import json, sys
import grimp

graph = grimp.build_graph("board", exclude_type_checking_imports=True)
mods = sorted(graph.modules)
edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in mods}
index, low, stack, on, out = {}, {}, [], set(), []
sys.setrecursionlimit(10000)

def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v); on.add(v)
    for w in edges[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        scc = []
        while True:
            w = stack.pop(); on.discard(w); scc.append(w)
            if w == v:
                break
        if len(scc) > 1:
            out.append(sorted(scc))

for m in mods:
    if m not in index:
        visit(m)
print(json.dumps(out))
"""


def cycles(where: Path) -> list[list[str]]:
    import json

    res = run_py(where, sys.executable, "-c", CYCLES)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def core_names_above(core: Path) -> list[str]:
    """Every place a core module imports, or names as a string, the TUI, the CLI or the demo."""
    found = []
    for path in sorted(core.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names = ABOVE_CORE.findall(node.value) and [node.value]
            for name in names:
                if ABOVE_CORE.search(name) or name.split(".")[0] == "textual":
                    found.append(f"{path.relative_to(core.parent)}:{node.lineno}: {name}")
    return found


def past_the_door(*roots: Path, homes: set[str], base: Path = ROOT) -> list[str]:
    """Every place a module under `roots` imports a verb's home module (one the door's table
    names), a name from one, or names one as a string to import, instead of going through
    the door `board.core.ops`. An import inside a function counts: that is where most are."""
    found = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    names = [node.value] if node.value in homes else []
                hit = [n for n in names if any(n == h or n.startswith(h + ".") for h in homes)]
                if hit:
                    found.append(f"{path.relative_to(base)}:{node.lineno}: {hit[0]}")
    return found


def verb_homes() -> set[str]:
    """The modules the door serves verbs from (its `_HOMES` table)."""
    return set(door_table((ROOT / "core" / "ops" / "__init__.py").read_text(encoding="utf-8")))


def long_modules(*roots: Path, base: Path = ROOT) -> list[str]:
    return [
        f"{path.relative_to(base)}: {n} lines"
        for root in roots
        for path in sorted(root.rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]


def unexplained_late_imports(root: Path) -> list[str]:
    """Every import inside a function under `root` whose line gives no reason: an import
    kept out of a module's top is a start-up choice (a verb or the TUI not paying for what
    it does not use, an optional dependency), and says which on its line."""
    found = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    if "#" not in lines[node.end_lineno - 1 if node.end_lineno else 0]:
                        found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return found


# --- the checks, on the tree as it is --------------------------------------------------------


def test_the_import_contracts_hold(tmp_path: Path) -> None:
    res = lint_imports(package_copy(tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "BROKEN" not in res.stdout and "KEPT" in res.stdout


def test_there_is_no_import_cycle(tmp_path: Path) -> None:
    assert cycles(package_copy(tmp_path)) == []


def test_the_core_names_neither_the_tui_nor_the_command_line() -> None:
    assert core_names_above(ROOT / "core") == []


def test_the_command_line_the_tui_and_the_demo_reach_the_verbs_through_the_door() -> None:
    homes = verb_homes()
    assert {"board.core.cards.actions", "board.core.ops.pick"} <= homes  # the check reads them
    callers = (ROOT / "board" / "cli", ROOT / "board" / "demo", ROOT / "tui")
    assert past_the_door(*callers, homes=homes) == []


def test_no_module_in_core_or_tui_is_over_800_lines() -> None:
    assert long_modules(ROOT / "core", ROOT / "tui") == []


# --- and each check fails on a planted fault ---------------------------------------------------


@pytest.mark.parametrize(
    "planted",
    ["from board.tui import app\n", "from board.cli import commands\n"],
    ids=["core imports the TUI", "core imports the command line"],
)
def test_the_contracts_fail_when_core_imports_above_it(tmp_path: Path, planted: str) -> None:
    where = package_copy(tmp_path)
    model = where / "board" / "core" / "model.py"
    model.write_text(model.read_text() + "\n" + planted)
    res = lint_imports(where)
    assert res.returncode != 0 and "BROKEN" in res.stdout, res.stdout
    assert core_names_above(where / "board" / "core"), "the name check missed a plain import"


def test_the_name_check_fails_on_an_importlib_string(tmp_path: Path) -> None:
    where = package_copy(tmp_path)
    loop = where / "board" / "core" / "loop.py"
    loop.write_text(
        loop.read_text()
        + "\n\ndef _sneak():\n    import importlib\n\n"
        + '    return importlib.import_module("board.tui.app")\n'
    )
    assert lint_imports(where).returncode == 0, "premise: import-linter cannot see a string"
    found = core_names_above(where / "board" / "core")
    assert found and "board.tui.app" in found[0], found


def test_the_cycle_check_fails_on_a_cycle_planted_inside_a_function(tmp_path: Path) -> None:
    where = package_copy(tmp_path)
    model = where / "board" / "core" / "model.py"
    model.write_text(
        model.read_text() + "\n\ndef _late():\n    from board.core import loop\n\n    return loop\n"
    )
    found = cycles(where)
    assert any("board.core.model" in c and "board.core.loop" in c for c in found), found


@pytest.mark.parametrize(
    ("planted", "named"),
    [
        ("from board.core.cards import actions", "board.core.cards.actions"),
        ("import board.core.ops.pick", "board.core.ops.pick"),
        ("from board.core.ops.approve import approve", "board.core.ops.approve"),
        ("from board.core.ops import status", "board.core.ops.status"),
        ('importlib.import_module("board.core.cards.split")', "board.core.cards.split"),
    ],
)
def test_the_door_check_fails_on_a_verb_imported_from_its_home(
    tmp_path: Path, planted: str, named: str
) -> None:
    """Each is planted inside a function, where a verb's import usually is. `from
    board.core.ops import status` is the module: status is not one of the door's names."""
    tui = tmp_path / "tui"
    tui.mkdir()
    text = (ROOT / "tui" / "commands.py").read_text(encoding="utf-8")
    sneak = f"\n\ndef _sneak():\n    import importlib\n\n    {planted}\n"
    (tui / "commands.py").write_text(text + sneak)
    (found,) = past_the_door(tui, homes=verb_homes(), base=tmp_path)
    assert found.startswith("tui/commands.py:") and found.endswith(f": {named}"), found


def test_the_size_check_fails_on_a_long_module(tmp_path: Path) -> None:
    long = tmp_path / "core"
    long.mkdir()
    (long / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert long_modules(long, base=tmp_path) == [f"core/big.py: {MAX_LINES + 1} lines"]


def core_layers(pyproject: str) -> set[str]:
    """Every name the core's own layers contract places (`a | b` is two)."""
    import tomllib

    contracts = tomllib.loads(pyproject)["tool"]["importlinter"]["contracts"]
    (core,) = [c for c in contracts if c.get("containers") == ["board.core"]]
    return {name.strip() for layer in core["layers"] for name in layer.split("|")}


def core_modules(root: Path) -> set[str]:
    """The modules and packages directly under core/."""
    names = {p.stem for p in root.glob("*.py") if p.name != "__init__.py"}
    return names | {p.name for p in root.iterdir() if (p / "__init__.py").is_file()}


def test_every_late_import_in_core_says_why() -> None:
    assert unexplained_late_imports(ROOT / "core") == []


def test_the_late_import_check_fails_on_one_without_a_reason(tmp_path: Path) -> None:
    core = tmp_path / "core"
    core.mkdir()
    (core / "a.py").write_text("def f():\n    import json  # only f\n    return json\n")
    assert unexplained_late_imports(core) == []
    (core / "b.py").write_text("def g():\n    from os import path\n    return path\n")
    assert unexplained_late_imports(core) == ["core/b.py:2"]


def test_every_core_module_is_in_the_layers_contract() -> None:
    """A module left out of the contract may import anything: core/flowstats.py was."""
    missing = core_modules(ROOT / "core") - core_layers((ROOT / "pyproject.toml").read_text())
    assert not missing, f"not in the core's layers contract (pyproject.toml): {sorted(missing)}"


def test_the_contract_check_fails_on_a_module_left_out(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    for name in ("loop.py", "stray.py", "__init__.py"):
        (tmp_path / "core" / name).write_text("")
    text = (ROOT / "pyproject.toml").read_text()
    assert core_modules(tmp_path / "core") - core_layers(text) == {"stray"}


def test_every_package_in_the_tree_ships_in_a_plain_install() -> None:
    """pyproject.toml lists the packages by hand (the tree maps core/ to board.core); a
    package missing there is missing from `pip install .`, though an editable install
    works."""
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs = {v: k for k, v in conf["package-dir"].items()}
    found = set()
    for top, name in dirs.items():
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top).parts
            found.add(".".join([name, *rel]))
    assert found - set(conf["packages"]) == set(), "packages missing from pyproject.toml"

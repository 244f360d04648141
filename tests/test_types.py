"""The type check, on every test run: mypy over the core, the command line, the demo and the TUI.

The seams between the layers are typed (a `Store` interface callers reach without
`getattr`, `Config` wherever it is passed), and a type checker nobody runs lets them rot:
the store's drive methods were once reached through 25 `# type: ignore`s, and the TUI's
screens reached their app through `getattr` probes a renamed method slipped past. So mypy
runs here, with its configuration and the packages it covers in pyproject.toml
(`[tool.mypy]`).

mypy must see the package as Python does (pyproject.toml maps `core/` to `board.core`),
so it runs over the same laid-out copy as the import contracts (test_layers.py). Beside
it, every `type: ignore` left in the tree names the error it silences and says why on the
same line. Each check is also run on a copy with planted faults, so neither can pass by
being blind.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tokenize
import tomllib
from pathlib import Path

from tests.support.layout import package_copy, run_py
from tests.support.paths import ROOT

# the packages mypy checks, which the ignore rule covers too
PACKAGES: list[str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"][
    "packages"
]
_IGNORE = re.compile(r"type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)")
_REASON = re.compile(r"\s*#\s*\S")


def mypy(where: Path) -> subprocess.CompletedProcess[str]:
    """mypy as configured in pyproject.toml, over the laid-out copy at `where`."""
    return run_py(
        where,
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(ROOT / "pyproject.toml"),
        "--cache-dir",
        str(where / ".mypy_cache"),
    )


def unexplained_ignores(*roots: Path) -> list[str]:
    """Every `type: ignore` comment without an error code, or without a reason after it
    (`# type: ignore[attr-defined]  # GitPython's stubs lack …`)."""
    found = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                if tok.type != tokenize.COMMENT:
                    continue
                m = _IGNORE.search(tok.string)
                if m and not (m["codes"] and _REASON.match(m["rest"])):
                    found.append(f"{path.relative_to(root.parent)}:{tok.start[0]}: {tok.string}")
    return found


def typed_trees(where: Path) -> list[Path]:
    """The directories of the checked packages in the laid-out copy at `where`."""
    return [where.joinpath(*name.split(".")) for name in PACKAGES]


# --- the checks, on the tree as it is --------------------------------------------------------


def test_the_core_the_command_line_and_the_tui_type_check(tmp_path: Path) -> None:
    where = package_copy(tmp_path)
    res = mypy(where)
    assert res.returncode == 0, res.stdout + res.stderr
    # not blind: every module of the checked packages was read
    modules = sum(len(list(tree.rglob("*.py"))) for tree in typed_trees(where))
    assert f"no issues found in {modules} source files" in res.stdout, res.stdout


def test_every_type_ignore_names_its_error_and_says_why(tmp_path: Path) -> None:
    assert {"board.core", "board.cli", "board.demo", "board.tui"} <= set(PACKAGES)
    assert unexplained_ignores(*typed_trees(package_copy(tmp_path))) == []


# --- and each check fails on planted faults ----------------------------------------------------

# Each planted line ends with the error code mypy must report for it.
PLANTED_CORE = """\
from board.core.config import Config
from board.core.store import Store


def key_that_is_not_there(cfg: Config) -> str:
    return cfg.no_such_key  # attr-defined


def store_verb_not_on_the_interface(store: Store) -> None:
    store.drop_everything()  # attr-defined


def drive_field_misspelt(store: Store) -> None:
    store.update_drive("d-1", pigd=0)  # call-arg


def half_typed(a: int, b):  # no-untyped-def
    return a


def implicit_optional(x: int = None) -> int:  # assignment
    return x


LEFT_OVER: int = 1  # type: ignore[assignment]  # unused-ignore
"""

PLANTED_CLI = """\
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from board.cli.commands import Context


def prints_a_number(ctx: Context) -> None:
    ctx.out(3)  # arg-type
"""

# a screen reaches its app typed (board.tui.screenbase), so a call the app does not have is caught,
# and the store signal carries the change count, not anything
PLANTED_TUI = """\
from board.tui.screenbase import BoardAppScreen


class Probe(BoardAppScreen):
    def on_mount(self) -> None:
        self.board_app.say_loudly("renamed")  # attr-defined
        self.board_app.store_changes.publish("seven")  # arg-type
"""


def _expected(where: Path, rel: str, text: str) -> list[str]:
    (where / rel).write_text(text)
    return [
        f"{rel}:{n}: error: .*\\[{line.rsplit('# ', 1)[1]}\\]"
        for n, line in enumerate(text.splitlines(), 1)
        if re.search(r"# [a-z-]+$", line) and "from " not in line
    ]


def test_the_type_check_fails_on_planted_errors(tmp_path: Path) -> None:
    where = package_copy(tmp_path)
    wanted = _expected(where, "board/core/planted.py", PLANTED_CORE)
    wanted += _expected(where, "board/cli/planted.py", PLANTED_CLI)
    wanted += _expected(where, "board/tui/planted.py", PLANTED_TUI)
    assert len(wanted) == 9, wanted
    res = mypy(where)
    assert res.returncode != 0, res.stdout
    missed = [w for w in wanted if not re.search(w, res.stdout)]
    assert missed == [], res.stdout


def test_the_ignore_check_fails_on_an_ignore_without_its_reason(tmp_path: Path) -> None:
    where = package_copy(tmp_path)
    (where / "board" / "cli" / "planted.py").write_text(
        "a = f()  # type: ignore\n"
        "b = g()  # type: ignore[attr-defined]\n"
        "c = h()  # type: ignore  # no code named\n"
        "d = k()  # type: ignore[attr-defined]  # the stubs lack k\n"
        "e = 'type: ignore in a string is not a comment'\n"
    )
    found = unexplained_ignores(*typed_trees(where))
    assert [line.split(": ")[0] for line in found] == [
        "cli/planted.py:1",
        "cli/planted.py:2",
        "cli/planted.py:3",
    ], found

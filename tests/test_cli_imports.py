"""A verb pays only for what it uses: `board card list` must not import the loop, the drive,
the stranded machinery or the TUI, nor run any git process (the root is read from disk).

Every verb used to import every other verb's modules just to build the parser, so the
quickest question to the board took ten times an interpreter's start. These tests run the
real command line in a fresh interpreter and read what it loaded, and (through a `git` on
PATH that logs each call before running the real one) which git commands it ran.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
from pathlib import Path

import pytest

from board.cli import parsing
from tests.support.layout import door_table
from tests.support.paths import ROOT
from tests.support.procs import python_child
from tests.support.repos import GIT_ENV, make_repo

# what a card listing has no use for: the loop, the drive, saved work and the trees that
# make it, publishing, the verbs on live work, the TUI
HEAVY = (
    "board.core.loop",
    "board.core.poller",
    "board.core.drive",
    "board.core.git.stranded",
    "board.core.ops.pick",
    "board.core.git.worktrees",
    "board.core.git.saves",
    "board.core.git.removal",
    "board.core.publish",
    "board.core.ops",
    "board.core.cards.split",
    "board.core.usage",
    "board.demo.sandbox",
    "board.tui",
    "textual",
    # nor `board web`'s server (board/tui/web.py): textual-serve and aiohttp under it
    "textual_serve",
    "aiohttp",
    # nor the process machinery (it runs no git), random or time zones (no back-off is
    # computed): the standard library's share of a verb's start is most of it
    "board.core.proc",
    "board.core.git.gitutil",
    "subprocess",
    "random",
    "zoneinfo",
    # nor dataclasses, which imports inspect, ast and dis, and compiled every record's
    # methods at each start (the records are plain classes: core/records.py)
    "dataclasses",
    "inspect",
    "ast",
    "dis",
)

# the child runs the command line as the `board` script does, then says what it imported
CHILD = (
    "import json, sys\n"
    "from board.cli import main\n"
    "try:\n"
    "    code = main(sys.argv[2:])\n"
    "except SystemExit as exc:\n"
    "    code = exc.code\n"
    "with open(sys.argv[1], 'w') as fh:\n"
    "    json.dump({'code': code, 'modules': sorted(sys.modules)}, fh)\n"
)


def _run(
    cwd: Path, out: Path, *argv: str, env: dict[str, str] | None = None
) -> tuple[str, set[str]]:
    res = python_child(["-c", CHILD, str(out), *argv], cwd=cwd, env=env)
    assert res.returncode == 0, res.stderr
    got = json.loads(out.read_text())
    assert got["code"] in (0, None), f"board {' '.join(argv)} exited {got['code']}: {res.stderr}"
    return res.stdout, set(got["modules"])


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m in HEAVY or m.startswith(tuple(h + "." for h in HEAVY)))


@pytest.fixture
def board_repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path, init="cli").root
    for title in ("first card", "second card"):
        res = python_child(
            ["-m", "board.cli", "card", "add", title, "--spec", "s", "--ready"], cwd=root
        )
        assert res.returncode == 0, res.stderr
    return root


@pytest.mark.parametrize(
    "argv",
    [
        ("card", "list"),
        ("card", "list", "--json"),
        ("card", "list", "--lane", "ready"),
        ("card", "show", "c-1"),
        ("--help",),
        ("card", "list", "--help"),
    ],
)
def test_a_card_listing_imports_no_loop_drive_or_stranded(
    board_repo: Path, tmp_path: Path, argv: tuple[str, ...]
) -> None:
    stdout, modules = _run(board_repo, tmp_path / "modules.json", *argv)
    if "--help" in argv:
        assert stdout.startswith("usage: board")
    elif argv[1] == "show":
        assert "first card" in stdout and "timeline:" in stdout
    else:
        assert "first card" in stdout and "second card" in stdout
    assert _heavy(modules) == [], f"board {' '.join(argv)} imported them"


@pytest.mark.parametrize(
    "argv",
    [("card", "list"), ("card", "list", "--json"), ("-C", ".", "card", "list", "--lane=ready")],
)
def test_a_plain_card_listing_builds_no_parser(
    kept_caches: Path, board_repo: Path, tmp_path: Path, argv: tuple[str, ...]
) -> None:
    """The plain forms of `card list` are read without argparse (tests/test_cli_fast.py),
    nor gettext and locale, nor the other verbs' modules. The caches are on, as an
    operator's are (`kept_caches`, before the board is made: its verbs keep board.toml's
    reading)."""
    stdout, modules = _run(board_repo, tmp_path / "modules.json", *argv)
    assert "first card" in stdout
    parser = ("argparse", "board.cli.parsing", "board.cli.run", "gettext", "locale")
    assert sorted(set(parser) & modules) == []
    # nor tomllib: board.toml's reading is kept in the user's cache (tests/test_config_cache.py);
    # nor shutil (with bz2 and lzma) for finding git, nor threading for the store's lock,
    # nor typing (each module's hints are for the type check: TYPE_CHECKING = False)
    assert sorted({"tomllib", "shutil", "bz2", "lzma", "threading", "typing"} & modules) == []
    # and a form it does not read plainly still works, through argparse
    _, modules = _run(board_repo, tmp_path / "modules.json", "card", "list", "--lan", "ready")
    assert "argparse" in modules


def test_a_verb_still_imports_what_it_uses(board_repo: Path, tmp_path: Path) -> None:
    """The check sees an import made when a verb runs: `board status` loads the verbs on
    live work (its status module lives there), so the list above is not empty by accident."""
    stdout, modules = _run(board_repo, tmp_path / "modules.json", "status")
    assert "board.core.ops.status" in modules
    assert "ready" in stdout


def test_a_verb_loads_its_own_module_through_the_door_and_no_other_verb_s(
    board_repo: Path, tmp_path: Path
) -> None:
    """`board hold` reaches `hold` through the door (board.core.ops), which loads the lane
    verbs' module and no other verb's: not the git, drive and publishing modules behind a
    salvage. `board status` loads its own module, not a salvage's, as it once did."""
    homes = set(door_table((ROOT / "core" / "ops" / "__init__.py").read_text(encoding="utf-8")))
    _, modules = _run(board_repo, tmp_path / "m1.json", "hold", "c-1", "--reason", "r")
    assert "board.core.ops" in modules
    assert sorted(homes & modules) == ["board.core.cards.actions"]
    later = ("board.core.drive", "board.core.publish", "board.core.git.saves", "board.core.loop")
    assert sorted(m for m in modules if m.startswith(later)) == []
    _, modules = _run(board_repo, tmp_path / "m2.json", "status")
    assert sorted(homes & modules) == ["board.core.ops.status"]
    assert sorted(m for m in modules if m.startswith(later)) == []


def test_a_card_listing_runs_no_git(board_repo: Path, tmp_path: Path) -> None:
    """`card list` runs no git at all (the root is read from .git on disk, see
    tests/test_git_where.py); --help asks git nothing."""
    real = shutil.which("git")
    assert real is not None
    wrap = tmp_path / "bin"
    wrap.mkdir()
    calls = tmp_path / "git-calls"
    script = wrap / "git"
    script.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {real} "$@"\n')
    script.chmod(0o755)
    env = {**os.environ, **GIT_ENV, "PATH": f"{wrap}{os.pathsep}{os.environ['PATH']}"}

    stdout, _ = _run(board_repo, tmp_path / "m1.json", "card", "list", "--json", env=env)
    assert [c["title"] for c in json.loads(stdout)] == ["first card", "second card"]
    assert not calls.exists(), calls.read_text()

    _run(board_repo, tmp_path / "m2.json", "--help", env=env)
    _run(board_repo, tmp_path / "m3.json", "card", "list", "--help", env=env)
    assert not calls.exists(), calls.read_text()


def _verbs(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(found[0].choices) if found else {}


def test_a_verb_built_alone_reads_as_with_every_verb_built() -> None:
    """`main` builds only the verb the command line names; its help, its own verbs' help and
    the top level's help must read exactly as when every verb is built."""
    full = parsing.build_parser()
    for verb, parser in _verbs(full).items():
        alone = parsing.build_parser(only=verb)
        assert alone.format_help() == full.format_help()
        built = _verbs(alone)[verb]
        assert built.format_help() == parser.format_help(), verb
        for name, subparser in _verbs(parser).items():
            assert _verbs(built)[name].format_help() == subparser.format_help(), (verb, name)
        others = [v for v in _verbs(alone).values() if isinstance(v, argparse.ArgumentParser)]
        assert others == [built], f"{verb}: other verbs were built too"


def test_a_card_verb_built_alone_reads_as_with_every_card_verb_built() -> None:
    """`card list` builds only `list` of card's own verbs: every help reads the same."""
    full = parsing.build_parser()
    card = _verbs(full)["card"]
    assert sorted(_verbs(card)) == ["add", "deps", "edit", "import", "list", "show"]
    for name, subparser in _verbs(card).items():
        alone = parsing.build_parser(only="card", only_card=name)
        assert alone.format_help() == full.format_help()
        built = _verbs(alone)["card"]
        assert built.format_help() == card.format_help()
        assert _verbs(built)[name].format_help() == subparser.format_help(), name
        others = [v for v in _verbs(built).values() if isinstance(v, argparse.ArgumentParser)]
        assert others == [_verbs(built)[name]], f"{name}: other card verbs were built too"
    # another verb's own verbs are all built: only_card is for `card`
    stranded = _verbs(parsing.build_parser(only="stranded", only_card="list"))["stranded"]
    assert len(_verbs(stranded)) > 1
    assert all(isinstance(v, argparse.ArgumentParser) for v in _verbs(stranded).values())


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["card", "list"], ("card", "list")),
        (["-C", "d", "card", "list", "--json"], ("card", "list")),
        (["-Cd", "card", "show", "c-1"], ("card", "show")),
        (["card"], ("card", None)),
        (["card", "--help"], ("card", None)),
        (["--help", "card", "list"], (None, None)),
        (["status"], ("status", None)),
        ([], (None, None)),
    ],
)
def test_the_verbs_named(argv: list[str], named: tuple[str | None, str | None]) -> None:
    assert parsing._verb_named(argv) == named


def test_a_verb_not_built_is_never_parsed_as_one() -> None:
    """A command line whose verb was guessed wrong is read again with every verb built."""
    with pytest.raises(parsing._Rebuild):
        parsing.build_parser(only="card").parse_args(["status"])
    with pytest.raises(parsing._Rebuild):
        parsing.build_parser(only="card", only_card="list").parse_args(["card", "show", "c-1"])
    args = parsing.build_parser().parse_args(["status"])
    assert args.func.__name__ == "cmd_status"
    args = parsing.build_parser(only="card", only_card="list").parse_args(["card", "list"])
    assert args.func.__name__ == "cmd_card_list"


# the child records every regex compiled while `card list` runs (re's cache is cleared
# first, so a pattern compiled at import shows too)
COMPILES = (
    "import json, re, sys\n"
    "seen = []\n"
    "real = re._compile\n"
    "def record(pattern, flags):\n"
    "    seen.append(str(pattern))\n"
    "    return real(pattern, flags)\n"
    "re._compile = record\n"
    "re.purge()\n"
    "from board.cli import main\n"
    "code = main(sys.argv[2:])\n"
    "from board.core import failures\n"
    "with open(sys.argv[1], 'w') as fh:\n"
    "    json.dump({'code': code, 'seen': seen, 'failures': [\n"
    "        getattr(v, 'pattern', v) for k, v in vars(failures).items()\n"
    "        if k.isupper() and isinstance(v, (str, re.Pattern))\n"
    "    ] + [r.pattern for r in failures.DEFAULT_RULES]}, fh)\n"
)


def test_a_card_listing_compiles_no_failure_pattern(board_repo: Path, tmp_path: Path) -> None:
    """The failure rules and the reset-time patterns (milliseconds of regex compiling) are
    compiled when a failure is classified, not by every verb that reads board.toml."""
    out = tmp_path / "compiled.json"
    res = python_child(["-c", COMPILES, str(out), "card", "list"], cwd=board_repo)
    assert res.returncode == 0, res.stderr
    got = json.loads(out.read_text())
    assert got["code"] == 0
    assert len(got["failures"]) > 10  # the check looks at something
    compiled = [p for p in got["seen"] if any(f in p for f in got["failures"] if len(f) > 8)]
    assert compiled == []


def test_a_listing_compiles_the_sanitiser_pattern_only_when_it_shows_text(
    board_repo: Path, tmp_path: Path
) -> None:
    """The sanitiser's pattern (millions of instructions to compile) is compiled when a
    title is shown, not by a listing printed as JSON."""
    code = (
        "import sys\n"
        "from board.cli import main\n"
        "from board.core import safetext\n"
        "code = main(sys.argv[1:])\n"
        "print(sorted(safetext._PATTERNS), file=sys.stderr)\n"
    )
    res = python_child(["-c", code, "card", "list", "--json"], cwd=board_repo)
    assert res.returncode == 0 and res.stderr.strip() == "[]", res.stderr
    res = python_child(["-c", code, "card", "list"], cwd=board_repo)
    assert res.returncode == 0 and res.stderr.strip() == "[True]", res.stderr


def test_an_empty_board_s_listing_imports_no_json(tmp_path: Path) -> None:
    """json is for reading cards' labels and writing them: a listing with no card to read
    (every lane empty, the first thing a script asks) does not import it."""
    root = make_repo(tmp_path, init="cli").root
    # this child says what it imported without importing json itself
    child = (
        "import sys\n"
        "from board.cli import main\n"
        "code = main(sys.argv[2:])\n"
        "with open(sys.argv[1], 'w') as fh:\n"
        "    fh.write(repr((code, sorted(sys.modules))))\n"
    )
    out = tmp_path / "modules.txt"
    for argv in (("card", "list"), ("card", "list", "--lane", "ready")):
        res = python_child(["-c", child, str(out), *argv], cwd=root)
        assert res.returncode == 0, res.stderr
        code, modules = ast.literal_eval(out.read_text())
        assert code == 0 and res.stdout == ""
        assert [m for m in modules if m == "json" or m.startswith("json.")] == [], argv
    # nor does reading cards with the usual labels (as the store writes them): the board's
    # first paint reads a screenful of them before Textual is up (core/store/cardrow.py)
    for labels in ((), ("ui",), ("area-0", "x y")):  # other text is written with escapes
        flags = [arg for label in labels for arg in ("--label", label)]
        res = python_child(
            ["-m", "board.cli", "card", "add", f"labels {labels}", "--spec", "s", *flags], cwd=root
        )
        assert res.returncode == 0, res.stderr
    res = python_child(["-c", child, str(out), "card", "list"], cwd=root)
    code, modules = ast.literal_eval(out.read_text())
    assert code == 0 and "labels ('area-0', 'x y')" in res.stdout, res.stdout
    assert [m for m in modules if m == "json" or m.startswith("json.")] == []


def _written_false(path: Path) -> bool:
    """Whether a module spells `TYPE_CHECKING = False` (typing's flag without typing)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if (
            isinstance(node, ast.Assign)
            and [getattr(t, "id", None) for t in node.targets] == ["TYPE_CHECKING"]
            and isinstance(node.value, ast.Constant)
            and node.value.value is False
        ):
            return True
    return False


def test_typing_is_left_out_only_where_a_listing_loads(
    kept_caches: Path, board_repo: Path, tmp_path: Path
) -> None:
    """`TYPE_CHECKING = False` in place of `from typing import TYPE_CHECKING` is a start-up
    trick (typing is 12M of the listing's 126M instructions, docs/performance.md): it is
    written only in the modules a plain listing loads, where it pays, and nowhere else."""
    loaded: set[str] = set()
    for argv in (("card", "list"), ("card", "list", "--json")):
        loaded |= _run(board_repo, tmp_path / "modules.json", *argv)[1]
    root = Path(parsing.__file__).resolve().parents[2]
    tricked = set()
    for top, package in (("core", "board.core"), ("tui", "board.tui"), ("board", "board")):
        for path in (root / top).rglob("*.py"):
            parts = path.relative_to(root / top).with_suffix("").parts
            name = ".".join((package, *parts)).removesuffix(".__init__")
            if _written_false(path):
                tricked.add(name)
    assert "board.core.records" in tricked  # the walk sees the trick where it is
    assert sorted(tricked - loaded) == []

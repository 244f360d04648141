"""Refuse what would do damage, in one line, changing nothing.

Each row of the table is something a careless or hostile operator might type or leave
behind: a board.toml value, a corrupt store row, an argument, a missing base branch.
Each must end non-zero with exactly one line on stderr that names the culprit, and the
store, board.toml and the repository must be the same bytes afterwards: every file
under the clone (its .git, board.toml and .board included) is hashed before and after.
Real parts only: a bare origin and a clone, the real `board` in a subprocess, the real
SQLite file corrupted with sqlite3.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import board.themes as shipped_themes
import pytest
from board.core import cachedir, tomlcache
from board.tui.themes import THEMES_CACHE

from tests.support.repos import GIT_ENV, git, make_repo, run_cli


def board(cwd: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """The real `board` in a subprocess; stdin as raw bytes (it may be invalid UTF-8)."""
    res = subprocess.run(
        [sys.executable, "-m", "board.cli", *args],
        cwd=cwd,
        capture_output=True,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        timeout=60,
        env={**os.environ, **GIT_ENV},
    )
    return subprocess.CompletedProcess(
        res.args, res.returncode, res.stdout.decode(), res.stderr.decode()
    )


def fingerprint(repo: Path) -> dict[str, str]:
    """sha256 of every file under the clone, by path (directories too): the store, the
    config, git's refs, objects and index, the working tree. The kept readings of
    board.toml and of the theme files (core/tomlcache.py), which any verb that reads them
    may write, refused or not (`board tui` reads its themes before it asks for a terminal,
    so a bad theme is named first), are in the user's cache directory, not the clone
    (core/cachedir.py): `kept_reading_is_tomllib_s` checks them."""
    return {
        str(path.relative_to(repo)): (
            hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        )
        for path in sorted(repo.rglob("*"))
        if not path.is_symlink()
    }


def _kept(path: Path) -> tuple[str, str, dict]:
    """(python, text, data) of a kept reading (core/tomlcache.py's layout)."""
    python, text, data = marshal.loads(path.read_bytes()[len(b"board.toml cache 1\n") + 4 :])
    return python, text, data


def kept_reading_is_tomllib_s(repo: Path) -> bool:
    """The kept readings, if any, are tomllib's: of the text board.toml's keeps (it is used
    only while board.toml is that text, tests/test_config_cache.py), and of each theme
    file as it is now (the themes' key is their text: tests/test_tui_themes.py)."""
    folder = cachedir.for_repo(repo)
    assert folder is not None, "the test turns the caches on"
    cache = Path(folder.path, tomlcache.NAME)
    if cache.exists():
        _python, text, data = _kept(cache)
        if tomllib.loads(text) != data:
            return False
    themes = Path(folder.path, THEMES_CACHE)
    if themes.exists():
        shipped = Path(shipped_themes.__file__).parent
        for where, data in _kept(themes)[2].items():
            path = (
                shipped / where.split("/", 1)[1]
                if where.startswith("board.themes/")
                else Path(where)
            )
            if tomllib.loads(path.read_text(encoding="utf-8")) != data:
                return False
    return True


def set_config(repo: Path, section: str, key: str, value: str) -> None:
    """Replace `key = …` inside `[section]` of the board.toml `board init` wrote."""
    path = repo / "board.toml"
    text = path.read_text()
    head = text.index(f"[{section}]\n")
    found = re.compile(rf"^{key} = (\[[^\]]*\]|.*)$", re.M).search(text, head)
    assert found is not None, f"no {section}.{key} in {path}"
    path.write_text(text[: found.start()] + f"{key} = {value}" + text[found.end() :])


@dataclass
class Row:
    """One refusal: what to break first, the argv, and what the one line must name."""

    id: str
    argv: tuple[str, ...]
    names: str  # a regular expression the stderr line must match
    setup: Callable[[Path], None] = lambda repo: None
    stdin: bytes | None = None
    lists: tuple[str, ...] = field(default=())  # card ids stdout must still show


def _config(section: str, key: str, value: str) -> Callable[[Path], None]:
    return lambda repo: set_config(repo, section, key, value)


ROWS = [
    # board.toml: accepted today, each would do damage once the loop runs
    Row(
        "scratch-dot",
        ("run", "--once"),
        r"board\.toml:\d+: board\.scratch: '\.' ",
        _config("board", "scratch", '["."]'),
    ),
    Row(
        "scratch-dotdot",
        ("run", "--once"),
        r"board\.toml:\d+: board\.scratch: '\.\.' ",
        _config("board", "scratch", '[".board-scratch", ".."]'),
    ),
    Row(
        "scratch-repo-root",
        ("run", "--once"),
        r"board\.toml:\d+: board\.scratch: '/.*/clone' is absolute",
        lambda repo: set_config(repo, "board", "scratch", f'["{repo}"]'),
    ),
    Row(
        "loop-interval-inf",
        ("run", "--once"),
        r"board\.toml:\d+: board\.loop_interval_s: .*finite",
        _config("board", "loop_interval_s", "inf"),
    ),
    Row(
        "coder-timeout-nan",
        ("run", "--once"),
        r"board\.toml:\d+: coder\.timeout_s: .*finite",
        _config("coder", "timeout_s", "nan"),
    ),
    Row(
        "loop-interval-zero",
        ("run", "--once"),
        r"board\.toml:\d+: board\.loop_interval_s: must be at least",
        _config("board", "loop_interval_s", "0"),
    ),
    Row(
        "gate-timeout-zero",
        ("run", "--once"),
        r"board\.toml:\d+: gate\.timeout_s: must be more than 0",
        _config("gate", "timeout_s", "0"),
    ),
]


def _corrupt(sql: str) -> Callable[[Path], None]:
    """Write straight into the store file, as a hand edit or a bad disk would."""

    def setup(repo: Path) -> None:
        with contextlib.closing(sqlite3.connect(repo / ".board" / "board.db")) as db:
            db.execute(sql)
            db.commit()

    return setup


ROWS += [
    # corrupt store rows: one line naming the card and the field; the rest still lists
    Row(
        "priority-not-a-number",
        ("card", "list"),
        r"card c-2 cannot be read: its field priority .*'high'",
        _corrupt("UPDATE cards SET priority = 'high' WHERE id = 'c-2'"),
        lists=("c-1", "c-3"),
    ),
    Row(
        "unknown-block-class",
        ("card", "list"),
        r"card c-2 cannot be read: its field blocked_class .*'bogus'",
        _corrupt("UPDATE cards SET blocked_class = 'bogus', blocked_reason = 'r' WHERE id = 'c-2'"),
        lists=("c-1", "c-3"),
    ),
    Row(
        "labels-not-json",
        ("card", "list", "--lane", "ready"),
        r"card c-1 cannot be read: its field labels .*not a JSON list",
        _corrupt("UPDATE cards SET labels = '{nope' WHERE id = 'c-1'"),
        lists=("c-2", "c-3"),
    ),
    Row(
        "surface-not-json",
        ("card", "show", "c-3"),
        r"card c-3 cannot be read: its field surface .*not a JSON list",
        _corrupt("UPDATE cards SET surface = '[1' WHERE id = 'c-3'"),
    ),
    Row(
        "schema-not-a-number",
        ("card", "list"),
        r"store .*board\.db has an unknown schema version 'one'",
        _corrupt("UPDATE meta SET value = 'one' WHERE key = 'schema'"),
    ),
]


HOSTILE = "stranded/\x1b[2J\x1b]52;c;aGk=\x07x"  # clears the screen, writes the clipboard

ROWS += [
    # arguments
    Row(
        "spec-stdin-not-utf8",
        ("card", "add", "x", "--spec-file", "-"),
        r"--spec-file -: stdin is not valid UTF-8 \(byte 0xff at offset 2\)",
        stdin=b"ok\xff\xfe",
    ),
    Row("argument-not-utf8", ("card", "add", "a\udcffb"), r"not valid UTF-8: 'a\\xffb'"),
    Row("split-without-into", ("split", "c-2"), r"^board: split: .*required: --into"),
    Row(
        "onto-looks-like-an-option",
        ("stranded", "pick", "stranded/x/1", "--onto", "-x"),
        r"^board: stranded pick: argument --onto: expected one argument .*--onto=VALUE",
    ),
    Row("missing-directory", ("-C", "no-such-dir", "card", "list"), r"-C no-such-dir: does not"),
    Row("hostile-show", ("stranded", "show", HOSTILE), r"stranded/␛\[2J␛\]52;c;aGk=\^Gx"),
    Row("hostile-pick", ("stranded", "pick", HOSTILE), r"stranded/␛\[2J"),
    Row("hostile-discard", ("stranded", "discard", HOSTILE, "--yes"), r"stranded/␛\[2J"),
    Row("title-two-lines", ("card", "add", "a\nb"), r"title is one line, and 'a\\nb'"),
    Row(
        "slice-title-two-lines",
        ("split", "c-2", "--into", "one", "--into", "a\rb"),
        r"split c-2: a slice's title is one line",
    ),
    Row("tui-without-a-terminal", ("tui",), r"needs a terminal, and its stdout is not one"),
]


ROWS += [
    # the base branch: a loop on a base that does not exist would block every card it claims
    Row(
        "base-missing",
        ("run", "--once"),
        r"the base branch 'gone' does not exist \(neither origin/gone nor a local branch\)",
        _config("board", "base", '"gone"'),
    ),
]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One clone with `board init` done and three cards, copied for each row."""
    base = tmp_path_factory.mktemp("refusals")
    repo = make_repo(base, init="cli").root
    for title in ("first", "second", "third"):
        res = run_cli(repo, "card", "add", title, "--spec", "s", "--ready")
        assert res.returncode == 0, res.stderr
    return base


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_refused_in_one_line_changing_nothing(
    row: Row, template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the caches on (the suite turns them off), outside the clone: the clone must not change
    monkeypatch.setenv("BOARD_CACHE_DIR", str(tmp_path / "cache"))
    shutil.copytree(template, tmp_path / "t", symlinks=True)
    repo = tmp_path / "t" / "clone"
    row.setup(repo)
    before = fingerprint(repo)
    res = board(repo, *row.argv, stdin=row.stdin)
    lines = res.stderr.splitlines()
    assert res.returncode != 0, f"accepted: {res.stdout}{res.stderr}"
    assert len(lines) == 1, f"not one line:\n{res.stderr}"
    assert lines[0].startswith("board: ") and re.search(row.names, lines[0]), lines[0]
    assert "internal error" not in lines[0] and "\x1b" not in res.stderr + res.stdout
    for card in row.lists:
        assert re.search(rf"^{card}\b", res.stdout, re.M), f"{card} not listed:\n{res.stdout}"
    assert fingerprint(repo) == before, "a refusal changed the store, board.toml or git"
    assert kept_reading_is_tomllib_s(repo)


# -- the base branch ----------------------------------------------------------------------


def base_of(repo: Path) -> str:
    return tomllib.loads((repo / "board.toml").read_text())["board"]["base"]


def test_init_in_a_master_repository_writes_master(tmp_path: Path) -> None:
    """No remote: the branch checked out is the base (it used to write `main`)."""
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "master", str(repo))
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    res = board(repo, "init")
    assert res.returncode == 0, res.stderr
    assert base_of(repo) == "master"
    assert "base branch: master (the branch checked out here" in res.stdout
    assert git(repo, "rev-parse", "board/run") == git(repo, "rev-parse", "master")


def test_init_in_a_clone_takes_the_remotes_default_branch(tmp_path: Path) -> None:
    """The origin's HEAD is trunk (it also has a main); the clone has a feature branch
    checked out. The remote's default branch wins: it is what the team builds for."""
    origin = tmp_path / "origin.git"
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", "--bare", "-b", "trunk", str(origin))
    git(tmp_path, "init", "-q", "-b", "trunk", str(seed))
    git(seed, "commit", "-q", "--allow-empty", "-m", "init")
    git(seed, "branch", "main")
    git(seed, "push", "-q", str(origin), "trunk", "main")
    git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "clone"))
    repo = tmp_path / "clone"
    git(repo, "checkout", "-q", "-b", "my-feature")
    res = board(repo, "init")
    assert res.returncode == 0, res.stderr
    assert base_of(repo) == "trunk", res.stdout
    assert "base branch: trunk (the default branch of origin" in res.stdout
    assert git(repo, "rev-parse", "board/run") == git(repo, "rev-parse", "origin/trunk")


def test_init_base_flag_wins_and_a_bad_name_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "master", str(repo))
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    git(repo, "branch", "release")
    res = board(repo, "init", "--base", "bad..name")
    assert (
        res.returncode != 0 and res.stderr.strip() == "board: not a valid branch name: 'bad..name'"
    )
    assert not (repo / "board.toml").exists() and not (repo / ".board").exists()
    assert board(repo, "init", "--base", "release").returncode == 0
    assert base_of(repo) == "release"


def test_run_with_a_missing_base_refuses_before_claiming_anything(tmp_path: Path) -> None:
    """The team renamed main to trunk after `board init`: `board run` says so at start,
    instead of claiming the ready card and blocking it. The coder would leave a mark."""
    repo = make_repo(tmp_path, init="cli").root
    mark = tmp_path / "coder-ran"
    set_config(repo, "coder.tiers.default", "argv", f'["touch", "{mark}"]')
    assert board(repo, "card", "add", "x", "--spec", "s", "--ready").returncode == 0
    git(repo, "branch", "-m", "main", "trunk")
    git(repo, "push", "-q", "origin", "trunk")
    git(tmp_path / "origin.git", "symbolic-ref", "HEAD", "refs/heads/trunk")
    git(repo, "push", "-q", "origin", ":main")
    before = fingerprint(repo)
    res = board(repo, "run", "--once")
    assert res.returncode != 0
    assert res.stderr.splitlines() == [
        f"board: the base branch 'main' does not exist (neither origin/main nor a local "
        f"branch): set [board] base in {repo / 'board.toml'}"
    ]
    assert not mark.exists(), "a coder ran"
    assert fingerprint(repo) == before, "the store, the log or git changed"
    card = json.loads(board(repo, "card", "show", "c-1", "--json").stdout)
    assert card["lane"] == "ready" and card["blocked"] is None

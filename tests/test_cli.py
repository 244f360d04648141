"""The board command line as an operator uses it: real subprocesses, a real repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.repos import git, make_repo, run_cli


def board(cwd: Path, *args: str, **kw) -> subprocess.CompletedProcess[str]:
    return run_cli(cwd, *args, **kw)


def cards_json(repo: Path) -> list[dict]:
    res = board(repo, "card", "list", "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def state(repo: Path) -> str:
    """Everything the store says, to prove a refused verb changed nothing."""
    rows = []
    for card in cards_json(repo):
        shown = board(repo, "card", "show", card["id"], "--json")
        rows.append(shown.stdout)
    return "\n".join(rows)


def test_the_readme_walkthrough_in_a_new_repository(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    res = board(repo, "init")
    assert res.returncode == 0, res.stderr
    assert (repo / "board.toml").exists() and (repo / ".board" / "board.db").exists()
    exclude = (repo / ".git" / "info" / "exclude").read_text()
    assert ".board/" in exclude and ".worktrees/" in exclude
    assert git(repo, "rev-parse", "board/run") == git(repo, "rev-parse", "main")

    res = board(repo, "card", "add", "x", "--spec", "y", "--ready", "--json")
    card = json.loads(res.stdout)
    assert card["lane"] == "ready" and card["blocked"] is None
    for key in (
        "id",
        "title",
        "spec",
        "kind",
        "lane",
        "blocked",
        "labels",
        "deps",
        "branch",
        "pr_url",
    ):
        assert key in card
    cid = card["id"]

    held = json.loads(board(repo, "hold", cid, "--reason", "r", "--json").stdout)
    assert held["blocked"] == {"class": "held", "reason": "r"}
    assert board(repo, "unblock", cid).returncode == 0
    assert json.loads(board(repo, "card", "show", cid, "--json").stdout)["blocked"] is None
    assert board(repo, "cancel", cid).returncode == 0
    assert json.loads(board(repo, "card", "show", cid, "--json").stdout)["lane"] == "cancelled"

    before = state(repo)
    res = board(repo, "ready", cid)
    assert res.returncode != 0
    assert res.stderr.strip() == f"board: {cid}: expects backlog, got cancelled"
    assert state(repo) == before, "a refused verb changed the store"


def test_init_twice_keeps_what_is_there(repo: Path) -> None:
    board(repo, "card", "add", "keep me")
    res = board(repo, "init")
    assert res.returncode == 0 and "keeping it" in res.stdout
    assert [c["title"] for c in cards_json(repo)] == ["keep me"]
    exclude = (repo / ".git" / "info" / "exclude").read_text()
    assert exclude.count(".board/") == 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("ready", "c-404"), "no card 'c-404'"),
        (("hold", "c-1"), "hold needs a reason"),
        (("hold", "c-1", "--reason", "  "), "hold needs a reason"),
        (("card", "add", ""), "needs a title"),
        (("card", "add", "x", "--ready"), "needs a spec"),
        (("card", "add", "x", "--dep", "c-77"), "no card 'c-77'"),
        (("card", "add", "x", "--priority", "7"), "priority must be 0-4"),
        (("unblock", "c-1"), "is not blocked"),
        (("card", "list", "--lane", "limbo"), "unknown lane"),
        (("card", "add", "x", "--spec", "a", "--spec-file", "f"), "not both"),
        (("card", "add", "x", "--spec-file", "/nonexistent"), "cannot read --spec-file"),
        (("card", "add", "x", "--spec-file", "/dev/zero"), "is over 4 MiB"),
        (("card", "edit", "c-1", "--spec-file", "/dev/zero"), "is over 4 MiB"),
    ],
)
def test_bad_input_is_one_clear_line_and_changes_nothing(
    repo: Path, args: tuple, needle: str
) -> None:
    board(repo, "card", "add", "first", "--spec", "s", "--ready")
    before = state(repo)
    res = board(repo, *args)
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], res.stderr
    assert "Traceback" not in res.stderr
    assert state(repo) == before


def test_a_1mb_spec_from_a_file_is_stored_whole(repo: Path, tmp_path: Path) -> None:
    spec = ("line of spec " * 80 + "\n") * 1100
    assert len(spec) > 1024 * 1024
    f = tmp_path / "spec.md"
    f.write_text(spec)
    card = json.loads(board(repo, "card", "add", "big", "--spec-file", str(f), "--json").stdout)
    shown = json.loads(board(repo, "card", "show", card["id"], "--json").stdout)
    assert shown["spec"] == spec


def test_a_spec_over_the_bound_from_stdin_is_refused_and_changes_nothing(repo: Path) -> None:
    before = state(repo)
    res = board(repo, "card", "add", "piped", "--spec-file", "-", input_text="x" * (5 << 20))
    assert res.returncode != 0 and "--spec-file -: stdin is over 4 MiB" in res.stderr
    assert state(repo) == before


def test_spec_from_stdin(repo: Path) -> None:
    res = board(
        repo, "card", "add", "piped", "--spec-file", "-", "--json", input_text="from stdin\n"
    )
    assert json.loads(res.stdout)["spec"] == "from stdin\n"


def test_markup_escapes_and_controls_are_stored_byte_for_byte(repo: Path) -> None:
    title = "[bold red]x[/] [@click=app.quit]q[/] \x1b]52;c;aGk=\x07 \x1b[2J \x01"
    card = json.loads(board(repo, "card", "add", title, "--json").stdout)
    assert card["title"] == title
    held = json.loads(board(repo, "hold", card["id"], "--reason", title, "--json").stdout)
    assert held["blocked"]["reason"] == title
    human = board(repo, "card", "show", card["id"])
    assert "\x1b" not in human.stdout and "\x07" not in human.stdout, (
        "an escape reached the terminal"
    )
    assert "[bold red]x[/]" in human.stdout


def test_outside_a_git_repository_says_what_to_run(tmp_path: Path) -> None:
    res = board(tmp_path, "card", "list")
    assert res.returncode != 0 and "not inside a git repository" in res.stderr
    assert "git init" in res.stderr and "Traceback" not in res.stderr


def test_without_board_toml_says_run_init(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, init="").root
    res = board(repo, "card", "list")
    assert res.returncode != 0 and "run `board init`" in res.stderr


def test_bad_board_toml_is_refused_naming_line_and_key(repo: Path) -> None:
    path = repo / "board.toml"
    path.write_text(
        path.read_text().replace("max_concurrent = 2", "max_concurrent = 2\nturbo = true")
    )
    res = board(repo, "card", "list")
    assert res.returncode != 0
    assert "board.toml:" in res.stderr and "board.turbo: unknown key" in res.stderr


def test_store_that_is_not_a_database(repo: Path) -> None:
    db = repo / ".board" / "board.db"
    for extra in ("-wal", "-shm"):
        Path(str(db) + extra).unlink(missing_ok=True)
    db.write_bytes(b"this is not sqlite" * 100)
    res = board(repo, "card", "add", "x")
    assert res.returncode != 0 and "not a board database" in res.stderr
    assert "Traceback" not in res.stderr
    assert db.read_bytes() == b"this is not sqlite" * 100


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root to drop to nobody"
)
def test_read_only_store_is_one_clear_line_and_changes_nothing() -> None:
    """As root chmod stops nothing, so the CLI runs as nobody on a store nobody may not write."""
    base = Path(tempfile.mkdtemp(prefix="board-ro-store-"))
    try:
        repo = make_repo(base, init="cli").root
        board(repo, "card", "add", "keep me")
        nobody = 65534
        for dirpath, dirnames, filenames in os.walk(base):
            for name in [*dirnames, *filenames]:
                os.lchown(Path(dirpath) / name, nobody, nobody)
        os.chown(base, nobody, nobody)
        db = repo / ".board" / "board.db"
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            if path.exists():
                path.chmod(0o444)
        (repo / ".board").chmod(0o555)
        before = db.read_bytes()
        res = subprocess.run(
            ["setpriv", f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups",
             sys.executable, "-m", "board.cli", "card", "add", "x"],
            cwd=repo, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
            env={**os.environ, "HOME": str(base)},
        )  # fmt: skip
        assert res.returncode != 0, "a write to a read-only store was accepted"
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
        assert "read-only" in lines[0] or "cannot be opened" in lines[0], lines[0]
        assert db.read_bytes() == before, "the read-only store was changed"
    finally:
        for dirpath, _, _ in os.walk(base):
            os.chmod(dirpath, 0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_store_locked_past_the_timeout(repo: Path) -> None:
    db = repo / ".board" / "board.db"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3,sys,time\n"
            f"c=sqlite3.connect({str(db)!r}, isolation_level=None)\n"
            "c.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\ntime.sleep(30)\n",
        ],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        res = board(repo, "card", "add", "x", timeout=60)
        assert res.returncode != 0 and "is locked by another process" in res.stderr, res.stderr
        assert "Traceback" not in res.stderr
    finally:
        holder.kill()
        holder.wait()
    assert cards_json(repo) == []


def test_help_says_what_each_verb_does(repo: Path) -> None:
    res = board(repo, "--help")
    assert res.returncode == 0
    for verb in ("init", "card", "ready", "hold", "unblock", "requeue", "cancel", "done"):
        assert verb in res.stdout
    res = board(repo, "hold", "--help")
    assert "block a card by hand" in res.stdout


def test_a_missing_git_is_one_clear_line(repo: Path, tmp_path: Path) -> None:
    empty = tmp_path / "bin-without-git"
    empty.mkdir()
    res = subprocess.run(
        [sys.executable, "-m", "board.cli", "card", "list"],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        env={**os.environ, "PATH": str(empty)},
    )
    assert res.returncode != 0
    assert (
        res.stderr.strip() == "board: git is not installed or not on PATH: board needs git >= 2.38"
    )


def test_git_older_than_2_38_is_refused_at_start(repo: Path, tmp_path: Path) -> None:
    """A real executable named git that reports 2.30 (no merge-tree --write-tree)."""
    old = tmp_path / "old-git"
    old.mkdir()
    fake = old / "git"
    fake.write_text('#!/bin/sh\necho "git version 2.30.1"\n')
    fake.chmod(0o755)
    for verb in (("init",), ("run", "--once")):
        res = subprocess.run(
            [sys.executable, "-m", "board.cli", *verb],
            cwd=repo,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
            env={**os.environ, "PATH": f"{old}:{os.environ['PATH']}"},
        )
        assert res.returncode != 0, f"board {verb[0]} ran on git 2.30"
        assert res.stderr.strip().endswith("board needs git >= 2.38 (for merge-tree --write-tree)")
        assert len(res.stderr.strip().splitlines()) == 1

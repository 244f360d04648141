"""Shared fixtures: real git repositories (a bare origin plus a clone) and the real store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from board.core import config
from board.core.store import SQLiteStore

from tests.pg_cluster import pg_cluster, pg_url  # noqa: F401  (fixtures: a throwaway PostgreSQL)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "tester",
    "GIT_AUTHOR_EMAIL": "tester@example.com",
    "GIT_COMMITTER_NAME": "tester",
    "GIT_COMMITTER_EMAIL": "tester@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(autouse=True)
def _git_identity(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every test gets a pinned git identity and no user-level git config."""
    home = tmp_path_factory.mktemp("home")
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)


def git(cwd: Path, *args: str) -> str:
    """Test-side git (the code under test goes through board.core.proc)."""
    res = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        env={**os.environ, **GIT_ENV},
    )
    if res.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {res.stderr}")
    return res.stdout.strip()


def make_repo(tmp_path: Path, init_board: bool = True) -> Path:
    """A bare origin and a clone with one commit on main pushed; board init done in the clone."""
    origin = tmp_path / "origin.git"
    clone = tmp_path / "clone"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "checkout", "-q", "-b", "main")
    (clone / "README.md").write_text("demo\n")
    (clone / "app.py").write_text("print('hello')\n")
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "initial")
    git(clone, "push", "-q", "-u", "origin", "main")
    if init_board:
        run_cli(clone, "init")
    return clone


def run_cli(
    cwd: Path, *args: str, input_text: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the real `board` command line in a subprocess, as an operator would."""
    return subprocess.run(
        [sys.executable, "-m", "board.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input_text,
        stdin=None if input_text is not None else subprocess.DEVNULL,
        timeout=timeout,
        env={**os.environ, **GIT_ENV},
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A clone of a bare origin with `board init` done: board.toml, store, run branch."""
    return make_repo(tmp_path)


@pytest.fixture
def cfg(repo: Path) -> config.Config:
    return config.load(repo)


@pytest.fixture
def store(cfg: config.Config):
    s = SQLiteStore(cfg.db_path)
    yield s
    s.close()

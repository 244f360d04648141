"""The fixtures: what a test asks for by name. The helpers behind them are in tests/support/.

Every test runs with a pinned git identity, no system git config and a HOME of its own (an
empty one: no user-level git config), so neither the machine nor another test can change
what git does. The same holds for the whole session, for fixtures wider than a test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from board.core import config
from board.core.store import SQLiteStore

from tests.support.pg_cluster import (  # noqa: F401  (fixtures: a throwaway PostgreSQL)
    pg_cluster,
    pg_url,
)
from tests.support.repos import GIT_ENV, Repo, make_repo


def _pin_env(mp: pytest.MonkeyPatch, home: Path) -> None:
    for key, value in GIT_ENV.items():
        mp.setenv(key, value)
    mp.setenv("HOME", str(home))
    mp.delenv("GIT_DIR", raising=False)
    mp.delenv("GIT_WORK_TREE", raising=False)


@pytest.fixture(scope="session", autouse=True)
def _session_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The pinned environment for session- and module-wide fixtures too."""
    with pytest.MonkeyPatch.context() as mp:
        _pin_env(mp, tmp_path_factory.mktemp("home"))
        yield


@pytest.fixture(autouse=True)
def _git_identity(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every test gets a pinned git identity and a HOME of its own, with no git config."""
    _pin_env(monkeypatch, tmp_path_factory.mktemp("home"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A clone of a bare origin with the real `board init` done: board.toml, store, run branch."""
    return make_repo(tmp_path, init="cli").root


@pytest.fixture
def cfg(repo: Path) -> config.Config:
    return config.load(repo)


@pytest.fixture
def store(cfg: config.Config) -> Iterator[SQLiteStore]:
    s = SQLiteStore(cfg.db_path)
    yield s
    s.close()


@pytest.fixture
def r(tmp_path: Path) -> Repo:
    """A clone of a bare origin with board.toml written directly (no CLI): cheaper than `repo`."""
    return make_repo(tmp_path)


@pytest.fixture
def st(tmp_path: Path) -> Iterator[SQLiteStore]:
    """A store file alone, no repository (for the verbs on cards)."""
    s = SQLiteStore(tmp_path / "board.db", create=True)
    yield s
    s.close()

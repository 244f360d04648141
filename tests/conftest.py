"""The fixtures: what a test asks for by name. The helpers behind them are in tests/support/.

Every test runs with a pinned git identity, no system git config and a HOME of its own (an
empty one: no user-level git config), so neither the machine nor another test can change
what git does. The same holds for the whole session, for fixtures wider than a test.

The store fixtures (`repo`, `cfg`, `store`, `st`, `new_store`) build the store of the test's
`backend`: the SQLite file unless a module opts into both with `pytestmark =
pytest.mark.backends()`, which runs each of its tests that reaches a store once per backend
(`[sqlite]`, `[postgres]`, the latter on a fresh database of the session's throwaway
cluster). A test there that is about the SQLite file itself says so with
`@pytest.mark.backends("sqlite", why="...")`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from board.core import config
from board.core.store import SQLiteStore, Store, open_store

from tests.support.pg_cluster import (  # noqa: F401  (fixtures: a throwaway PostgreSQL)
    pg_cluster,
    pg_url,
)
from tests.support.repos import GIT_ENV, Repo, make_repo


def _pin_env(mp: pytest.MonkeyPatch, home: Path) -> None:
    for key, value in GIT_ENV.items():
        mp.setenv(key, value)
    mp.setenv("HOME", str(home))
    # no caches (core/cachedir.py): every test reads board.toml and the themes with
    # tomllib, whatever ran before it, and every listing reads the saves' trailers; a test
    # of a cache turns them on (`kept_caches`), never in the user's own cache directory
    mp.delenv("XDG_CACHE_HOME", raising=False)
    mp.setenv("BOARD_CACHE_DIR", "")
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
def board(tmp_path: Path) -> Iterator[Any]:
    """The TUI tests' board: a repository with cards in every lane on the fixed clock
    (tests/support/tui.py `seeded_board`). A test file with a `board` of its own uses it."""
    from tests.support.tui import seeded_board

    b = seeded_board(tmp_path)
    yield b
    b.close()


@pytest.fixture
def kept_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The board's caches on (the suite turns them off), in this test's own directory: the
    stats file of the saves, board.toml's and the themes' readings."""
    folder = tmp_path / "user-cache"
    monkeypatch.setenv("BOARD_CACHE_DIR", str(folder))
    return folder


BACKENDS = ("sqlite", "postgres")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "backends(*names, why=''): run the test's store fixtures on these backends (all of "
        f"{', '.join(BACKENDS)} when none is named); `why` says why a test keeps to fewer",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test under `backends` that reaches a store runs once per backend it names."""
    mark = metafunc.definition.get_closest_marker("backends")
    if mark is None or "backend" not in metafunc.fixturenames:
        return
    names = mark.args or BACKENDS
    assert set(names) <= set(BACKENDS), f"no such backend in {names}"
    assert set(names) == set(BACKENDS) or mark.kwargs.get("why"), (
        f"{metafunc.definition.nodeid}: say why it runs on {', '.join(names)} only (why=...)"
    )
    metafunc.parametrize("backend", names, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """The store the test runs on: "sqlite" unless the `backends` mark parametrizes it."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture
def store_url(backend: str, request: pytest.FixtureRequest) -> str:
    """`[store] url` for the test's board: "" (the SQLite file) or a fresh PostgreSQL database."""
    return str(request.getfixturevalue("pg_url")) if backend == "postgres" else ""


@pytest.fixture
def repo(tmp_path: Path, store_url: str) -> Path:
    """A clone of a bare origin with the real `board init` done: board.toml, store, run branch
    (`board init --store URL` on PostgreSQL)."""
    return make_repo(tmp_path, init="cli", store_url=store_url).root


@pytest.fixture
def cfg(repo: Path) -> config.Config:
    return config.load(repo)


@pytest.fixture
def store(cfg: config.Config, backend: str) -> Iterator[Store]:
    s = open_store(cfg)
    assert isinstance(s, SQLiteStore) == (backend == "sqlite"), f"{backend}: opened {s.where}"
    yield s
    s.close()


@pytest.fixture
def r(tmp_path: Path) -> Repo:
    """A clone of a bare origin with board.toml written directly (no CLI): cheaper than `repo`."""
    return make_repo(tmp_path)


@pytest.fixture
def st(tmp_path: Path, store_url: str) -> Iterator[Store]:
    """A store alone, no repository (for the verbs on cards): a file, or a database."""
    s = new_store_at(tmp_path / "board.db", store_url)
    yield s
    s.close()


def new_store_at(path: Path, url: str, **kw: Any) -> Store:
    if not url:
        return SQLiteStore(path, create=True, **kw)
    from board.core.store.postgres import PostgresStore

    return PostgresStore(url, create=True, **kw)


@pytest.fixture
def new_store(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[..., Store]]:
    """Makes empty stores of the test's backend, each a file or a database of its own
    (keyword arguments go to the store, e.g. `clock`); closed, and dropped, after the test."""
    cluster = request.getfixturevalue("pg_cluster") if backend == "postgres" else None
    made: list[Store] = []
    databases: list[str] = []

    def make(**kw: Any) -> Store:
        url = ""
        if cluster is not None:
            databases.append(cluster.create_db())
            url = cluster.url(databases[-1])
        made.append(new_store_at(tmp_path / f"store-{len(made)}.db", url, **kw))
        return made[-1]

    yield make
    for s in made:
        s.close()
    for name in databases:
        cluster.drop_db(name)

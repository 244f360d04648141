"""One builder for a test's board: a real git repository with board.toml and its store.

Two kinds, as the tests need them:

- the default: a lone repository with nothing committed, board.toml as `config.write_default`
  writes it (with `keys`, `config_overrides` and `[tui]` options), and an empty store on the
  fixed clock (FIXED_NOW), so no wall-clock time ever renders: what the TUI's tests, the
  snapshots and the logs' tests draw.
- `origin=True`: a clone of a bare origin with main pushed and the real `board init` done by
  the CLI, board.toml rewritten by `write_config` (the real scripts under tests/scripts/ as
  the coder's tiers, quick ticks, short timeouts; `tiers` … `tree` change it), the store on
  the wall clock: what the drive, fold and loop tests run the engine on.

A `Board` unpacks as `cfg, store`, which is all most engine tests use of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from board.core import config
from board.core.store import SQLiteStore, Store

from tests.support.loop import write_config
from tests.support.repos import git, make_repo

FIXED_NOW = "2026-01-01T00:00:00.000Z"


def fixed_clock() -> str:
    return FIXED_NOW


@dataclass
class Board:
    """A repository with board.toml and a store, as `board init` leaves them."""

    root: Path
    cfg: config.Config
    store: Store

    def close(self) -> None:
        self.store.close()

    def __iter__(self) -> Iterator[Any]:
        """`cfg, store = make_board(...)`: the two parts most engine tests work with."""
        return iter((self.cfg, self.store))


def make_board(
    tmp_path: Path,
    keys: dict[str, str] | None = None,
    config_overrides: dict[str, dict[str, Any]] | None = None,
    *,
    store_url: str = "",
    origin: bool = False,
    setup: Callable[[Path], None] | None = None,
    tiers: dict[str, list[str]] | None = None,
    ladder: list[str] | None = None,
    gate: list[str] | None = None,
    board: dict[str, Any] | None = None,
    coder: dict[str, Any] | None = None,
    gate_opts: dict[str, Any] | None = None,
    publish: dict[str, Any] | None = None,
    tree: dict[str, Any] | None = None,
    budget: dict[str, Any] | None = None,
    notices: dict[str, Any] | None = None,
    imports: dict[str, Any] | None = None,
    **tui: Any,
) -> Board:
    """A board in `tmp_path` (see the module's docstring for the two kinds); `notices` is
    the loop's `[notify]` table (`notify` among `**tui` is `[tui] notify`).

    The default kind's store is the SQLite file, or the PostgreSQL database at `store_url`;
    `**tui` are `[tui]` options (theme, theme_dir, notify, …). With `origin=True`,
    `setup(clone)` may add files before the board starts: they are committed and pushed to
    origin/main (card trees start there) and the run branch is moved to match.
    """
    loop_opts = dict(
        tiers=tiers,
        ladder=ladder,
        gate=gate,
        board=board,
        coder=coder,
        gate_opts=gate_opts,
        publish=publish,
        tree=tree,
        budget=budget,
        notify=notices,
        imports=imports,
    )
    if origin:
        given = [k for k, v in (("keys", keys), ("config_overrides", config_overrides)) if v]
        given += ["store_url"] * bool(store_url) + list(tui)
        assert not given, f"origin=True takes the loop's options, not {given}"
        return _origin_board(tmp_path, setup, loop_opts)
    given = [k for k, v in loop_opts.items() if v is not None] + ["setup"] * (setup is not None)
    assert not given, f"{given} are for origin=True (the loop's board.toml)"
    root = make_repo(tmp_path, init="", remote=False, commit=False).root
    overrides: dict[str, dict[str, Any]] = dict(config_overrides or {})
    if keys or tui:
        overrides["tui"] = {**tui, **({"keys": keys} if keys else {})}
    if store_url:
        overrides["store"] = {"url": store_url}
    config.write_default(root, overrides)
    cfg = config.load(root)
    cfg.board_dir.mkdir(parents=True, exist_ok=True)
    if not store_url:
        return Board(root, cfg, SQLiteStore(cfg.db_path, create=True, clock=fixed_clock))
    from board.core.store.postgres import PostgresStore

    return Board(root, cfg, PostgresStore(store_url, create=True, clock=fixed_clock))


def _origin_board(
    tmp_path: Path, setup: Callable[[Path], None] | None, loop_opts: dict[str, Any]
) -> Board:
    repo = make_repo(tmp_path, init="cli").root
    if setup is not None:
        setup(repo)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "test set-up")
        git(repo, "push", "-q", "origin", "main")
        git(repo, "branch", "-f", "board/run", "main")
    write_config(repo, **loop_opts)
    cfg = config.load(repo)
    return Board(repo, cfg, SQLiteStore(cfg.db_path))

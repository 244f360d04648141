"""The store: one interface, two implementations — SQLite at .board/board.db (the default)
and PostgreSQL at `[store] url` (a board shared by a team's machines).

Two processes (the loop and the TUI, or the CLI) write at once. Every write names what
it expects (lane, row version, owning drive) and is applied inside one write transaction,
so a concurrent change is refused with what was found instead of lost. Both stores keep
the same tables and the same semantics, so nothing above this package knows which it has.

The interface, and what it hands out, is in `base`. What both stores do alike is written
once: the tables and migrations in `schema`, the write transaction in `sqltx`, the queries
in `queries`, the reading of rows back in `rows`. The stores, `sqlite` and `postgres`, keep
only what is their own: connecting, locking, listening and translating errors. Callers
import from here (`from board.core.store import Expect`) and open it with `open_store(cfg)`.
"""

from board.core.config import Config
from board.core.store.contract import (
    Expect,
    LaneHeads,
    Store,
    Tx,
    board_order,
    describe_changes,
    unreadable_line,
    utc_now,
    with_changes,
)
from board.core.store.sqlite import BUSY_TIMEOUT_MS, SCHEMA_VERSION, SQLiteStore


def open_store(cfg: Config, create: bool = False) -> Store:
    """The board's store as board.toml names it: PostgreSQL at `[store] url`, else the
    SQLite file at .board/board.db. `create` is for `board init` (a missing SQLite file is
    otherwise refused: it means the wrong directory). psycopg is imported only here, so a
    board that never sets a URL never pays for it."""
    if cfg.store.url:
        from board.core.store.postgres import PostgresStore  # psycopg: an optional extra

        return PostgresStore(cfg.store.url, create=create)
    return SQLiteStore(cfg.db_path, create=create)


__all__ = [
    "BUSY_TIMEOUT_MS",
    "SCHEMA_VERSION",
    "Expect",
    "LaneHeads",
    "SQLiteStore",
    "Store",
    "Tx",
    "board_order",
    "describe_changes",
    "open_store",
    "unreadable_line",
    "utc_now",
    "with_changes",
]

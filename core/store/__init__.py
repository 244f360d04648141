"""The store: one interface, one SQLite implementation at .board/board.db.

Two processes (the loop and the TUI, or the CLI) write at once. Every write names what
it expects (lane, row version, owning drive) and is applied inside one write
transaction, so a concurrent change is refused with what was found instead of lost.
SQL stays portable (no SQLite-only syntax in the queries) so a PostgreSQL store can
follow behind the same interface.

The interface, and what it hands out, is in `base`; the SQLite store is in `sqlite`, reading
its rows back through `rows`. Callers import from here: `from board.core.store import Expect`.
"""

from board.core.store.base import (
    DriveFields,
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
from board.core.store.sqlite import BUSY_TIMEOUT_MS, SCHEMA_VERSION, SQLiteStore, open_store

__all__ = [
    "BUSY_TIMEOUT_MS",
    "DriveFields",
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

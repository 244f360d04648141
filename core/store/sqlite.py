"""The embedded store: SQLite at .board/board.db, in WAL mode, one connection per process.

Two processes (the loop and the TUI, or the CLI) write at once, so every write is one
`BEGIN IMMEDIATE` transaction under a busy timeout, and a file that stays busy, is read-only or
is not a board's is refused in one line that says which. A store made by an older board gets
the indexes it lacks when it is opened, only if they can be had at once: nothing waits on them.
"""

from __future__ import annotations

import _thread
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from board.core.errors import StoreError
from board.core.store.contract import Store, Tx, utc_now
from board.core.store.queries import SqlQueries
from board.core.store.schema import (
    IS_BLOCKED,
    META,
    SCHEMA_VERSION,
    SEED_META,
    SQLITE_DDL,
    SQLITE_ORDER_INDEXES,
    migrations,
)
from board.core.store.sqltx import SqlTx

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

BUSY_TIMEOUT_MS = 5000
WAIT_POLL_S = 0.1  # how often wait_change reads the change count

# The first lane after ? (in the lane index's order), with its count and its blocked cards'
# count: a lane at a time, each an index seek and two counts over index entries. The first
# paint of a 10,000-card board reads these; a GROUP BY with SUM(blocked) read every card's
# row for its block (twice the instructions), and a GROUP BY on the lane index alone cannot
# give the blocked count. The first lane is looked for from '' on: '' is a lane name too.
_LANE_COUNTS = (
    "SELECT lane, (SELECT COUNT(*) FROM cards WHERE lane = x.lane), "
    f"(SELECT COUNT(*) FROM cards WHERE lane = x.lane AND {IS_BLOCKED} = 1) "
    "FROM (SELECT lane FROM cards WHERE lane > ? ORDER BY lane LIMIT 1) AS x"
)
_FIRST_LANE_COUNTS = _LANE_COUNTS.replace("lane > ?", "lane >= ?")

__all__ = ["BUSY_TIMEOUT_MS", "SCHEMA_VERSION", "SQLiteStore"]


def _translate(exc: sqlite3.Error, path: Path) -> StoreError:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return StoreError(
            f"store {path} is locked by another process (waited {BUSY_TIMEOUT_MS // 1000}s); "
            "try again"
        )
    if "readonly" in text or "read-only" in text:
        return StoreError(f"store {path} is read-only: check the file's permissions")
    if "not a database" in text or "malformed" in text or "no such table" in text:
        return StoreError(f"store {path} is not a board database (corrupt or foreign file)")
    if "unable to open" in text:
        return StoreError(
            f"store {path} cannot be opened: check the directory exists and is writable"
        )
    return StoreError(f"store {path}: {text}")


class SQLiteStore(SqlQueries, Store):
    """The embedded store: WAL, a busy timeout, one connection shared by this process's threads."""

    reads_in_process = True

    def __init__(
        self,
        path: str | Path,
        create: bool = False,
        clock: Callable[[], str] = utc_now,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> None:
        self.path = Path(path)
        self.where = str(self.path)
        self.clock = clock
        self._lock = _thread.RLock()  # threading.RLock() is this; importing threading is not free
        existed = self.path.exists()
        if not create and not existed:
            raise StoreError(f"no store at {self.path}: run `board init` first")
        self.created = create and not existed
        try:
            self.conn = sqlite3.connect(
                str(self.path),
                timeout=busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            self.conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            if create:
                self._create_schema()
            else:
                self._check_schema()
        except sqlite3.Error as exc:
            raise _translate(exc, self.path) from None

    def _create_schema(self) -> None:
        mode = self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":  # pragma: no cover - e.g. a filesystem without mmap
            raise StoreError(f"store {self.path}: cannot use WAL journaling (got {mode})")
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            for ddl in SQLITE_DDL:
                self.conn.execute(ddl)
            self.conn.executemany(SEED_META, META)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def _check_schema(self) -> None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            raise StoreError(f"store {self.path} has no schema version: not a board database")
        if migrations(row[0], self.where):
            self._migrate(row[0])
        self._add_missing_indexes()

    def _migrate(self, version: str) -> None:
        """A store made by an older board gets what each later version added (the same
        columns and tables a new store is made with), in one write transaction."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is not None and row[0] == version:  # nobody migrated it meanwhile
                for ddl in migrations(version, self.where):
                    self.conn.execute(ddl)
                from board.core.store.upgrade import upgrade_rows  # only an old store's open

                upgrade_rows(self.conn, version, "?")
                self.conn.execute(
                    "UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),)
                )
            self.conn.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise

    def _add_missing_indexes(self) -> None:
        """A store made before an index existed gets it on open, if it can be had at once.

        Indexes only make reads quicker, so a store that is read-only or busy right now
        is left as it is (and tried again at the next open); nothing waits for it."""
        have = {
            r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        }
        missing = [ddl for name, ddl in SQLITE_ORDER_INDEXES.items() if name not in have]
        if not missing:
            return
        timeout = self.conn.execute("PRAGMA busy_timeout").fetchone()[0]
        try:
            self.conn.execute("PRAGMA busy_timeout = 0")
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for ddl in missing:
                    self.conn.execute(ddl)
                self.conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
        except sqlite3.Error:
            pass
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {int(timeout)}")

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        with self._lock:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from None
            tx = SqlTx(self, self.conn)
            try:
                yield tx
                if tx.wrote:
                    self.conn.execute(
                        "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) "
                        "WHERE key = 'changes'"
                    )
                self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise _translate(exc, self.path) from None
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        try:
            self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self.conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from None

    def _in_read_tx(self, read: Callable[[sqlite3.Connection], T]) -> T:
        """Run several reads in one read transaction, so what they return agrees."""
        with self._lock:
            if self.conn.in_transaction:  # this thread's write transaction: it reads in that
                return read(self.conn)
            try:
                self.conn.execute("BEGIN")
                try:
                    return read(self.conn)
                finally:
                    self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from None

    def _lane_counts(self, conn: sqlite3.Connection) -> tuple[dict[str, int], dict[str, int]]:
        """A lane at a time (`_LANE_COUNTS`)."""
        totals: dict[str, int] = {}
        blocked: dict[str, int] = {}
        found = conn.execute(_FIRST_LANE_COUNTS, ("",)).fetchone()
        while found:
            lane, totals[lane], blocked[lane] = found
            found = conn.execute(_LANE_COUNTS, (lane,)).fetchone()
        return totals, blocked

    def _deps_of(self, conn: sqlite3.Connection, ids: list[str]) -> dict[str, list[str]]:
        deps: dict[str, list[str]] = {}
        for start in range(0, len(ids), 500):  # under SQLite's bound-parameter limit
            chunk = ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for card, dep in conn.execute(
                f"SELECT card, dep FROM deps WHERE card IN ({marks}) ORDER BY card, dep", chunk
            ):
                deps.setdefault(card, []).append(dep)
        return deps

    def wait_change(self, timeout: float, since: int | None = None) -> bool:
        """Polls `change_count` every WAIT_POLL_S: a read of one row of a local file."""
        deadline = time.monotonic() + max(0.0, timeout)
        seen = self.change_count() if since is None else since
        while True:
            if self.change_count() != seen:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(WAIT_POLL_S, left))

    def close(self) -> None:
        with self._lock:
            self.conn.close()

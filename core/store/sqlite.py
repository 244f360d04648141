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
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from board.core.errors import Conflict, CorruptCard, NotFound, Refused, StoreError
from board.core.model import (
    TERMINAL,
    Card,
    CardDraft,
    Event,
)
from board.core.store.base import (
    Expect,
    LaneHeads,
    Store,
    Tx,
    describe_changes,
    utc_now,
)
from board.core.store.queries import SqlQueries
from board.core.store.rows import (
    _CARD_COLS,
    _card_from_row,
    _cards,
    _cards_json,
    _id_key,
    _shown,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

# 2: cards.not_before, tier pauses, loop heartbeats; 3: the PR's polled state; 4: the board's
# publishing shape and the tombstones of deleted saves (a board on several hosts)
SCHEMA_VERSION = 4
BUSY_TIMEOUT_MS = 5000
WAIT_POLL_S = 0.1  # how often wait_change reads the change count

_FIELDS = (
    "title",
    "spec",
    "acceptance",
    "kind",
    "lane",
    "priority",
    "assignee",
    "branch",
    "pr_url",
    "blocked",
    "labels",
    "surface",
    "drive",
    "not_before",
    "pr_state",
    "pr_polled_at",
)

# 1 for a blocked card (a block class that is set and not empty, as _card_from_row reads it)
_IS_BLOCKED = "CASE WHEN blocked_class IS NULL OR blocked_class = '' THEN 0 ELSE 1 END"

# The first lane after ? (in the lane index's order), with its count and its blocked cards'
# count: a lane at a time, each an index seek and two counts over index entries. The first
# paint of a 10,000-card board reads these; a GROUP BY with SUM(blocked) read every card's
# row for its block (twice the instructions), and a GROUP BY on the lane index alone cannot
# give the blocked count. The first lane is looked for from '' on: '' is a lane name too.
_LANE_COUNTS = (
    "SELECT lane, (SELECT COUNT(*) FROM cards WHERE lane = x.lane), "
    f"(SELECT COUNT(*) FROM cards WHERE lane = x.lane AND {_IS_BLOCKED} = 1) "
    "FROM (SELECT lane FROM cards WHERE lane > ? ORDER BY lane LIMIT 1) AS x"
)
_FIRST_LANE_COUNTS = _LANE_COUNTS.replace("lane > ?", "lane >= ?")

# added by schema version 2 (a version-1 store gets them, and cards.not_before, on open)
_V2 = [
    """CREATE TABLE IF NOT EXISTS pauses (
        tier TEXT PRIMARY KEY,
        cls TEXT NOT NULL,
        reason TEXT NOT NULL,
        until TEXT NOT NULL DEFAULT '',
        since TEXT NOT NULL,
        card TEXT NOT NULL DEFAULT ''
    )""",
    """CREATE TABLE IF NOT EXISTS loops (
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        heartbeat_at TEXT NOT NULL,
        PRIMARY KEY (host, pid)
    )""",
]
# added by schema version 4: the publishing shape every host must agree with (one row), and
# the saves deleted on purpose, so that no host pushes or fetches them back (core/git/shared.py)
_V4 = [
    """CREATE TABLE IF NOT EXISTS board_shape (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        mode TEXT NOT NULL,
        run_branch TEXT NOT NULL,
        base TEXT NOT NULL,
        run_on_remote INTEGER NOT NULL,
        host TEXT NOT NULL,
        recorded_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS tombstones (
        branch TEXT NOT NULL,
        sha TEXT NOT NULL,
        host TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (branch, sha)
    )""",
]
# what each version adds to the one before: _MIGRATIONS[n] takes a store from n to n + 1
_MIGRATIONS: dict[int, list[str]] = {
    1: ["ALTER TABLE cards ADD COLUMN not_before TEXT NOT NULL DEFAULT ''", *_V2],
    2: [
        "ALTER TABLE cards ADD COLUMN pr_state TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE cards ADD COLUMN pr_polled_at TEXT NOT NULL DEFAULT ''",
    ],
    3: _V4,
}
_DDL = [
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS cards (
        id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL UNIQUE,
        title TEXT NOT NULL,
        spec TEXT NOT NULL DEFAULT '',
        acceptance TEXT NOT NULL DEFAULT '',
        kind TEXT NOT NULL DEFAULT 'feature',
        lane TEXT NOT NULL,
        priority INTEGER NOT NULL DEFAULT 2,
        assignee TEXT NOT NULL DEFAULT '',
        branch TEXT NOT NULL DEFAULT '',
        pr_url TEXT NOT NULL DEFAULT '',
        blocked_class TEXT,
        blocked_reason TEXT,
        labels TEXT NOT NULL DEFAULT '[]',
        surface TEXT NOT NULL DEFAULT '[]',
        drive TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 1,
        not_before TEXT NOT NULL DEFAULT '',
        pr_state TEXT NOT NULL DEFAULT '',
        pr_polled_at TEXT NOT NULL DEFAULT ''
    )""",
    "CREATE INDEX IF NOT EXISTS cards_lane ON cards (lane)",
    """CREATE TABLE IF NOT EXISTS deps (
        card TEXT NOT NULL, dep TEXT NOT NULL, PRIMARY KEY (card, dep)
    )""",
    "CREATE INDEX IF NOT EXISTS deps_dep ON deps (dep)",
    """CREATE TABLE IF NOT EXISTS events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        card TEXT NOT NULL,
        at TEXT NOT NULL,
        who TEXT NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS events_card ON events (card, seq)",
    """CREATE TABLE IF NOT EXISTS drives (
        id TEXT PRIMARY KEY,
        card TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        tier TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT NOT NULL DEFAULT '',
        pgid INTEGER NOT NULL DEFAULT 0,
        host TEXT NOT NULL DEFAULT '',
        owner_pid INTEGER NOT NULL DEFAULT 0,
        log TEXT NOT NULL DEFAULT '',
        result TEXT NOT NULL DEFAULT ''
    )""",
    "CREATE INDEX IF NOT EXISTS drives_card ON drives (card, attempt)",
    "CREATE INDEX IF NOT EXISTS drives_status ON drives (status)",
    *_V2,
    *_V4,
]
# Board order per lane (see `board_order`): open lanes, closed lanes. An index for each,
# so a lane's first rows are read without sorting the lane (the first paint of a
# 10,000-card board reads only what it shows); `_read_heads` orders by the same text.
_OPEN_ORDER = "priority, seq"
_CLOSED_ORDER = "updated_at DESC, seq DESC"
_ORDER_INDEXES = {
    name: f"CREATE INDEX IF NOT EXISTS {name} ON cards (lane, {_IS_BLOCKED} DESC, {order})"
    for name, order in (("cards_open_order", _OPEN_ORDER), ("cards_closed_order", _CLOSED_ORDER))
}
_DDL += _ORDER_INDEXES.values()


def _whole(value: Any, what: str, path: Path) -> int:
    """A number the store keeps as text in `meta`; anything else is a corrupt store."""
    try:
        return int(value)
    except (TypeError, ValueError):
        raise StoreError(f"store {path}: {what} is {_shown(value)}, not a whole number") from None


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


class _SQLiteTx(Tx):
    def __init__(self, store: SQLiteStore, conn: sqlite3.Connection) -> None:
        self.store = store
        self.conn = conn
        self.now = store.clock()
        self.wrote = False

    def _deps(self, card_id: str) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT dep FROM deps WHERE card = ?", (card_id,))]

    def get(self, card_id: str) -> Card:
        row = self.conn.execute(
            f"SELECT {_CARD_COLS} FROM cards WHERE id = ?", (card_id,)
        ).fetchone()
        if row is None:
            raise NotFound(f"no card {card_id!r}")
        return _card_from_row(row, self._deps(card_id))

    def all_cards(self) -> list[Card]:
        return self.store._read_cards(self.conn, None)

    def dependents(self, card_id: str) -> list[str]:
        rows = self.conn.execute("SELECT card FROM deps WHERE dep = ?", (card_id,))
        return sorted((r[0] for r in rows), key=_id_key)

    def add_event(self, card_id: str, text: str, who: str, kind: str = "event") -> None:
        self.conn.execute(
            "INSERT INTO events (card, at, who, kind, text) VALUES (?, ?, ?, ?, ?)",
            (card_id, self.now, who, kind, text),
        )
        self.wrote = True

    def update(
        self,
        card_id: str,
        expect: Expect,
        changes: Mapping[str, Any],
        who: str,
        note: str = "",
    ) -> Card:
        import json  # here: a listing never writes, and need not import it

        card = self.get(card_id)
        expect.check(card)
        unknown = set(changes) - set(_FIELDS) - {"deps"}
        if unknown:
            raise Refused(f"unknown card fields: {', '.join(sorted(unknown))}")
        blocked = changes.get("blocked", card.blocked)
        if blocked is not None and not blocked.reason.strip():
            raise Refused(f"{card_id}: a block needs a reason")
        text = describe_changes(card, changes)
        sets: dict[str, Any] = {}
        for key, value in changes.items():
            if key == "deps":
                continue
            if key == "blocked":
                sets["blocked_class"] = value.cls if value else None
                sets["blocked_reason"] = value.reason if value else None
            elif key in ("labels", "surface"):
                sets[key] = json.dumps(list(value))
            else:
                sets[key] = value
        version = card.version + 1
        sets["version"] = version
        sets["updated_at"] = self.now
        assign = ", ".join(f"{k} = ?" for k in sets)
        cur = self.conn.execute(
            f"UPDATE cards SET {assign} WHERE id = ? AND version = ?",
            (*sets.values(), card_id, card.version),
        )
        if cur.rowcount != 1:  # pragma: no cover - the write lock makes this unreachable
            raise Conflict(f"{card_id}: changed meanwhile")
        if "deps" in changes:
            self.conn.execute("DELETE FROM deps WHERE card = ?", (card_id,))
            for dep in changes["deps"]:
                self.conn.execute("INSERT INTO deps (card, dep) VALUES (?, ?)", (card_id, dep))
        line = "; ".join(x for x in (text, note) if x) or "touched"
        self.add_event(card_id, line, who)
        return self.get(card_id)

    def create(self, draft: CardDraft, prefix: str, who: str) -> Card:
        import json

        row = self.conn.execute("SELECT value FROM meta WHERE key = 'next_seq'").fetchone()
        seq = _whole(row[0], "the next card number", self.store.path) if row else 1
        self.conn.execute("UPDATE meta SET value = ? WHERE key = 'next_seq'", (str(seq + 1),))
        card_id = f"{prefix}-{seq}"
        self.conn.execute(
            f"INSERT INTO cards ({_CARD_COLS}) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, '', '', NULL, NULL, ?, ?, '', ?, ?, 1, '', '', '')",
            (
                card_id,
                seq,
                draft.title,
                draft.spec,
                draft.acceptance,
                draft.kind,
                draft.lane,
                draft.priority,
                draft.assignee,
                json.dumps(list(draft.labels)),
                json.dumps(list(draft.surface)),
                self.now,
                self.now,
            ),
        )
        for dep in draft.deps:
            self.conn.execute("INSERT INTO deps (card, dep) VALUES (?, ?)", (card_id, dep))
        self.add_event(card_id, f"created in {draft.lane}", who)
        return self.get(card_id)


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
            for ddl in _DDL:
                self.conn.execute(ddl)
            for key, value in (
                ("schema", str(SCHEMA_VERSION)),
                ("next_seq", "1"),
                ("changes", "0"),
            ):
                if not self.conn.execute("SELECT 1 FROM meta WHERE key = ?", (key,)).fetchone():
                    self.conn.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (key, value))
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def _check_schema(self) -> None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            raise StoreError(f"store {self.path} has no schema version: not a board database")
        try:
            version = int(row[0])
        except (TypeError, ValueError):
            version = None
        if version is not None and 1 <= version < SCHEMA_VERSION:
            self._migrate(version)
        elif version != SCHEMA_VERSION:
            raise StoreError(
                f"store {self.path} has an unknown schema version {_shown(row[0])} "
                f"(this board reads version {SCHEMA_VERSION})"
            )
        self._add_missing_indexes()

    def _migrate(self, version: int) -> None:
        """A store made by an older board gets what each later version added (the same
        columns and tables a new store is made with), in one write transaction."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is not None and row[0] == str(version):  # nobody migrated it meanwhile
                for step in range(version, SCHEMA_VERSION):
                    for ddl in _MIGRATIONS[step]:
                        self.conn.execute(ddl)
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
        missing = [ddl for name, ddl in _ORDER_INDEXES.items() if name not in have]
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
            tx = _SQLiteTx(self, self.conn)
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

    def _read_cards(
        self,
        conn: sqlite3.Connection,
        lane: str | None,
        unreadable: list[CorruptCard] | None = None,
    ) -> list[Card]:
        return _cards(*self._card_rows(conn, lane), unreadable)

    def _card_rows(
        self, conn: sqlite3.Connection, lane: str | None
    ) -> tuple[list[tuple[Any, ...]], dict[str, list[str]]]:
        """Every card's row (or one lane's) in seq order, and every card's deps."""
        if lane is None:
            rows = conn.execute(f"SELECT {_CARD_COLS} FROM cards ORDER BY seq").fetchall()
        else:
            rows = conn.execute(
                f"SELECT {_CARD_COLS} FROM cards WHERE lane = ? ORDER BY seq", (lane,)
            ).fetchall()
        deps: dict[str, list[str]] = {}
        for card, dep in conn.execute("SELECT card, dep FROM deps"):
            deps.setdefault(card, []).append(dep)
        return rows, deps

    def get(self, card_id: str) -> Card:
        rows = self._read(f"SELECT {_CARD_COLS} FROM cards WHERE id = ?", (card_id,))
        if not rows:
            raise NotFound(f"no card {card_id!r}")
        deps = [r[0] for r in self._read("SELECT dep FROM deps WHERE card = ?", (card_id,))]
        return _card_from_row(rows[0], deps)

    def _in_read_tx(self, read: Callable[[sqlite3.Connection], T]) -> T:
        """Run several reads in one read transaction, so what they return agrees."""
        with self._lock:
            try:
                self.conn.execute("BEGIN")
                try:
                    return read(self.conn)
                finally:
                    self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from None

    def list_cards(
        self, lane: str | None = None, unreadable: list[CorruptCard] | None = None
    ) -> list[Card]:
        # one read transaction: cards and deps agree
        return self._in_read_tx(lambda conn: self._read_cards(conn, lane, unreadable))

    def list_cards_json(
        self, lane: str | None = None, unreadable: list[CorruptCard] | None = None
    ) -> str:
        return self._in_read_tx(lambda conn: _cards_json(*self._card_rows(conn, lane), unreadable))

    def lane_heads(self, limit: int, unreadable: list[CorruptCard] | None = None) -> LaneHeads:
        """One read transaction: the counts a lane at a time (`_LANE_COUNTS`), then an
        ORDER BY ... LIMIT per lane (the lane index and a top-N sort), and the deps of only
        those cards."""
        if limit < 0:
            raise StoreError(f"lane_heads: limit must be 0 or more, not {limit}")
        return self._in_read_tx(lambda conn: self._read_heads(conn, limit, unreadable))

    def _read_heads(
        self, conn: sqlite3.Connection, limit: int, unreadable: list[CorruptCard] | None
    ) -> LaneHeads:
        row = conn.execute("SELECT value FROM meta WHERE key = 'changes'").fetchone()
        changes = _whole(row[0], "the change count", self.path) if row else 0
        totals: dict[str, int] = {}
        blocked: dict[str, int] = {}
        found = conn.execute(_FIRST_LANE_COUNTS, ("",)).fetchone()
        while found:
            lane, totals[lane], blocked[lane] = found
            found = conn.execute(_LANE_COUNTS, (lane,)).fetchone()
        rows: dict[str, list[tuple[Any, ...]]] = {}
        for lane in totals:  # served by _ORDER_INDEXES
            order = _CLOSED_ORDER if lane in TERMINAL else _OPEN_ORDER
            rows[lane] = conn.execute(
                f"SELECT {_CARD_COLS} FROM cards WHERE lane = ? "
                f"ORDER BY {_IS_BLOCKED} DESC, {order} LIMIT ?",
                (lane, limit),
            ).fetchall()
        ids = [r[0] for lane_rows in rows.values() for r in lane_rows]
        deps: dict[str, list[str]] = {}
        for start in range(0, len(ids), 500):  # under SQLite's bound-parameter limit
            chunk = ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for card, dep in conn.execute(
                f"SELECT card, dep FROM deps WHERE card IN ({marks})", chunk
            ):
                deps.setdefault(card, []).append(dep)
        return LaneHeads(
            totals=totals,
            blocked=blocked,
            cards={lane: _cards(lane_rows, deps, unreadable) for lane, lane_rows in rows.items()},
            changes=changes,
            complete=all(total <= limit for total in totals.values()),
        )

    def timeline(self, card_id: str) -> list[Event]:
        rows = self._read(
            "SELECT seq, card, at, who, kind, text FROM events WHERE card = ? ORDER BY seq",
            (card_id,),
        )
        return [Event(*r) for r in rows]

    def dependents(self, card_id: str) -> list[str]:
        rows = self._read("SELECT card FROM deps WHERE dep = ?", (card_id,))
        return sorted((r[0] for r in rows), key=_id_key)

    def change_count(self) -> int:
        rows = self._read("SELECT value FROM meta WHERE key = 'changes'")
        return _whole(rows[0][0], "the change count", self.path) if rows else 0

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

    # drives -------------------------------------------------------------------------------

    def _write(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        with self.transaction() as tx:
            assert isinstance(tx, _SQLiteTx)
            cur = tx.conn.execute(sql, params)
            tx.wrote = cur.rowcount > 0
            return cur.rowcount

    def close(self) -> None:
        with self._lock:
            self.conn.close()

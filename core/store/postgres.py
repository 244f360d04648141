"""The shared store: PostgreSQL at `[store] url`, so a team's machines work one board.

The same tables, columns and migrations as the SQLite file (`schema`), the same queries
(`queries`) and the same write transaction (`sqltx`, replayable here: `pgtx`), so the same
compare-and-set: every write transaction first takes one transaction-scoped advisory lock,
so writers run one at a time exactly as under SQLite's `BEGIN IMMEDIATE` (a claim can never
hand a card to two loops, and what a transaction reads cannot change under it), and `get`
inside a transaction reads with `FOR UPDATE`, so even a hand-run UPDATE is waited for and
seen. Every committed write bumps `change_count` and sends `NOTIFY board_changes` carrying
it, which `wait_change` listens for on a connection of its own: a TUI on another machine
follows within a second without polling. Readers never wait: PostgreSQL reads a snapshot.

One connection per process, shared by its threads under a lock (the loop's drive threads,
its heartbeat and the forge poller), as with SQLite; a connection the server dropped is
made again at the next call. Every failure is one line naming the URL (never a password):
unreachable, refused login, locked, read-only, or not a board's database.

A server that goes away (a restart, a failover, a cut network) is waited out for as long
as the store was told to (`keep_trying`: `board run` waits `[store] reconnect_s`, a verb and
the TUI not at all; see outage.py). A read simply runs again. A write transaction remembers
each call its body made and what it answered: one whose connection was lost before its
commit (the server rolled it back) is run again, call by call, on the new connection, and
goes on if every answer is the same (else someone wrote meanwhile: Conflict); one lost
while its COMMIT was on the wire asks the server whether it committed (`txid_status`)
before running again. So nothing a drive writes is lost or written twice across a restart.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from board.core import hosts
from board.core.errors import BoardError, Conflict, StoreError, StoreUnavailable
from board.core.store.contract import Store, Tx, utc_now
from board.core.store.outage import Outage
from board.core.store.pgtx import Conn, T, _lost, _PgTx, _same
from board.core.store.queries import SqlQueries
from board.core.store.schema import (
    IS_BLOCKED,
    META,
    PG_DDL,
    PG_ORDER_INDEXES,
    SCHEMA_VERSION,
    SEED_META,
    migrations,
    pg_spelling,
    whole,
)
from board.core.store.sqlite import BUSY_TIMEOUT_MS
from psycopg import errors as pgerrors
from psycopg.pq import Format
from psycopg.types.string import StrDumperUnknown, TextLoader

CHANNEL = "board_changes"  # NOTIFY channel; the payload is the new change count
CONNECT_TIMEOUT_S = 5
WAIT_SLICE_S = 0.2  # wait_change listens in slices this long, so a close ends it promptly
_WRITE_LOCK = 0x626F617264  # pg_advisory_xact_lock key every write transaction takes ("board")

# PostgreSQL text cannot hold a NUL character, which SQLite keeps and a coder's output may
# carry into a comment or a drive's result. So NUL is written as ESC "0" (and ESC itself as
# ESC ESC), and read back as it was: every text goes in and out byte for byte, as in SQLite.
# ESC is U+FFFF, a noncharacter no text is meant to hold, so stored text reads as itself.
_ESC = "\uffff"
_UNESC = re.compile(f"{_ESC}([{_ESC}0])")


def _escape_nul(text: str) -> str:
    if "\x00" not in text and _ESC not in text:
        return text
    return text.replace(_ESC, _ESC + _ESC).replace("\x00", _ESC + "0")


def _unescape_nul(text: str) -> str:
    if _ESC not in text:
        return text
    return _UNESC.sub(lambda m: "\x00" if m[1] == "0" else _ESC, text)


class _NulSafeDumper(StrDumperUnknown):
    """Every str parameter, NUL escaped (see _ESC)."""

    def dump(self, obj: str) -> bytes | bytearray | memoryview | None:
        return super().dump(_escape_nul(obj))


class _NulSafeLoader(TextLoader):
    """Every text column, NUL restored (see _ESC)."""

    format = Format.TEXT

    def load(self, data: bytes | bytearray | memoryview) -> bytes | str:
        text = super().load(data)
        return _unescape_nul(text) if isinstance(text, str) else text


def shown_url(url: str) -> str:
    """The URL for a line the operator reads: any password replaced by ***."""
    try:
        parts = urlsplit(url)
        if parts.password:
            netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
            return urlunsplit(parts._replace(netloc=netloc))
    except ValueError:
        return "the [store] url"
    return url


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0].strip() if text else type(exc).__name__


def _translate(exc: psycopg.Error, where: str, lock_ms: int) -> StoreError:
    """One line for what went wrong, naming the store and what to do."""
    line = _first_line(exc)
    if isinstance(exc, pgerrors.LockNotAvailable):
        return StoreError(
            f"store {where} is locked by another writer (waited {lock_ms / 1000:g}s); try again"
        )
    if isinstance(exc, pgerrors.ReadOnlySqlTransaction):
        return StoreError(f"store {where} is read-only (a standby?): {line}")
    if isinstance(exc, pgerrors.InsufficientPrivilege):
        return StoreError(f"store {where}: the user may not do this: {line}")
    if isinstance(exc, (pgerrors.UndefinedTable, pgerrors.UndefinedColumn)):
        return StoreError(f"store {where} is not a board database (its tables differ): {line}")
    if isinstance(exc, psycopg.OperationalError):
        low = line.lower()
        if "password" in low or "authentication" in low:
            return StoreError(
                f"store {where} refused the login: {line} (the password comes from "
                "PGPASSWORD or ~/.pgpass, never board.toml)"
            )
        if "does not exist" in low:
            return StoreError(f"store {where}: {line} (create it: createdb, see the README)")
        return StoreUnavailable(f"store {where} is unreachable: {line}")
    return StoreError(f"store {where}: {line}")


class PostgresStore(SqlQueries, Store):
    """The shared store: one PostgreSQL database per board, one connection per process."""

    PARAM = "%s"  # psycopg's parameter mark

    pushes_changes = True
    spans_hosts = True

    def __init__(
        self,
        url: str,
        create: bool = False,
        clock: Callable[[], str] = utc_now,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ) -> None:
        """Connect and create or migrate the schema. `create` is taken for the interface's
        sake: the database is named in board.toml on purpose, so any verb that opens it
        gives it the board's tables (as `board init` does), unlike a stray SQLite file."""
        self.url = url
        self.where = shown_url(url)
        self.clock = clock
        self.busy_timeout_ms = int(busy_timeout_ms)
        self.connect_timeout_s = connect_timeout_s
        self._lock = threading.RLock()
        self._listen_lock = threading.Lock()
        self._listener: Conn | None = None
        self._conn: Conn | None = None
        self._closing = threading.Event()
        self._outage = Outage(self._closing)
        self._tx: _PgTx | None = None  # the write transaction open on this connection
        with self._lock:
            self._open_schema()

    # connections --------------------------------------------------------------------------

    def _connect(self) -> Conn:
        try:
            conn = psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=max(1, round(self.connect_timeout_s)),
                application_name=f"board {hosts.this_host()} {os.getpid()}",
                # a peer that vanishes (a laptop's lid, a dropped VPN) fails a call in
                # about half a minute instead of hanging a drive thread for ever
                keepalives=1,
                keepalives_idle=10,
                keepalives_interval=5,
                keepalives_count=3,
                tcp_user_timeout=30000,
            )
        except psycopg.Error as exc:
            raise self._error(exc) from None
        conn.adapters.register_dumper(str, _NulSafeDumper)  # the default for str: last in
        conn.adapters.register_loader("text", _NulSafeLoader)
        try:
            conn.execute(f"SET lock_timeout = {self.busy_timeout_ms}")
        except psycopg.Error as exc:
            conn.close()
            raise self._error(exc) from None
        return conn

    def _live(self) -> tuple[Conn, bool]:
        """The shared connection, and whether this call made it. One the server dropped (a
        restart, a blip) is made again; while it cannot be, the outage is waited out for as
        long as `keep_trying` allows (outage.py), and then its failure raised."""
        while True:
            conn = self._conn
            if conn is not None and not conn.closed and not conn.broken:
                return conn, False
            if conn is not None:
                conn.close()
            self._conn = None
            try:
                self._conn = self._connect()
            except StoreUnavailable as exc:
                self._outage.lost(exc, self.reconnect_s, self._tell)
                continue
            return self._conn, True

    def _missed(self, exc: psycopg.Error, conn: Conn, fresh: bool) -> None:
        """A call on `conn` failed with `exc`: raise what it says, unless the server went
        away under it. Then the connection is dropped, to be made again: at once when it
        had served calls before (a restart since its last use), else after a back-off step
        of the outage (or, past its patience, raising)."""
        err = self._error(exc)
        if not _lost(exc, conn, err):
            raise err from None
        conn.close()
        if fresh:
            if not isinstance(err, StoreUnavailable):
                err = StoreUnavailable(f"store {self.where} is unreachable: {_first_line(exc)}")
            self._outage.lost(err, self.reconnect_s, self._tell)

    def _reached(self) -> None:
        """A call got through: an outage, if there was one, is over."""
        self._outage.back(self.reconnect_s, self._tell)

    def _error(self, exc: psycopg.Error) -> StoreError:
        return _translate(exc, self.where, self.busy_timeout_ms)

    def _rollback(self, conn: Conn) -> None:
        try:
            if not conn.closed:
                conn.execute("ROLLBACK")
        except psycopg.Error:
            pass

    # the schema ---------------------------------------------------------------------------

    def _open_schema(self) -> None:
        """Create or migrate the schema. The usual open is one read; only a database that
        lacks the tables, or has an older version of them, takes the write lock."""
        conn, _ = self._live()
        try:
            version = self._schema_version(conn)
            if version == str(SCHEMA_VERSION):
                return
            conn.execute("BEGIN")
            try:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
                version = self._schema_version(conn)  # as it is now that we hold the lock
                if version is None:
                    self._create(conn)
                elif version != str(SCHEMA_VERSION):
                    self._migrate(conn, version)
                conn.execute("COMMIT")
            except BaseException:
                self._rollback(conn)
                raise
        except psycopg.Error as exc:
            raise self._error(exc) from None

    def _schema_version(self, conn: Conn) -> str | None:
        """meta's schema version; None for a database without the board's tables."""
        row = conn.execute(
            "SELECT to_regclass('meta') IS NOT NULL, to_regclass('cards') IS NOT NULL"
        ).fetchone()
        has_meta, has_cards = row if row else (False, False)
        if not has_meta:
            if has_cards:
                raise StoreError(
                    f"store {self.where} has a cards table but no meta: not a board database"
                )
            return None
        got = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if got is None:
            raise StoreError(f"store {self.where} has no schema version: not a board database")
        return str(got[0])

    def _create(self, conn: Conn) -> None:
        for ddl in PG_DDL:
            conn.execute(ddl)
        for key, value in META:
            conn.execute(self._q(SEED_META), (key, value))
        self.created = True

    def _migrate(self, conn: Conn, version: str) -> None:
        """What each later version added, as the SQLite file gets it (DDL is transactional
        here, so a migration that fails leaves the old schema whole)."""
        for ddl in migrations(version, self.where):
            conn.execute(pg_spelling(ddl))
        from board.core.store.upgrade import upgrade_rows  # only an old store's open

        upgrade_rows(conn, version, "%s")
        have = {
            r[0]
            for r in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
            )
        }
        for name, ddl in PG_ORDER_INDEXES.items():
            if name not in have:
                conn.execute(ddl)
        conn.execute("UPDATE meta SET value = %s WHERE key = 'schema'", (str(SCHEMA_VERSION),))

    # transactions and reads ---------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        with self._lock:
            conn = self._begin("BEGIN", write=True)
            tx = _PgTx(self, conn)
            outer, self._tx = self._tx, tx
            try:
                try:
                    yield tx
                finally:
                    self._tx = outer
                self._commit(tx)
            except psycopg.Error as exc:
                self._rollback(tx.conn)
                raise self._error(exc) from None
            except BaseException:
                self._rollback(tx.conn)
                raise

    def _commit(self, tx: _PgTx) -> None:
        """Commit `tx`; one that wrote bumps the change count and notifies first. A
        connection lost before COMMIT was sent means the server rolled the transaction back:
        it is run again (`_replay`) and committed. Lost while COMMIT was on the wire, the
        server is asked whether it committed, and only if it did not is it run again: a
        write lands once, never twice nor not at all."""
        while True:
            xid: int | None = None
            conn = tx.conn
            try:
                if tx.wrote:
                    row = conn.execute(
                        "UPDATE meta SET value = (value::bigint + 1)::text "
                        "WHERE key = 'changes' RETURNING value"
                    ).fetchone()
                    conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, row[0] if row else ""))
                    got = conn.execute("SELECT txid_current()").fetchone()
                    xid = int(got[0]) if got else None
                conn.execute("COMMIT")
            except psycopg.Error as exc:
                err = self._error(exc)
                if not _lost(exc, conn, err):
                    raise err from None
                conn.close()
                if not tx.wrote:
                    return  # it only read: nothing to keep
                if xid is not None and self._committed(xid):
                    self._reached()
                    return
                self._replay(tx)
                continue
            self._reached()
            return

    def _committed(self, xid: int) -> bool:
        """Whether transaction `xid`, whose COMMIT was sent as its connection was lost,
        committed: asked of the server once it answers again."""
        while True:
            status = self._retry(
                lambda conn: conn.execute("SELECT txid_status(%s)", (xid,)).fetchone()
            )
            if status is None or status[0] != "in progress":
                return status is not None and status[0] == "committed"
            # the connection was cut, not the server: its session has yet to finish
            self._outage.lost(
                StoreUnavailable(f"store {self.where}: a commit cut off mid-way is still running"),
                self.reconnect_s,
                self._tell,
            )

    def _replay(self, tx: _PgTx) -> None:
        """Run `tx`'s calls again in a new transaction (waiting out the outage), its
        connection having been lost before it committed, so the server rolled it back. Each
        call must answer as it did: then the body, which decided on those answers, goes on
        as if nothing had happened. Another answer means someone wrote meanwhile, and the
        body is refused with Conflict, as any compare-and-set that lost."""
        calls = list(tx.calls)
        while True:
            conn = self._begin("BEGIN", write=True)
            tx.conn, tx.wrote = conn, False
            try:
                for op, answer in calls:
                    try:
                        again: tuple[bool, Any] = (False, op(conn))
                    except BoardError as exc:
                        again = (True, exc)
                    if not _same(answer, again):
                        raise Conflict(
                            f"store {self.where}: the connection was lost mid-write, and once "
                            "made again the store answered otherwise (another writer got in "
                            "meanwhile): nothing of that write was kept"
                        )
                return
            except psycopg.Error as exc:
                self._rollback(conn)
                self._missed(exc, conn, fresh=True)

    def _begin(self, begin: str, write: bool = False) -> Conn:
        """Open a transaction (a write one takes the write lock) on the shared connection.
        A connection the server dropped since the last call (a restart, an idle timeout) is
        found here, before anything was sent: it is made again (the outage waited out, as
        `_live` says) and the begin tried once more, so a TUI left open across a server
        restart carries on."""
        while True:
            conn, fresh = self._live()
            try:
                conn.execute(begin)
                if write:
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
                return conn
            except psycopg.Error as exc:
                self._rollback(conn)
                self._missed(exc, conn, fresh)

    def _retry(self, op: Callable[[Conn], T], begin: str = "") -> T:
        """`op` on the shared connection, on its own or in a transaction `begin` opens and a
        rollback ends. It changes nothing, so a connection lost under it is made again and
        it runs again. Inside this thread's write transaction it joins that instead."""
        with self._lock:
            if self._tx is not None:
                return self._tx.call(op)
            while True:
                conn, fresh = self._live()
                try:
                    if begin:
                        conn.execute(begin)
                    try:
                        value = op(conn)
                    finally:
                        if begin:
                            self._rollback(conn)  # nothing to keep: a read-only snapshot
                except psycopg.Error as exc:
                    self._missed(exc, conn, fresh)
                    continue
                self._reached()
                return value

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """One statement, on its own (autocommit)."""
        return self._retry(lambda conn: conn.execute(sql, params).fetchall())

    def _in_read_tx(self, read: Callable[[Conn], T]) -> T:
        """Several reads from one snapshot, so what they return agrees (inside a write
        transaction of this thread, they simply join it)."""
        return self._retry(read, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    def _lane_counts(self, conn: Conn) -> tuple[dict[str, int], dict[str, int]]:
        """One GROUP BY (a snapshot reads every row anyway)."""
        totals: dict[str, int] = {}
        blocked: dict[str, int] = {}
        for lane, total, nblocked in conn.execute(
            f"SELECT lane, COUNT(*), SUM({IS_BLOCKED}) FROM cards GROUP BY lane"
        ):
            totals[lane], blocked[lane] = int(total), int(nblocked or 0)
        return totals, blocked

    def _deps_of(self, conn: Conn, ids: list[str]) -> dict[str, list[str]]:
        deps: dict[str, list[str]] = {}
        for card, dep in conn.execute(
            "SELECT card, dep FROM deps WHERE card = ANY(%s) ORDER BY card, dep", (ids,)
        ):
            deps.setdefault(card, []).append(dep)
        return deps

    # live changes -------------------------------------------------------------------------

    def _listening(self) -> Conn:
        """The connection that LISTENs (its own: a wait must not hold the shared one)."""
        if self._listener is None or self._listener.closed or self._listener.broken:
            if self._listener is not None:
                self._listener.close()
            self._listener = None
            conn = self._connect()
            try:
                conn.execute(f"LISTEN {CHANNEL}")
            except psycopg.Error:
                conn.close()
                raise
            self._listener = conn
        return self._listener

    def wait_change(self, timeout: float, since: int | None = None) -> bool:
        """Woken by NOTIFY board_changes. LISTEN is in place before the count is read, so a
        write lands either in that count or in a notification: none slips between."""
        deadline = time.monotonic() + max(0.0, timeout)
        if self._closing.is_set():
            return False
        with self._listen_lock:
            try:
                conn = self._listening()
                row = conn.execute("SELECT value FROM meta WHERE key = 'changes'").fetchone()
                now = whole(row[0], "the change count", self.where) if row else 0
                seen = now if since is None else since
                if now != seen:
                    return True
                while (left := deadline - time.monotonic()) > 0 and not self._closing.is_set():
                    # in slices, so close() from another thread ends a wait at once
                    for note in conn.notifies(timeout=min(left, WAIT_SLICE_S), stop_after=1):
                        try:
                            if int(note.payload) > seen:
                                return True
                        except ValueError:
                            return True
                return False
            except psycopg.Error as exc:
                if self._listener is not None:
                    self._listener.close()  # made again at the next wait
                raise self._error(exc) from None

    def close(self) -> None:
        self._closing.set()
        if self._listen_lock.acquire(timeout=2 * WAIT_SLICE_S):
            try:
                if self._listener is not None:
                    self._listener.close()
                    self._listener = None
            finally:
                self._listen_lock.release()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

"""The PostgreSQL store's write transaction, which can be run again on a new connection.

A write transaction's body decides on what its calls answer (a card read FOR UPDATE, a
refusal), so each call is made through `_PgTx.call`, which remembers it with its answer.
When the server goes away before the commit (a restart: the server rolled the transaction
back), `PostgresStore._replay` opens a new transaction and makes every call again: the same
answers mean the same state, and the body goes on where it was; other answers mean someone
wrote meanwhile, and the body is refused as a compare-and-set that lost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg
from board.core.errors import BoardError, StoreError, StoreUnavailable
from board.core.store.sqltx import SqlTx

if TYPE_CHECKING:
    from board.core.store.postgres import PostgresStore

T = TypeVar("T")
Conn = psycopg.Connection[tuple[Any, ...]]


def _lost(exc: psycopg.Error, conn: Conn, err: StoreError) -> bool:
    """Whether `exc`, raised by a call on `conn`, means the server is gone (this call may
    work on a new connection), not that the call itself failed."""
    return conn.broken or conn.closed or isinstance(err, StoreUnavailable)


def _same(a: tuple[bool, Any], b: tuple[bool, Any]) -> bool:
    """Two answers to one call of a transaction: the same value, or the same refusal."""
    if a[0] != b[0]:
        return False
    if a[0]:
        return type(a[1]) is type(b[1]) and str(a[1]) == str(b[1])
    return bool(a[1] == b[1])


class _PgTx(SqlTx):
    """One write transaction. Each call its body makes is remembered with its answer
    (`calls`), so a transaction whose connection was lost before it committed can be run
    again on a new one (`PostgresStore._replay`) and the body go on as if nothing happened."""

    PARAM = "%s"
    LOCK = " FOR UPDATE"  # the row is this transaction's until it commits

    def __init__(self, store: PostgresStore, conn: Conn) -> None:
        super().__init__(store, conn)
        self.store: PostgresStore = store
        self.calls: list[tuple[Callable[[Conn], Any], tuple[bool, Any]]] = []

    def call(self, op: Callable[[Conn], T]) -> T:
        """`op` on this transaction's connection, remembered with what it answered (a value,
        or the refusal it raised). A connection lost under it is made again, the calls so
        far run again there, and then `op`."""
        while True:
            try:
                value = op(self.conn)
            except BoardError as exc:
                self.calls.append((op, (True, exc)))
                raise
            except psycopg.Error as exc:
                err = self.store._error(exc)
                if not _lost(exc, self.conn, err):
                    raise err from None
                self.conn.close()  # the server rolled the transaction back
                self.store._replay(self)
                continue
            self.calls.append((op, (False, value)))
            return value

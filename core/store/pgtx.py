"""The PostgreSQL store's write transaction, which can be run again on a new connection.

A write transaction's body decides on what its calls answer (a card read FOR UPDATE, a
refusal), so each call is made through `_PgTx.call`, which remembers it with its answer.
When the server goes away before the commit (a restart: the server rolled the transaction
back), `PostgresStore._replay` opens a new transaction and makes every call again: the same
answers mean the same state, and the body goes on where it was; other answers mean someone
wrote meanwhile, and the body is refused as a compare-and-set that lost.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg
from board.core.errors import (
    BoardError,
    Conflict,
    CorruptCard,
    NotFound,
    Refused,
    StoreError,
    StoreUnavailable,
)
from board.core.model import Card, CardDraft
from board.core.store.base import Expect, Tx, describe_changes
from board.core.store.rows import (
    _CARD_COLS,
    _card_from_row,
    _cards,
    _id_key,
    _shown,
)
from board.core.store.sqlite import _FIELDS

if TYPE_CHECKING:
    from board.core.store.postgres import PostgresStore

T = TypeVar("T")
Conn = psycopg.Connection[tuple[Any, ...]]


def _whole(value: Any, what: str, where: str) -> int:
    """A number the store keeps as text in `meta`; anything else is a corrupt store."""
    try:
        return int(value)
    except (TypeError, ValueError):
        raise StoreError(f"store {where}: {what} is {_shown(value)}, not a whole number") from None


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


class _PgTx(Tx):
    """One write transaction. Each call its body makes is remembered with its answer
    (`calls`), so a transaction whose connection was lost before it committed can be run
    again on a new one (`PostgresStore._replay`) and the body go on as if nothing happened."""

    def __init__(self, store: PostgresStore, conn: Conn) -> None:
        self.store = store
        self.conn = conn
        self.now = store.clock()
        self.wrote = False
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

    def _deps(self, conn: Conn, card_id: str) -> list[str]:
        rows = conn.execute("SELECT dep FROM deps WHERE card = %s", (card_id,))
        return [r[0] for r in rows]

    def _get(self, conn: Conn, card_id: str) -> Card:
        row = conn.execute(
            f"SELECT {_CARD_COLS} FROM cards WHERE id = %s FOR UPDATE", (card_id,)
        ).fetchone()
        if row is None:
            raise NotFound(f"no card {card_id!r}")
        return _card_from_row(row, self._deps(conn, card_id))

    def _add_event(self, conn: Conn, card_id: str, text: str, who: str, kind: str) -> None:
        conn.execute(
            "INSERT INTO events (card, at, who, kind, text) VALUES (%s, %s, %s, %s, %s)",
            (card_id, self.now, who, kind, text),
        )
        self.wrote = True

    def get(self, card_id: str) -> Card:
        return self.call(lambda conn: self._get(conn, card_id))

    def all_cards(self) -> list[Card]:
        return self.call(lambda conn: _read_cards(conn, None))

    def dependents(self, card_id: str) -> list[str]:
        def read(conn: Conn) -> list[str]:
            rows = conn.execute("SELECT card FROM deps WHERE dep = %s", (card_id,))
            return sorted((r[0] for r in rows), key=_id_key)

        return self.call(read)

    def add_event(self, card_id: str, text: str, who: str, kind: str = "event") -> None:
        self.call(lambda conn: self._add_event(conn, card_id, text, who, kind))

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        """One statement of the store's own (a drive row, a pause, a heartbeat); the rows
        it touched."""

        def run(conn: Conn) -> int:
            cur = conn.execute(sql, params)
            if cur.rowcount > 0:
                self.wrote = True
            return cur.rowcount

        return self.call(run)

    def update(
        self,
        card_id: str,
        expect: Expect,
        changes: Mapping[str, Any],
        who: str,
        note: str = "",
    ) -> Card:
        changes = dict(changes)  # as given now, should it be run again
        return self.call(lambda conn: self._update(conn, card_id, expect, changes, who, note))

    def _update(
        self,
        conn: Conn,
        card_id: str,
        expect: Expect,
        changes: Mapping[str, Any],
        who: str,
        note: str,
    ) -> Card:
        card = self._get(conn, card_id)  # FOR UPDATE: the row is ours until commit
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
        sets["version"] = card.version + 1
        sets["updated_at"] = self.now
        assign = ", ".join(f"{k} = %s" for k in sets)
        cur = conn.execute(
            f"UPDATE cards SET {assign} WHERE id = %s AND version = %s",
            (*sets.values(), card_id, card.version),
        )
        if cur.rowcount != 1:  # pragma: no cover - the row lock makes this unreachable
            raise Conflict(f"{card_id}: changed meanwhile")
        if "deps" in changes:
            conn.execute("DELETE FROM deps WHERE card = %s", (card_id,))
            for dep in changes["deps"]:
                conn.execute("INSERT INTO deps (card, dep) VALUES (%s, %s)", (card_id, dep))
        line = "; ".join(x for x in (text, note) if x) or "touched"
        self._add_event(conn, card_id, line, who, "event")
        return self._get(conn, card_id)

    def create(self, draft: CardDraft, prefix: str, who: str) -> Card:
        return self.call(lambda conn: self._create(conn, draft, prefix, who))

    def _create(self, conn: Conn, draft: CardDraft, prefix: str, who: str) -> Card:
        row = conn.execute("SELECT value FROM meta WHERE key = 'next_seq'").fetchone()
        seq = _whole(row[0], "the next card number", self.store.where) if row else 1
        conn.execute("UPDATE meta SET value = %s WHERE key = 'next_seq'", (str(seq + 1),))
        card_id = f"{prefix}-{seq}"
        conn.execute(
            f"INSERT INTO cards ({_CARD_COLS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, "
            "'', '', NULL, NULL, %s, %s, '', %s, %s, 1, '', '', '')",
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
            conn.execute("INSERT INTO deps (card, dep) VALUES (%s, %s)", (card_id, dep))
        self._add_event(conn, card_id, f"created in {draft.lane}", who, "event")
        return self._get(conn, card_id)


def _read_cards(
    conn: Conn, lane: str | None, unreadable: list[CorruptCard] | None = None
) -> list[Card]:
    return _cards(*_card_rows(conn, lane), unreadable)


def _card_rows(conn: Conn, lane: str | None) -> tuple[list[tuple[Any, ...]], dict[str, list[str]]]:
    """Every card's row (or one lane's) in seq order, and every card's deps."""
    if lane is None:
        rows = conn.execute(f"SELECT {_CARD_COLS} FROM cards ORDER BY seq").fetchall()
    else:
        rows = conn.execute(
            f"SELECT {_CARD_COLS} FROM cards WHERE lane = %s ORDER BY seq", (lane,)
        ).fetchall()
    deps: dict[str, list[str]] = {}
    for card, dep in conn.execute("SELECT card, dep FROM deps ORDER BY card, dep"):
        deps.setdefault(card, []).append(dep)
    return rows, deps

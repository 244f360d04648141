"""The write transaction both SQL stores run, written once, and the card reads it shares
with them.

SQLite and PostgreSQL differ here only in how a statement marks a parameter (`?`, `%s`)
and in how a transaction holds the card it read: SQLite's `BEGIN IMMEDIATE` already keeps
every other writer out, PostgreSQL reads the row `FOR UPDATE` so even a hand-run UPDATE is
waited for. Every call the body makes goes through `SqlTx.call`, which simply runs it; the
PostgreSQL transaction (pgtx.py) remembers each call there, to run them again on a new
connection should the server go away before the commit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from board.core.errors import Conflict, CorruptCard, NotFound, Refused
from board.core.model import STATE_FIELDS, Card, CardDraft
from board.core.store.cardrow import _CARD_COLS, _STATE_COLS, _card_from_row, _cards, _id_key
from board.core.store.contract import Expect, Tx, describe_changes
from board.core.store.schema import FIELDS, STATE_COLS, whole

_STATE_WIDTH = len(_STATE_COLS.split(","))

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any, Protocol, TypeVar

    T = TypeVar("T")
    Conn = Any  # a DB-API connection (sqlite3's, psycopg's): both `execute` on the connection

    class Owner(Protocol):
        """What a transaction asks of its store."""

        where: str
        clock: Callable[[], str]


def marks(sql: str, param: str) -> str:
    """`sql`, written with `?` for each parameter, as a driver that spells it `param` wants."""
    return sql if param == "?" else sql.replace("?", param)


def read_card(conn: Conn, param: str, card_id: str, lock: str = "") -> Card:
    """One card with its deps and its counts; `lock` is what the row is read with (`FOR
    UPDATE`, or none). The counts come in the card's own read (an outer join: a card whose
    counts are at rest has no card_state row), so a write reads no more than before."""
    lock = f"{lock} OF cards" if lock else ""  # the cards row: card_state may have none
    row = conn.execute(
        marks(
            f"SELECT {_CARD_COLS}, {_STATE_COLS}, card_state.card FROM cards "
            f"LEFT JOIN card_state ON card_state.card = cards.id WHERE id = ?{lock}",
            param,
        ),
        (card_id,),
    ).fetchone()
    if row is None:
        raise NotFound(f"no card {card_id!r}")
    deps = conn.execute(
        marks("SELECT dep FROM deps WHERE card = ? ORDER BY dep", param), (card_id,)
    )
    state = None if row[-1] is None else tuple(row[-1 - _STATE_WIDTH : -1])
    return _card_from_row(tuple(row[: -1 - _STATE_WIDTH]), [r[0] for r in deps], None, state)


def card_states(conn: Conn) -> dict[str, tuple[Any, ...]]:
    """Every card_state row by card: only the cards whose counts are not all at rest have
    one, so this is a few rows on any board."""
    return {r[0]: tuple(r[1:]) for r in conn.execute(f"SELECT {STATE_COLS} FROM card_state")}


def card_rows(
    conn: Conn, param: str, lane: str | None
) -> tuple[list[tuple[Any, ...]], dict[str, list[str]], dict[str, tuple[Any, ...]]]:
    """Every card's row (or one lane's) in seq order, every card's deps and its counts."""
    if lane is None:
        rows = conn.execute(f"SELECT {_CARD_COLS} FROM cards ORDER BY seq").fetchall()
    else:
        rows = conn.execute(
            marks(f"SELECT {_CARD_COLS} FROM cards WHERE lane = ? ORDER BY seq", param), (lane,)
        ).fetchall()
    deps: dict[str, list[str]] = {}
    for card, dep in conn.execute("SELECT card, dep FROM deps ORDER BY card, dep"):
        deps.setdefault(card, []).append(dep)
    return rows, deps, card_states(conn)


def read_cards(
    conn: Conn, param: str, lane: str | None, unreadable: list[CorruptCard] | None = None
) -> list[Card]:
    rows, deps, states = card_rows(conn, param, lane)
    return _cards(rows, deps, unreadable, states)


def dependents(conn: Conn, param: str, card_id: str) -> list[str]:
    rows = conn.execute(marks("SELECT card FROM deps WHERE dep = ?", param), (card_id,))
    return sorted((r[0] for r in rows), key=_id_key)


class SqlTx(Tx):
    """One write transaction on `conn`, the store having begun it and holding its write lock.

    A subclass sets PARAM (the driver's parameter mark) and LOCK (what a card is read with)."""

    PARAM = "?"
    LOCK = ""

    def __init__(self, store: Owner, conn: Conn) -> None:
        self.store = store
        self.conn = conn
        self.now = store.clock()
        self.wrote = False

    def call(self, op: Callable[[Conn], T]) -> T:
        """`op` on this transaction's connection (every call of the body comes here)."""
        return op(self.conn)

    def _q(self, sql: str) -> str:
        return marks(sql, self.PARAM)

    def _get(self, conn: Conn, card_id: str) -> Card:
        return read_card(conn, self.PARAM, card_id, self.LOCK)

    def _add_event(self, conn: Conn, card_id: str, text: str, who: str, kind: str) -> None:
        conn.execute(
            self._q("INSERT INTO events (card, at, who, kind, text) VALUES (?, ?, ?, ?, ?)"),
            (card_id, self.now, who, kind, text),
        )
        self.wrote = True

    def get(self, card_id: str) -> Card:
        return self.call(lambda conn: self._get(conn, card_id))

    def all_cards(self) -> list[Card]:
        return self.call(lambda conn: read_cards(conn, self.PARAM, None))

    def dependents(self, card_id: str) -> list[str]:
        return self.call(lambda conn: dependents(conn, self.PARAM, card_id))

    def add_event(self, card_id: str, text: str, who: str, kind: str = "event") -> None:
        self.call(lambda conn: self._add_event(conn, card_id, text, who, kind))

    def has_event(self, card_id: str, kind: str) -> bool:
        sql = self._q("SELECT 1 FROM events WHERE card = ? AND kind = ? LIMIT 1")
        return self.call(lambda conn: conn.execute(sql, (card_id, kind)).fetchone() is not None)

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        """One statement of the store's own (a drive row, a pause, a heartbeat); the rows
        it touched."""

        def run(conn: Conn) -> int:
            cur = conn.execute(sql, params)
            if cur.rowcount > 0:
                self.wrote = True
            return int(cur.rowcount)

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
        import json  # here: a listing never writes, and need not import it

        card = self._get(conn, card_id)  # the row is ours until commit (the write lock, LOCK)
        expect.check(card)
        unknown = set(changes) - set(FIELDS) - {"deps"}
        if unknown:
            raise Refused(f"unknown card fields: {', '.join(sorted(unknown))}")
        blocked = changes.get("blocked", card.blocked)
        if blocked is not None and not blocked.reason.strip():
            raise Refused(f"{card_id}: a block needs a reason")
        counts = any(key in changes for key in STATE_FIELDS)
        state = self._state_row(card, changes) if counts else None  # checked before any write
        text = describe_changes(card, changes)
        sets: dict[str, Any] = {}
        for key, value in changes.items():
            if key == "deps" or key in STATE_FIELDS:
                continue
            if key == "blocked":
                sets["blocked_class"] = value.cls if value else None
                sets["blocked_reason"] = value.reason if value else None
            elif key in ("labels", "surface", "race"):
                sets[key] = json.dumps(list(value))
            elif key == "best_of":  # 0, the board's, is kept as NULL, as a new card's is
                sets[key] = value or None
            else:
                sets[key] = value
        sets["version"] = card.version + 1
        sets["updated_at"] = self.now
        assign = ", ".join(f"{k} = ?" for k in sets)
        cur = conn.execute(
            self._q(f"UPDATE cards SET {assign} WHERE id = ? AND version = ?"),
            (*sets.values(), card_id, card.version),
        )
        if cur.rowcount != 1:  # pragma: no cover - the write lock makes this unreachable
            raise Conflict(f"{card_id}: changed meanwhile")
        if "deps" in changes:
            conn.execute(self._q("DELETE FROM deps WHERE card = ?"), (card_id,))
            for dep in changes["deps"]:
                conn.execute(self._q("INSERT INTO deps (card, dep) VALUES (?, ?)"), (card_id, dep))
        if counts:
            self._put_state(conn, card_id, state)
        line = "; ".join(x for x in (text, note) if x) or "touched"
        self._add_event(conn, card_id, line, who, "event")
        new_lane = changes.get("lane", card.lane)
        if new_lane != card.lane:  # the move as data, beside the line that says it
            conn.execute(
                self._q("INSERT INTO lane_moves (card, at, who, old, new) VALUES (?, ?, ?, ?, ?)"),
                (card_id, self.now, who, card.lane, new_lane),
            )
        return self._get(conn, card_id)

    def _state_row(self, card: Card, changes: Mapping[str, Any]) -> tuple[Any, ...] | None:
        """The card's card_state row as `changes` leave its counts, None when they are all at
        rest (the card keeps no row then); a value of the wrong shape refuses the write."""
        import json  # only a write of counts

        values = (changes.get(k, getattr(card, k)) for k in STATE_FIELDS)
        tries, rung, told, timeouts, reviews_seen = values
        try:
            pairs = {str(cls): int(n) for cls, n in tries}
        except (TypeError, ValueError):
            raise Refused(f"{card.id}: tries must be (class, count) pairs, not {tries!r}") from None
        counts = (timeouts, reviews_seen)
        is_count = all(isinstance(n, int) and not isinstance(n, bool) for n in counts)
        if not (isinstance(rung, str) and isinstance(told, str) and is_count):
            raise Refused(f"{card.id}: rung and told are text, timeouts and reviews_seen counts")
        if min((*counts, *pairs.values())) < 0:
            raise Refused(f"{card.id}: a count cannot be below 0")
        if not pairs and not rung and not told and not any(counts):
            return None
        return (card.id, json.dumps(pairs), rung, told, timeouts, reviews_seen)

    def _put_state(self, conn: Conn, card_id: str, row: tuple[Any, ...] | None) -> None:
        """The card's card_state row written, or dropped (`row` None)."""
        if row is None:
            conn.execute(self._q("DELETE FROM card_state WHERE card = ?"), (card_id,))
            return
        conn.execute(
            self._q(
                f"INSERT INTO card_state ({STATE_COLS}) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (card) DO UPDATE SET tries = excluded.tries, rung = excluded.rung, "
                "told = excluded.told, timeouts = excluded.timeouts, "
                "reviews_seen = excluded.reviews_seen"
            ),
            row,
        )

    def create(self, draft: CardDraft, prefix: str, who: str) -> Card:
        return self.call(lambda conn: self._create(conn, draft, prefix, who))

    def _create(self, conn: Conn, draft: CardDraft, prefix: str, who: str) -> Card:
        import json  # only a card made

        row = conn.execute("SELECT value FROM meta WHERE key = 'next_seq'").fetchone()
        seq = whole(row[0], "the next card number", self.store.where) if row else 1
        conn.execute(self._q("UPDATE meta SET value = ? WHERE key = 'next_seq'"), (str(seq + 1),))
        card_id = f"{prefix}-{seq}"
        conn.execute(
            self._q(
                f"INSERT INTO cards ({_CARD_COLS}) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, '', '', NULL, NULL, ?, ?, '', ?, ?, 1, '', '', '', "
                "?, ?, ?, ?)"
            ),
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
                draft.best_of or None,
                json.dumps(list(draft.race)),
                draft.source,
                draft.source_url,
            ),
        )
        for dep in draft.deps:
            conn.execute(self._q("INSERT INTO deps (card, dep) VALUES (?, ?)"), (card_id, dep))
        self._add_event(conn, card_id, f"created in {draft.lane}", who, "event")
        return self._get(conn, card_id)

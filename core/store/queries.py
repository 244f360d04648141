"""The queries both SQL stores run the same way: cards and their heads, timelines, drive
rows, tier pauses, loop heartbeats, the board's publishing shape, the tombstones of
deleted saves and the notices.

SQLite and PostgreSQL differ in how they connect, lock and listen, not in these statements,
so they are written once here with `?` for a parameter; a store whose driver spells it
otherwise (psycopg's `%s`) sets PARAM. Each store supplies `_read` (one statement, its rows),
`_in_read_tx` (several reads that agree), `transaction` (a `SqlTx`) and `_lane_counts`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager

from board.core import hosts
from board.core.errors import CorruptCard, NotFound, Refused, StoreError
from board.core.model import (
    DRIVE_LIVE,
    MOST_TOKENS,
    MOST_USD,
    TERMINAL,
    BoardShape,
    Card,
    Drive,
    Event,
    LaneMove,
    LoopBeat,
    Notice,
    Pause,
    Usage,
    UsageSum,
)
from board.core.store.cardcache import CardCache
from board.core.store.cardrow import _CARD_COLS, _DRIVE_COLS, _cards, _cards_json, _id_key
from board.core.store.contract import LaneHeads, Tx
from board.core.store.schema import CLOSED_ORDER, IS_BLOCKED, OPEN_ORDER, whole
from board.core.store.sqltx import SqlTx, card_rows, card_states, marks, read_card, read_cards

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any, TypeVar, Unpack

    from board.core.store.contract import DriveFields
    from board.core.store.sqltx import Conn

    T = TypeVar("T")

_DRIVE_FIELDS = set(_DRIVE_COLS.replace(" ", "").split(",")) - {"id", "card"}
_USAGE_FIELDS = Usage.__match_args__  # the drive columns a Usage fills, in its order

# a drive's time, for sums by day and since a time: when it ended (its spend was made by
# then), or when it started while it runs; the second form is the one the ended_at index serves
DRIVE_AT = "CASE WHEN ended_at = '' THEN started_at ELSE ended_at END"
AT_OR_AFTER = "(ended_at >= ? OR (ended_at = '' AND started_at >= ?))"
# what the sums of a group of drive rows are read as (UsageSum's fields after its key)
_SUMS = (
    "COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(cached_tokens), SUM(cost_usd), "
    "SUM(CASE WHEN cost_usd IS NULL AND (input_tokens IS NOT NULL OR output_tokens IS NOT NULL "
    "OR cached_tokens IS NOT NULL) THEN 1 ELSE 0 END)"
)
USAGE_BY = {"card": "card", "tier": "tier", "day": f"substr({DRIVE_AT}, 1, 10)"}


def _usage_sum(key: str, row: tuple[Any, ...]) -> UsageSum:
    """A UsageSum from a row of `_SUMS` (PostgreSQL sums BIGINTs as NUMERIC: made ints)."""
    drives, inp, out, cached, cost, unpriced = row

    def whole(v: Any) -> int | None:
        return None if v is None else int(v)

    cost_usd = None if cost is None else float(cost)
    return UsageSum(
        key, int(drives), whole(inp), whole(out), whole(cached), cost_usd, int(unpriced or 0)
    )


def checked_usage(fields: dict[str, Any]) -> None:
    """Refuse a usage field of a drive row that is not what it says: a count that is not a
    whole number from 0 to MOST_TOKENS, a cost that is not a number from 0 to MOST_USD (past
    those a row or a sum of rows overflows), a model that is not text (None is "not said",
    for every field but the model)."""
    import math  # only a usage write

    for name in _USAGE_FIELDS:
        if name not in fields:
            continue
        value = fields[name]
        if name == "model":
            if not isinstance(value, str):
                raise Refused(f"drive usage: model must be text, not {value!r}")
            continue
        if value is None:
            continue
        if name == "cost_usd":
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or not 0 <= value <= MOST_USD:
                raise Refused(
                    f"drive usage: cost_usd must be a number from 0 to {MOST_USD:,.0f}, "
                    f"not {value!r}"
                )
            fields[name] = float(value)
        elif isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MOST_TOKENS:
            raise Refused(
                f"drive usage: {name} must be a whole number from 0 to {MOST_TOKENS:,}, "
                f"not {value!r}"
            )


GATE_WORDS = ("", "green", "red")  # a drive row's `gate`: no gate ran, or what it said


def checked_candidate(fields: Mapping[str, object]) -> None:
    """Refuse a candidate field of a drive row that is not what it says: a candidate that is
    no whole number from 1 (None: the drive is no candidate), a gate word that is not one
    of GATE_WORDS, changed lines that are no count up to MOST_TOKENS (None: not counted)."""
    for name, low in (("candidate", 1), ("lines_changed", 0)):
        value = fields.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MOST_TOKENS:
            raise Refused(
                f"drive {name} must be a whole number from {low} to {MOST_TOKENS:,}, not {value!r}"
            )
    if "gate" in fields and fields["gate"] not in GATE_WORDS:
        raise Refused(f"drive gate must be 'green', 'red' or '', not {fields['gate']!r}")


class SqlQueries:
    """The reading verbs of the `Store` interface and the drive, pause, heartbeat, shape and
    tombstone ones, over `_read`, `_in_read_tx` and `transaction`."""

    PARAM = "?"
    clock: Callable[[], str]
    where: str

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _in_read_tx(self, read: Callable[[Conn], T]) -> T:
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def _lane_counts(self, conn: Conn) -> tuple[dict[str, int], dict[str, int]]:
        """Each lane's card count and blocked-card count."""
        raise NotImplementedError

    def _deps_of(self, conn: Conn, ids: list[str]) -> dict[str, list[str]]:
        """The deps of the cards `ids`."""
        raise NotImplementedError

    def _write(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        """One statement in a write transaction of its own; the rows it touched."""
        with self.transaction() as tx:
            assert isinstance(tx, SqlTx)
            return tx.execute(sql, params)

    def _q(self, sql: str) -> str:
        return marks(sql, self.PARAM)

    # cards --------------------------------------------------------------------------------

    def get(self, card_id: str) -> Card:
        return self._in_read_tx(lambda conn: read_card(conn, self.PARAM, card_id))

    def list_cards(
        self, lane: str | None = None, unreadable: list[CorruptCard] | None = None
    ) -> list[Card]:
        # one read transaction: cards and deps agree
        if lane is not None:
            return self._in_read_tx(lambda conn: read_cards(conn, self.PARAM, lane, unreadable))
        cache = self._card_cache()

        def read(conn: Conn) -> list[Card]:
            rows, deps, states = card_rows(conn, self.PARAM, None)
            return cache.cards(rows, deps, unreadable, states)

        return self._in_read_tx(read)

    def _card_cache(self) -> CardCache:
        """This store's cards of its last whole listing (core/store/cardcache.py)."""
        cache = self.__dict__.get("_cards_kept")
        if cache is None:
            cache = self.__dict__.setdefault("_cards_kept", CardCache())
        return cache

    def list_cards_json(
        self, lane: str | None = None, unreadable: list[CorruptCard] | None = None
    ) -> str:
        def written(conn: Conn) -> str:
            rows, deps, states = card_rows(conn, self.PARAM, lane)
            return _cards_json(rows, deps, unreadable, states)

        return self._in_read_tx(written)

    def lane_heads(self, limit: int, unreadable: list[CorruptCard] | None = None) -> LaneHeads:
        """One read transaction: each lane's counts (`_lane_counts`), then each lane's first
        rows in board order (an ORDER BY ... LIMIT served by the order indexes), and the deps
        of only those cards."""
        if limit < 0:
            raise StoreError(f"lane_heads: limit must be 0 or more, not {limit}")
        return self._in_read_tx(lambda conn: self._read_heads(conn, limit, unreadable))

    def _read_heads(
        self, conn: Conn, limit: int, unreadable: list[CorruptCard] | None
    ) -> LaneHeads:
        row = conn.execute("SELECT value FROM meta WHERE key = 'changes'").fetchone()
        changes = whole(row[0], "the change count", self.where) if row else 0
        totals, blocked = self._lane_counts(conn)
        rows: dict[str, list[tuple[Any, ...]]] = {}
        for lane in totals:
            order = CLOSED_ORDER if lane in TERMINAL else OPEN_ORDER
            rows[lane] = conn.execute(
                self._q(
                    f"SELECT {_CARD_COLS} FROM cards WHERE lane = ? "
                    f"ORDER BY ({IS_BLOCKED}) DESC, {order} LIMIT ?"
                ),
                (lane, limit),
            ).fetchall()
        deps = self._deps_of(conn, [r[0] for lane_rows in rows.values() for r in lane_rows])
        states = card_states(conn)
        return LaneHeads(
            totals=totals,
            blocked=blocked,
            cards={
                lane: _cards(lane_rows, deps, unreadable, states)
                for lane, lane_rows in rows.items()
            },
            changes=changes,
            complete=all(total <= limit for total in totals.values()),
        )

    def timeline(self, card_id: str) -> list[Event]:
        rows = self._read(
            self._q(
                "SELECT seq, card, at, who, kind, text FROM events WHERE card = ? ORDER BY seq"
            ),
            (card_id,),
        )
        return [Event(*r) for r in rows]

    def dependents(self, card_id: str) -> list[str]:
        rows = self._read(self._q("SELECT card FROM deps WHERE dep = ?"), (card_id,))
        return sorted((r[0] for r in rows), key=_id_key)

    def change_count(self) -> int:
        rows = self._read("SELECT value FROM meta WHERE key = 'changes'")
        return whole(rows[0][0], "the change count", self.where) if rows else 0

    # drives -------------------------------------------------------------------------------

    def start_drive(
        self,
        card: str,
        tier: str,
        attempt: int,
        log: str,
        owner_pid: int,
        candidate: int | None = None,
    ) -> Drive:
        import uuid  # here: a store opened to read cards never makes a drive's token

        checked_candidate({"candidate": candidate})

        drive = Drive(
            id=f"d-{uuid.uuid4().hex[:10]}",
            card=card,
            attempt=attempt,
            tier=tier,
            status=DRIVE_LIVE,
            started_at=self.clock(),
            host=hosts.this_host(),
            owner_pid=owner_pid or os.getpid(),
            log=log,
            candidate=candidate,
        )
        values = (
            "?, ?, ?, ?, ?, ?, '', 0, ?, ?, ?, '', NULL, NULL, NULL, NULL, '', NULL, ?, '', NULL"
        )
        self._write(
            self._q(f"INSERT INTO drives ({_DRIVE_COLS}) VALUES ({values})"),
            (drive.id, drive.card, drive.attempt, drive.tier, drive.status, drive.started_at,
             drive.host, drive.owner_pid, drive.log, drive.candidate),
        )  # fmt: skip
        return drive

    def update_drive(self, drive_id: str, **fields: Unpack[DriveFields]) -> Drive:
        bad = set(fields) - _DRIVE_FIELDS
        if bad:
            raise Refused(f"unknown drive fields: {', '.join(sorted(bad))}")
        checked_usage(fields)  # type: ignore[arg-type]  # a TypedDict is a dict at run time
        checked_candidate(fields)
        if fields.get("status") and fields["status"] != DRIVE_LIVE and "ended_at" not in fields:
            fields["ended_at"] = self.clock()
        if fields:
            assign = ", ".join(f"{k} = ?" for k in fields)
            self._write(
                self._q(f"UPDATE drives SET {assign} WHERE id = ?"), (*fields.values(), drive_id)
            )
        return self.get_drive(drive_id)

    def get_drive(self, drive_id: str) -> Drive:
        rows = self._read(self._q(f"SELECT {_DRIVE_COLS} FROM drives WHERE id = ?"), (drive_id,))
        if not rows:
            raise NotFound(f"no drive {drive_id!r}")
        return Drive(*rows[0])

    def list_drives(self, card: str | None = None, limit: int = 200) -> list[Drive]:
        """Live drives first, then the most recent finished ones."""
        where = "WHERE card = ?" if card else ""
        params: tuple[Any, ...] = (card,) if card else ()
        rows = self._read(
            self._q(
                f"SELECT {_DRIVE_COLS} FROM drives {where} "
                "ORDER BY CASE WHEN status = ? THEN 0 ELSE 1 END, started_at DESC, "
                "attempt DESC LIMIT ?"
            ),
            (*params, DRIVE_LIVE, limit),
        )
        return [Drive(*r) for r in rows]

    def drives_since(self, at: str) -> list[Drive]:
        """Every drive that ran at or after `at` (still live, or ended since), oldest first."""
        rows = self._read(
            self._q(
                f"SELECT {_DRIVE_COLS} FROM drives WHERE status = ? OR ended_at >= ? "
                "ORDER BY started_at, id"
            ),
            (DRIVE_LIVE, at),
        )
        return [Drive(*r) for r in rows]

    def lane_moves_since(self, at: str) -> list[LaneMove]:
        """Every card's lane moves at or after `at`, in the order made."""
        rows = self._read(
            self._q(
                "SELECT seq, card, at, who, old, new FROM lane_moves WHERE at >= ? ORDER BY seq"
            ),
            (at,),
        )
        return [LaneMove(*r) for r in rows]

    def record_usage(self, drive_id: str, usage: Usage) -> Drive:
        fields: dict[str, Any] = {name: getattr(usage, name) for name in _USAGE_FIELDS}
        checked_usage(fields)
        assign = ", ".join(f"{k} = ?" for k in fields)
        touched = self._write(
            self._q(f"UPDATE drives SET {assign} WHERE id = ?"), (*fields.values(), drive_id)
        )
        if not touched:
            raise NotFound(f"no drive {drive_id!r}")
        return self.get_drive(drive_id)

    def usage_sums(self, by: str, since: str | None = None) -> list[UsageSum]:
        key = USAGE_BY.get(by)
        if key is None:
            raise Refused(f"usage sums: by must be one of {', '.join(USAGE_BY)}, not {by!r}")
        where, params = ("", ()) if since is None else (f"WHERE {AT_OR_AFTER} ", (since, since))
        rows = self._read(
            self._q(f"SELECT {key}, {_SUMS} FROM drives {where}GROUP BY {key}"), params
        )
        sums = [_usage_sum(str(r[0]), tuple(r[1:])) for r in rows]
        sums.sort(key=(lambda u: _id_key(u.key)) if by == "card" else (lambda u: u.key))
        return sums

    def card_usage(self, card_id: str) -> UsageSum:
        rows = self._read(self._q(f"SELECT {_SUMS} FROM drives WHERE card = ?"), (card_id,))
        return _usage_sum(card_id, tuple(rows[0]))

    def spend_since(self, at: str) -> float:
        rows = self._read(
            self._q(f"SELECT SUM(cost_usd) FROM drives WHERE {AT_OR_AFTER}"), (at, at)
        )
        return float(rows[0][0] or 0.0)

    def live_drives(self) -> list[Drive]:
        rows = self._read(
            self._q(f"SELECT {_DRIVE_COLS} FROM drives WHERE status = ?"), (DRIVE_LIVE,)
        )
        return [Drive(*r) for r in rows]

    def race_drives(self) -> list[Drive]:
        rows = self._read(
            self._q(
                f"SELECT {_DRIVE_COLS} FROM drives WHERE (candidate IS NOT NULL OR status = ?) "
                "AND card IN (SELECT id FROM cards WHERE lane = ?)"
            ),
            (DRIVE_LIVE, "working"),
        )
        return [Drive(*r) for r in rows]

    def next_attempt(self, card: str) -> int:
        rows = self._read(self._q("SELECT MAX(attempt) FROM drives WHERE card = ?"), (card,))
        return int(rows[0][0] or 0) + 1

    # tier pauses and loop heartbeats ------------------------------------------------------

    def pause_tier(self, pause: Pause) -> None:
        self._write(
            self._q(
                "INSERT INTO pauses (tier, cls, reason, until, since, card) "
                "VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (tier) DO UPDATE SET cls = excluded.cls, reason = excluded.reason, "
                "until = excluded.until, since = excluded.since, card = excluded.card"
            ),
            (pause.tier, pause.cls, pause.reason, pause.until, pause.since, pause.card),
        )

    def resume_tier(self, tier: str, cls: str | None = None) -> bool:
        if cls is None:
            return self._write(self._q("DELETE FROM pauses WHERE tier = ?"), (tier,)) > 0
        sql = self._q("DELETE FROM pauses WHERE tier = ? AND cls = ?")
        return self._write(sql, (tier, cls)) > 0

    def pauses(self) -> list[Pause]:
        rows = self._read("SELECT tier, cls, reason, until, since, card FROM pauses ORDER BY tier")
        return [Pause(*r) for r in rows]

    def beat(self, host: str, pid: int, started_at: str) -> None:
        self._write(
            self._q(
                "INSERT INTO loops (host, pid, started_at, heartbeat_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (host, pid) DO UPDATE SET heartbeat_at = excluded.heartbeat_at"
            ),
            (host, pid, started_at, self.clock()),
        )

    def end_loop(self, host: str, pid: int) -> None:
        self._write(self._q("DELETE FROM loops WHERE host = ? AND pid = ?"), (host, pid))

    def loops(self) -> list[LoopBeat]:
        rows = self._read(
            "SELECT host, pid, started_at, heartbeat_at FROM loops ORDER BY heartbeat_at DESC"
        )
        return [LoopBeat(*r) for r in rows]

    # the board's publishing shape, and the tombstones of deleted saves ------------------

    def shape(self) -> BoardShape | None:
        rows = self._read(
            "SELECT mode, run_branch, base, run_on_remote, host, recorded_at FROM board_shape"
        )
        if not rows:
            return None
        mode, run_branch, base, on_remote, host, at = rows[0]
        return BoardShape(mode, run_branch, base, bool(on_remote), host, at)

    def record_shape(self, shape: BoardShape, replace: bool = False) -> BoardShape:
        """One statement, so two hosts starting at once cannot both record a first shape:
        the second finds the first's row and is compared with it."""
        keep = "DO NOTHING"
        if replace:
            keep = (
                "DO UPDATE SET mode = excluded.mode, run_branch = excluded.run_branch, "
                "base = excluded.base, run_on_remote = excluded.run_on_remote, "
                "host = excluded.host, recorded_at = excluded.recorded_at"
            )
        self._write(
            self._q(
                "INSERT INTO board_shape (id, mode, run_branch, base, run_on_remote, host, "
                f"recorded_at) VALUES (1, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) {keep}"
            ),
            (shape.mode, shape.run_branch, shape.base, int(shape.run_on_remote), shape.host,
             self.clock()),
        )  # fmt: skip
        now = self.shape()
        assert now is not None, "the shape row was just written"
        return now

    def bury(self, saves: list[tuple[str, str]], host: str) -> None:
        at = self.clock()
        saves = sorted(set(saves))
        for start in range(0, len(saves), 200):  # under SQLite's bound-parameter limit
            chunk = saves[start : start + 200]
            marks = ", ".join(["(?, ?, ?, ?)"] * len(chunk))
            self._write(
                self._q(
                    f"INSERT INTO tombstones (branch, sha, host, at) VALUES {marks} "
                    "ON CONFLICT (branch, sha) DO NOTHING"
                ),
                tuple(x for branch, sha in chunk for x in (branch, sha, host, at)),
            )

    def tombstones(self) -> set[tuple[str, str]]:
        return {(b, s) for b, s in self._read("SELECT branch, sha FROM tombstones")}

    # notices ------------------------------------------------------------------------------

    def record_notice(self, kind: str, card: str, cls: str, text: str, key: str) -> bool:
        touched = self._write(
            self._q(
                "INSERT INTO notices (key, kind, card, cls, text, at) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (key) DO NOTHING"
            ),
            (key, kind, card, cls, text, self.clock()),
        )
        return touched > 0

    def notices(self, after: int = 0, limit: int = 50, newest: bool = False) -> list[Notice]:
        order = "DESC" if newest else "ASC"
        rows = self._read(
            self._q(f"SELECT {_NOTICE_COLS} FROM notices WHERE id > ? ORDER BY id {order} LIMIT ?"),
            (after, limit),
        )
        return [_notice(r) for r in rows]

    def notice_counts(self) -> tuple[int, int]:
        rows = self._read(
            "SELECT COALESCE(MAX(id), 0), COALESCE(SUM(CASE WHEN seen = 0 THEN 1 ELSE 0 END), 0) "
            "FROM notices"
        )
        return (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)

    def mark_seen(self, up_to: int) -> int:
        return self._write(
            self._q("UPDATE notices SET seen = 1 WHERE id <= ? AND seen = 0"), (up_to,)
        )

    def pending_notices(self, since: str, tries: int, claimed_before: str) -> list[Notice]:
        rows = self._read(
            self._q(
                f"SELECT {_NOTICE_COLS} FROM notices WHERE sent_at = '' AND at >= ? "
                "AND tries < ? AND (claimed_at = '' OR claimed_at < ?) ORDER BY id LIMIT 100"
            ),
            (since, tries, claimed_before),
        )
        return [_notice(r) for r in rows]

    def claim_notice(self, notice: Notice) -> bool:
        touched = self._write(
            self._q(
                "UPDATE notices SET tries = tries + 1, claimed_at = ? "
                "WHERE id = ? AND tries = ? AND sent_at = ''"
            ),
            (self.clock(), notice.id, notice.tries),
        )
        return touched > 0

    def notice_sent(self, notice_id: int, sent_to: str, error: str) -> None:
        self._write(
            self._q(
                "UPDATE notices SET sent_to = ?, error = ?, claimed_at = '', sent_at = ? "
                "WHERE id = ?"
            ),
            (sent_to, error, "" if error else self.clock(), notice_id),
        )


_NOTICE_COLS = "id, kind, card, cls, text, at, key, sent_at, tries, error, seen, sent_to"


def _notice(row: tuple[Any, ...]) -> Notice:
    """A Notice from a row of `_NOTICE_COLS` (seen is 0 or 1 on both stores)."""
    nid, kind, card, cls, text, at, key, sent_at, tries, error, seen, sent_to = row
    return Notice(int(nid), kind, card, cls, text, at, key, sent_at, int(tries), error,
                  bool(seen), sent_to)  # fmt: skip

"""The queries both SQL stores run the same way: drive rows, tier pauses, loop heartbeats,
the board's publishing shape and the tombstones of deleted saves.

SQLite and PostgreSQL differ in how they connect, lock and listen, not in these statements,
so they are written once here with `?` for a parameter; a store whose driver spells it
otherwise (psycopg's `%s`) sets PARAM. Each store supplies `_read` (one statement, its rows)
and `_write` (one statement in a write transaction, the rows it touched).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from board.core import hosts
from board.core.errors import NotFound, Refused
from board.core.model import DRIVE_LIVE, BoardShape, Drive, Event, LoopBeat, Pause
from board.core.store.rows import _DRIVE_COLS

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any, Unpack

    from board.core.store.base import DriveFields

_DRIVE_FIELDS = set(_DRIVE_COLS.replace(" ", "").split(",")) - {"id", "card"}


class SqlQueries:
    """Drive, pause, heartbeat, shape and tombstone verbs of the `Store` interface, over
    `_read`/`_write`."""

    PARAM = "?"
    clock: Callable[[], str]

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _write(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        raise NotImplementedError

    def _q(self, sql: str) -> str:
        return sql if self.PARAM == "?" else sql.replace("?", self.PARAM)

    # drives -------------------------------------------------------------------------------

    def start_drive(self, card: str, tier: str, attempt: int, log: str, owner_pid: int) -> Drive:
        import uuid  # here: a store opened to read cards never makes a drive's token

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
        )
        values = "?, ?, ?, ?, ?, ?, '', 0, ?, ?, ?, ''"
        self._write(
            self._q(f"INSERT INTO drives ({_DRIVE_COLS}) VALUES ({values})"),
            (drive.id, drive.card, drive.attempt, drive.tier, drive.status, drive.started_at,
             drive.host, drive.owner_pid, drive.log),
        )  # fmt: skip
        return drive

    def update_drive(self, drive_id: str, **fields: Unpack[DriveFields]) -> Drive:
        bad = set(fields) - _DRIVE_FIELDS
        if bad:
            raise Refused(f"unknown drive fields: {', '.join(sorted(bad))}")
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

    def events_since(self, at: str) -> list[Event]:
        """Every card's timeline lines written at or after `at`, in the order written."""
        rows = self._read(
            self._q("SELECT seq, card, at, who, kind, text FROM events WHERE at >= ? ORDER BY seq"),
            (at,),
        )
        return [Event(*r) for r in rows]

    def live_drives(self) -> list[Drive]:
        rows = self._read(
            self._q(f"SELECT {_DRIVE_COLS} FROM drives WHERE status = ?"), (DRIVE_LIVE,)
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

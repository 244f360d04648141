"""The store's interface: what the engine and the TUI may ask of persistence, and no more.

Every write names what it expects (`Expect`: lane, row version, owning drive) and is checked
inside one write transaction (`Tx`), so a concurrent change is refused with what was found
instead of lost, and the CLI and the TUI refuse it in the same one line. What is the same for
every store lives here too (board order, the timeline line for a change, the line for cards
that cannot be read), so a store behind this interface shows the board as the SQLite one does.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from datetime import UTC, datetime

from board.core.errors import Conflict, CorruptCard, NotFound, StoreError
from board.core.model import (
    TERMINAL,
    BoardShape,
    Card,
    CardDraft,
    Drive,
    Event,
    LaneMove,
    LoopBeat,
    Notice,
    Pause,
    Usage,
    UsageSum,
)
from board.core.records import Frozen, replace

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any, TypedDict, Unpack


def utc_now() -> str:
    """UTC time with milliseconds, sortable as text."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


class Expect(Frozen, slots=True):
    """What a write expects to find; any mismatch refuses the write and says what was found."""

    lane: str | tuple[str, ...] | None = None
    version: int | None = None
    drive: str | None = None

    def check(self, card: Card) -> None:
        if self.lane is not None:
            lanes = (self.lane,) if isinstance(self.lane, str) else self.lane
            if card.lane not in lanes:
                raise Conflict(f"{card.id}: expects {' or '.join(lanes)}, got {card.lane}")
        if self.drive is not None and card.drive != self.drive:
            got = card.drive or "no drive"
            raise Conflict(f"{card.id}: expects drive {self.drive}, got {got}")
        if self.version is not None and card.version != self.version:
            raise Conflict(
                f"{card.id}: expects version {self.version}, got {card.version} (changed meanwhile)"
            )


def describe_changes(old: Card, changes: Mapping[str, Any]) -> str:
    """A timeline line for a set of field changes: `lane ready → working; blocked held: r`."""
    parts = []
    for key, new in changes.items():
        before = getattr(old, key)
        if before == new:
            continue
        if key == "blocked":
            if new is None:
                parts.append(f"unblocked (was {before.cls})" if before else "unblocked")
            else:
                parts.append(f"blocked {new.cls}: {new.reason}")
        elif key in ("spec", "acceptance"):
            parts.append(f"{key} changed ({len(new)} chars)")
        elif key in ("labels", "surface", "deps"):
            added = sorted(set(new) - set(before))
            removed = sorted(set(before) - set(new))
            bits = [f"+{x}" for x in added] + [f"-{x}" for x in removed]
            parts.append(f"{key} {' '.join(bits)}")
        elif key == "race":  # its order counts: candidate k runs its k-th tier
            parts.append(f"race {','.join(before) or '∅'} → {','.join(new) or '∅'}")
        elif key == "drive":
            parts.append(f"drive {new}" if new else "drive released")
        elif key == "tries":
            was, now = dict(before), dict(new)
            counts = [
                f"{cls} {was.get(cls, 0)} → {now.get(cls, 0)}"
                for cls in {**was, **now}
                if was.get(cls, 0) != now.get(cls, 0)
            ]
            parts.append(f"tries {', '.join(counts) or 'reordered'}")
        elif key == "timeouts":
            parts.append(f"timeouts {before} → {new}")
        else:
            parts.append(f"{key} {before or '∅'} → {new or '∅'}")
    return "; ".join(parts)


class LaneHeads(Frozen, slots=True):
    """Per-lane counts and the first rows of each lane in board order, from one read.

    Lets a screen paint the real top of every lane and its real counts without reading
    every card; `complete` says no lane was cut short (the heads are the whole board).
    """

    totals: dict[str, int]  # cards per lane
    blocked: dict[str, int]  # blocked cards per lane
    cards: dict[str, list[Card]]  # each lane's first rows in board order
    changes: int  # change_count() as of the read
    complete: bool


def board_order(lane: str, cards: Iterable[Card]) -> list[Card]:
    """A lane in board order: blocked first; open lanes by priority then seq, closed
    lanes (done, cancelled) newest first."""
    if lane in TERMINAL:
        rows = sorted(cards, key=lambda c: (c.updated_at, c.seq), reverse=True)
    else:
        rows = sorted(cards, key=lambda c: (c.priority, c.seq))
    rows.sort(key=lambda c: c.blocked is None)  # stable: keeps the order above
    return rows


if TYPE_CHECKING:  # for the type check only: a TypedDict is of no use at run time

    class DriveFields(TypedDict, total=False):
        """The fields of a drive row that `Store.update_drive` may set, with their types, so a
        misspelt field or a wrong type shows in the type check, not at run time (the store
        still refuses an unknown field, for callers the checker does not see)."""

        attempt: int
        tier: str
        status: str
        started_at: str
        ended_at: str
        pgid: int
        host: str
        owner_pid: int
        log: str
        result: str
        input_tokens: int | None
        output_tokens: int | None
        cached_tokens: int | None
        cost_usd: float | None
        model: str
        turns: int | None
        candidate: int | None
        gate: str
        lines_changed: int | None


class Tx(abc.ABC):
    """One write transaction: reads see the latest committed state, writes land together."""

    @abc.abstractmethod
    def get(self, card_id: str) -> Card: ...

    @abc.abstractmethod
    def update(
        self,
        card_id: str,
        expect: Expect,
        changes: Mapping[str, Any],
        who: str,
        note: str = "",
    ) -> Card: ...

    @abc.abstractmethod
    def add_event(self, card_id: str, text: str, who: str, kind: str = "event") -> None: ...

    @abc.abstractmethod
    def create(self, draft: CardDraft, prefix: str, who: str) -> Card: ...

    @abc.abstractmethod
    def dependents(self, card_id: str) -> list[str]: ...

    @abc.abstractmethod
    def all_cards(self) -> list[Card]: ...

    @abc.abstractmethod
    def has_event(self, card_id: str, kind: str) -> bool:
        """Whether the card's timeline holds an event of `kind`: what makes a thing the board
        does once per card (an `[import] on_done_argv` run) once, across restarts and hosts,
        when asked after `get` has locked the card."""


class Store(abc.ABC):
    """Everything the engine and the TUI need from persistence; nothing else touches the file."""

    # True when the database itself wakes `wait_change` (PostgreSQL's LISTEN/NOTIFY), so a
    # watcher can block on it instead of polling `change_count`.
    pushes_changes: bool = False
    # True when a read is this process's own work (an embedded file), not a wait on a server:
    # such a read, run beside other Python, hands the GIL back and forth at every row
    reads_in_process: bool = False
    # True when this open made a new, empty store (what `board init` reports)
    created: bool = False
    # where the store lives, for the operator's lines: a file path or a URL (no password)
    where: str = ""
    # True when several machines may open this store, each in its own clone (a database
    # server); the SQLite file lives in one clone's .board/, so only that clone's runs see it
    spans_hosts: bool = False
    # how long a lost connection to the store's server is waited out (`keep_trying`)
    reconnect_s: float = 0.0
    _tell: Callable[[str, str], None] | None = None

    def keep_trying(self, seconds: float, tell: Callable[[str, str], None] | None = None) -> None:
        """Wait out a lost connection to the store's server for up to `seconds` (`board
        run`'s `[store] reconnect_s`) instead of failing the call at once: a server restart
        must not end an unattended night. `tell(event, line)` hears `lost`, `back` and
        `gave-up`. The default, 0, fails at once, which a verb or the TUI wants (each says
        so, and the operator or the next poll tries again). A store with no connection to
        lose, the SQLite file, never waits: the same calls, nothing to wait for."""
        self.reconnect_s = max(0.0, float(seconds))
        self._tell = tell

    @abc.abstractmethod
    def transaction(self) -> AbstractContextManager[Tx]:
        """One write transaction: `with store.transaction() as tx:`; it commits when the
        block ends and rolls back when it raises."""

    @abc.abstractmethod
    def get(self, card_id: str) -> Card: ...

    @abc.abstractmethod
    def list_cards(
        self, lane: str | None = None, unreadable: list[CorruptCard] | None = None
    ) -> list[Card]:
        """Every card (or one lane's) in seq order. A row that cannot be read raises
        CorruptCard, unless `unreadable` is given: then it is left out and appended
        there, so a listing shows every other card and says which could not be read."""

    def list_cards_json(
        self, lane: str | None = None, unreadable: list[CorruptCard] | None = None
    ) -> str:
        """`list_cards` as `board card list --json` prints it: the same text as
        `json.dumps([card.to_json() for card in cards], indent=2, ensure_ascii=False)`. A
        store may write it straight from its rows, which is several times quicker."""
        import json  # only the JSON listing

        cards = self.list_cards(lane, unreadable)
        return json.dumps([card.to_json() for card in cards], indent=2, ensure_ascii=False)

    @abc.abstractmethod
    def timeline(self, card_id: str) -> list[Event]: ...

    @abc.abstractmethod
    def dependents(self, card_id: str) -> list[str]: ...

    @abc.abstractmethod
    def change_count(self) -> int:
        """A number that changes whenever anyone commits a write (cheap to poll)."""

    @abc.abstractmethod
    def wait_change(self, timeout: float, since: int | None = None) -> bool:
        """Block up to `timeout` seconds until someone commits a write; True as soon as one is.

        `since` is a `change_count()` the caller has already acted on: a write committed after
        it counts even when it landed before this call, so a watcher that reloads and then
        waits misses nothing in between. None: a write committed after this call begins. Why
        a wait and not only `change_count`: a board shared over the network should reach every
        TUI within a second without each one asking the server twice a second; PostgreSQL
        wakes the waiter (NOTIFY), the SQLite file is polled cheaply."""

    @abc.abstractmethod
    def start_drive(
        self,
        card: str,
        tier: str,
        attempt: int,
        log: str,
        owner_pid: int,
        candidate: int | None = None,
    ) -> Drive:
        """A live drive row; `candidate` is k of a race's candidates (best of N), None for
        any other drive."""

    @abc.abstractmethod
    def update_drive(self, drive_id: str, **fields: Unpack[DriveFields]) -> Drive:
        """Set fields of a drive row; a status other than live stamps `ended_at` unless
        given. Returns the row as it is now."""

    @abc.abstractmethod
    def get_drive(self, drive_id: str) -> Drive:
        """One drive row; NotFound when there is none (a plain token has no row)."""

    @abc.abstractmethod
    def list_drives(self, card: str | None = None, limit: int = 200) -> list[Drive]:
        """Live drives first, then the most recent finished ones (of one card, or all)."""

    @abc.abstractmethod
    def drives_since(self, at: str) -> list[Drive]:
        """Every drive that ran at or after `at` (live, or ended since), oldest first: what
        the flow screen's hours are made of."""

    @abc.abstractmethod
    def lane_moves_since(self, at: str) -> list[LaneMove]:
        """Every card's lane moves made at or after `at`, in the order made: what the flow
        screen counts (each written with the timeline line `lane A → B` that says it)."""

    @abc.abstractmethod
    def record_usage(self, drive_id: str, usage: Usage) -> Drive:
        """Record what a drive's coder spent (every field of `usage`, None ones as unknown,
        over what the row held); NotFound when there is no such drive. A negative count or
        cost, one that is not a number, or one past what a drive can spend (MOST_TOKENS,
        MOST_USD), is refused and nothing is written."""

    @abc.abstractmethod
    def usage_sums(self, by: str, since: str | None = None) -> list[UsageSum]:
        """Every drive's usage summed per `by` ("card", "tier", or "day": the UTC day a
        drive ended, or started while it runs), counted by the store (SQL), of the drives
        whose time (the same) is at or after `since` (ISO UTC; None: all). Keys in order
        (days oldest first); a bad `by` is refused."""

    @abc.abstractmethod
    def card_usage(self, card_id: str) -> UsageSum:
        """What every attempt of a card spent together, failed ones included (key: the
        card id; drives 0 when it has none)."""

    @abc.abstractmethod
    def spend_since(self, at: str) -> float:
        """The known cost of the drives that ended at or after `at` (ISO UTC), or that run
        still and started then: today's spend is `spend_since` of today's UTC midnight."""

    @abc.abstractmethod
    def live_drives(self) -> list[Drive]:
        """Every drive row still marked live, of any card: what the loop checks for
        owners that died."""

    @abc.abstractmethod
    def race_drives(self) -> list[Drive]:
        """Every candidate row and every live row of the cards in the working lane, in one
        query whatever the board's size: what the board's rows count a running race's
        green candidates from (`tui/boarddata.read_races`), never a query per card."""

    @abc.abstractmethod
    def next_attempt(self, card: str) -> int:
        """The attempt number the card's next drive takes: one past its highest."""

    @abc.abstractmethod
    def pause_tier(self, pause: Pause) -> None:
        """Pause a tier board-wide (replacing any pause it had): no claim for it meanwhile."""

    @abc.abstractmethod
    def resume_tier(self, tier: str, cls: str | None = None) -> bool:
        """Lift a tier's pause (only one of class `cls`, when given); True if there was one."""

    @abc.abstractmethod
    def pauses(self) -> list[Pause]:
        """Every pause recorded, lapsed ones too (`until` in the past): readers judge the time."""

    @abc.abstractmethod
    def beat(self, host: str, pid: int, started_at: str) -> None:
        """A running loop's heartbeat: `heartbeat_at` becomes now."""

    @abc.abstractmethod
    def end_loop(self, host: str, pid: int) -> None:
        """A loop that stops cleanly takes its heartbeat row with it."""

    @abc.abstractmethod
    def loops(self) -> list[LoopBeat]:
        """Every loop's last heartbeat, newest first (a dead loop's row stays, going stale)."""

    @abc.abstractmethod
    def shape(self) -> BoardShape | None:
        """The publishing shape every host of this board runs with; None before the first
        `board run` recorded one."""

    @abc.abstractmethod
    def record_shape(self, shape: BoardShape, replace: bool = False) -> BoardShape:
        """Record `shape` (its `recorded_at` is now) if none is recorded yet, or over the
        recorded one with `replace`; returns the shape recorded after the write, which is
        another's when a host recorded first and `replace` is off."""

    @abc.abstractmethod
    def bury(self, saves: list[tuple[str, str]], host: str) -> None:
        """Record saves (branch, commit) deleted on purpose (a discard, a prune, a salvage),
        so no host pushes or fetches them back and each deletes its own copy."""

    @abc.abstractmethod
    def tombstones(self) -> set[tuple[str, str]]:
        """Every (branch, commit) buried: a save at that branch with another commit is not."""

    @abc.abstractmethod
    def record_notice(self, kind: str, card: str, cls: str, text: str, key: str) -> bool:
        """Record a notice (its time is now) unless one with `key` is recorded: one
        statement, so two loops that see the same thing at once record it once. True when
        this call recorded it."""

    @abc.abstractmethod
    def notices(self, after: int = 0, limit: int = 50, newest: bool = False) -> list[Notice]:
        """The notices whose id is above `after`, oldest first (the TUI's toasts), or with
        `newest` the latest `limit` of them newest first (the notices screen)."""

    @abc.abstractmethod
    def notice_counts(self) -> tuple[int, int]:
        """The newest notice's id (0 when none) and how many no operator has seen."""

    @abc.abstractmethod
    def mark_seen(self, up_to: int) -> int:
        """Every notice up to id `up_to` seen (the notices screen was opened); how many
        were not."""

    @abc.abstractmethod
    def pending_notices(self, since: str, tries: int, claimed_before: str) -> list[Notice]:
        """The notices to send, oldest first: not sent yet, recorded at or after `since`,
        begun fewer than `tries` times, and not claimed by a sender after `claimed_before`."""

    @abc.abstractmethod
    def claim_notice(self, notice: Notice) -> bool:
        """Take `notice` to send it (its tries one more, claimed now), only if nobody took
        it since it was read (its tries unchanged, still unsent): two loops never send one
        notice at once. True when this call took it."""

    @abc.abstractmethod
    def notice_sent(self, notice_id: int, sent_to: str, error: str) -> None:
        """A send ended: the channels that have it now, and the failure ('' when every
        channel took it, which stamps `sent_at`); the claim is let go either way."""

    @abc.abstractmethod
    def close(self) -> None: ...

    # conveniences over the abstract verbs -------------------------------------------------

    def update(
        self,
        card_id: str,
        expect: Expect,
        changes: Mapping[str, Any],
        who: str = "board",
        note: str = "",
    ) -> Card:
        with self.transaction() as tx:
            return tx.update(card_id, expect, changes, who, note)

    def add_comment(self, card_id: str, text: str, who: str = "board") -> None:
        with self.transaction() as tx:
            tx.get(card_id)
            tx.add_event(card_id, text, who, kind="comment")

    def add_event(self, card_id: str, text: str, who: str = "board", kind: str = "event") -> None:
        with self.transaction() as tx:
            tx.get(card_id)
            tx.add_event(card_id, text, who, kind=kind)

    def create(self, draft: CardDraft, prefix: str = "c", who: str = "operator") -> Card:
        with self.transaction() as tx:
            return tx.create(draft, prefix, who)

    def find(self, card_id: str) -> Card | None:
        try:
            return self.get(card_id)
        except NotFound:
            return None

    def lane_heads(self, limit: int, unreadable: list[CorruptCard] | None = None) -> LaneHeads:
        """Counts per lane and each lane's first `limit` cards in board order (see
        `board_order`), so a board paints without reading every card. This default reads
        everything; a store overrides it with a cheaper query. `unreadable` as in
        `list_cards`."""
        if limit < 0:
            raise StoreError(f"lane_heads: limit must be 0 or more, not {limit}")
        changes = self.change_count()
        lanes: dict[str, list[Card]] = {}
        for card in self.list_cards(unreadable=unreadable):
            lanes.setdefault(card.lane, []).append(card)
        return LaneHeads(
            totals={lane: len(cards) for lane, cards in lanes.items()},
            blocked={
                lane: sum(c.blocked is not None for c in cards) for lane, cards in lanes.items()
            },
            cards={lane: board_order(lane, cards)[:limit] for lane, cards in lanes.items()},
            changes=changes,
            complete=all(len(cards) <= limit for cards in lanes.values()),
        )


def unreadable_line(unreadable: list[CorruptCard]) -> str:
    """One line for the cards a listing left out: the first named, the rest counted."""
    line = unreadable[0].line()
    more = len(unreadable) - 1
    if more:
        line += f" (and {more} more card{'s' if more != 1 else ''} cannot be read)"
    return line


def with_changes(card: Card, **changes: Any) -> Card:
    """A copy of a card with fields changed (for previews; the store is not touched)."""
    return replace(card, **changes)

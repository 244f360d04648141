"""The board's flow over the last day, from the store's timeline and drive rows: what the
flow screen draws (`board tui`, `F`).

An operator of a fleet looks at throughput and failures, not at timelines: cards done per
hour, where cards spend their time, how long drives take, which failures come and when,
and how full the drives are. Everything here is worked out from what the store already
records (each card's lane moves, a `lane_moves` row written with the change, never the words
of its timeline line, which a block reason may also hold; and each drive's start, end,
status and result), at a moment the caller gives (the TUI's clock), so a fixed store gives
fixed figures.
"""

from __future__ import annotations

import statistics
from datetime import datetime, timedelta

from board.core.failures import parse_stamp, stamp
from board.core.model import BLOCK_CLASSES, DRIVE_LIVE, LANES, TERMINAL, Card, Drive, LaneMove
from board.core.records import Frozen, Record, field
from board.core.store.contract import Store

HOURS = 24
FAILED = ("failed", "blocked", "timeout", "crashed")  # drive statuses that count as a failure


class Flow(Frozen):
    """The figures of one window: `hours` buckets of an hour each, the first starting at
    `start`, the last ending at `end`."""

    start: datetime
    end: datetime
    max_concurrent: int
    done_per_hour: list[int]
    # open lanes only (a done card sits in done forever): card-seconds spent in the lane
    # within the window, and the cards that were in it at some point
    lane_seconds: dict[str, float]
    lane_cards: dict[str, int]
    durations: list[float]  # seconds, each drive that ended in the window, in end order
    longest_per_hour: list[float]  # seconds, the longest drive that ended in each hour
    failures: dict[str, list[int]]  # class -> failed drives per hour, most frequent first
    peak_working: list[int]  # the most cards in the working lane at once in each hour

    @property
    def hours(self) -> int:
        return len(self.done_per_hour)

    @property
    def done(self) -> int:
        return sum(self.done_per_hour)

    def duration_summary(self) -> tuple[float, float, float]:
        """Median, 90th percentile (nearest rank) and longest drive, in seconds."""
        if not self.durations:
            return 0.0, 0.0, 0.0
        ordered = sorted(self.durations)
        p90 = ordered[max(0, -(-len(ordered) * 9 // 10) - 1)]
        return statistics.median(ordered), p90, ordered[-1]


class _Card(Record):
    """One card's lane changes in the window, in the order written."""

    moves: list[tuple[datetime, str, str]] = field(default_factory=list)


def _bucket(at: datetime, start: datetime, hours: int) -> int | None:
    index = int((at - start).total_seconds() // 3600)
    return index if 0 <= index < hours else None


def fail_class(drive: Drive) -> str:
    """The class a failed drive ended with: its result's `class: …` when the class is one the
    board names, else its status (`timeout`, `crashed`)."""
    head = drive.result.split(":", 1)[0].strip()
    return head if head in BLOCK_CLASSES else drive.status


def read_flow(store: Store, at: datetime, max_concurrent: int, hours: int = HOURS) -> Flow:
    """The flow of the `hours` before `at`, read from `store` (off the UI thread)."""
    start = at - timedelta(hours=hours)
    since = stamp(start)
    return flow_of(
        store.list_cards(), store.lane_moves_since(since), store.drives_since(since),
        at, max_concurrent, hours,
    )  # fmt: skip


def flow_of(
    cards: list[Card],
    moves: list[LaneMove],
    drives: list[Drive],
    at: datetime,
    max_concurrent: int,
    hours: int = HOURS,
) -> Flow:
    """The figures from what was read: `moves` and `drives` may reach before the window
    (they are clipped), `cards` are as they are now (each card's lane at `at`)."""
    start = at - timedelta(hours=hours)
    done = [0] * hours
    seen: dict[str, _Card] = {}
    for move in moves:
        when = parse_stamp(move.at)
        if when is None or when < start or when > at:
            continue
        seen.setdefault(move.card, _Card()).moves.append((when, move.old, move.new))
        hour = _bucket(when, start, hours)
        if move.new == "done" and hour is not None:
            done[hour] += 1

    # time in each open lane: walk each card back from its lane now through its changes
    lane_seconds = {lane: 0.0 for lane in LANES if lane not in TERMINAL}
    lane_cards = dict.fromkeys(lane_seconds, 0)
    working: list[tuple[datetime, int]] = []  # each working spell's start (+1) and end (-1)
    for card in cards:
        mine = seen.get(card.id, _Card())
        lane, until = card.lane, at
        spans: list[tuple[str, datetime, datetime]] = []
        for when, old, _new in reversed(mine.moves):
            spans.append((lane, when, until))
            lane, until = old, when
        made = parse_stamp(card.created_at) if card.created_at else None
        spans.append((lane, max(made, start) if made is not None else start, until))
        for lane_, begin, end in spans:
            if lane_ in lane_seconds and end > begin:
                lane_seconds[lane_] += (end - begin).total_seconds()
            if lane_ == "working" and end > begin:
                working += [(begin, 1), (end, -1)]
        for lane_ in {s[0] for s in spans if s[2] > s[1]}:
            if lane_ in lane_cards:
                lane_cards[lane_] += 1

    durations: list[tuple[datetime, float]] = []
    failures: dict[str, list[int]] = {}
    longest = [0.0] * hours
    for drive in drives:
        began = parse_stamp(drive.started_at)
        ended = parse_stamp(drive.ended_at) if drive.ended_at else None
        if began is None or ended is None or drive.status == DRIVE_LIVE:
            continue
        if not start <= ended <= at:
            continue
        took = max(0.0, (ended - began).total_seconds())
        durations.append((ended, took))
        hour = _bucket(ended, start, hours)
        if hour is not None:
            longest[hour] = max(longest[hour], took)
        if drive.status in FAILED:
            hour = _bucket(ended, start, hours)
            if hour is not None:
                failures.setdefault(fail_class(drive), [0] * hours)[hour] += 1

    return Flow(
        start=start,
        end=at,
        max_concurrent=max_concurrent,
        done_per_hour=done,
        lane_seconds=lane_seconds,
        lane_cards=lane_cards,
        durations=[d for _, d in sorted(durations, key=lambda x: x[0])],
        longest_per_hour=longest,
        failures=dict(sorted(failures.items(), key=lambda kv: (-sum(kv[1]), kv[0]))),
        peak_working=_peaks(working, start, hours),
    )


def _peaks(edges: list[tuple[datetime, int]], start: datetime, hours: int) -> list[int]:
    """The most spells open at once within each hour (spells clipped to the window): a
    sweep over the starts (+1) and ends (-1), ends first at a tie, so a card that leaves
    working as another enters is not counted with it."""
    peaks = [0] * hours
    running = 0
    hour = 0
    for when, step in sorted(edges, key=lambda e: (e[0], e[1])):
        index = int((when - start).total_seconds() // 3600)
        while hour < min(index, hours):  # hours passed with `running` open all through
            hour += 1
            if hour < hours:
                peaks[hour] = max(peaks[hour], running)
        running += step
        if 0 <= index < hours:
            peaks[index] = max(peaks[index], running)
    return peaks  # the last edge is at the window's end (a live drive's) or none is open


__all__ = ["FAILED", "HOURS", "Flow", "fail_class", "flow_of", "read_flow"]

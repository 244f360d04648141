"""The board's flow over the last day, from the store's timeline and drive rows: what the
flow screen draws (`board tui`, `F`).

An operator of a fleet looks at throughput and failures, not at timelines: cards done per
hour, where cards spend their time, how long drives take, which failures come and when,
how full the drives are, what the agents spent each hour, and what a done card cost by the
tier that finished it (every attempt of the card summed, failed ones included: the price
of a card is what it took to get it done, not its last drive's), and the races (best of
N) won by tier. Everything here is worked
out from what the store already records (each card's lane moves, a `lane_moves` row written
with the change, never the words of its timeline line, which a block reason may also hold;
each drive's start, end, status, result and usage), at a moment the caller gives (the TUI's
clock), so a fixed store gives fixed figures.
"""

from __future__ import annotations

import statistics
from datetime import datetime, timedelta

from board.core.failures import parse_stamp, stamp
from board.core.model import (
    BLOCK_CLASSES,
    DRIVE_LIVE,
    LANES,
    TERMINAL,
    Card,
    Drive,
    LaneMove,
    UsageSum,
)
from board.core.records import Frozen, Record, field
from board.core.store.contract import Store

HOURS = 24
FAILED = ("failed", "blocked", "timeout", "crashed")  # drive statuses that count as a failure


class TierCost(Frozen, slots=True):
    """What the cards done in the window cost, those whose last drive ran on one tier:
    every attempt of each card summed (failed ones, and those on other tiers, included)."""

    cards: int = 0
    cost_usd: float | None = None  # the known costs summed; None when none is known
    unpriced: int = 0  # their drives that said tokens but no cost (no price for the model)

    @property
    def per_card(self) -> float | None:
        """The known cost over the cards (a lower bound while some drive is unpriced)."""
        return None if self.cost_usd is None or not self.cards else self.cost_usd / self.cards


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
    # the known cost of the drives that ended in each hour (what `spend_since` counts)
    spend_per_hour: list[float] = field(default_factory=list)
    spend_priced: int = 0  # drives that ended in the window and said their cost
    spend_unpriced: int = 0  # and those that said tokens but no cost
    # tier of a done card's last drive -> what those cards cost (cards done in the window)
    done_cost: dict[str, TierCost] = field(default_factory=dict)
    # best of N: the races whose own drive ended in the window, and those won by tier
    races: int = 0
    races_won: dict[str, int] = field(default_factory=dict)

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
    """The flow of the `hours` before `at`, read from `store` (off the UI thread): the
    cards, the window's lane moves and drives, and every card's usage summed by the store
    (one query); a card done in the window whose last drive ended before it (approved a
    day later) has that drive read alone."""
    start = at - timedelta(hours=hours)
    since = stamp(start)
    cards, moves, drives = (
        store.list_cards(),
        store.lane_moves_since(since),
        store.drives_since(since),
    )
    usage = {u.key: u for u in store.usage_sums(by="card")}
    last = last_drives(drives)
    for card_id in done_in(cards, moves, start, at):
        if card_id not in last and card_id in usage:  # it has drives, none in the window
            found = store.list_drives(card_id, limit=1)
            if found:
                last[card_id] = found[0]
    tiers = {card_id: drive.tier for card_id, drive in last.items()}
    return flow_of(cards, moves, drives, at, max_concurrent, hours, usage, tiers)


def last_drives(drives: list[Drive]) -> dict[str, Drive]:
    """Each card's latest drive among `drives` (the last started, the highest attempt)."""
    last: dict[str, Drive] = {}
    for drive in drives:
        seen = last.get(drive.card)
        if seen is None or (drive.started_at, drive.attempt) >= (seen.started_at, seen.attempt):
            last[drive.card] = drive
    return last


def done_in(cards: list[Card], moves: list[LaneMove], start: datetime, at: datetime) -> list[str]:
    """The cards that ended done in the window: moved to done in it and still there."""
    now_done = {card.id for card in cards if card.lane == "done"}
    found: dict[str, None] = {}
    for move in moves:
        when = parse_stamp(move.at)
        if move.new == "done" and move.card in now_done and when is not None:
            if start <= when <= at:
                found[move.card] = None
    return list(found)


def flow_of(
    cards: list[Card],
    moves: list[LaneMove],
    drives: list[Drive],
    at: datetime,
    max_concurrent: int,
    hours: int = HOURS,
    usage: dict[str, UsageSum] | None = None,
    tiers: dict[str, str] | None = None,
) -> Flow:
    """The figures from what was read: `moves` and `drives` may reach before the window
    (they are clipped), `cards` are as they are now (each card's lane at `at`); `usage` is
    each card's spend over all its attempts and `tiers` each card's last drive's tier (the
    cost per done card; without them it is left out)."""
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
    spend = [0.0] * hours
    priced = unpriced = 0
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
        if drive.cost_usd is not None:
            priced += 1
            spend[min(hour, hours - 1) if hour is not None else hours - 1] += drive.cost_usd
        elif any(
            n is not None for n in (drive.input_tokens, drive.output_tokens, drive.cached_tokens)
        ):
            unpriced += 1  # tokens but no price: the store's `UsageSum.unpriced` too
        if drive.status in FAILED:
            hour = _bucket(ended, start, hours)
            if hour is not None:
                failures.setdefault(fail_class(drive), [0] * hours)[hour] += 1

    races, won = _races(drives, start, at)
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
        spend_per_hour=spend,
        spend_priced=priced,
        spend_unpriced=unpriced,
        done_cost=_done_cost(done_in(cards, moves, start, at), usage or {}, tiers or {}),
        races=races,
        races_won=won,
    )


def race_of(own: Drive, rows: dict[int, Drive]) -> list[Drive]:
    """The candidates of the race whose own drive is `own` (no candidate of its own): the
    candidate rows from candidate 1 at the attempt after it, as long as k climbs (a race
    starts candidates 1 to N in order, each on the card's next attempt; core/drive/race.py).
    `rows` is the card's drives by attempt."""
    out: list[Drive] = []
    attempt = own.attempt + 1
    while (row := rows.get(attempt)) is not None and row.candidate == len(out) + 1:
        out.append(row)
        attempt += 1
    return out


def _races(drives: list[Drive], start: datetime, at: datetime) -> tuple[int, dict[str, int]]:
    """The races that ended in the window (their own drive ended in it) and those won, by
    the winner's tier. A race is won when a candidate of it ended passed and the race's own
    drive ended passed: the chosen tree was folded (or went to review, the operator's fold);
    a green race whose fold climbed or conflicted ends its own drive otherwise."""
    by_card: dict[str, dict[int, Drive]] = {}
    for drive in drives:
        by_card.setdefault(drive.card, {})[drive.attempt] = drive
    races = 0
    won: dict[str, int] = {}
    for drive in drives:
        ended = parse_stamp(drive.ended_at) if drive.ended_at else None
        if drive.candidate is not None or drive.live or ended is None or not start <= ended <= at:
            continue
        race = race_of(drive, by_card[drive.card])
        if not race:
            continue  # a single drive
        races += 1
        winner = next((c for c in race if c.status == "passed"), None)
        if drive.status == "passed" and winner is not None:
            won[winner.tier] = won.get(winner.tier, 0) + 1
    return races, dict(sorted(won.items()))


def _done_cost(
    done: list[str], usage: dict[str, UsageSum], tiers: dict[str, str]
) -> dict[str, TierCost]:
    """The cards done in the window, grouped by their last drive's tier, each with every
    attempt's cost summed; a card done with no drive at all (by hand) is left out."""
    out: dict[str, TierCost] = {}
    for card_id in done:
        tier, spent = tiers.get(card_id), usage.get(card_id)
        if tier is None or spent is None:
            continue
        was = out.get(tier, TierCost())
        cost = was.cost_usd
        if spent.cost_usd is not None:
            cost = (cost or 0.0) + spent.cost_usd
        out[tier] = TierCost(was.cards + 1, cost, was.unpriced + spent.unpriced)
    return dict(sorted(out.items()))


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


__all__ = [
    "FAILED",
    "HOURS",
    "Flow",
    "TierCost",
    "done_in",
    "fail_class",
    "flow_of",
    "last_drives",
    "race_of",
    "read_flow",
]

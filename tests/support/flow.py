"""A fixed day of a board for the flow screen: cards moving through the lanes and drives
running, written through the real store verbs with the store's clock set to each moment,
and the figures of that day worked out here a different way (a sample every minute of the
scenario itself, not of the store), so the flow screen is checked against them.

Every time is on a minute mark; the day ends at FIXED_NOW, the TUI fixtures' clock.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from board.core.failures import stamp
from board.core.model import CardDraft, Usage
from board.core.store import Expect

from tests.support.boards import Board, make_board
from tests.support.tui import fixed_now

END = fixed_now()
START = END - timedelta(hours=24)
MINUTE = timedelta(minutes=1)
OPEN = ("backlog", "ready", "working", "review")
FAILS = ("gate-red: 3 tests fail", "rate-limit: 429 too many requests", "transient: reset")


@dataclass
class Plan:
    """One card's day: where it was made, each move, and the drives of its working spells."""

    made: datetime
    moves: list[tuple[datetime, str]] = field(default_factory=list)  # (when, the new lane)
    drives: list[tuple[datetime, datetime | None, str, str]] = field(default_factory=list)


def plans(seed: int = 7, cards: int = 14) -> list[Plan]:
    """A day of cards: made in the backlog (some before the window), readied, driven (a
    drive a working spell, passed, failed back to ready, or blocked), some done, one
    still working at the end."""
    rng = random.Random(seed)
    out = []
    for _n in range(cards):
        made = START + timedelta(minutes=rng.randrange(-180, 20 * 60))
        plan = Plan(made)
        at = made
        lane = "backlog"

        def step(lo: int, hi: int) -> datetime | None:
            nonlocal at
            at = at + timedelta(minutes=rng.randrange(lo, hi))
            return at if at < END - timedelta(minutes=30) else None

        while True:
            when = step(5, 90)
            if when is None:
                break
            if lane == "backlog":
                lane = "ready"
            elif lane == "ready":
                lane = "working"
            elif lane == "working":
                began = plan.moves[-1][0]
                outcome = rng.choice(["done", "ready", "review", "done"])
                status, result = "passed", "folded onto board/run"
                if outcome == "ready":
                    status, result = rng.choice(["failed", "blocked", "crashed"]), rng.choice(FAILS)
                    if status == "crashed":
                        result = "its board run died mid-drive"
                plan.drives.append((began, when, status, result))
                lane = outcome
            elif lane == "review":
                lane = "done"
            else:
                break
            plan.moves.append((when, lane))
        out.append(plan)
    # one card driven across the window's start: its drive and its spell in working clipped
    early = Plan(START - timedelta(hours=5))
    early.moves += [
        (START - timedelta(hours=4), "ready"),
        (START - timedelta(hours=1), "working"),
        (START + timedelta(minutes=90), "done"),
    ]
    early.drives.append(
        (START - timedelta(hours=1), START + timedelta(minutes=90), "passed", "folded")
    )
    out.append(early)
    # one card leaves working as another enters it: they were never both working
    for begin, end in ((125, 150), (150, 170)):
        pair = Plan(START + timedelta(minutes=100))
        pair.moves += [
            (START + timedelta(minutes=110), "ready"),
            (START + timedelta(minutes=begin), "working"),
            (START + timedelta(minutes=end), "done"),
        ]
        pair.drives.append(
            (START + timedelta(minutes=begin), START + timedelta(minutes=end), "passed", "ok")
        )
        out.append(pair)
    # one card still working at the end of the day, its drive live
    last = Plan(END - timedelta(hours=4))
    last.moves += [
        (END - timedelta(minutes=200), "ready"),
        (END - timedelta(minutes=150), "working"),
    ]
    last.drives.append((END - timedelta(minutes=150), None, "running", ""))
    out.append(last)
    return out


def drive_tier(k: int) -> str:
    """A card's first drive runs on `default`, the ones after on `smart` (a climb)."""
    return "default" if k == 0 else "smart"


def drive_usage(i: int, k: int) -> Usage:
    """What card i's drive k spent, as its agent said: a quarter of them say tokens with no
    price (a local model), the rest tokens and a cost; a running drive says nothing yet."""
    if (i + k) % 4 == 3:
        return Usage(1000 * (i + 1), 100 * (k + 1), None, None, "local-model", 3)
    cost = round(0.01 * (i + 1) + 0.003 * k, 4)
    return Usage(2000 + 10 * i, 300 + k, 5000, cost, "claude-sonnet-4", 5)


def flow_board(tmp_path: Path, seed: int = 7, store_url: str = "") -> Board:
    """The day written into a real store (the SQLite file, or PostgreSQL at `store_url`),
    each write at its moment."""
    board = make_board(tmp_path, store_url=store_url)
    store = board.store
    every = plans(seed)
    # (when, card, what, drive index): a drive ends, then its card moves, then one starts
    writes: list[tuple[datetime, int, int, int]] = []
    make, end, move, start = 1, 0, 2, 3
    for i, plan in enumerate(every):
        writes.append((plan.made, i, make, -1))
        writes += [(when, i, move, k) for k, (when, _lane) in enumerate(plan.moves)]
        for j, (began, ended, _status, _result) in enumerate(plan.drives):
            writes.append((began, i, start, j))
            if ended is not None:
                writes.append((ended, i, end, j))
    ids: dict[int, str] = {}
    rows: dict[tuple[int, int], str] = {}
    for when, i, what, k in sorted(writes, key=lambda w: (w[0], w[2], w[1])):
        store.clock = lambda when=when: stamp(when)  # type: ignore[method-assign]
        if what == make:
            ids[i] = store.create(CardDraft(title=f"card {i}", spec="s"), "c", "fixture").id
        elif what == move:
            store.update(ids[i], Expect(), {"lane": every[i].moves[k][1]}, who="fixture")
        elif what == start:
            rows[(i, k)] = store.start_drive(ids[i], drive_tier(k), k + 1, "", 4242).id
        else:
            _began, _ended, status, result = every[i].drives[k]
            store.update_drive(rows[(i, k)], status=status, result=result)
            store.record_usage(rows[(i, k)], drive_usage(i, k))
    store.clock = lambda: stamp(END)  # type: ignore[method-assign]
    return board


# -- the figures, worked out from the plans by sampling every minute -------------------------


def lane_at(plan: Plan, at: datetime) -> str | None:
    if at < plan.made:
        return None
    lane = "backlog"
    for when, new in plan.moves:
        if when <= at:
            lane = new
    return lane


def expected(seed: int = 7) -> dict[str, object]:
    every = plans(seed)
    done = [0] * 24
    for plan in every:
        for when, lane in plan.moves:
            if lane == "done" and START <= when < END:
                done[int((when - START) / timedelta(hours=1))] += 1
    minutes: Counter[str] = Counter()
    cards: dict[str, set[int]] = {lane: set() for lane in OPEN}
    peaks = [0] * 24
    at = START
    while at < END:
        hour = int((at - START) / timedelta(hours=1))
        working = 0
        for i, plan in enumerate(every):
            lane = lane_at(plan, at)
            if lane in OPEN:
                minutes[lane] += 1
                cards[lane].add(i)
            working += lane == "working"
        peaks[hour] = max(peaks[hour], working)
        at += MINUTE
    durations = sorted(
        (ended - began).total_seconds()
        for plan in every
        for began, ended, _, _ in plan.drives
        if ended is not None and START <= ended <= END
    )
    longest = [0.0] * 24
    for plan in every:
        for began, ended, _, _ in plan.drives:
            if ended is not None and START <= ended < END:
                hour = int((ended - START) / timedelta(hours=1))
                longest[hour] = max(longest[hour], (ended - began).total_seconds())
    failures: dict[str, list[int]] = {}
    for plan in every:
        for _began, ended, status, result in plan.drives:
            if ended is None or not START <= ended < END or status == "passed":
                continue
            cls = status if status == "crashed" else result.split(":")[0]
            failures.setdefault(cls, [0] * 24)[int((ended - START) / timedelta(hours=1))] += 1
    spend = [0.0] * 24
    priced = unpriced = 0
    done_cost: dict[str, list[float]] = {}  # tier -> [cards, known cost, unpriced drives]
    for i, plan in enumerate(every):
        for k, (_began, ended, _s, _r) in enumerate(plan.drives):
            if ended is None or not START <= ended < END:
                continue
            cost = drive_usage(i, k).cost_usd
            if cost is None:
                unpriced += 1
            else:
                priced += 1
                spend[int((ended - START) / timedelta(hours=1))] += cost
        ended_done = [w for w, lane in plan.moves if lane == "done" and START <= w < END]
        if ended_done and plan.moves[-1][1] == "done" and plan.drives:
            row = done_cost.setdefault(drive_tier(len(plan.drives) - 1), [0, 0.0, 0])
            row[0] += 1
            for k, (_b, ended, _s, _r) in enumerate(plan.drives):
                cost = drive_usage(i, k).cost_usd if ended is not None else None
                row[1] += cost or 0.0
                row[2] += cost is None and ended is not None
    return {
        "spend": spend,
        "priced": priced,
        "unpriced": unpriced,
        "done_cost": done_cost,
        "done": done,
        "lane_seconds": {lane: minutes[lane] * 60.0 for lane in OPEN},
        "lane_cards": {lane: len(cards[lane]) for lane in OPEN},
        "peaks": peaks,
        "durations": durations,
        "longest": longest,
        "failures": failures,
    }

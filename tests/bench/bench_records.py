"""Benchmark: making records through core/records.py's compiled `__init__`, against the
hand-written `__init__` each record had before (kept below, as it was).

A listing makes one card per row (10,000 on a large board), so a record's constructor is on
the path of `board card list` and of the control room's first paint. Three shapes, each
made N times (default 100,000) in alternating rounds, the figure the median of the
rounds' ratios:

1. `Card(**fields)`, a frozen record without slots (the store's checked path), against
   Card's hand-written `__init__` (one `object.__setattr__` per field);
2. `Blocked(cls, reason)`, a frozen record with slots, positional;
3. `CardDraft(title)`, a mutable record with slots and three factory defaults.

Target (issue 40): each at most 1.10x the hand-written one, printed as met or not met.

    .venv/bin/python tests/bench/bench_records.py [--records 100000] [--rounds 21]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from board.core.model import PRIORITY_DEFAULT, Blocked, Card, CardDraft  # noqa: E402
from board.core.records import FACTORY  # noqa: E402

TARGET = 1.10


class HandCard:
    """Card's `__init__` written by hand: the baseline a record's made `__init__` is held to."""

    def __init__(
        self,
        id: str,
        title: str,
        spec: str = "",
        acceptance: str = "",
        kind: str = "feature",
        lane: str = "backlog",
        priority: int = PRIORITY_DEFAULT,
        assignee: str = "",
        branch: str = "",
        pr_url: str = "",
        blocked: Blocked | None = None,
        labels: tuple[str, ...] = (),
        deps: tuple[str, ...] = (),
        surface: tuple[str, ...] = (),
        created_at: str = "",
        updated_at: str = "",
        version: int = 0,
        seq: int = 0,
        drive: str = "",
        not_before: str = "",
        pr_state: str = "",
        pr_polled_at: str = "",
        tries: tuple[tuple[str, int], ...] = (),
        rung: str = "",
        told: str = "",
        timeouts: int = 0,
        reviews_seen: int = 0,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "id", id)
        set_(self, "title", title)
        set_(self, "spec", spec)
        set_(self, "acceptance", acceptance)
        set_(self, "kind", kind)
        set_(self, "lane", lane)
        set_(self, "priority", priority)
        set_(self, "assignee", assignee)
        set_(self, "branch", branch)
        set_(self, "pr_url", pr_url)
        set_(self, "blocked", blocked)
        set_(self, "labels", labels)
        set_(self, "deps", deps)
        set_(self, "surface", surface)
        set_(self, "created_at", created_at)
        set_(self, "updated_at", updated_at)
        set_(self, "version", version)
        set_(self, "seq", seq)
        set_(self, "drive", drive)
        set_(self, "not_before", not_before)
        set_(self, "pr_state", pr_state)
        set_(self, "pr_polled_at", pr_polled_at)
        set_(self, "tries", tries)
        set_(self, "rung", rung)
        set_(self, "told", told)
        set_(self, "timeouts", timeouts)
        set_(self, "reviews_seen", reviews_seen)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(name)


class HandBlocked:
    __slots__ = ("cls", "reason")

    def __init__(self, cls: str, reason: str) -> None:
        set_ = object.__setattr__
        set_(self, "cls", cls)
        set_(self, "reason", reason)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(name)


class HandDraft:
    __slots__ = ("title", "spec", "acceptance", "kind", "lane", "priority", "assignee",
                 "labels", "deps", "surface")  # fmt: skip

    def __init__(
        self,
        title: str,
        spec: str = "",
        acceptance: str = "",
        kind: str = "feature",
        lane: str = "backlog",
        priority: int = PRIORITY_DEFAULT,
        assignee: str = "",
        labels: list[str] = FACTORY,
        deps: list[str] = FACTORY,
        surface: list[str] = FACTORY,
    ) -> None:
        self.title = title
        self.spec = spec
        self.acceptance = acceptance
        self.kind = kind
        self.lane = lane
        self.priority = priority
        self.assignee = assignee
        self.labels = [] if labels is FACTORY else labels
        self.deps = [] if deps is FACTORY else deps
        self.surface = [] if surface is FACTORY else surface


FIELDS = {
    "id": "c-1", "title": "a card", "spec": "what", "acceptance": "how", "kind": "task",
    "lane": "ready", "priority": 1, "assignee": "", "branch": "", "pr_url": "",
    "blocked": None, "labels": ("a",), "deps": (), "surface": ("core/",),
    "created_at": "2026-12-03T00:00:00Z", "updated_at": "2026-12-03T00:00:00Z",
    "version": 3, "seq": 7, "drive": "", "not_before": "", "pr_state": "", "pr_polled_at": "",
}  # fmt: skip


def timed(make: Callable[[], object], n: int) -> float:
    """Seconds to call `make` n times."""
    loop = range(n)
    start = time.perf_counter()
    for _ in loop:
        make()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    fields = FIELDS
    shapes: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
        ("Card(**fields), frozen", lambda: Card(**fields), lambda: HandCard(**fields)),
        ("Blocked(cls, reason), frozen, slots", lambda: Blocked("held", "why"),
         lambda: HandBlocked("held", "why")),
        ("CardDraft(title), mutable, slots, factories", lambda: CardDraft("t"),
         lambda: HandDraft("t")),
    ]  # fmt: skip
    assert vars(Card(**fields)) == vars(HandCard(**fields))
    ok = True
    print(f"{args.records:,} records a round, {args.rounds} rounds, median seconds")
    for what, ours, hand in shapes:
        mine, theirs, ratios = [], [], []
        for _ in range(args.rounds):  # each round's pair sees the same load
            a, b = timed(ours, args.records), timed(hand, args.records)
            mine.append(a)
            theirs.append(b)
            ratios.append(a / b)
        ratio = statistics.median(ratios)
        met = ratio <= TARGET
        ok = ok and met
        print(
            f"{what:45} {statistics.median(mine):.3f} s vs hand-written "
            f"{statistics.median(theirs):.3f} s: {ratio:.2f}x "
            f"(target <= {TARGET:.2f}x: {'met' if met else 'NOT met'})"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""A board made by the code of an older commit (tests/test_state_upgrade.py runs this file
with that commit's source on PYTHONPATH, never this tree's): cards whose labels hold the
board's own counts as that code wrote them (`tries:<class>=N`, `rung=<tier>`,
`told=<class>:<hash>`, `budget:timeout=N`, `reviews-seen=N`) beside the operator's, a
timeline of lane moves and drives at fixed moments, and what that code's flow figures and
cards were.

Usage: python old_board.py WHERE OUT, WHERE a SQLite file to make or a PostgreSQL URL;
writes OUT as JSON: each card (to_json) with its timeline, and the flow's figures at END.
It imports only what that commit had (board.core.flow, not flowstats) and nothing of tests/.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta

import board.core
from board.core.cards import split, waits
from board.core.failures import stamp
from board.core.flow import read_flow
from board.core.model import Blocked, CardDraft
from board.core.publish import forge
from board.core.store import Expect, SQLiteStore

END = datetime(2026, 1, 2, 0, 0, tzinfo=UTC)
START = END - timedelta(hours=20)


def at(minutes: int) -> str:
    return stamp(START + timedelta(minutes=minutes))


def main(where: str, out: str) -> None:
    if where.startswith("postgresql://"):
        from board.core.store.postgres import PostgresStore

        store = PostgresStore(where, create=True)
    else:
        store = SQLiteStore(where, create=True)

    def now(minutes: int) -> None:
        store.clock = lambda: at(minutes)  # type: ignore[method-assign]

    def move(card: str, lane: str, minutes: int, **more: object) -> None:
        now(minutes)
        store.update(card, Expect(), {"lane": lane, **more}, who="fixture")

    def drive(card: str, begin: int, end: int, status: str, result: str, attempt: int) -> None:
        now(begin)
        row = store.start_drive(card, "default", attempt, "", 4242)
        now(end)
        store.update_drive(row.id, status=status, result=result)

    ids = []
    for i, (title, labels) in enumerate(
        [
            ("retried twice", ["ui"]),
            ("told once", ["keep"]),
            ("too wide", ["x", "tries:garbled=many", "rung=", "budget:timeout=lots"]),
            ("done in a day", ["docs", "rungs=3", "told-you"]),
            ("made and left", []),
        ]
    ):
        now(i * 7)
        ids.append(store.create(CardDraft(title=title, spec="s", labels=labels), "c", "op").id)
    retried, told, wide, done, _left = ids

    # the drive's back-offs, as that code wrote them: tries per class, the rung
    move(retried, "ready", 30)
    move(retried, "working", 60)
    drive(retried, 60, 95, "failed", "rate-limit: 429 too many requests", 1)
    card = store.get(retried)
    labels = waits.with_tries(card.labels, "rate-limit", 1)
    move(retried, "ready", 95, labels=(*labels, f"{waits.RUNG_LABEL}smart"))
    move(retried, "working", 150)
    drive(retried, 150, 200, "failed", "transient: connection reset", 2)
    card = store.get(retried)
    labels = waits.with_tries(waits.with_tries(card.labels, "rate-limit", 2), "transient", 1)
    move(retried, "ready", 200, labels=labels)

    # a block the loop told the operator about, once
    move(told, "ready", 40)
    move(told, "working", 300)
    drive(told, 300, 380, "blocked", "gate-red: 3 tests fail", 1)
    now(380)
    store.update(told, Expect(), {"lane": "ready", "blocked": Blocked("gate-red", "3 fail")})
    card = store.get(told)
    now(390)
    store.update(told, Expect(), {"labels": (*card.labels, "told=gate-red:0123456789")})

    # the timeout budget, counted twice
    move(wide, "ready", 50)
    move(wide, "working", 420)
    drive(wide, 420, 600, "timeout", "the coder timed out", 1)
    card = store.get(wide)
    move(wide, "ready", 600, labels=split._with_count(card.labels, 1))
    move(wide, "working", 610)
    drive(wide, 610, 800, "timeout", "the coder timed out", 2)
    card = store.get(wide)
    move(wide, "ready", 800, labels=split._with_count(card.labels, 2))

    # a card all the way through
    move(done, "ready", 100)
    move(done, "working", 500)
    drive(done, 500, 560, "passed", "folded onto board/run", 1)
    move(done, "review", 560)
    card = store.get(done)  # a review's change request acted on, as the poller counted it
    now(600)
    store.update(done, Expect(), {"labels": (*card.labels, f"{forge.REVIEWS_SEEN}1")})
    move(done, "done", 700)

    now(20 * 60)
    flow = read_flow(store, END, max_concurrent=3)
    cards = []
    for card in store.list_cards():
        got = card.to_json()
        got["timeline"] = [e.to_json() for e in store.timeline(card.id)]
        cards.append(got)
    figures = {
        "done_per_hour": flow.done_per_hour,
        "lane_seconds": flow.lane_seconds,
        "lane_cards": flow.lane_cards,
        "durations": flow.durations,
        "longest_per_hour": flow.longest_per_hour,
        "failures": flow.failures,
        "peak_working": flow.peak_working,
    }
    store.close()
    with open(out, "w", encoding="utf-8") as fh:
        data = {"code": board.core.__file__, "cards": cards, "flow": figures}
        json.dump(data, fh, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

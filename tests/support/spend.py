"""A board whose agents said what they spent, for the TUI's money: a card blocked
`over-budget` after three attempts (one of them unpriced: tokens and no price for its
model), a card done on two attempts, a working card whose drive has said nothing yet, a
card whose agent reports nothing (no usage reader), and a card past its timeout budget
(`too-wide`, the other budget, whose words must not be money's).

Each drive's usage goes through `Store.record_usage`, as the drive writes it; every time is
fixed (the drives ended the day before FIXED_NOW, or at `TODAY`'s hours for the header).
"""

from __future__ import annotations

from pathlib import Path

from board.core.model import Blocked, Usage
from board.core.store import Expect

from tests.support.boards import Board, make_board
from tests.support.tui import TWO_TIERS, add, start_drive

# (attempt, tier, status, result, started, ended, usage) of the over-budget card, c-1
OVER = [
    (1, "default", "failed", "gate-red: 3 tests fail", "2025-12-31T21:00:00.000Z",
     "2025-12-31T21:07:30.000Z", Usage(48210, 3120, 120000, 0.0873, "claude-sonnet-4-5", 12)),
    (2, "smart", "failed", "rate-limit: 429 usage limit", "2025-12-31T22:00:00.000Z",
     "2025-12-31T22:03:00.000Z", Usage(15400, 800, None, None, "gpt-5-codex", 4)),
    (3, "smart", "failed", "gate-red: 1 test fails", "2025-12-31T23:00:00.000Z",
     "2025-12-31T23:12:40.000Z", Usage(30500, 2210, 88000, 0.05, "claude-sonnet-4-5", 9)),
]  # fmt: skip
OVER_TOTAL = "$0.1373 + 1 unpriced"  # 0.0873 + 0.05; the codex attempt said no cost
# the done card, c-2: two attempts, both priced
DONE = [
    (1, "default", "failed", "gate-red: lint", "2025-12-31T18:00:00.000Z",
     "2025-12-31T18:05:00.000Z", Usage(9000, 700, 30000, 0.021, "claude-sonnet-4-5", 5)),
    (2, "default", "passed", "folded onto board/run", "2025-12-31T18:10:00.000Z",
     "2025-12-31T18:20:00.000Z", Usage(12000, 1500, 41000, 0.034, "claude-sonnet-4-5", 7)),
]  # fmt: skip
DONE_TOTAL = "$0.055"


def write_attempts(board: Board, card: str, attempts: list[tuple]) -> None:  # type: ignore[type-arg]
    """Each attempt as the drive leaves its row: started, ended with its result, and what
    its agent said it spent (`Store.record_usage`)."""
    store = board.store
    for attempt, tier, status, result, started, ended, usage in attempts:
        drive = start_drive(board, card, tier, attempt, [f"attempt {attempt}"], started=started)
        store.update_drive(drive.id, status=status, result=result, ended_at=ended)
        if usage is not None:
            store.record_usage(drive.id, usage)


def costs_board(tmp_path: Path) -> Board:
    """The board above, ids c-1 … c-5; it opens on the ready lane, its over-budget card
    (c-1) first."""
    board = make_board(tmp_path, config_overrides=TWO_TIERS)
    store = board.store
    over = add(
        store,
        "Read what each agent spent",
        "ready",
        priority=1,
        blocked=Blocked(
            "over-budget",
            f"its 3 attempt(s) spent {OVER_TOTAL}, at or past its budget of $0.10 "
            "([budget] card_usd); raise it and unblock the card to go on",
        ),
    )
    write_attempts(board, over, OVER)
    done = add(store, "Show today's spend in the header", "done")
    write_attempts(board, done, DONE)
    working = add(store, "Draw the cost column", "working", priority=0)
    start_drive(board, working, "smart", 1, ["reading the lanes"])
    silent = add(store, "A card on an agent that says nothing", "review")
    write_attempts(
        board,
        silent,
        [(1, "default", "passed", "ok", "2025-12-31T20:00:00.000Z", "2025-12-31T20:09:00.000Z",
          None)],
    )  # fmt: skip
    wide = add(
        store,
        "Timed out twice",
        "ready",
        blocked=Blocked("too-wide", "timed out 2 times: split it (board split)"),
    )
    store.update(wide, Expect(), {"timeouts": 2}, who="fixture")
    return board

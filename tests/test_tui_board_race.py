"""The board row of a working card whose race runs (best of N, issue 42) leads with its
green candidates so far of N (`2/5 green`), read in the board's spend worker from one
query of the working cards' race rows (`Store.race_drives`), never per card on the UI
thread; a card back on a single drive after a race says no race. Real SQLite store, rows
written through `Store.start_drive` / `update_drive` as the race writes them, and a store
change (a candidate ends green) read again."""

from __future__ import annotations

from board.core.store import Expect

from tests.support.boards import make_board
from tests.support.tui import (
    DRIVE_STARTED,
    LOOP_HOST,
    LOOP_PID,
    LOOP_STARTED,
    TWO_TIERS,
    add,
    loaded,
    make_app,
    run_pilot,
    screen_lines,
)
from tests.support.waiting import wait_for

ENDED = "2025-12-31T23:58:00.000Z"


def _row(store, card: str, attempt: int, k: int | None, status: str = "running"):  # type: ignore[no-untyped-def]
    drive = store.start_drive(card, "smart", attempt, f"logs/{card}-{attempt}.log", LOOP_PID,
                              candidate=k)  # fmt: skip
    store.update_drive(drive.id, started_at=DRIVE_STARTED)
    if status != "running":
        gate = "green" if status == "passed" else "red"
        store.update_drive(drive.id, status=status, gate=gate, ended_at=ENDED, result=gate)
    return drive


def _line(app, card: str) -> str:  # type: ignore[no-untyped-def]
    return next((ln for ln in screen_lines(app) if ln.startswith(f" {card} ")), "")


async def test_a_racing_cards_row_counts_its_green_candidates_of_n(tmp_path) -> None:
    board = make_board(tmp_path, config_overrides=TWO_TIERS)
    store = board.store
    racing = add(store, "Race five", "working", priority=0)
    store.update(racing, Expect(), {"best_of": 5}, who="fixture")
    _row(store, racing, 1, None)  # the race's own row, live while it runs
    _row(store, racing, 2, 1, "passed")
    _row(store, racing, 3, 2, "passed")
    _row(store, racing, 4, 3, "failed")
    fourth = _row(store, racing, 5, 4)  # still running
    # raced once, green, then back to a single drive: its live row is no race's
    single = add(store, "Raced before", "working", priority=1)
    _row(store, single, 1, None, "failed")
    _row(store, single, 2, 1, "passed")
    _row(store, single, 3, None)
    store.beat(LOOP_HOST, LOOP_PID, LOOP_STARTED)
    app = make_app(board, poll=0.2)
    async with run_pilot(app, size=(160, 30)) as pilot:
        await loaded(pilot)
        await wait_for(pilot, lambda: "2/5 green" in _line(app, racing), what="2/5 green")
        assert "green" not in _line(app, single), _line(app, single)
        store.update_drive(fourth.id, status="passed", gate="green", ended_at=ENDED)
        await wait_for(pilot, lambda: "3/5 green" in _line(app, racing), what="3/5 green")
    board.close()

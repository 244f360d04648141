"""The control room answers "is it running, what is each card doing, why is that one
waiting" without a key: the header follows the loop's heartbeat (and its death), each ready
card's row says why the claim skips it in the claim's own words, working rows follow their
drives every second, and the board opens where the operator is needed.

Real parts throughout: real repositories, the real SQLite store, a real `board run` in its
own process for the heartbeat, the loop's real claim for the reasons."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from board.core.cards.actions import ready_queue
from board.core.logs import LogWriter, log_path
from board.core.loop import Loop
from board.core.model import Blocked, Pause
from board.core.store import Expect, SQLiteStore
from board.tui.app import BoardApp
from board.tui.health import utc_now
from board.tui.logs.screen import LogsScreen
from board.tui.widgets import HealthBar, LaneView
from textual.widgets import OptionList

from tests.support.boards import make_board
from tests.support.loop import add_card, board_run, edit_tier, loop_log, skip_reasons
from tests.support.paths import script
from tests.support.tui import (
    FIXED_NOW,
    add,
    fixed_now,
    live_board,
    loaded,
    make_app,
    run_pilot,
    screen_lines,
    seeded_board,
    settle,
    start_drive,
)
from tests.support.waiting import wait_for


def header(app: BoardApp) -> HealthBar:
    return app.screen.query_one(HealthBar)


def lane_lines(app: BoardApp) -> list[str]:
    """The board's lines as painted, less the preview beside the lanes (if it is shown)."""
    lines = screen_lines(app)
    panes = app.screen.query("#preview")
    if not panes or not panes.first().display:
        return lines
    left = panes.first().region.x
    return [line[:left] for line in lines]


async def without_preview(pilot) -> None:
    """Rows at the full width: these tests read whole reasons at the end of rows."""
    if pilot.app.screen.query_one("#preview").display:
        await pilot.press("v")


def row_of(app: BoardApp, card_id: str) -> str:
    """The card's row as painted (the first line that starts with its id)."""
    for line in lane_lines(app):
        if line.strip().split(" ", 1)[0] == card_id:
            return line.rstrip(" ▐").strip()  # less the lane's scrollbar, if it has one
    return ""


def real_app(cfg, store) -> BoardApp:
    """The app as `board tui` makes it, on the wall clock (a real loop beats in real time)."""
    app = BoardApp(cfg, store, clock=utc_now)
    app.animation_level = "none"
    return app


# -- the header: the loop's health ------------------------------------------------------------


async def test_the_header_says_loop_not_running_within_2s_of_its_death_and_recovers(
    tmp_path: Path,
) -> None:
    """`board run` killed with SIGKILL leaves its heartbeat row behind (nothing ends it):
    within 2 s the header says "loop not running" on the warning colour, with no key
    pressed; a new `board run` brings it back, naming the new pid."""
    cfg, store = make_board(tmp_path, origin=True)
    app = real_app(cfg, store)
    run = board_run(cfg.root)
    try:
        async with run_pilot(app, size=(120, 20)) as pilot:
            await loaded(pilot)
            bar = header(app)
            first = run.pid
            await wait_for(
                pilot,
                lambda: f"loop running on {socket.gethostname()}, pid {first}" in bar.text,
                what="the header to name the running loop",
            )
            assert not bar.has_class("-down")
            run.send_signal(signal.SIGKILL)
            run.communicate(timeout=30)
            died = time.monotonic()
            assert [b.pid for b in store.loops()] == [first], "premise: its heartbeat stays"
            await wait_for(
                pilot,
                lambda: "loop not running" in bar.text and bar.has_class("-down"),
                timeout=2.0,
                what="the header to say the loop died, within 2 s",
            )
            assert time.monotonic() - died <= 2.0
            assert "loop not running" in screen_lines(app)[0], "the header is not on screen"
            assert f"pid {first}" in bar.text, "the dead loop's pid is not named"

            run = board_run(cfg.root)
            second = run.pid
            await wait_for(
                pilot,
                lambda: f"pid {second}" in bar.text and "loop running" in bar.text,
                what="the header to see the new loop",
            )
            assert not bar.has_class("-down"), "the warning colour stayed on a running loop"
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGTERM)
            try:
                run.communicate(timeout=30)
            except Exception:
                run.kill()
                run.communicate(timeout=30)
        store.close()


async def test_the_header_counts_drives_pauses_and_the_cards_that_need_you(tmp_path) -> None:
    board = live_board(tmp_path)
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(160, 30)) as pilot:
        await loaded(pilot)
        text = header(app).text
        for part in (
            "loop running on build-host, pid 4242, since 2025-12-31 21:48Z (2h12m)",
            "drives 1/2",
            "smart paused (rate-limit) 4m12s left",
            "1 card needs you",
        ):
            assert part in text, f"{part!r} not in the header: {text!r}"
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        text = header(app).text
        assert len(text) <= 78, f"the header overflows 80 columns: {text!r}"
        for part in ("loop running", "drives 1/2", "smart paused 4m12s", "1 needs you"):
            assert part in text, f"{part!r} not in the header at 80 columns: {text!r}"
    board.close()


async def test_the_header_says_setup_stopped_the_claims_and_the_rows_say_why(tmp_path) -> None:
    """Two cards in a row failed [tree] setup: the loop paused its claims (`setup`); the
    operator sees it in the header, the blocked rows and every ready card's reason."""
    from board.core.model import SETUP_PAUSE

    board = live_board(tmp_path)
    store = board.store
    for title in ("Add a health check", "Add a version endpoint"):
        add(
            store,
            title,
            "ready",
            blocked=Blocked("setup-failed", "setup command 1 of 1 ['npm', 'ci'] exited 1"),
        )
    store.pause_tier(
        Pause(SETUP_PAUSE, "setup-failed", "2 cards in a row failed [tree] setup", "", FIXED_NOW)
    )
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(160, 30)) as pilot:
        await loaded(pilot)
        text = header(app).text
        assert "setup paused until you act" in text, text
        await pilot.press("left")  # the ready lane
        await settle(pilot)
        lines = "\n".join(lane_lines(app))
        assert "!setup-failed" in lines, lines
        assert "claims are paused (board resume setup)" in lines, lines
    board.close()


async def test_the_header_names_a_host_that_stopped_beating_and_one_that_lost_its_lease(
    tmp_path,
) -> None:
    """With a loop running, a host gone silent is a warning in the header: silent under
    board.host_lease_s, lost its lease past it (its cards go back, its trees wait on it)."""
    board = live_board(tmp_path)
    store = board.store
    for host, stamp in (("h3", "2025-12-31T23:58:00.000Z"), ("h4", "2025-12-31T23:59:50.000Z")):
        store.clock = lambda stamp=stamp: stamp
        store.beat(host, 99, "2025-12-31T20:00:00.000Z")
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(280, 30)) as pilot:
        await loaded(pilot)
        text = header(app).text
        for part in (
            "loop running on build-host",
            "▲ h4 silent (last beat 10s ago)",
            "▲ h3 lost its lease (last beat 2m00s ago)",
        ):
            assert part in text, f"{part!r} not in the header: {text!r}"
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        text = header(app).text
        assert "loop running" in text and "2 hosts lost" in text, text
    board.close()


# -- why a ready card waits ---------------------------------------------------------------------


@pytest.fixture
def beating(tmp_path: Path) -> Iterator[tuple]:
    """A board whose store says a loop runs here (this process, beating every half second)."""
    yield from _beating(tmp_path, {"default": edit_tier(), "smart": edit_tier()}, 4)


def _beating(tmp_path: Path, tiers: dict[str, list[str]], most: int) -> Iterator[tuple]:
    cfg, store = make_board(tmp_path, origin=True, tiers=tiers, board={"max_concurrent": most})
    stop = threading.Event()
    beat_store = SQLiteStore(cfg.db_path)
    started = utc_now().isoformat()

    def beat() -> None:
        while not stop.is_set():
            beat_store.beat(socket.gethostname(), os.getpid(), started)
            stop.wait(0.5)

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    yield cfg, store, stop
    stop.set()
    thread.join(10)
    beat_store.close()
    store.close()


def _park_working(store, card_id: str) -> None:
    store.update(card_id, Expect(version=store.get(card_id).version), {"lane": "working"})


async def test_each_wait_reason_is_on_its_card_and_is_what_the_claim_decides(beating) -> None:
    """The loop's own claim runs over a card for each reason and logs why it skipped each;
    every card's row then says exactly those words, beside its own id (one function, not a
    copy). With the loop gone, a card nothing else holds says no loop will run it."""
    cfg, store, stop = beating
    dep = add_card(store, "the dependency", surface=["a/**"])
    _park_working(store, dep.id)
    child = add_card(store, "the dependent", surface=["b/**"], deps=[dep.id])
    cards = {
        add_card(store, "overlaps", surface=["a/x.py"]).id: "surface overlaps working",
        add_card(store, "no surface").id: "it has no surface, so it runs alone",
        add_card(store, "Split c-9", kind="task", assignee=cfg.planner.name).id: "no planner",
    }
    later = add_card(store, "backed off", surface=["c/**"])
    store.update(later.id, Expect(), {"not_before": "2999-01-01T00:00:00.000Z"})
    cards[later.id] = "a retry, not before 2999"
    paused = add_card(store, "on the smart rung", surface=["d/**"])
    store.update(paused.id, Expect(), {"rung": "smart"})
    store.pause_tier(Pause("smart", "rate-limit", "429", "2999-01-01T00:00:00.000Z", "x", ""))
    cards[paused.id] = "tier smart is paused (rate-limit) until 2999"

    loop = Loop(cfg, store)
    assert loop.claims() == [], "the claim took a card that should wait"
    loop.wait()
    claim_said = {}
    for card_id, words in cards.items():
        (said,) = skip_reasons(cfg, card_id)
        assert words in said, f"premise: the claim skipped {card_id} for {said!r}"
        claim_said[card_id] = said
    # a card on an open dependency never reaches the claim: the queue leaves it out
    assert child.id not in [c.id for c in ready_queue(store)]
    claim_said[child.id] = f"waits on {dep.id} (working)"
    free = add_card(store, "nothing holds it", surface=["e/**"])

    app = real_app(cfg, store)
    async with run_pilot(app, size=(260, 30)) as pilot:
        screen = await loaded(pilot)
        await without_preview(pilot)
        assert screen.current_lane == "working", "premise: nothing needs you, a card works"
        await pilot.press("left")  # the ready lane, expanded
        await wait_for(
            pilot, lambda: "loop running" in header(app).text, what="the loop's heartbeat"
        )
        for card_id, said in claim_said.items():
            row = row_of(app, card_id)
            assert row.endswith(said), f"{card_id}'s row does not say the claim's {said!r}: {row}"
            others = [w for c, w in claim_said.items() if c != card_id]
            assert not any(row.endswith(w) for w in others), f"{card_id} has another's: {row}"
        assert row_of(app, free.id).endswith("nothing holds it"), "a free card says it waits"
        assert row_of(app, dep.id).endswith("the dependency"), "a working card without a drive"

        stop.set()  # the loop is gone: its heartbeat goes stale
        await wait_for(
            pilot,
            lambda: row_of(app, free.id).endswith("no loop is running (board run)"),
            timeout=10,
            what="the free card to say no loop runs",
        )
        for card_id, said in claim_said.items():
            assert row_of(app, card_id).endswith(said), "another reason gave way to no loop"


async def test_a_card_free_of_every_other_reason_waits_for_a_drive_when_all_are_busy(
    tmp_path: Path,
) -> None:
    """max_concurrent 1 and one drive running: the loop's claim logs why it takes no more, and
    the free card's row and card screen say those very words; once the drive ends, they go."""
    pids = tmp_path / "pids"
    beat = _beating(tmp_path, {"default": [script("coder_hang.sh"), "{worktree}", "{card}",
                                           str(pids)]}, 1)  # fmt: skip
    cfg, store, stop = next(beat)
    loop = Loop(cfg, store)
    try:
        first = add_card(store, "runs", surface=["a/**"])
        assert loop.claims() == [first.id]
        free = add_card(store, "free of every other reason", surface=["b/**"])
        assert loop.claims() == []
        (said,) = [x["reason"] for x in loop_log(cfg) if x.get("waiting") == [free.id]]
        assert said == "every drive is busy (1 of 1, board.max_concurrent)"

        app = real_app(cfg, store)
        async with run_pilot(app, size=(200, 30)) as pilot:
            await loaded(pilot)
            await without_preview(pilot)
            await pilot.press("left")  # from the working lane to ready
            await wait_for(pilot, lambda: row_of(app, free.id).endswith(said), what=said)
            lane = app.screen.lane_view("ready")
            assert lane.select(free.id)
            await pilot.press("enter")
            await wait_for(pilot, lambda: f"waits       {said}" in "\n".join(screen_lines(app)))
            await pilot.press("escape")
            loop.request_stop("the test is done with the drive")
            assert loop.wait(30), "the drive did not stop"
            await wait_for(
                pilot,
                lambda: row_of(app, free.id).endswith("free of every other reason"),
                what="the free card to stop waiting once the drive ended",
            )
    finally:
        loop.request_stop()
        loop.wait(30)
        next(beat, None)


async def test_the_reasons_show_on_the_first_paint_with_no_write_to_wait_for(tmp_path) -> None:
    """A small board is read whole by the early read; its rows must say why they wait at
    once, not after some later write happens to reload the board (poll 0: none will)."""
    board = live_board(tmp_path)
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(200, 30)) as pilot:
        await loaded(pilot)
        await without_preview(pilot)
        for card_id, said in {
            "c-2": "waits on c-1 (working)",
            "c-3": "surface overlaps working c-1's (tui/** ~ tui/widgets.py)",
            "c-4": "it has no surface, so it runs alone: c-1 is working",
            "c-5": "a planner task, and no planner command is configured ([planner] argv)",
            "c-6": "a retry, not before 2026-01-01T00:10:00.000Z",
            "c-7": "tier smart is paused (rate-limit) until 2026-01-01T00:04:12.000Z: 429: usage"
            " limit",
            "c-8": "3 tests fail",  # blocked: its reason
        }.items():
            row = row_of(app, card_id)
            assert row.endswith(said), f"{card_id} does not say {said!r}: {row!r}"
    board.close()


async def test_the_card_screen_says_why_it_waits_and_that_no_surface_runs_alone(
    tmp_path,
) -> None:
    board = live_board(tmp_path)
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(160, 40)) as pilot:
        screen = await loaded(pilot)
        lane = screen.lane_view("ready")
        assert lane.select("c-4")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "runs alone" in "\n".join(screen_lines(app)))
        text = "\n".join(screen_lines(app))
        assert "waits       it has no surface, so it runs alone: c-1 is working" in text, text
        assert "surface     none: it runs alone" in text, text
        await pilot.press("escape", "right", "enter")  # the working lane's c-1
        await wait_for(pilot, lambda: "drive " in "\n".join(screen_lines(app)))
        assert "drive       default #2, running for 3m04s" in "\n".join(screen_lines(app))
    board.close()


# -- working rows, live ------------------------------------------------------------------------


class Clock:
    """A clock the test moves: the app reads it, the test advances it a second at a time."""

    def __init__(self) -> None:
        self.now = fixed_now()

    def __call__(self):
        return self.now


async def test_working_rows_follow_their_drive_every_second_without_a_key(tmp_path) -> None:
    board = live_board(tmp_path)
    clock = Clock()
    app = make_app(board, poll=0.5, clock=clock)
    async with run_pilot(app, size=(120, 30)) as pilot:
        await loaded(pilot)
        row = row_of(app, "c-1")
        assert "default #2 · 3m04s · running the gate: 12 passed" in row, row
        for shown in ("3m05s", "3m06s", "3m07s"):
            clock.now += timedelta(seconds=1)
            await wait_for(
                pilot,
                lambda: f"default #2 · {shown} ·" in row_of(app, "c-1"),  # noqa: B023
                timeout=1.0,
                what=f"the working row to show {shown} within a second, with no key",
            )
        with LogWriter(log_path(board.cfg, "c-1", 2), clock=fixed_now) as log:
            log.write_line("coder: editing widgets.py")
        await wait_for(
            pilot,
            lambda: row_of(app, "c-1").endswith("3m07s · coder: editing widgets.py"),
            timeout=1.0,
            what="the drive's new last line within a second",
        )
        assert "smart paused 4m09s" in header(app).text, "the countdown did not move"
    board.close()


# -- where the board opens, and `l` with no card -------------------------------------------------


def _board_working_and_healing(tmp_path):
    board = make_board(tmp_path)
    add(board.store, "an idea", "backlog", spec="")
    add(board.store, "retrying", "ready", blocked=Blocked("rate-limit", "429"))
    add(board.store, "being built", "working")
    return board


def _board_review_and_done(tmp_path):
    board = make_board(tmp_path)
    add(board.store, "built", "review")
    add(board.store, "shipped", "done")
    return board


def _board_waiting_for_approval(tmp_path):
    board = make_board(tmp_path, config_overrides={"publish": {"review": "operator"}})
    add(board.store, "being built", "working")
    add(board.store, "built, waits for you", "review")
    return board


@pytest.mark.parametrize(
    ("make", "lane", "card"),
    [
        (seeded_board, "ready", "c-10"),  # blocked cards that need you first
        (_board_working_and_healing, "working", "c-3"),  # a rate limit heals: not yours
        (_board_review_and_done, "review", "c-1"),  # the first lane with cards
        (_board_waiting_for_approval, "review", "c-2"),  # an approval needs you
        (make_board, "backlog", None),  # nothing at all
    ],
)
async def test_the_board_opens_on_the_lane_that_needs_the_operator(
    tmp_path, make, lane, card
) -> None:
    board = make(tmp_path)
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(100, 30)) as pilot:
        screen = await loaded(pilot)
        assert screen.current_lane == lane, f"opened on {screen.current_lane}, not {lane}"
        assert app.focused is screen.lane_view(lane)
        current = screen.current_card()
        assert (current.id if current else None) == card
        assert screen.lane_view(lane).has_class("-current")
    board.close()


async def test_l_with_no_card_opens_every_drive_running_first_then_newest(tmp_path) -> None:
    board = make_board(tmp_path)
    store = board.store
    for title in ("older run", "newer run", "ended first", "ended last"):
        add(store, title, "working" if "run" in title else "done")
    start_drive(board, "c-1", "default", 1, ["c-1 works"], started="2025-12-31T23:00:00.000Z")
    start_drive(board, "c-2", "smart", 1, ["c-2 works"], started="2025-12-31T23:30:00.000Z")
    for card, ended in (("c-3", "2025-12-31T20:00:00.000Z"), ("c-4", "2025-12-31T22:00:00.000Z")):
        drive = start_drive(board, card, "default", 1, ["done"], started="2025-12-31T19:00:00.000Z")
        store.update_drive(drive.id, status="passed", ended_at=ended)
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(120, 30)) as pilot:
        screen = await loaded(pilot)
        await pilot.press("slash", *"nothing-matches", "enter")
        await settle(pilot)
        assert screen.current_card() is None, "premise: no card is selected"
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LogsScreen), what="the logs")
        logs = app.screen
        assert isinstance(logs, LogsScreen) and logs.card_id is None
        await wait_for(pilot, lambda: len(logs.rows) == 4, what="every drive in the list")
        assert [r.drive.card for r in logs.rows] == ["c-2", "c-1", "c-4", "c-3"], (
            "not running first (newest started first), then the newest ended"
        )
        assert logs.query_one("#drives", OptionList).highlighted == 0
        await wait_for(pilot, lambda: logs.current is not None)
        assert logs.current is not None and logs.current.drive.card == "c-2"
    board.close()


# -- the layout ---------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_no_lane_hides_a_block_class_or_the_start_of_a_title(tmp_path, size) -> None:
    """Every visible row shows its whole block class and at least the start of its title,
    in whichever lane has the focus; every lane keeps its heading with both counts."""
    board = seeded_board(tmp_path)
    add(board.store, "Parked", "ready", blocked=Blocked("dispatch-infra", "no coder installed"))
    app = make_app(board, poll=0)
    async with run_pilot(app, size=size) as pilot:
        screen = await loaded(pilot)
        for _ in screen.visible_lanes():
            lines = [line.strip(" ▏") for line in lane_lines(app)]
            assert "ready 5 !4" in lines, f"the ready heading lost a count: {lines}"
            for view in screen.query(LaneView):
                if not view.display:
                    continue
                for row in view.rows:
                    shown = row_of(app, row.card.id)
                    if not shown:
                        continue  # scrolled out of a small lane: its heading counts it
                    blocked = row.card.blocked
                    if blocked is not None:
                        assert f"!{blocked.cls} " in shown, f"class cut: {shown!r}"
                    start = row.title[:12]
                    assert start in shown, f"{view.lane}: title start cut: {shown!r}"
            await pilot.press("tab")
    board.close()

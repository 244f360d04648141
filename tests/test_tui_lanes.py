"""Pilot tests for the board's lanes: counts and blocked cards first, the cursor's keys
(j/k, arrows, g/G, pages, lanes left and right, keys typed ahead), a long lane that
scrolls without a widget per card or a scrollbar widget, headings that keep their
counts however narrow, the cancelled lane's toggle, and q."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from board.core.model import Blocked
from board.core.store import Expect
from board.tui.widgets import LaneView
from textual import events

from tests.support.boards import make_board
from tests.support.tui import (
    add,
    goto,
    ids,
    lane,
    loaded,
    make_app,
    run_pilot,
    screen_lines,
    settle,
)


async def test_lanes_show_counts_and_blocked_cards_first(board) -> None:
    app = make_app(board)
    async with run_pilot(app, size=(160, 48)) as pilot:
        screen = await loaded(pilot)
        ready = lane(screen, "ready")
        assert ids(ready) == ["c-10", "c-2", "c-9", "c-1"], (
            "blocked cards must come first in their lane (then priority, then age)"
        )
        assert ids(lane(screen, "backlog")) == ["c-5", "c-11", "c-4", "c-12"]
        head = screen.lane_view("ready").heading
        assert "ready 4" in head and "!3" in head, f"lane header lacks count/blocked: {head!r}"
        text = "\n".join(screen_lines(app))
        assert "!held" in text and "!gate-red" in text, "the block badge does not name its class"
        assert not screen.query_one("#lane-cancelled").display, "cancelled shows without a toggle"


async def test_a_lane_longer_than_the_screen_scrolls_with_keys_and_wheel_and_starts_no_scrollbar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lane draws its own thumb; Textual's ScrollBar widget (started hidden for every
    lane that overflowed, five at a full board's first paint) must not be started, yet the
    lane scrolls as before: with the keys (the cursor stays in view) and the mouse wheel."""
    from textual.scrollbar import ScrollBar

    bars: list[ScrollBar] = []  # every ScrollBar made (Textual makes a widget's as it starts it)
    made = ScrollBar.__init__

    def making(self: ScrollBar, *args: Any, **kwargs: Any) -> None:
        bars.append(self)
        made(self, *args, **kwargs)

    monkeypatch.setattr(ScrollBar, "__init__", making)
    b = make_board(tmp_path)
    try:
        for i in range(60):
            add(b.store, f"card {i}", lane="ready")
        app = make_app(b)
        async with run_pilot(app, size=(80, 24)) as pilot:
            screen = await loaded(pilot)
            await goto(pilot, "ready", lane(screen, "ready").rows[0].card.id)
            view = lane(screen, "ready")
            assert len(view.rows) == 60 and view.max_scroll_y > 0, "premise: the lane overflows"
            await pilot.press("G")
            await settle(pilot)
            assert view.scroll_offset.y == view.max_scroll_y, "the end key did not scroll down"
            assert "▐" in "\n".join(screen_lines(app)), "the lane's own thumb is not drawn"
            for _ in range(3):
                view.post_message(events.MouseScrollUp(view, 5, 5, 0, -1, 0, False, False, False))
            await settle(pilot)
            assert view.scroll_offset.y < view.max_scroll_y, "the mouse wheel did not scroll up"
            # a started scrollbar's parent is the widget it scrolls
            started = [bar.parent.lane for bar in bars if isinstance(bar.parent, LaneView)]
            assert started == [], f"a ScrollBar widget was started for {started}"
    finally:
        b.close()


async def test_a_lane_of_10000_cards_mounts_no_widget_per_card(tmp_path) -> None:
    board = make_board(tmp_path)
    with board.store.transaction() as tx:
        from board.core.model import CardDraft

        for i in range(10_000):
            tx.create(CardDraft(title=f"card {i}"), "c", "bench")
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(80, 24)) as pilot:
        screen = await loaded(pilot)
        assert len(lane(screen, "backlog").rows) == 10_000
        widgets = len(list(app.screen.walk_children()))
        assert widgets < 60, f"{widgets} widgets for 10,000 cards: rows must not be widgets"
        await pilot.press("G")
        assert lane(screen, "backlog").current.id == "c-10000"
    board.close()


async def test_the_cursor_stays_in_view_under_the_lane_heading(tmp_path) -> None:
    """The heading is the lane's first line and stays put; the cursor's card is always on
    screen below it, however the lane is scrolled (jump, page, walk)."""
    board = make_board(tmp_path)
    with board.store.transaction() as tx:
        from board.core.model import CardDraft

        for i in range(100):
            tx.create(CardDraft(title=f"card {i}"), "c", "t")
    app = make_app(board, poll=0)

    def check(where: str) -> None:
        view = lane(screen, "backlog")
        lines = screen_lines(app)[1:]  # under the header
        assert lines[0].lstrip().startswith("backlog 100"), f"{where}: heading gone: {lines[0]!r}"
        shown = [line.split()[0] for line in lines[1:] if line.strip()]
        assert view.current.id in shown, f"{where}: {view.current.id} is off screen: {shown}"

    async with run_pilot(app, size=(80, 24)) as pilot:
        screen = await loaded(pilot)
        check("at the top")
        await pilot.press("G")
        assert lane(screen, "backlog").current.id == "c-100"
        check("after G")
        await pilot.press("pageup")
        check("after pageup")
        await pilot.press("g")
        check("after g")
        for step in range(30):
            await pilot.press("j")
            check(f"after {step + 1} j")
        await pilot.press("pagedown", "pagedown")
        check("after pagedown")
    board.close()


def test_a_narrow_lane_heading_keeps_its_count() -> None:
    from board.tui.widgets import fit_heading

    parts = [("ready ", False), ("2000", True), (" !118", True)]

    def fit(room: int) -> str:
        return "".join(text for text, _ in fit_heading(parts, room))

    assert fit(20) == "ready 2000 !118"
    assert fit(12) == "ready 2000", "the blocked part must go before the name or the count"
    assert fit(8) == "re… 2000", "the name must be cut before the count"
    assert fit(5) == "2000" and fit(3) == "20…" and fit(0) == ""
    for room in range(0, 20):
        assert len(fit(room)) <= room, f"the heading overflows {room} cells: {fit(room)!r}"


async def test_every_lane_shows_its_count_at_80x24(tmp_path) -> None:
    """At 80 columns every lane's heading keeps its name, its count and its blocked count,
    and a row keeps its block class and the start of its title (the lanes are stacked, each
    the full width: it used to be `ready 1500` with the `!118` cut, and `c-10 !gat`)."""
    board = make_board(tmp_path)
    with board.store.transaction() as tx:
        from board.core.model import CardDraft

        for i in range(1500):
            card = tx.create(CardDraft(title=f"card {i} of the lane", lane="ready"), "c", "t")
            if i % 13 == 0:
                tx.update(card.id, Expect(), {"blocked": Blocked("dispatch-infra", "x")}, "t")
        tx.create(CardDraft(title="the one in the backlog"), "c", "t")
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        lines = [line.strip() for line in screen_lines(app)]
        for heading in ("backlog 1", "ready 1500 !116", "working 0", "review 0", "done 0"):
            assert heading in lines, f"no heading {heading!r} at 80x24: {lines}"
        row = next(line for line in lines if line.startswith("c-1 "))
        assert "!dispatch-infra card 0 of the lane" in row, f"the row is cut: {row!r}"
    board.close()


async def test_j_k_and_arrows_move_the_cursor(board) -> None:
    app = make_app(board)
    async with run_pilot(app) as pilot:
        screen = await loaded(pilot)
        await goto(pilot, "backlog", "c-5")
        backlog = lane(screen, "backlog")
        assert backlog.current.id == "c-5"
        await pilot.press("j")
        assert backlog.current.id == "c-11", "j did not move down"
        await pilot.press("down")
        assert backlog.current.id == "c-4", "down did not move down"
        await pilot.press("k")
        assert backlog.current.id == "c-11", "k did not move up"
        await pilot.press("up")
        assert backlog.current.id == "c-5", "up did not move up"
        await pilot.press("up")
        assert backlog.current.id == "c-5", "the cursor left the lane at the top"
        await pilot.press("G")
        assert backlog.current.id == "c-12", "G did not go to the last card"
        await pilot.press("g")
        assert backlog.current.id == "c-5", "g did not go to the first card"


async def test_left_right_and_tab_switch_lanes(board) -> None:
    app = make_app(board)
    async with run_pilot(app) as pilot:
        screen = await loaded(pilot)
        assert screen.current_lane == "ready"  # where the blocked cards are
        await pilot.press("left")
        assert screen.current_lane == "backlog" and app.focused is lane(screen, "backlog")
        await pilot.press("right")
        assert screen.current_lane == "ready" and app.focused is lane(screen, "ready")
        await pilot.press("tab")
        assert screen.current_lane == "working", "tab did not go to the next lane"
        await pilot.press("left")
        assert screen.current_lane == "ready", "left did not go back"
        await pilot.press("shift+tab")
        assert screen.current_lane == "backlog"
        await pilot.press("left")
        assert screen.current_lane == "done", "left from the first lane should wrap to the last"
        assert screen.query_one("#lane-done").has_class("-current")


async def test_keys_typed_ahead_after_a_lane_switch_go_to_the_new_lane(board) -> None:
    """Over SSH keys arrive in bursts: `→ j j` read at once must move the cursor in the lane
    `→` went to, not in the one it left."""
    from textual import events

    app = make_app(board)
    async with run_pilot(app) as pilot:
        screen = await loaded(pilot)
        await pilot.press("left")  # to the backlog, from the ready lane the board opens on
        for key in ("right", "j", "j"):  # queued together, as one read from the terminal
            event = events.Key(key, None)
            event.set_sender(app)
            app.post_message(event)  # into the app's queue, as the driver puts a key
        await settle(pilot)
        assert screen.current_lane == "ready"
        assert lane(screen, "ready").cursor == 2, "the keys after → did not reach its lane"
        assert lane(screen, "backlog").cursor == 0, "the keys after → moved the lane it left"


async def test_c_toggles_the_cancelled_lane(board) -> None:
    app = make_app(board)
    async with run_pilot(app) as pilot:
        screen = await loaded(pilot)
        await pilot.press("c")
        assert screen.query_one("#lane-cancelled").display, "c did not show the cancelled lane"
        assert screen.current_lane == "cancelled" and lane(screen, "cancelled").current.id == "c-8"
        await pilot.press("c")
        assert not screen.query_one("#lane-cancelled").display, "c did not hide it again"
        assert screen.current_lane == "done", "the cursor stayed in a hidden lane"


async def test_q_quits(board) -> None:
    app = make_app(board)
    async with run_pilot(app) as pilot:
        await loaded(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running, "q did not quit"

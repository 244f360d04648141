"""Pilot tests for `board tui`: every key does to the store what the CLI would, refusals
show their one line, declined questions change nothing, writes from another process
appear without a key, and nothing a user wrote is obeyed by the terminal."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from board.core import proc
from board.core.cachedir import Folder
from board.core.cards import actions
from board.core.errors import ConfigError
from board.core.model import Blocked
from board.core.store import Expect
from board.tui.app import BoardApp
from board.tui.board import BoardScreen
from board.tui.card import CardScreen
from board.tui.dialogs import ConfirmDialog, ConfirmReasonDialog, HelpScreen, ReasonDialog
from board.tui.themes import THEMES_CACHE, ThemeSet, load_themes, parse_theme
from board.tui.widgets import LaneView
from textual import events
from textual.command import CommandPalette
from textual.widgets import Input

from tests.support.tui import (
    CLEAR,
    MARKUP_TITLE,
    OSC52,
    add,
    cli,
    count_css,
    goto,
    loaded,
    make_app,
    make_board,
    screen_lines,
    screen_segments,
    seeded_board,
    settle,
    status,
)
from tests.support.waiting import wait_for


@pytest.fixture
def board(tmp_path):
    b = seeded_board(tmp_path)
    yield b
    b.close()


def lane(screen: BoardScreen, name: str) -> LaneView:
    return screen.lane_view(name)


def ids(view: LaneView) -> list[str]:
    return [row.card.id for row in view.rows]


# -- the board ------------------------------------------------------------------------------


async def test_lanes_show_counts_and_blocked_cards_first(board) -> None:
    app = make_app(board)
    async with app.run_test(size=(160, 48)) as pilot:
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
        async with app.run_test(size=(80, 24)) as pilot:
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


async def test_a_corrupt_card_row_is_named_and_the_rest_of_the_board_shows(board) -> None:
    """A priority edited into text by hand: the board lists every other card and the status
    line names the card and the field, on the first paint and on every reload."""
    board.store.conn.execute("UPDATE cards SET priority = 'high' WHERE id = 'c-9'")
    app = make_app(board)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await loaded(pilot)
        assert ids(lane(screen, "ready")) == ["c-10", "c-2", "c-1"]
        assert ids(lane(screen, "backlog")) == ["c-5", "c-11", "c-4", "c-12"]
        assert "card c-9 cannot be read: its field priority" in status(app)
        app.say("")
        actions.ready(board.store, "c-11")  # another write: the board reloads from the store
        await wait_for(pilot, lambda: "c-11" in ids(lane(screen, "ready")), what="the reload")
        await settle(pilot)
        assert "card c-9 cannot be read" in status(app)


async def test_a_lane_of_10000_cards_mounts_no_widget_per_card(tmp_path) -> None:
    board = make_board(tmp_path)
    with board.store.transaction() as tx:
        from board.core.model import CardDraft

        for i in range(10_000):
            tx.create(CardDraft(title=f"card {i}"), "c", "bench")
    app = make_app(board, poll=0)
    async with app.run_test(size=(80, 24)) as pilot:
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

    async with app.run_test(size=(80, 24)) as pilot:
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
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        lines = [line.strip() for line in screen_lines(app)]
        for heading in ("backlog 1", "ready 1500 !116", "working 0", "review 0", "done 0"):
            assert heading in lines, f"no heading {heading!r} at 80x24: {lines}"
        row = next(line for line in lines if line.startswith("c-1 "))
        assert "!dispatch-infra card 0 of the lane" in row, f"the row is cut: {row!r}"
    board.close()


async def test_j_k_and_arrows_move_the_cursor(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
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
    async with app.run_test() as pilot:
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
    async with app.run_test() as pilot:
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
    async with app.run_test() as pilot:
        screen = await loaded(pilot)
        await pilot.press("c")
        assert screen.query_one("#lane-cancelled").display, "c did not show the cancelled lane"
        assert screen.current_lane == "cancelled" and lane(screen, "cancelled").current.id == "c-8"
        await pilot.press("c")
        assert not screen.query_one("#lane-cancelled").display, "c did not hide it again"
        assert screen.current_lane == "done", "the cursor stayed in a hidden lane"


async def test_slash_filters_by_title_id_label_and_class(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        screen = await loaded(pilot)
        await pilot.press("slash")
        assert isinstance(app.focused, Input), "/ did not open the filter"
        await pilot.press(*"readme")
        assert ids(lane(screen, "backlog")) == ["c-5"], "filter by title failed"
        assert ids(lane(screen, "ready")) == [], "a card that does not match is still shown"
        assert "1/4" in screen.lane_view("backlog").heading
        for query, lane_name, expected in (
            ("c-11", "backlog", ["c-11"]),
            ("infra", "ready", ["c-1"]),
            ("gate-red", "ready", ["c-10"]),
            ("held config", "ready", ["c-2"]),
        ):
            app.query_one("#filter", Input).value = query
            await pilot.pause()
            assert ids(lane(screen, lane_name)) == expected, f"filter {query!r} failed"
        await pilot.press("enter")
        assert isinstance(app.focused, LaneView), "enter did not return to the lane"
        assert ids(lane(screen, "ready")) == ["c-2"], "enter dropped the filter"
        await pilot.press("escape")
        assert len(lane(screen, "ready").rows) == 4, "esc did not clear the filter"
        assert not app.query_one("#filter", Input).display


async def test_q_quits(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running, "q did not quit"


async def test_q_typed_in_the_filter_is_text_not_quit(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await pilot.press("slash", "q")
        assert app.is_running and app.query_one("#filter", Input).value == "q"


# -- the card screen ------------------------------------------------------------------------


async def test_enter_opens_the_card_and_esc_returns(board) -> None:
    app = make_app(board)
    async with app.run_test(size=(100, 60)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-2")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, CardScreen) and app.screen.card_id == "c-2"
        text = "\n".join(screen_lines(app))
        for needle in (
            "Parse board.toml with line numbers",
            "Name the file, line and key of a bad value.",  # spec, second line
            "A bad key is refused with file:line: key.",  # acceptance
            "held",
            "waiting for the config review",  # block reason
            "config, core",  # labels
            "c-1 (ready)",  # deps with their lanes
            "the reviewer is out until Monday",  # a comment
            "pinged them again",
            "alice",
            "2026-01-01 00:00:00",  # the timeline, on the fixed clock
        ):
            assert needle in text, f"the card screen does not show {needle!r}"
        await pilot.press("escape")
        assert isinstance(app.screen, BoardScreen), "esc did not return to the board"


async def test_card_screen_shows_dependents_branch_worktree_and_stranded_work(board) -> None:
    from board.core.git import gitutil

    root = board.root
    (root / "f.txt").write_text("x\n")
    gitutil.git(root, "add", "f.txt")
    gitutil.git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "i")
    tree = board.cfg.worktrees_dir / "feat-c-3-lanes"
    gitutil.git(root, "worktree", "add", "-q", "-b", "feat/c-3-lanes", str(tree))
    gitutil.git(root, "branch", "stranded/feat-c-3-lanes/20260101T000000000Z")
    gitutil.git(root, "branch", "stranded/feat-c-2/20260101T000000001Z")
    app = make_app(board)
    async with app.run_test(size=(120, 50)) as pilot:
        await loaded(pilot)
        await goto(pilot, "working", "c-3")
        await pilot.press("enter")
        await settle(pilot)
        text = "\n".join(screen_lines(app))
        assert "feat/c-3-lanes" in text, "the branch is not shown"
        assert str(tree) in text, "the worktree holding the branch is not shown"
        assert "c-11" in text, "the dependents are not shown"
        assert "stranded/feat-c-3-lanes/20260101T000000000Z" in text, (
            "the card's stranded branch is not shown"
        )
        assert "stranded/feat-c-2/" not in text, "another card's stranded branch is shown"


async def test_verbs_work_on_the_card_screen(board) -> None:
    app = make_app(board)
    async with app.run_test(size=(80, 30)) as pilot:  # the timeline's end on screen
        await loaded(pilot)
        await goto(pilot, "ready", "c-2")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        assert board.store.get("c-2").blocked is None, "u on the card screen did not unblock"
        await wait_for(
            pilot,
            lambda: "unblocked (was held)" in "\n".join(screen_lines(app)),
            what="the card screen to show the unblock in its timeline",
        )


# -- verbs ----------------------------------------------------------------------------------


async def test_r_readies_a_backlog_card_and_the_cursor_follows_it(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        screen = await loaded(pilot)
        await goto(pilot, "backlog", "c-11")
        await pilot.press("r")
        await settle(pilot)
        assert board.store.get("c-11").lane == "ready", "r did not ready the card"
        assert status(app) == "ready c-11: ready"
        timeline = [e.text for e in board.store.timeline("c-11")]
        assert timeline[-1] == "lane backlog → ready", f"not what the CLI writes: {timeline}"
        assert screen.current_lane == "ready" and screen.current_card().id == "c-11", (
            "the cursor did not stay on its card"
        )


async def test_r_refused_shows_the_cores_one_line(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await goto(pilot, "backlog", "c-5")  # no spec
        before = board.store.get("c-5")
        await pilot.press("r")
        await settle(pilot)
        assert status(app) == "c-5: needs a spec before it is ready"
        assert app.last_status[1], "a refusal is not shown as an error"
        assert board.store.get("c-5") == before, "a refused verb changed the card"
        assert "needs a spec before it is ready" in "\n".join(screen_lines(app))
        assert "Traceback" not in "\n".join(screen_lines(app))


async def test_u_unblocks_and_refuses_an_unblocked_card(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        screen = await loaded(pilot)
        await goto(pilot, "ready", "c-10")
        await pilot.press("u")
        await settle(pilot)
        assert board.store.get("c-10").blocked is None, "u did not unblock"
        assert status(app) == "unblock c-10: ready"
        assert screen.current_card().id == "c-10", "the cursor lost its card"
        await pilot.press("u")
        await settle(pilot)
        assert status(app) == "c-10: is not blocked", "the refusal line is not shown"


async def test_H_asks_the_reason_then_holds(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        screen = await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        await pilot.press("H")
        assert isinstance(app.screen, ReasonDialog), "H did not ask for a reason"
        assert "c-1" in "\n".join(screen_lines(app)), "the question does not name the card"
        await pilot.press(*"design first", "enter")
        await settle(pilot)
        card = board.store.get("c-1")
        assert card.blocked == Blocked("held", "design first"), f"not held as asked: {card}"
        assert status(app) == "hold c-1: ready, blocked held: design first"
        assert screen.current_card().id == "c-1"
        assert lane(screen, "ready").rows[0].card.id == "c-1" or card.priority > 1


async def test_H_declined_changes_nothing(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        before = board.store.get("c-1")
        await pilot.press("H", *"never mind", "escape")
        await settle(pilot)
        assert isinstance(app.screen, BoardScreen)
        assert board.store.get("c-1") == before, "an abandoned hold changed the card"
        assert "not done" in status(app)


async def test_H_with_an_empty_reason_keeps_the_dialog_open_saying_so_inside_it(board) -> None:
    """It used to close with the CLI's words on the status line, and the next keys (the
    reason the operator went on typing) acted on the board."""
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        before = board.store.get("c-1")
        await pilot.press("H", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ReasonDialog), "an empty reason closed the dialog"
        assert "A reason is needed" in "\n".join(screen_lines(app)), "not said in the dialog"
        await pilot.press("space", "enter")  # blank is empty too
        await settle(pilot)
        assert isinstance(app.screen, ReasonDialog)
        assert board.store.get("c-1") == before
        await pilot.press(*"x", "enter")  # the key that once cancelled the card behind it
        await settle(pilot)
        assert board.store.get("c-1").blocked == Blocked("held", " x")


async def test_bar_splits_the_card_into_the_named_slices(board) -> None:
    """`|` asks for the slices' titles (naming the card), then makes the core's one split
    call: the slices are ready, the card cancelled, the summary on the status line."""
    app = make_app(board)
    before_ids = {c.id for c in board.store.list_cards()}
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        await pilot.press("vertical_line")
        assert isinstance(app.screen, ReasonDialog), "| did not ask for the slices"
        assert "Split c-1" in "\n".join(screen_lines(app)), "the question does not name the card"
        await pilot.press(*"Parse the config; Report line numbers", "enter")
        await settle(pilot)
        assert board.store.get("c-1").lane == "cancelled", "the split card was not cancelled"
        new = [c for c in board.store.list_cards() if c.id not in before_ids]
        assert sorted((c.title, c.lane) for c in new) == [
            ("Parse the config", "ready"),
            ("Report line numbers", "ready"),
        ], new
        ids = ", ".join(sorted(c.id for c in new))
        assert status(app).startswith(f"split c-1 into {ids}"), status(app)


async def test_bar_abandoned_or_without_titles_changes_nothing(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        before = [(c, board.store.timeline(c.id)) for c in board.store.list_cards()]
        await pilot.press("vertical_line", *"A; B", "escape")
        await settle(pilot)
        assert "not done" in status(app)
        await pilot.press("vertical_line", *" ; ", "enter")
        await settle(pilot)
        assert status(app) == "split c-1: name at least one slice (titles separated by ;)"
        after = [(c, board.store.timeline(c.id)) for c in board.store.list_cards()]
        assert after == before, "an abandoned or empty split changed the board"


async def test_Q_requeues_with_the_reason_in_the_timeline(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await goto(pilot, "working", "c-3")
        await pilot.press("Q")
        assert isinstance(app.screen, ReasonDialog)
        await pilot.press(*"use the line API", "enter")
        await settle(pilot)
        assert board.store.get("c-3").lane == "ready", "Q did not requeue"
        kinds = [(e.kind, e.text) for e in board.store.timeline("c-3")]
        assert ("requeue", "use the line API") in kinds, f"the reason is lost: {kinds}"
        await pilot.press("Q", "enter")
        await settle(pilot)
        assert status(app) == "c-3: is already ready"


@pytest.mark.parametrize(
    ("key", "verb", "final"), [("x", "cancel", "cancelled"), ("D", "done", "done")]
)
async def test_destructive_verbs_ask_naming_the_card_and_no_keeps_it(
    board, key, verb, final
) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await goto(pilot, "review", "c-6")
        before = board.store.get("c-6")
        await pilot.press(key)
        assert isinstance(app.screen, ConfirmDialog), f"{key} did not ask first"
        question = "\n".join(screen_lines(app))
        assert "c-6" in question and "Fold card branches back" in question, (
            "the question does not name the card"
        )
        await pilot.press("n")
        await settle(pilot)
        assert board.store.get("c-6") == before, f"{verb} declined with n changed the card"
        await pilot.press(key, "escape")
        await settle(pilot)
        assert board.store.get("c-6") == before, f"{verb} declined with esc changed the card"
        await pilot.press(key, "enter")  # enter presses the focused button: "No"
        await settle(pilot)
        assert board.store.get("c-6") == before, f"a stray enter {verb}-ed the card"
        await pilot.press(key, "y")
        await settle(pilot)
        assert board.store.get("c-6").lane == final, f"{key} then y did not {verb}"
        assert status(app) == f"{verb} c-6: {final}"
        await pilot.press("c")  # show cancelled, to find it there too
        await settle(pilot)


async def test_cancel_refused_on_a_done_card_shows_the_line(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await goto(pilot, "done", "c-7")
        await pilot.press("x", "y")
        await settle(pilot)
        assert status(app) == "c-7: is already done"
        assert board.store.get("c-7").lane == "done"


async def test_a_card_changed_under_the_question_is_refused_not_overwritten(board) -> None:
    """The verb runs against the card as it is when answered, not as it was when asked."""
    app = make_app(board, poll=0)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await goto(pilot, "review", "c-6")
        await pilot.press("x")
        actions.done(board.store, None, "c-6")  # someone else finishes it meanwhile
        await pilot.press("y")
        await settle(pilot)
        assert board.store.get("c-6").lane == "done", "the other writer's change was lost"
        assert status(app) == "c-6: is already done"


# -- palette, help, keymap, themes ----------------------------------------------------------


@pytest.mark.parametrize("key", ["ctrl+p", "colon"])
async def test_palette_lists_the_verbs_for_the_current_card(board, key) -> None:
    app = make_app(board)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        await pilot.press(key)
        await settle(pilot)
        assert isinstance(app.screen, CommandPalette), f"{key} did not open the palette"
        text = "\n".join(screen_lines(app))
        for verb in ("hold", "cancel", "done"):  # ready c-1: no ready/unblock (test_tui_context)
            assert f"{verb} c-1" in text, f"the palette does not offer {verb} for c-1"
        await pilot.press(*"hold c-1", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ReasonDialog), "the chosen command did not run the verb"


async def test_palette_verb_runs_the_same_call(board) -> None:
    app = make_app(board)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-9")
        await pilot.press("colon", *"unblock c-9", "enter")
        await settle(pilot)
        assert board.store.get("c-9").blocked is None, "the palette's unblock did nothing"


async def test_question_mark_shows_help_generated_from_the_bindings(board) -> None:
    app = make_app(board)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen), "? did not open the help"
        text = "\n".join(screen_lines(app))
        rows = {line.split()[-1]: line for line in screen_lines(app) if "█" in line}
        for _ in range(30):  # the rest of the help, scrolled into view
            await pilot.press("j")
        await pilot.pause()
        text += "\n" + "\n".join(screen_lines(app))
        for ident, keys, what in (
            ("verb.hold", ["H"], "hold"),
            ("verb.cancel", ["x"], "cancel"),
            ("board.filter", ["/"], "filter"),
            ("lane.down", ["j", "↓"], "down"),
            ("app.quit", ["q"], "quit"),
            ("app.palette", ["^p", ":"], "palette"),
            ("app.theme", ["T"], "theme"),
        ):
            row = next((line for line in text.splitlines() if f" {ident} " in line), "")
            assert row, f"help has no row for {ident} (the id users rebind)"
            assert what in row and all(f" {k} " in row for k in keys), f"help row wrong: {row}"
        assert rows
        await pilot.press("escape")
        assert isinstance(app.screen, BoardScreen)


async def test_keys_rebound_in_board_toml_work_and_show_in_help(tmp_path) -> None:
    board = seeded_board(tmp_path, keys={"verb.hold": "b", "lane.down": "J"})
    app = make_app(board)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await loaded(pilot)
        await pilot.press("J")
        assert lane(screen, "ready").current.id == "c-2", "the rebound down key does nothing"
        await pilot.press("right", "b")
        assert isinstance(app.screen, ReasonDialog), "the rebound hold key does nothing"
        await pilot.press("escape")
        await pilot.press("H")
        assert not isinstance(app.screen, ReasonDialog), "the old key still holds"
        await pilot.press("question_mark")
        rows = [line for line in screen_lines(app) if "verb.hold" in line]
        assert rows and " b " in rows[0], f"help shows the old key: {rows}"
    board.close()


def test_an_unknown_binding_id_in_board_toml_is_refused_before_drawing(tmp_path) -> None:
    """It used to be a status line once the board was up, the key silently unbound."""
    board = seeded_board(tmp_path, keys={"verb.nope": "z"})
    with pytest.raises(ConfigError, match="no binding has the id 'verb.nope'"):
        make_app(board)
    board.close()


async def test_T_switches_theme_and_every_shipped_theme_renders(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        assert app.theme == "dark"
        seen = [app.theme]
        for _ in range(3):
            await pilot.press("T")
            await settle(pilot)
            seen.append(app.theme)
            assert screen_lines(app), "nothing rendered"
        assert seen == ["dark", "light", "high-contrast", "dark"], f"T cycles wrongly: {seen}"


async def test_theme_flag_and_unknown_theme_refused_in_one_line(board) -> None:
    app = make_app(board, theme="high-contrast")
    assert app.theme == "high-contrast"
    with pytest.raises(
        ConfigError, match="unknown theme 'nope': one of dark, light, high-contrast"
    ):
        BoardApp(board.cfg, board.store, theme="nope")
    res = cli(board, "tui", "--theme", "nope")
    assert res.returncode == 2 and res.stderr.strip() == (
        "board: unknown theme 'nope': one of dark, light, high-contrast"
    ), res.stderr


async def test_user_themes_load_and_a_broken_one_is_reported_not_fatal(tmp_path) -> None:
    themes = tmp_path / "mythemes"
    themes.mkdir()
    (themes / "sunset.toml").write_text('primary = "#ff8800"\nbackground = "#201010"\n')
    (themes / "broken.toml").write_text('primary = "not-a-colour"\n')
    board = seeded_board(tmp_path, theme_dir=str(themes), theme="sunset")
    app = make_app(board)
    assert app.theme == "sunset" and "sunset" in app.theme_names
    async with app.run_test() as pilot:
        await loaded(pilot)
        assert "broken.toml: primary: not a colour" in status(app)
    board.close()


async def test_the_stylesheet_is_parsed_once_at_start_with_the_chosen_theme(
    tmp_path, monkeypatch
) -> None:
    """Setting the theme in __init__ queues Textual's CSS refresh, which parses every
    stylesheet again before the first paint; the start skips it, so the first parse must
    already read the chosen theme's colours."""
    from textual.app import App
    from textual.css.stylesheet import Stylesheet

    reparsed: list[int] = []
    original = Stylesheet.reparse
    monkeypatch.setattr(Stylesheet, "reparse", lambda self: reparsed.append(1) or original(self))
    themes = tmp_path / "mythemes"
    themes.mkdir()
    (themes / "sunset.toml").write_text('primary = "#ff8800"\nbackground = "#201010"\n')
    board = seeded_board(tmp_path, theme_dir=str(themes), theme="sunset")
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        assert reparsed == [], "the stylesheet was parsed twice before the first paint"
        first = app.screen.styles.background
        assert first.hex.startswith("#1F10") or first.hex.startswith("#2010"), first.hex
        App.refresh_css(app)  # Textual's own refresh: the skipped one would change nothing
        await settle(pilot)
        assert reparsed == [1] and app.screen.styles.background == first
        await pilot.press("T")  # a later theme change still refreshes the CSS
        await settle(pilot)
        assert len(reparsed) == 2 and app.screen.styles.background != first
    board.close()


async def test_the_first_parse_has_the_chosen_themes_variables(board, monkeypatch) -> None:
    """The board gives the stylesheet its chosen theme's CSS variables before anything is
    parsed, and skips the CSS refresh that setting the theme queues: the start reparses
    nothing, and the board is drawn in the chosen theme's colours."""
    from textual.color import Color

    css = count_css(monkeypatch)
    app = make_app(board, theme="light")
    async with app.run_test() as pilot:
        await loaded(pilot)
        assert css.reparsed == [], "the start parsed the stylesheets again"
        light = app.available_themes["light"].background or ""
        assert app.screen.styles.background == Color.parse(light)


async def test_the_board_is_styled_once_as_it_starts(board, monkeypatch) -> None:
    """Textual restyles a screen and every widget under it when the app first resumes it,
    moments after every widget was styled as it mounted; the board skips that one. Its
    styles still follow a theme change."""
    restyled: list[int] = []
    original = BoardScreen.update_node_styles

    def counting(self: BoardScreen, animate: bool = True) -> None:
        restyled.append(1)
        original(self, animate)

    monkeypatch.setattr(BoardScreen, "update_node_styles", counting)

    def declares_lane_parts(node: Any) -> bool:
        """Whether the node's class declares the lane's component classes: Textual works
        out their styles for each node that does, as it styles it."""
        return any(
            "lane--cursor" in klass.__dict__.get("COMPONENT_CLASSES", ())
            for klass in type(node).__mro__
        )

    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await settle(pilot)
        assert restyled == [], "the board was styled twice as it started"
        # the six lanes share one set of component styles, worked out once
        nodes = app.screen.walk_children(with_self=True)
        lane_parts = [type(node).__name__ for node in nodes if declares_lane_parts(node)]
        assert lane_parts == ["LaneStyles"], lane_parts
        lane = app.screen.query_one("#lane-ready", LaneView)
        assert lane.parts.get_component_rich_style("lane--cursor").bgcolor is not None
        before = lane.rich_style
        await pilot.press("T")
        await settle(pilot)
        assert lane.rich_style != before, "the theme change did not reach the lanes"


async def test_the_other_screens_rules_join_the_stylesheet_when_the_first_is_opened(
    board, monkeypatch
) -> None:
    """The start parses the board's rules only (board.tcss): the card screen's, the
    dialogs', the form's and the flow's (screens.tcss) join the stylesheet as the first
    screen is pushed, parsed alone (no reparse of the rest), and style that screen, in the
    theme chosen since."""
    from textual.color import Color
    from textual.geometry import Spacing

    reparsed = count_css(monkeypatch).reparsed
    app = make_app(board)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        names = {name for rule in app.stylesheet.rules for name in rule.selector_names}
        assert "#lanes" in names and "#card-scroll" not in names and "CardForm" not in names
        await pilot.press("T")  # a theme change before: the new rules are read in its colours
        await settle(pilot)
        reparsed.clear()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CardScreen), what="the card")
        await settle(pilot)
        assert reparsed == [], "opening a screen parsed the whole stylesheet again"
        scroll = app.screen.query_one("#card-scroll")
        assert scroll.styles.padding == Spacing(0, 1, 0, 1)  # screens.tcss's rule
        await pilot.press("escape", "question_mark")  # the help: a dialog's rules too
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        border = app.screen.query_one("#help").styles.border_top
        assert app.theme == "light" and border == ("thick", Color.parse(app.current_theme.primary))


async def test_the_stranded_browser_and_the_logs_add_their_own_rules_without_a_reparse(
    board, monkeypatch
) -> None:
    """The stranded browser's and the logs' stylesheets join the app's as each screen first
    composes, parsed alone: a CSS_PATH had Textual parse every source again, in a new
    stylesheet no cache reaches, and restyle the board, at each first open. Their rules
    still style their screens, in the theme chosen since."""
    from board.tui.logs.screen import LogsScreen
    from board.tui.stranded.browser import StrandedScreen
    from textual.color import Color
    from textual.geometry import Spacing

    css = count_css(monkeypatch)
    parsed, reparsed = css.parsed, css.reparsed
    app = make_app(board)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(pilot)
        parsed.clear()
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, StrandedScreen), what="stranded")
        await settle(pilot)
        assert reparsed == [], "opening the stranded browser parsed every stylesheet again"
        sheets = [Path(p).name for p in parsed if p.endswith(".tcss")]
        assert sheets == ["screens.tcss", "stranded.tcss"], "only the new rules are parsed"
        title = app.screen.query_one("#stranded-title")
        assert title.styles.padding == Spacing(0, 1, 0, 1)  # stranded.tcss's rule
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("T")  # the light theme: the logs' rules are read in its colours
        await settle(pilot)
        reparsed.clear()
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LogsScreen), what="the logs")
        await settle(pilot)
        assert reparsed == [], "opening the logs parsed every stylesheet again"
        log_title = app.screen.query_one("#log-title")
        assert log_title.styles.padding == Spacing(0, 1, 0, 1)  # logs.tcss's rule
        panel = Color.parse(app.current_theme.panel or "")
        assert app.theme == "light" and log_title.styles.background == panel


async def test_the_footer_joins_its_line_after_the_first_paint_and_shows_the_keys(board) -> None:
    """Textual's footer draws no keys before the screen's bindings settle, after the first
    paint: the board keeps its line blank in the footer's colours and mounts the footer
    into it once the board is on screen, where it shows the keys as before."""
    from textual.widgets import Footer

    app = make_app(board)
    at_paint: list[int] = []
    original = app.board_painted

    def painted() -> None:
        at_paint.append(len(app.screen.query(Footer)))
        original()

    app.board_painted = painted  # type: ignore[method-assign]
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot)
        assert at_paint == [0], "the footer was built before the first paint"
        await wait_for(pilot, lambda: app.screen.query("FooterKey"), what="the footer's keys")
        footer = app.screen.query_one(Footer)
        assert footer.region.y == 47 and footer.region.height == 1
        keys = {key.description for key in footer.query("FooterKey")}  # its class is private
        assert {"open", "filter", "quit", "help"} <= keys, keys


async def test_a_board_with_no_room_for_a_row_still_gets_its_footer(board) -> None:
    """The first paint is the first board with a row drawn; a terminal too short for any
    row never has one, and the footer comes a moment later anyway."""
    from textual.widgets import Footer

    app = make_app(board)
    async with app.run_test(size=(80, 8)) as pilot:
        screen = await loaded(pilot)
        assert not screen.painted(), "the board drew a row: the test needs a shorter screen"
        await wait_for(pilot, lambda: app.screen.query(Footer), what="the footer")


async def test_the_lanes_draw_with_the_new_themes_component_colours(tmp_path) -> None:
    """The lanes share one holder of their component styles (LaneStyles); a theme that
    changes only those (here the cursor's colour) must still reach every lane's rows."""
    themes = tmp_path / "mythemes"
    themes.mkdir()
    for name, cursor in (("green", "#005f00"), ("red", "#5f0000")):
        (themes / f"{name}.toml").write_text(
            'primary = "#ff8800"\nbackground = "#201010"\n'
            f'[variables]\nblock-cursor-background = "{cursor}"\n'
        )
    board = seeded_board(tmp_path, theme_dir=str(themes), theme="green")
    app = make_app(board)

    def cursor_colours() -> set[str]:
        colours = set()
        for lane in app.screen.query(LaneView):
            if lane.display and lane.items and lane.has_focus:
                strip = lane.render_line(lane.header_rows + lane.cursor)
                colours |= {seg.style.bgcolor.name for seg in strip if seg.style.bgcolor}
        return colours

    async with app.run_test() as pilot:
        await loaded(pilot)
        assert "#005f00" in cursor_colours()
        app.theme = "red"
        await settle(pilot)
        assert "#5f0000" in cursor_colours() and "#005f00" not in cursor_colours()
    board.close()


def test_shipped_themes_come_from_the_installed_package_and_high_contrast_is_16_colour() -> None:
    themes = load_themes().themes
    assert list(themes)[:3] == ["dark", "light", "high-contrast"]
    hc = themes["high-contrast"]
    assert hc.ansi, "high-contrast must use the terminal's own colours"
    colours = [
        getattr(hc, f)
        for f in (
            "primary",
            "secondary",
            "warning",
            "error",
            "success",
            "accent",
            "foreground",
            "background",
            "surface",
            "panel",
        )
    ]
    colours += [v for k, v in hc.variables.items() if not k.endswith("text-style")]
    assert all(c.startswith("ansi_") for c in colours), (
        f"high-contrast uses a colour a 16-colour terminal lacks: {colours}"
    )


def test_a_bad_theme_file_names_the_file_and_key() -> None:
    with pytest.raises(ConfigError, match=r"x.toml: colour: unknown key"):
        parse_theme('primary = "red"\ncolour = "blue"\n', "x.toml", "x")


async def test_no_color_is_honoured(board, monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        assert app.no_color
        for seg in screen_segments(app):
            for colour in (seg.style.color, seg.style.bgcolor) if seg.style else ():
                if colour is not None and colour.triplet is not None:
                    r, g, b = colour.triplet
                    assert r == g == b, f"a colour reached the screen under NO_COLOR: {colour}"


async def test_l_and_s_open_logs_and_stranded_or_say_not_yet(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await pilot.press("s")
        await settle(pilot)
        try:
            import board.tui.stranded  # noqa: F401
        except ModuleNotFoundError:
            assert status(app).startswith("stranded: not yet"), status(app)
        else:
            assert type(app.screen).__name__ == "StrandedScreen"
            await pilot.press("escape")
        await pilot.press("l")
        await settle(pilot)
        try:
            from board.tui.logs.screen import LogsScreen
        except ModuleNotFoundError:
            assert status(app).startswith("logs: not yet"), status(app)
        else:
            assert isinstance(app.screen, LogsScreen), "l did not open the card's logs"


def test_the_early_read_and_core_import_without_textual(tmp_path) -> None:
    """`board tui` reads the board before Textual loads; without Textual it says so in a line."""
    board = seeded_board(tmp_path)
    board.close()
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'textual' or name.startswith('textual.'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from board.core import config\n"
        "from board.core.store import SQLiteStore\n"
        "from board.tui.boarddata import Preload\n"
        f"cfg = config.load(__import__('pathlib').Path({str(board.root)!r}))\n"
        "lanes, count = Preload(SQLiteStore(cfg.db_path)).result(10)\n"
        "print(len(lanes['ready']), count)\n"
        "from board.cli import main\n"
        f"sys.exit(main(['-C', {str(board.root)!r}, 'tui']))\n"
    )
    res = proc.run((sys.executable, "-c", code), timeout=60)
    assert res.stdout.split()[:2] == ["4", str(board_count(board))], res.stdout + res.stderr
    assert res.returncode == 1, res.stderr
    assert res.stderr.strip() == (
        "board: board tui needs Textual (textual is not installed): pip install 'textual==8.2.8'"
    ), res.stderr


def board_count(board) -> int:
    from board.core.store import SQLiteStore

    store = SQLiteStore(board.cfg.db_path)
    try:
        return store.change_count()
    finally:
        store.close()


# -- live -----------------------------------------------------------------------------------


async def test_a_write_from_another_process_appears_without_a_key(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        screen = await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        res = cli(board, "hold", "c-1", "--reason", "from the other terminal")
        assert res.returncode == 0, res.stderr
        res = cli(board, "card", "add", "urgent thing", "--spec", "s", "--ready", "--priority", "0")
        assert res.returncode == 0, res.stderr
        await wait_for(
            pilot,
            lambda: "c-13" in ids(lane(screen, "ready")),
            timeout=3,
            what="the CLI's new card to appear with no key pressed",
        )
        await wait_for(
            pilot,
            lambda: lane(screen, "ready").current.blocked is not None,
            timeout=3,
            what="the CLI's hold to appear",
        )
        assert screen.current_card().id == "c-1", "the cursor left its card on a reload"


async def test_the_card_screen_updates_live_too(board) -> None:
    app = make_app(board)
    async with app.run_test(size=(100, 50)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        await pilot.press("enter")
        await settle(pilot)
        assert cli(board, "hold", "c-1", "--reason", "seen live").returncode == 0
        await wait_for(
            pilot, lambda: "seen live" in "\n".join(screen_lines(app)), timeout=3, what="live card"
        )


async def test_R_refreshes_when_the_watch_is_off(board) -> None:
    app = make_app(board, poll=0)
    async with app.run_test() as pilot:
        screen = await loaded(pilot)
        add(board.store, "late arrival")
        await pilot.pause(0.3)
        assert "c-13" not in ids(lane(screen, "backlog"))
        await pilot.press("R")
        await settle(pilot)
        assert "c-13" in ids(lane(screen, "backlog")), "R did not reload"


async def test_works_with_no_loop_and_an_empty_store(tmp_path) -> None:
    board = make_board(tmp_path)
    app = make_app(board)
    async with app.run_test() as pilot:
        screen = await loaded(pilot)
        assert all(not lane(screen, name).rows for name in ("backlog", "ready"))
        await pilot.press("r", "enter", "x")
        await settle(pilot)
        assert isinstance(app.screen, BoardScreen)
        assert "no card here" in status(app)
        assert "empty" in "\n".join(screen_lines(app))
    board.close()


async def test_a_slow_first_read_says_reading_then_shows_the_board(board) -> None:
    board.store._lock.acquire()  # the store is busy: the first read waits behind this
    try:
        app = make_app(board)
        async with app.run_test() as pilot:
            await pilot.pause(0.8)
            assert not app.screen.loaded, "the board claims to be loaded before its read"
            assert "reading the board" in "\n".join(screen_lines(app))
            await pilot.press("j", "r")  # keys while reading: nothing to act on, no crash
            board.store._lock.release()
            screen = await loaded(pilot)
            assert ids(lane(screen, "backlog")) == ["c-5", "c-11", "c-4", "c-12"]
    finally:
        if board.store._lock._is_owned():  # type: ignore[attr-defined]
            board.store._lock.release()


async def test_a_broken_store_is_one_line_not_a_traceback(board) -> None:
    board.store.conn.execute("DROP TABLE meta")
    app = make_app(board)
    async with app.run_test() as pilot:
        await pilot.pause(0.8)
        await settle(pilot)
        assert app.is_running
        assert "is not a board database" in status(app), status(app)
        assert "Traceback" not in "\n".join(screen_lines(app))


# -- invariant 5: shown literally -----------------------------------------------------------


def _hostile(board) -> str:
    card = add(
        board.store,
        MARKUP_TITLE + " " + OSC52 + CLEAR,
        "ready",
        priority=0,
        spec=f"spec [red]not red[/] {CLEAR}\nline two {OSC52}",
        acceptance="[link=http://evil]click[/link]",
        labels=[f"[b]lab{CLEAR}[/b]"],
    )
    board.store.update(card, Expect(), {"blocked": Blocked("held", f"[blink]why[/] {OSC52}")})
    board.store.add_comment(card, f"[@click=app.quit]comment[/] {CLEAR}\x07", "bob")
    return card


def _assert_literal(app: BoardApp, where: str) -> None:
    segments = screen_segments(app)
    text = "".join(seg.text for seg in segments)
    for bad in ("\x1b", "\x07", "\x9b"):
        assert bad not in text, f"a raw {bad!r} reached the terminal on the {where}"
    for seg in segments:
        meta = seg.style.meta if seg.style else {}
        assert not any(str(k).startswith("@") for k in meta), (
            f"markup from a card became an action on the {where}: {meta}"
        )


async def test_markup_and_escapes_are_shown_literally_on_the_board(board) -> None:
    card = _hostile(board)
    app = make_app(board)
    async with app.run_test(size=(200, 30)) as pilot:
        screen = await loaded(pilot)
        await goto(pilot, "ready", card)
        _assert_literal(app, "board")
        text = "\n".join(screen_lines(app))
        assert "[bold red]x[/] [@click=app.quit]q[/]" in text, "the markup title was interpreted"
        assert "␛]52;c;cm0gLXJmIH4K^G␛[2J" in text, "the escapes are not made visible"
        view = lane(screen, "ready")
        line = view.cursor - int(view.scroll_offset.y) + view.header_rows  # the card's row
        for x in range(30):  # every cell of the row's start, where the title begins
            await pilot.click("#lane-ready", offset=(x, line))
        await pilot.pause()
        assert app.is_running, "clicking the title ran the markup's action"


async def test_markup_and_escapes_are_shown_literally_on_the_card_screen(board) -> None:
    card = _hostile(board)
    app = make_app(board)
    async with app.run_test(size=(160, 60)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", card)
        await pilot.press("enter")
        await settle(pilot)
        _assert_literal(app, "card screen")
        text = "\n".join(screen_lines(app))
        for needle in (
            "[bold red]x[/] [@click=app.quit]q[/]",
            "spec [red]not red[/] ␛[2J",
            "line two ␛]52;c;cm0gLXJmIH4K^G",
            "[link=http://evil]click[/link]",
            "[b]lab␛[2J[/b]",
            "[blink]why[/] ␛]52;c;",
            "[@click=app.quit]comment[/] ␛[2J^G",
        ):
            assert needle in text, f"the card screen does not show {needle!r} literally"
        comment_row = next(y for y, line in enumerate(screen_lines(app)) if " bob " in line)
        cells = [(x, 1) for x in range(20)] + [(x, comment_row) for x in range(25, 60)]
        for offset in cells:  # the title's start and the comment's: where [@click] would be
            await pilot.click("#card-body", offset=offset)
        await pilot.pause()
        assert app.is_running, "clicking the card screen ran a card's markup"


async def test_markup_and_escapes_are_literal_in_questions_and_status(board) -> None:
    card = _hostile(board)
    app = make_app(board)
    async with app.run_test(size=(200, 30)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", card)
        await pilot.press("x")
        _assert_literal(app, "confirmation")
        assert "[bold red]x[/] [@click=app.quit]q[/]" in "\n".join(screen_lines(app))
        await pilot.press("n", "H", *"[red]r[/]", "enter")
        await settle(pilot)
        _assert_literal(app, "status line")
        assert "blocked held: [red]r[/]" in "\n".join(screen_lines(app))


# -- stop and approve (operator verbs on live work) ------------------------------------------


async def test_S_asks_then_stops_the_drive_leaving_the_card_held_in_ready(board) -> None:
    """c-3 is working with no live drive here: stop still ends it and holds the card."""
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await goto(pilot, "working", "c-3")
        before = board.store.get("c-3")
        await pilot.press("S")
        assert isinstance(app.screen, ConfirmReasonDialog), "S did not ask first"
        assert app.screen.focused is app.screen.query_one("#no"), "No is not focused"
        assert "c-3" in "\n".join(screen_lines(app)), "the question does not name the card"
        await pilot.press("escape")
        await settle(pilot)
        assert board.store.get("c-3") == before, "an abandoned stop changed the card"
        await pilot.press("S", "enter")  # a stray enter presses "No"
        await settle(pilot)
        assert board.store.get("c-3") == before, "a stray enter stopped the drive"
        await pilot.press("S", "tab")
        await pilot.press(*"runaway", "enter")
        await settle(pilot)
        card = board.store.get("c-3")
        assert card.lane == "ready", "stop did not put the card back in ready"
        assert card.blocked == Blocked("held", "stopped: runaway"), card.blocked
        assert status(app).startswith("stop c-3: ready"), status(app)


async def test_S_on_a_card_that_is_not_working_shows_the_refusal(board) -> None:
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await goto(pilot, "review", "c-6")
        before = board.store.get("c-6")
        await pilot.press("S")
        await pilot.press("y")
        await settle(pilot)
        assert "expects working" in status(app) or "not working" in status(app), status(app)
        assert board.store.get("c-6") == before


def _reviewable(board) -> None:
    """Give c-6 (in review) a real branch with a commit, as a build would leave it."""
    from board.core.git import gitutil

    root = board.root
    env = gitutil.identity_env()
    (root / "README.md").write_text("base\n")
    gitutil.git(root, "add", "README.md")
    gitutil.git(root, *gitutil.NO_HOOKS, "commit", "-q", "-m", "base", env=env)
    gitutil.git(root, "branch", board.cfg.run_branch)
    gitutil.git(root, "checkout", "-q", "-b", "feat/c-6")
    (root / "fold.txt").write_text("folded\n")
    gitutil.git(root, "add", "fold.txt")
    gitutil.git(root, *gitutil.NO_HOOKS, "commit", "-q", "-m", "c-6 work", env=env)
    gitutil.git(root, "checkout", "-q", "main")
    card = board.store.get("c-6")
    board.store.update("c-6", Expect(version=card.version), {"branch": "feat/c-6"})


async def test_a_asks_then_approves_a_review_card_and_it_folds(board) -> None:
    from board.core.git import gitutil

    _reviewable(board)
    app = make_app(board)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await goto(pilot, "review", "c-6")
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmDialog), "a did not ask first"
        await pilot.press("n")
        await settle(pilot)
        assert board.store.get("c-6").lane == "review", "a declined approve published"
        await pilot.press("a", "y")
        await wait_for(pilot, lambda: board.store.get("c-6").lane == "done", 20, "the fold")
        await settle(pilot)
        run_files = gitutil.out(board.root, "ls-tree", "--name-only", board.cfg.run_branch)
        assert "fold.txt" in run_files.split(), "approve did not fold the branch onto the run"
        assert status(app).startswith("approve c-6: done"), status(app)


async def test_a_refuses_a_card_requeued_after_the_operator_looked(board) -> None:
    _reviewable(board)
    app = make_app(board, poll=0)
    async with app.run_test() as pilot:
        await loaded(pilot)
        await goto(pilot, "review", "c-6")
        await pilot.press("a")
        actions.requeue(board.store, "c-6", "not yet", who="alice")  # someone else, meanwhile
        await pilot.press("y")
        await settle(pilot)
        card = board.store.get("c-6")
        assert card.lane == "ready", "the approve overrode another operator's requeue"
        assert "c-6" in status(app) and "approve c-6: done" not in status(app), status(app)


async def test_card_screen_shows_a_waiting_cards_not_before_and_class_and_the_pr_poll(
    board,
) -> None:
    from board.core.store import Expect

    card = board.store.get("c-2")
    board.store.update(
        "c-2",
        Expect(version=card.version),
        {
            "blocked": None,
            "not_before": "2026-01-01T00:05:00.000Z",
            "labels": (*card.labels, "tries:rate-limit=2"),
            "pr_url": "https://forge.example.test/pull/7",
            "pr_state": "OPEN",
            "pr_polled_at": "2026-01-01T00:01:00.000Z",
        },
    )
    app = make_app(board)
    async with app.run_test(size=(120, 50)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-2")
        await pilot.press("enter")
        await settle(pilot)
        text = "\n".join(screen_lines(app))
        assert "not before 2026-01-01T00:05:00.000Z (rate-limit)" in text, text
        assert "pull/7  OPEN, polled 2026-01-01T00:01:00.000Z" in text, text


def test_themes_read_through_their_kept_reading_as_without_it(tmp_path: Path) -> None:
    """The themes' TOML readings kept in the user's cache (load_themes' `cache`) give the
    same themes and problems as reading the files, see an edit at once (same size), and keep
    nothing while a file is not TOML."""
    user = tmp_path / "themes"
    user.mkdir()
    (user / "mine.toml").write_text('primary = "#112233"\n', encoding="utf-8")
    (user / "bad.toml").write_text('primary = "not a colour"\n', encoding="utf-8")
    cache = Folder(str(tmp_path / "cache"), "repo-x")
    kept = Path(cache.path, THEMES_CACHE)

    def seen(themes: ThemeSet) -> tuple[dict[str, str], list[str]]:
        return {n: str(t.primary) for n, t in themes.themes.items()}, themes.problems

    plain = seen(load_themes(user))
    assert "mine" in plain[0] and len(plain[1]) == 1, plain
    assert seen(load_themes(user, cache=cache)) == plain  # read, then kept
    assert kept.is_file()
    assert seen(load_themes(user, cache=cache)) == plain  # from the kept reading
    (user / "mine.toml").write_text('primary = "#445566"\n', encoding="utf-8")  # same size
    assert seen(load_themes(user, cache=cache))[0]["mine"] == seen(load_themes(user))[0]["mine"]
    assert seen(load_themes(user, cache=cache))[0]["mine"] != plain[0]["mine"]
    # a file that is not TOML: the same problem line, and no reading kept for that text
    kept.unlink()
    (user / "broken.toml").write_text("primary = \n", encoding="utf-8")
    assert seen(load_themes(user, cache=cache)) == seen(load_themes(user))
    assert not kept.exists()


def _cells(strips: list) -> list[list[tuple[str, Any]]]:
    return [[(ch, seg.style) for seg in strip for ch in seg.text] for strip in strips]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_backdrops_draw_what_textual_would(board, size) -> None:
    """The screen, the body and the lanes draw their lines as one blank strip repeated
    (`backdrop_lines`), not through Textual's styles cache: cell for cell what Textual
    draws for them, in each theme, and in a user's with a translucent background or the
    terminal's own (left to Textual). (A border, padding or tint given to one of them in
    board.tcss would show here.)"""
    from board.tui.widgets import Backdrop
    from textual.geometry import Region
    from textual.theme import Theme
    from textual.widget import Widget

    app = make_app(board)
    async with app.run_test(size=size) as pilot:
        screen = await loaded(pilot)
        dark = app.get_theme("dark")
        assert dark is not None
        for name, background in (("see-through", "#1c1c1c80"), ("terminal", "ansi_default")):
            app.register_theme(Theme(name, dark.primary, background=background, dark=True))
        for theme in ("dark", "light", "high-contrast", "see-through", "terminal"):
            app.theme = theme
            await settle(pilot)
            drawn = [screen, screen.query_one("#body"), screen.query_one("#lanes")]
            assert all(isinstance(w, Backdrop) for w in drawn[1:])
            for widget in drawn:
                width, height = widget.size
                for crop in (Region(0, 0, width, height), Region(3, 2, width - 5, 4)):
                    widget.refresh()  # drops the lines Textual's styles cache holds
                    theirs = Widget.render_lines(widget, crop)
                    assert _cells(widget.render_lines(crop)) == _cells(theirs), (theme, widget)


async def test_the_first_paint_never_says_no_card_is_selected_while_one_is(board) -> None:
    """The preview (on from 140 columns) reads its card once the cursor has rested; until
    then the first paint left it saying "no card selected" with a card under the cursor.
    It says nothing until the read, then the card."""
    from board.tui.preview import Preview

    app = make_app(board)
    at_paint: list[tuple[str | None, str]] = []
    original = app.board_painted

    def painted() -> None:
        screen = app.screen
        assert isinstance(screen, BoardScreen)
        card = screen.current_card()
        at_paint.append((card.id if card else None, str(screen.query_one(Preview).render())))
        original()

    app.board_painted = painted  # type: ignore[method-assign]
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await loaded(pilot)
        [(selected, said)] = at_paint
        assert selected is not None and said == "", (selected, said)
        await wait_for(
            pilot,
            lambda: screen.query_one(Preview).data is not None,
            what="the preview's read",
        )
        assert screen.query_one(Preview).data.card == selected

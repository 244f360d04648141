"""The board's verbs from the keys: every key does to the store what the CLI would,
refusals show their one line, declined questions change nothing, a card changed under
a question is refused, and stop and approve act on live work."""

from __future__ import annotations

import pytest
from board.core.cards import actions
from board.core.model import Blocked
from board.core.store import Expect
from board.tui.board import BoardScreen
from board.tui.dialogs import ConfirmDialog, ConfirmReasonDialog, ReasonDialog

from tests.support.tui import (
    goto,
    lane,
    loaded,
    make_app,
    run_pilot,
    screen_lines,
    settle,
    status,
)
from tests.support.waiting import wait_for


async def test_r_readies_a_backlog_card_and_the_cursor_follows_it(board) -> None:
    app = make_app(board)
    async with run_pilot(app) as pilot:
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
    async with run_pilot(app) as pilot:
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
    async with run_pilot(app) as pilot:
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
    async with run_pilot(app) as pilot:
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
    async with run_pilot(app) as pilot:
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
    async with run_pilot(app) as pilot:
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
    async with run_pilot(app, size=(160, 48)) as pilot:
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
    async with run_pilot(app) as pilot:
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
    async with run_pilot(app) as pilot:
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
    ("key", "verb", "final"), [("x", "cancel", "cancelled"), ("M", "done", "done")]
)
async def test_destructive_verbs_ask_naming_the_card_and_no_keeps_it(
    board, key, verb, final
) -> None:
    app = make_app(board)
    async with run_pilot(app) as pilot:
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
    async with run_pilot(app) as pilot:
        await loaded(pilot)
        await goto(pilot, "done", "c-7")
        await pilot.press("x", "y")
        await settle(pilot)
        assert status(app) == "c-7: is already done"
        assert board.store.get("c-7").lane == "done"


async def test_a_card_changed_under_the_question_is_refused_not_overwritten(board) -> None:
    """The verb runs against the card as it is when answered, not as it was when asked."""
    app = make_app(board, poll=0)
    async with run_pilot(app) as pilot:
        await loaded(pilot)
        await goto(pilot, "review", "c-6")
        await pilot.press("x")
        actions.done(board.store, None, "c-6")  # someone else finishes it meanwhile
        await pilot.press("y")
        await settle(pilot)
        assert board.store.get("c-6").lane == "done", "the other writer's change was lost"
        assert status(app) == "c-6: is already done"


async def test_S_asks_then_stops_the_drive_leaving_the_card_held_in_ready(board) -> None:
    """c-3 is working with no live drive here: stop still ends it and holds the card."""
    app = make_app(board)
    async with run_pilot(app) as pilot:
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
    async with run_pilot(app) as pilot:
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
    gitutil.git(root, "branch", board.cfg.board.run_branch)
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
    async with run_pilot(app) as pilot:
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
        run_files = gitutil.out(board.root, "ls-tree", "--name-only", board.cfg.board.run_branch)
        assert "fold.txt" in run_files.split(), "approve did not fold the branch onto the run"
        assert status(app).startswith("approve c-6: done"), status(app)


async def test_a_refuses_a_card_requeued_after_the_operator_looked(board) -> None:
    _reviewable(board)
    app = make_app(board, poll=0)
    async with run_pilot(app) as pilot:
        await loaded(pilot)
        await goto(pilot, "review", "c-6")
        await pilot.press("a")
        actions.requeue(board.store, "c-6", "not yet", who="alice")  # someone else, meanwhile
        await pilot.press("y")
        await settle(pilot)
        card = board.store.get("c-6")
        assert card.lane == "ready", "the approve overrode another operator's requeue"
        assert "c-6" in status(app) and "approve c-6: done" not in status(app), status(app)

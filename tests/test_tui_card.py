"""The screens the board opens: the card screen (enter) with its dependents, branch,
worktree, stranded work, waits and pull request, its verbs, and `l`/`s` for the logs
and the stranded browser."""

from __future__ import annotations

from board.tui.board import BoardScreen
from board.tui.card import CardScreen

from tests.support.tui import (
    goto,
    loaded,
    make_app,
    run_pilot,
    screen_lines,
    settle,
    status,
)
from tests.support.waiting import wait_for


async def test_enter_opens_the_card_and_esc_returns(board) -> None:
    app = make_app(board)
    async with run_pilot(app, size=(100, 60)) as pilot:
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
    async with run_pilot(app, size=(120, 50)) as pilot:
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
    async with run_pilot(app, size=(80, 30)) as pilot:  # the timeline's end on screen
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
            "tries": (("rate-limit", 2),),
            "pr_url": "https://forge.example.test/pull/7",
            "pr_state": "OPEN",
            "pr_polled_at": "2026-01-01T00:01:00.000Z",
        },
    )
    app = make_app(board)
    async with run_pilot(app, size=(120, 50)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-2")
        await pilot.press("enter")
        await settle(pilot)
        text = "\n".join(screen_lines(app))
        assert "not before 2026-01-01T00:05:00.000Z (rate-limit)" in text, text
        rows = [line.split() for line in screen_lines(app)]
        assert ["labels", "config,", "core"] in rows, text  # the labels, the operator's alone
        assert ["counts", "tries", "rate-limit=2"] in rows, text  # the board's own, beside them
        assert "pull/7  OPEN, polled 2026-01-01T00:01:00.000Z" in text, text


async def test_l_and_s_open_logs_and_stranded_or_say_not_yet(board) -> None:
    app = make_app(board)
    async with run_pilot(app) as pilot:
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


async def test_card_screen_shows_where_an_imported_card_came_from(board) -> None:
    """A card `board card import` made says its source and the issue's address; a card
    typed in has no such row."""
    from board.core.store import Expect

    card = board.store.get("c-2")
    board.store.update(
        "c-2",
        Expect(version=card.version),
        {"source": "gh#123", "source_url": "https://forge.example.test/issues/123"},
    )
    app = make_app(board)
    async with run_pilot(app, size=(120, 50)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-2")
        await pilot.press("enter")
        await settle(pilot)
        rows = [line.split() for line in screen_lines(app)]
        assert ["source", "gh#123", "https://forge.example.test/issues/123"] in rows, rows
        await pilot.press("escape")
        await settle(pilot)
        await goto(pilot, "working", "c-3")
        await pilot.press("enter")
        await settle(pilot)
        rows = [line.split() for line in screen_lines(app)]
        assert ["branch", "feat/c-3-lanes"] in rows, rows
        assert not any(row[:1] == ["source"] for row in rows), rows

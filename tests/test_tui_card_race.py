"""The card screen lists the candidates of the card's latest race (best of N, issue 42), as
`board card show` does: k, tier, state and gate, changed lines, how long each ran and what
it cost, read off the UI thread from the drive rows the race wrote (each with its candidate
k, its gate's word and its lines). An earlier race's candidates are not the latest race's,
and a card that never raced shows no candidates at all. Real SQLite store, rows written
through `Store.start_drive` / `update_drive` / `record_usage` as the race writes them."""

from __future__ import annotations

from board.core.model import Usage
from board.tui.card import CandidateTable, CardScreen
from board.tui.dialogs import ConfirmDialog
from board.tui.stranded.diff_screen import DiffScreen, LiveDiffScreen

from tests.support.boards import Board, make_board
from tests.support.loop import show
from tests.support.race import raced_in_review
from tests.support.repos import git
from tests.support.spend import write_attempts
from tests.support.tui import (
    DRIVE_STARTED,
    LOOP_PID,
    TWO_TIERS,
    add,
    goto,
    loaded,
    make_app,
    run_pilot,
    screen_lines,
    settle,
)
from tests.support.tui import status as status_line
from tests.support.waiting import wait_for

# (attempt, k, tier, status, gate, lines, started, ended, usage): an earlier race (1, 2),
# then the latest (3, 4, 5) whose third candidate still runs
RACES = [
    (1, 1, "default", "failed", "red", 99, "2025-12-31T20:00:00.000Z",
     "2025-12-31T20:05:00.000Z", Usage(100, 10, 0, 0.5, "claude-sonnet-4-5", 2)),
    (2, 2, "default", "failed", "red", 98, "2025-12-31T20:00:01.000Z",
     "2025-12-31T20:06:00.000Z", Usage(100, 10, 0, 0.5, "claude-sonnet-4-5", 2)),
    (3, 1, "smart", "passed", "green", 1234, "2025-12-31T21:00:00.000Z",
     "2025-12-31T21:07:30.000Z", Usage(48210, 3120, 0, 0.0873, "claude-sonnet-4-5", 12)),
    (4, 2, "smart", "failed", "red", 3, "2025-12-31T21:00:01.000Z",
     "2025-12-31T21:03:01.000Z", Usage(15400, 800, None, None, "gpt-5-codex", 4)),
    (5, 3, "smart", "running", "", None, DRIVE_STARTED, "", None),
]  # fmt: skip
# what the screen's row of each latest candidate holds, in order: k, tier, state, gate,
# lines, took (the running one's to the fixed clock: 3m04s) and cost
SHOWN = [
    ["1", "smart", "green", "green", "1,234", "7m30s", "$0.0873"],
    ["2", "smart", "red", "red", "3", "3m00s", "unpriced"],
    ["3", "smart", "running", "—", "—", "3m04s", "—"],
]


def race_board(tmp_path) -> tuple[Board, str, str]:  # type: ignore[no-untyped-def]
    """A card that raced twice (c-1, working: its latest race's third candidate runs) and
    a card built by single drives (c-2)."""
    board = make_board(tmp_path, config_overrides=TWO_TIERS)
    store = board.store
    raced = add(store, "Race three candidates", "working", priority=0)
    for attempt, k, tier, status, gate, lines, started, ended, usage in RACES:
        drive = store.start_drive(raced, tier, attempt, f"logs/{raced}-{attempt}.log", LOOP_PID,
                                  candidate=k)  # fmt: skip
        store.update_drive(drive.id, started_at=started, gate=gate, lines_changed=lines)
        if status != "running":
            store.update_drive(drive.id, status=status, result=f"{gate} gate", ended_at=ended)
        if usage is not None:
            store.record_usage(drive.id, usage)
    single = add(store, "Built by one drive", "review")
    write_attempts(
        board, single,
        [(1, "default", "passed", "ok", "2025-12-31T20:00:00.000Z", "2025-12-31T20:09:00.000Z",
          Usage(10, 1, 0, 0.01, "claude-sonnet-4-5", 1))],
    )  # fmt: skip
    return board, raced, single


async def test_the_card_screen_lists_its_latest_races_candidates_and_none_for_a_single_drive(
    tmp_path,
) -> None:
    board, raced, single = race_board(tmp_path)
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(160, 70)) as pilot:
        await loaded(pilot)
        await goto(pilot, "working", raced)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, CardScreen) and app.screen.card_id == raced
        lines = screen_lines(app)
        text = "\n".join(lines)
        heads = [i for i, ln in enumerate(lines) if "candidates (the latest race, 3)" in ln]
        assert heads, f"no candidates heading:\n{text}"
        at = heads[0]
        assert lines[at + 1].split() == ["k", "tier", "state", "gate", "lines", "took", "cost"]
        rows = [ln.split() for ln in lines[at + 2 : at + 2 + len(SHOWN)]]
        assert rows == SHOWN, f"the candidates as shown:\n{text}"
        assert "1,234" not in "\n".join(lines[:at]), "the lines shown outside the race"
        after = lines[at + 2 + len(SHOWN)]
        assert "spec" in after, f"more rows than the latest race's (an earlier race's?):\n{text}"
        await pilot.press("escape")
        await settle(pilot)
        await goto(pilot, "review", single)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, CardScreen) and app.screen.card_id == single
        text = "\n".join(screen_lines(app))
        assert "Built by one drive" in text and "attempts" in text, text
        assert "candidates" not in text, f"a card that never raced lists candidates:\n{text}"
    board.close()


async def test_in_review_enter_opens_a_candidates_diff_and_a_approves_that_one(tmp_path) -> None:
    """A real race of three in review (candidates write 3, 1 and 2 lines; the rule sends
    candidate 2). On the card screen's candidate rows: enter on candidate 1 opens its saved
    branch's diff, enter on candidate 2 (the one waiting) the card's tree's, and `a` on
    candidate 3 asks, naming candidate 3, then approves that one: its work is folded."""
    board, card = raced_in_review(tmp_path, "3,1,2", 3)
    cfg, store = board.cfg, board.store
    saved_1 = git(cfg.root, "for-each-ref", "--format=%(refname:short)",
                  f"refs/heads/stranded/feat-{card.id}-1/").strip()  # fmt: skip
    run_before = git(cfg.root, "rev-parse", cfg.board.run_branch).strip()
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(160, 60)) as pilot:
        await loaded(pilot)
        await goto(pilot, "review", card.id)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CardScreen) and screen.card_id == card.id
        text = "\n".join(screen_lines(app))
        assert "tab to a row: enter its diff, a approves it" in text, text
        table = screen.query_one(CandidateTable)
        await pilot.press("tab")
        assert app.focused is table, f"tab did not reach the candidates: {app.focused}"
        footer = screen_lines(app)[-1]
        assert "its diff" in footer and "approve this one" in footer, footer

        def marked() -> list[str]:
            return [ln.split()[0] for ln in screen_lines(app) if ln.split()[-1:] == ["chosen"]]

        # the table's rows are drawn a frame after its heading (CI caught it empty once)
        await wait_for(pilot, marked, 10, "a candidate row marked chosen")
        assert marked() == ["2"], f"candidate 2 is not the one marked chosen: {marked()}"

        await pilot.press("enter")  # candidate 1: its save
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen), 10, "the diff")
        assert app.screen.row.name == saved_1, app.screen.row.name
        await wait_for(
            pilot, lambda: "candidate 1 line 3" in "\n".join(screen_lines(app)), 20, "its hunks"
        )
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and app.focused is table

        await pilot.press("down", "enter")  # candidate 2: the card's own tree
        await wait_for(pilot, lambda: isinstance(app.screen, LiveDiffScreen), 10, "the live diff")
        assert app.screen.tree_path.name == f"feat-{card.id}-2", app.screen.tree_path
        await wait_for(
            pilot, lambda: "candidate 2 line 1" in "\n".join(screen_lines(app)), 20, "its hunks"
        )
        await pilot.press("escape")
        await settle(pilot)

        await pilot.press("down", "a")  # candidate 3
        assert isinstance(app.screen, ConfirmDialog), "a on a candidate row did not ask first"
        asked = "\n".join(screen_lines(app))
        assert f"Approve and publish candidate 3 of {card.id}" in asked, asked
        await pilot.press("n")
        await settle(pilot)
        assert store.get(card.id).lane == "review", "a declined approve published"
        assert git(cfg.root, "rev-parse", cfg.board.run_branch).strip() == run_before
        await pilot.press("a", "y")
        await wait_for(pilot, lambda: store.get(card.id).lane == "done", 30, "the fold")
        await settle(pilot)
        assert status_line(app).startswith(f"approve {card.id}: done"), status_line(app)
        # the tree was saved and removed after the fold's write: the screen says so too
        await wait_for(
            pilot,
            lambda: any(ln.split()[:2] == ["worktree", "none"] for ln in screen_lines(app)),
            10,
            "the removed tree's line",
        )
    folded = show(cfg, cfg.board.run_branch, f"work/{card.id}.txt")
    assert folded == "candidate 3 line 1\ncandidate 3 line 2", folded
    board.close()


async def test_the_candidates_table_shows_its_rows_every_time_the_card_opens(tmp_path) -> None:
    """The table's rows once took no line at all, in 1 opening of the card in 4 to 10: the
    screen was laid out between the table's display and its measuring its rows, and that
    layout's height (0) was kept. Twenty openings, each with every candidate's row drawn."""
    board, card = raced_in_review(tmp_path, "3,1,2", 3)
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(160, 60)) as pilot:
        await loaded(pilot)
        await goto(pilot, "review", card.id)
        for opening in range(20):
            await pilot.press("enter")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, CardScreen), f"opening {opening}: {screen}"
            table = screen.query_one(CandidateTable)
            await wait_for(pilot, lambda t=table: t.row_count == 3, 10, "the candidates' rows")
            await pilot.pause(0.05)
            assert table.size.height >= 4, f"opening {opening}: the rows are {table.size} tall"
            await pilot.press("escape")
            await settle(pilot)
    board.close()

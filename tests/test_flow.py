"""The flow screen's figures (`F`): a fixed day written into the real store, through the
store's own verbs at each moment, and its figures worked out independently in
tests/support/flow.py (a sample every minute of the day's plan, not of the store). The
core's reading and the screen's pictures and words must both say the same."""

from __future__ import annotations

from datetime import timedelta

import pytest
from board.core.flowstats import read_flow
from board.tui.flowscreen import FlowRow, FlowScreen
from board.tui.times import format_elapsed
from textual.widgets import Sparkline

from tests.support.flow import END, expected, flow_board
from tests.support.tui import loaded, make_app, run_pilot, screen_lines
from tests.support.waiting import wait_for


@pytest.mark.backends()
def test_the_flow_of_a_fixed_day_matches_the_day_worked_out_minute_by_minute(
    tmp_path, store_url: str
) -> None:
    board = flow_board(tmp_path, store_url=store_url)
    want = expected()
    flow = read_flow(board.store, END, max_concurrent=3)
    assert sum(want["done"]) > 3 and want["failures"] and max(want["peaks"]) >= 2, "premise"
    assert flow.done_per_hour == want["done"]
    assert flow.lane_seconds == want["lane_seconds"]
    assert flow.lane_cards == want["lane_cards"]
    assert flow.peak_working == want["peaks"]
    assert sorted(flow.durations) == want["durations"]
    assert flow.longest_per_hour == want["longest"]
    assert flow.failures == want["failures"]
    board.close()


async def test_the_flow_screen_draws_the_days_figures_and_says_them(tmp_path) -> None:
    board = flow_board(tmp_path)
    want = expected()
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("F")
        screen = app.screen
        assert isinstance(screen, FlowScreen)
        await wait_for(pilot, lambda: screen.query(FlowRow), what="the flow's rows")
        rows = {row.label.strip(): row for row in screen.query(FlowRow)}
        assert rows["done per hour"].query_one(Sparkline).data == [float(n) for n in want["done"]]
        assert rows["working at once"].query_one(Sparkline).data == [
            float(n) for n in want["peaks"]
        ]
        assert rows["longest drive"].query_one(Sparkline).data == want["longest"]
        for cls, per_hour in want["failures"].items():
            assert rows[cls].query_one(Sparkline).data == [float(n) for n in per_hour]
            assert rows[cls].figures == str(sum(per_hour))
        text = "\n".join(screen_lines(app))
        done = sum(want["done"])
        assert f"{done} done, at most {max(want['done'])} in an hour" in text, text
        assert f"peak {max(want['peaks'])} of max_concurrent" in text, text
        assert f"{len(want['durations'])} ended · median" in text, text
        for lane, seconds in want["lane_seconds"].items():
            hours = format_elapsed(seconds)
            assert any(line.strip().startswith(lane) and hours in line for line in
                       screen_lines(app)), f"{lane} {hours} not on screen:\n{text}"  # fmt: skip
        await pilot.press("escape")
        assert not isinstance(app.screen, FlowScreen)
    board.close()


@pytest.mark.backends()
def test_the_days_spend_per_hour_and_cost_per_done_card_by_tier_match_the_plan(
    tmp_path, store_url: str
) -> None:
    """What the agents said they spent, summed by hour and by the tier that finished each
    done card (every attempt of it, failed and unpriced ones included), equals the sums
    worked out from the day's plan, on both stores; an unpriced drive is counted as such,
    never as a zero."""
    board = flow_board(tmp_path, store_url=store_url)
    want = expected()
    flow = read_flow(board.store, END, max_concurrent=3)
    assert want["unpriced"] and len(want["done_cost"]) == 2, "premise: both tiers, unpriced"
    assert flow.spend_per_hour == pytest.approx(want["spend"])
    assert (flow.spend_priced, flow.spend_unpriced) == (want["priced"], want["unpriced"])
    got = {t: [c.cards, c.cost_usd or 0.0, c.unpriced] for t, c in flow.done_cost.items()}
    assert got.keys() == want["done_cost"].keys()
    for tier, (cards, cost, unpriced) in want["done_cost"].items():
        assert got[tier] == [cards, pytest.approx(cost), unpriced], tier
    board.close()


async def test_the_flow_screen_says_the_spend_and_how_a_done_card_is_costed(tmp_path) -> None:
    """The spend row's picture is the hours' spend and its words the window's sum, partial
    with its unpriced drives; each tier's row names its cards and what they cost; the
    legend says how a done card is costed."""
    from board.tui.flowscreen import DONE_COST_HOW
    from board.tui.usagetext import money

    board = flow_board(tmp_path)
    want = expected()
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(160, 48)) as pilot:
        await loaded(pilot)
        await pilot.press("F")
        screen = app.screen
        assert isinstance(screen, FlowScreen)
        await wait_for(pilot, lambda: screen.query(FlowRow), what="the flow's rows")
        rows = {row.label.strip(): row for row in screen.query(FlowRow)}
        spend = rows["spend per hour"]
        assert spend.query_one(Sparkline).data == pytest.approx(want["spend"])
        total = f"{money(sum(want['spend']))} + {want['unpriced']} unpriced"
        assert spend.figures.startswith(total), spend.figures
        for tier, (cards, cost, _unpriced) in want["done_cost"].items():
            figures = rows[tier].figures
            assert figures.startswith(f"{money(cost)} + "), figures  # both have unpriced
            assert f" for {cards} cards, ≥" in figures, figures
        text = " ".join(" ".join(screen_lines(app)).split())
        assert DONE_COST_HOW in text, text
    board.close()


# (card, attempt, candidate k or None for the race's own drive / a single drive, tier,
# status, ended hours before END, None: still running)
RACES = [
    ("a", 1, None, "default", "failed", 5), ("a", 2, 1, "default", "failed", 5.1),
    ("a", 3, 2, "default", "failed", 5.1),  # a race none of whose candidates was green
    ("a", 4, None, "smart", "passed", 3), ("a", 5, 1, "smart", "passed", 3.1),
    ("a", 6, 2, "smart", "passed", 3.1),  # won on smart (two green, one folded)
    ("b", 1, None, "default", "passed", 2), ("b", 2, 1, "default", "stopped", 2.1),
    ("b", 3, 2, "default", "passed", 2.1),  # won on default by candidate 2
    ("c", 1, None, "default", "failed", 1), ("c", 2, 1, "default", "passed", 1.1),
    ("c", 3, 2, "default", "failed", 1.1),  # green, but its fold climbed: not won
    ("d", 1, None, "default", "passed", 1),  # a single drive: no race
    ("e", 1, None, "smart", "passed", 30), ("e", 2, 1, "smart", "passed", 30.1),  # before
    ("f", 1, None, "smart", "running", None), ("f", 2, 1, "smart", "passed", 0.5),  # runs
]  # fmt: skip


async def test_the_flow_screen_counts_races_won_by_tier_from_the_drive_rows(tmp_path) -> None:
    """A race is won when a candidate of it ended passed and the race's own drive (the row
    before its candidate 1) ended passed; one that ended in the window without that, or a
    single drive, or a race before the window or still running, is not counted as won."""
    from board.core.failures import stamp
    from board.tui.flowscreen import RACES_WON_HOW

    from tests.support.boards import make_board
    from tests.support.tui import TWO_TIERS, add

    board = make_board(tmp_path, config_overrides=TWO_TIERS)
    store = board.store
    ids = {name: add(store, f"card {name}", "working") for name in "abcdef"}
    for name, attempt, k, tier, status, hours_ago in RACES:
        card = ids[name]
        row = store.start_drive(card, tier, attempt, f"logs/{card}-{attempt}.log", 1, candidate=k)
        begun = END - timedelta(hours=(hours_ago or 0) + 0.5)
        store.update_drive(row.id, started_at=stamp(begun))
        if hours_ago is not None:
            ended = stamp(END - timedelta(hours=hours_ago))
            store.update_drive(row.id, status=status, ended_at=ended, result=status)
    flow = read_flow(store, END, max_concurrent=3)
    assert (flow.races, flow.races_won) == (4, {"default": 1, "smart": 1})
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(100, 60)) as pilot:
        await loaded(pilot)
        await pilot.press("F")
        screen = app.screen
        assert isinstance(screen, FlowScreen)
        await wait_for(pilot, lambda: screen.query(FlowRow), what="the flow's rows")
        lines = screen_lines(app)
        text = "\n".join(lines)
        at = next((i for i, ln in enumerate(lines) if RACES_WON_HOW in ln), None)
        assert at is not None, text
        rows = [" ".join(ln.split()) for ln in lines[at + 1 : at + 4]]
        assert rows == ["default 1 won", "smart 1 won", "all tiers 2 of 4 races won"], text
    board.close()

"""The flow screen's figures (`F`): a fixed day written into the real store, through the
store's own verbs at each moment, and its figures worked out independently in
tests/support/flow.py (a sample every minute of the day's plan, not of the store). The
core's reading and the screen's pictures and words must both say the same."""

from __future__ import annotations

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

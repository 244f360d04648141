"""The board's filter (`/`): by title, id, label and block class, enter keeps it, esc
clears it, and a key typed into it is text, not a command."""

from __future__ import annotations

from board.tui.widgets import LaneView
from textual.widgets import Input

from tests.support.tui import ids, lane, loaded, make_app, run_pilot


async def test_slash_filters_by_title_id_label_and_class(board) -> None:
    app = make_app(board)
    async with run_pilot(app) as pilot:
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


async def test_q_typed_in_the_filter_is_text_not_quit(board) -> None:
    app = make_app(board)
    async with run_pilot(app) as pilot:
        await loaded(pilot)
        await pilot.press("slash", "q")
        assert app.is_running and app.query_one("#filter", Input).value == "q"

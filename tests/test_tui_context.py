"""Context: the palette offers only the verbs the selected card's state allows; `?` speaks
the board's words (Textual's own keys described the same way, or left out); `g`/`G` work
on the card screen; a log search says which match of how many (`3/17`)."""

from __future__ import annotations

import pytest
from board.tui.board import BoardScreen
from board.tui.dialogs import HelpScreen, ReasonDialog
from textual.command import CommandPalette
from textual.containers import VerticalScroll
from textual.widgets import Input, Static

from tests.support.logs import LogsApp, build_board, settled, view_of
from tests.support.tui import goto, loaded, make_app, run_pilot, screen_lines, settle
from tests.support.waiting import wait_for


@pytest.mark.parametrize(
    ("lane", "card", "offered", "not_offered"),
    [
        (
            "ready",
            "c-1",
            ("hold", "cancel", "done", "edit"),
            ("ready", "unblock", "stop", "approve"),
        ),
        ("working", "c-3", ("stop", "hold", "requeue"), ("ready", "approve", "unblock", "edit")),
        ("review", "c-6", ("approve", "requeue"), ("stop", "ready", "unblock")),
        ("done", "c-7", (), ("cancel", "done", "hold", "requeue", "stop", "approve")),
    ],
)
async def test_the_palette_offers_only_the_verbs_the_cards_state_allows(
    board, lane, card, offered, not_offered
) -> None:
    app = make_app(board)
    async with run_pilot(app, size=(120, 40)) as pilot:
        await loaded(pilot)
        await goto(pilot, lane, card)
        await pilot.press("colon")
        await settle(pilot)
        assert isinstance(app.screen, CommandPalette)
        text = "\n".join(screen_lines(app))
        for verb in offered:
            assert f"{verb} {card}" in text, f"the palette does not offer {verb} on {card}"
        for verb in not_offered:
            assert f"{verb} {card}" not in text, f"the palette offers {verb} on a {lane} card"


async def test_help_speaks_the_boards_words_with_no_textual_default_in_its_own(board) -> None:
    app = make_app(board)
    async with run_pilot(app, size=(160, 60)) as pilot:
        await loaded(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = "\n".join(screen_lines(app))
        assert "Quit the app and return to the command prompt" not in text, text
        assert "Copy selected text" not in text
        assert "leave board tui, from anywhere" in text
        assert "screen.copy_text" not in text, "an id [tui.keys] would refuse is offered"
        for ident in (
            "card.new",
            "card.edit",
            "card.edit_spec",
            "card.shell",
            "card.diff",
            "card.deps",
        ):
            assert ident in text, f"the help does not list {ident}"


async def test_g_and_G_move_to_the_top_and_the_end_of_the_card(board) -> None:
    for i in range(40):
        board.store.add_comment("c-2", f"comment {i}", "alice")
    app = make_app(board)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-2")
        await pilot.press("enter")
        await wait_for(pilot, lambda: getattr(app.screen, "detail", None), what="the card")
        await pilot.pause()
        scroll = app.screen.query_one("#card-scroll", VerticalScroll)
        await pilot.press("G")
        await pilot.pause()
        assert scroll.scroll_y == scroll.max_scroll_y > 0, "G did not go to the end"
        await pilot.press("g")
        await pilot.pause()
        assert scroll.scroll_y == 0, "g did not go to the top"


async def test_a_log_search_says_which_match_of_how_many(tmp_path) -> None:
    cfg, store = build_board(tmp_path)
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=(100, 30)) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        await pilot.press("g", "slash")
        app.screen.query_one(Input).value = "step 1"  # step 1, step 10 … step 19
        await pilot.press("enter")
        status = app.screen.query_one("#log-status", Static)
        await wait_for(pilot, lambda: "1/11" in str(status.render()), what="1/11")
        await pilot.press("n")
        await wait_for(pilot, lambda: "2/11" in str(status.render()), what="2/11")
        await pilot.press("N", "N")
        await wait_for(pilot, lambda: "11/11" in str(status.render()), what="wrapped to 11/11")
        assert view.match_lines is not None and len(view.match_lines) == 11
    store.close()


@pytest.mark.parametrize("key", ["ctrl+p", "colon"])
async def test_palette_lists_the_verbs_for_the_current_card(board, key) -> None:
    app = make_app(board)
    async with run_pilot(app, size=(120, 40)) as pilot:
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
    async with run_pilot(app, size=(120, 40)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-9")
        await pilot.press("colon", *"unblock c-9", "enter")
        await settle(pilot)
        assert board.store.get("c-9").blocked is None, "the palette's unblock did nothing"


async def test_question_mark_shows_help_generated_from_the_bindings(board) -> None:
    app = make_app(board)
    async with run_pilot(app, size=(160, 48)) as pilot:
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

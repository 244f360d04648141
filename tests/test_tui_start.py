"""What the board's start does once: the stylesheet parsed once in the chosen theme,
the board styled once, the other screens' rules parsed alone as each first opens,
and the footer joined after the first paint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from board.tui.board import BoardScreen
from board.tui.card import CardScreen
from board.tui.dialogs import HelpScreen
from board.tui.widgets import LaneView

from tests.support.tui import count_css, loaded, make_app, run_pilot, seeded_board, settle
from tests.support.waiting import wait_for


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
    async with run_pilot(app) as pilot:
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
    async with run_pilot(app) as pilot:
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
    async with run_pilot(app) as pilot:
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
    async with run_pilot(app, size=(160, 48)) as pilot:
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
    async with run_pilot(app, size=(120, 30)) as pilot:
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
    async with run_pilot(app, size=(160, 48)) as pilot:
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
    async with run_pilot(app, size=(80, 8)) as pilot:
        screen = await loaded(pilot)
        assert not screen.painted(), "the board drew a row: the test needs a shorter screen"
        await wait_for(pilot, lambda: app.screen.query(Footer), what="the footer")

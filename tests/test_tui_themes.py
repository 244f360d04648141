"""Themes: T cycles the shipped ones, --theme and user themes (a broken one reported,
not fatal), high-contrast in 16 colours, NO_COLOR, the kept TOML readings, and the
lanes and backdrops drawn in each theme's colours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from board.core.cachedir import Folder
from board.core.errors import ConfigError
from board.tui.app import BoardApp
from board.tui.themes import THEMES_CACHE, ThemeSet, load_themes, parse_theme
from board.tui.widgets import LaneView

from tests.support.tui import (
    cli,
    loaded,
    make_app,
    run_pilot,
    screen_lines,
    screen_segments,
    seeded_board,
    settle,
    status,
)


async def test_T_switches_theme_and_every_shipped_theme_renders(board) -> None:
    app = make_app(board)
    async with run_pilot(app) as pilot:
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
    async with run_pilot(app) as pilot:
        await loaded(pilot)
        assert "broken.toml: primary: not a colour" in status(app)
    board.close()


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

    async with run_pilot(app) as pilot:
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
    async with run_pilot(app) as pilot:
        await loaded(pilot)
        assert app.no_color
        for seg in screen_segments(app):
            for colour in (seg.style.color, seg.style.bgcolor) if seg.style else ():
                if colour is not None and colour.triplet is not None:
                    r, g, b = colour.triplet
                    assert r == g == b, f"a colour reached the screen under NO_COLOR: {colour}"


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
    async with run_pilot(app, size=size) as pilot:
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

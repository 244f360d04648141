"""The parsed stylesheets kept between starts (tui/csscache.py): a second start parses no
CSS and styles and draws the board exactly as a start that parsed it; another theme, a
damaged or foreign file, one others may write, or the cache turned off, all parse as
before and change nothing else."""

from __future__ import annotations

import os
import pickle
import stat
import time
from pathlib import Path
from typing import Any

import pytest
import textual.css.stylesheet as stylesheet_module
from board.core import cachedir
from board.tui import csscache

from tests.support.tui import (
    count_css,
    loaded,
    make_app,
    screen_segments,
    seeded_board,
    settle,
)


@pytest.fixture
def board(tmp_path):
    b = seeded_board(tmp_path)
    yield b
    b.close()


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The CSS sources Textual parses (where each was read from), counted at its parser."""
    return count_css(monkeypatch).parsed


def plain(rules: dict[str, Any]) -> list[tuple[str, str]]:
    """A styles map as text (a layout object compares by identity, its repr by name)."""
    return sorted((name, repr(value)) for name, value in rules.items())


class Start:
    """One start of the board: the stylesheet's rules, what the screen draws and each
    widget's computed styles at the first paint (`seen`), and the CSS sources parsed by
    then (`before`) and after, while `keys` were pressed (`after`)."""

    def __init__(self, seen: tuple[Any, ...], before: list[str], after: list[str]) -> None:
        self.seen, self.before, self.after = seen, before, after


async def start(
    board: Any, parses: list[str], theme: str | None = None, keys: tuple[str, ...] = ()
) -> Start:
    parses.clear()
    app = make_app(board, theme=theme)
    at_paint: list[int] = []
    app.board_painted = lambda: at_paint.append(len(parses))  # type: ignore[method-assign]
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await loaded(pilot)
        rules = [
            (
                rule.selectors,
                rule.is_default_rules,
                rule.tie_breaker,
                sorted(rule.selector_names),
                sorted(rule.pseudo_classes),
                plain(rule.styles.get_rules()),
                sorted(rule.styles.important),
            )
            for rule in app.stylesheet.rules
        ]
        styles = {
            repr(node): plain(node.styles.get_rules())
            for node in screen.walk_children(with_self=True)
        }
        seen = (rules, screen_segments(app), styles)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
    [paint] = at_paint
    return Start(seen, parses[:paint], parses[paint:])


def kept_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("css-*.pickle")) if folder.is_dir() else []


def board_css(parsed: list[str]) -> bool:
    return any("board.tcss" in where for where in parsed)


# the flow, the help, a card, the palette, the stranded browser
SCREENS = (
    "F", "escape", "question_mark", "escape", "enter", "escape", "colon", "escape", "s", "escape"
)  # fmt: skip


async def test_a_second_start_parses_no_css_and_draws_the_same(
    board, parses, tmp_path, monkeypatch
):
    folder = tmp_path / "cache"
    monkeypatch.setenv("BOARD_CACHE_DIR", str(folder))
    first = await start(board, parses, keys=SCREENS)
    assert board_css(first.before), "the first start parsed nothing"
    assert any("screens.tcss" in where for where in first.after), "no screen opened"
    kept = kept_files(folder)
    assert [p.name.rsplit("-", 1)[1] for p in kept] == ["later.pickle", "start.pickle"]
    for path in kept:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, f"{path.name} is readable by others"
    second = await start(board, parses, keys=SCREENS)
    assert second.before == [], f"a start with the stylesheets kept parsed: {second.before}"
    assert second.seen == first.seen, "the board is styled or drawn otherwise with kept rules"
    assert second.after == [], f"the footer or the screens parsed again: {second.after}"
    # and both are what a start with no cache at all parses and draws
    monkeypatch.setenv("BOARD_CACHE_DIR", "")
    plain_start = await start(board, parses)
    assert board_css(plain_start.before) and plain_start.seen == first.seen


async def test_the_start_does_not_load_the_later_screens_rules(
    board, parses, tmp_path, monkeypatch
):
    folder = tmp_path / "cache"
    monkeypatch.setenv("BOARD_CACHE_DIR", str(folder))
    await start(board, parses, keys=SCREENS)
    app = make_app(board)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(pilot)
        assert app.kept_css.kept["later"] is None, "the start read the later screens' file"
        await pilot.press("F")
        await settle(pilot)
        assert app.kept_css.kept["later"], "opening a screen did not read the later file"


async def test_after_a_theme_change_no_kept_rules_are_taken(board, parses, tmp_path, monkeypatch):
    """The kept rules are for the start's theme; once `T` changes it, a screen opened
    parses its rules in the new theme's colours rather than take the old theme's."""
    from board.tui.dialogs import HelpScreen
    from textual.color import Color

    monkeypatch.setenv("BOARD_CACHE_DIR", str(tmp_path / "cache"))
    await start(board, parses, keys=SCREENS)  # the dark theme's later file is kept
    app = make_app(board)
    async with app.run_test(size=(120, 30)) as pilot:
        await loaded(pilot)
        await pilot.press("T")
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen) and app.theme == "light"
        border = app.screen.query_one("#help").styles.border_top
        assert border == ("thick", Color.parse(app.current_theme.primary)), "dark's colours"


async def test_another_theme_parses_and_keeps_its_own(board, parses, tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("BOARD_CACHE_DIR", str(folder))
    await start(board, parses, theme="dark")
    light = await start(board, parses, theme="light")
    assert board_css(light.before), "light used dark's rules"
    assert len([p for p in kept_files(folder) if "start" in p.name]) == 2, "one file a theme"
    again = await start(board, parses, theme="light")
    assert again.before == [] and again.seen == light.seen


@pytest.mark.parametrize(
    "damage",
    [
        "garbage",
        "truncated",
        "foreign pickle",
        "kept for other variables",
        "others may write it",
        "a symlink",
        "a fifo",  # opened, it would wait for a writer: the start would hang
    ],
)
async def test_a_kept_file_that_cannot_be_trusted_is_parsed_over(
    board, parses, tmp_path, monkeypatch, damage
) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv("BOARD_CACHE_DIR", str(folder))
    first = await start(board, parses)
    [kept] = [p for p in kept_files(folder) if "start" in p.name]
    good = kept.read_bytes()
    if damage == "garbage":
        kept.write_bytes(b"\x80\x05not a pickle at all")
    elif damage == "truncated":
        kept.write_bytes(good[: len(good) // 2])
    elif damage == "foreign pickle":
        kept.write_bytes(pickle.dumps(("someone else's", [("key", [1, 2])])))
    elif damage == "kept for other variables":  # the rules are whole, the header is not
        header, entries = pickle.loads(good)
        header = (*header[:-1], (("background", "#ff0000"),))
        kept.write_bytes(pickle.dumps((header, entries)))
    elif damage == "others may write it":
        kept.chmod(0o666)
    elif damage == "a fifo":
        kept.unlink()
        os.mkfifo(kept, 0o600)
    else:
        elsewhere = tmp_path / "elsewhere.pickle"
        elsewhere.write_bytes(good)
        elsewhere.chmod(0o600)
        kept.unlink()
        kept.symlink_to(elsewhere)
    again = await start(board, parses)
    assert board_css(again.before), f"{damage}: the file was trusted"
    assert again.seen == first.seen, f"{damage}: the board starts otherwise"


async def test_turned_off_or_unwritable_the_board_starts_as_before(
    board, parses, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("BOARD_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    plain_start = await start(board, parses, keys=SCREENS)
    assert not (tmp_path / "xdg").exists(), "turned off, it still wrote a cache"
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("BOARD_CACHE_DIR", str(blocked / "cache"))
    again = await start(board, parses, keys=SCREENS)
    assert board_css(again.before) and again.seen == plain_start.seen


def test_the_cache_directory_follows_the_environment(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("BOARD_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cachedir.cache_dir() == str(tmp_path / "xdg" / "board")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cachedir.cache_dir() == os.path.join(str(tmp_path / "home"), ".cache", "board")
    monkeypatch.setenv("BOARD_CACHE_DIR", "")
    assert cachedir.cache_dir() is None
    # a relative place would be wherever board tui runs (a clone, perhaps): not used
    monkeypatch.setenv("BOARD_CACHE_DIR", "cache")
    assert cachedir.cache_dir() is None
    monkeypatch.delenv("BOARD_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/xdg")
    assert cachedir.cache_dir() == os.path.join(str(tmp_path / "home"), ".cache", "board")


async def test_a_cache_directory_others_may_write_is_neither_read_nor_written(
    board, parses, tmp_path, monkeypatch
):
    folder = tmp_path / "cache"
    monkeypatch.setenv("BOARD_CACHE_DIR", str(folder))
    first = await start(board, parses)
    [kept] = [p for p in kept_files(folder) if "start" in p.name]
    folder.chmod(0o777)
    again = await start(board, parses)
    assert board_css(again.before), "read from a directory anyone may write"
    assert again.seen == first.seen
    kept.unlink()
    await start(board, parses)
    assert kept_files(folder) == [], "written into a directory anyone may write"


def test_the_cache_directory_is_made_only_under_the_users_own(monkeypatch, tmp_path) -> None:
    """Root running with another user's HOME (sudo) must not leave root's directories in
    it; the user's own runs could then never write their cache."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    if os.getuid() == 0:
        os.chown(theirs, 65534, 65534)
        target = theirs / ".cache" / "board"
    else:
        target = Path("/board-test-not-made") / "board"  # under /, root's
    cachedir.make_dir(str(target))
    assert not target.exists() and not target.parent.exists()
    mine = tmp_path / "mine" / ".cache" / "board"
    cachedir.make_dir(str(mine))
    assert mine.is_dir() and stat.S_IMODE(mine.stat().st_mode) == 0o700


def test_tidying_removes_a_crashs_leftovers_and_old_files(tmp_path) -> None:
    now = time.time()
    for i in range(csscache.KEEP_FILES + 4):
        path = tmp_path / f"css-{i:08x}-start.pickle"
        path.write_bytes(b"x")
        os.utime(path, (now - 1000 * i, now - 1000 * i))
    old_tmp = tmp_path / "css-1-start.pickle.1.ab.tmp"
    new_tmp = tmp_path / "css-2-start.pickle.2.cd.tmp"
    for path, age in ((old_tmp, csscache.STALE_TMP_S + 60), (new_tmp, 0)):
        path.write_bytes(b"x")
        os.utime(path, (now - age, now - age))
    other = tmp_path / "not-ours.pickle"
    other.write_bytes(b"x")
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        csscache._tidy(fd)
    finally:
        os.close(fd)
    left = sorted(p.name for p in tmp_path.iterdir())
    newest = [f"css-{i:08x}-start.pickle" for i in range(csscache.KEEP_FILES)]
    assert left == sorted([*newest, new_tmp.name, other.name])


async def test_a_rule_that_cannot_be_kept_costs_only_the_next_parse(
    board, parses, tmp_path, monkeypatch
):
    import pickle as pickle_module

    def refuse(*args: Any, **kwargs: Any) -> bytes:
        raise pickle_module.PicklingError("cannot pickle that")

    folder = tmp_path / "cache"
    monkeypatch.setenv("BOARD_CACHE_DIR", str(folder))
    monkeypatch.setattr(pickle_module, "dumps", refuse)
    first = await start(board, parses, keys=SCREENS)  # at the first paint, a screen, exit
    assert kept_files(folder) == [] and board_css(first.before)


def test_an_edited_source_is_parsed_not_taken_from_the_kept_file(monkeypatch, tmp_path) -> None:
    """The kept rules are keyed by the source's whole text: one changed character and
    Textual parses it (here on Textual's own Stylesheet, without an app)."""
    from textual.css.stylesheet import Stylesheet

    monkeypatch.setenv("BOARD_CACHE_DIR", str(tmp_path / "cache"))
    where = ("/somewhere/board.tcss", "")

    def rules_of(css: str) -> tuple[list[Any], bool]:
        sheet = Stylesheet(variables={"accent": "#0000ff"})
        kept = csscache.KeptCss(sheet, {"accent": "#0000ff"})
        kept.prime()
        sheet.add_source(css, read_from=where)
        parsed: list[str] = []
        real = stylesheet_module.parse
        monkeypatch.setattr(
            stylesheet_module, "parse", lambda *a, **k: parsed.append("x") or real(*a, **k)
        )
        rules = [plain(rule.styles.get_rules()) for rule in sheet.rules]
        monkeypatch.setattr(stylesheet_module, "parse", real)
        kept.keep_start()
        return rules, bool(parsed)

    red, parsed = rules_of("Screen { background: red; }")
    assert parsed
    assert rules_of("Screen { background: red; }") == (red, False), "kept, yet parsed again"
    blue, parsed = rules_of("Screen { background: $accent; }")
    assert parsed and blue != red, "an edited source took the rules kept for the old text"
    # and the old text's rules are not written back beside the new text's
    [kept_file] = kept_files(tmp_path / "cache")
    header, entries = pickle.loads(kept_file.read_bytes())
    assert [key[0] for key, _ in entries] == ["Screen { background: $accent; }"]

"""The stranded-work browser under Pilot, against real git, real saves and the real store.

Each key is one call into a core verb; these tests check what the verb did to the
repository (which refs moved, and only those), what the operator was told (one line,
never a traceback), and that the list follows.
"""

from __future__ import annotations

import asyncio
import random
import threading
from pathlib import Path
from typing import Any

import pytest
from board.core import config, proc
from board.core.git import saves, stranded
from board.core.git.gitutil import git as core_git
from board.tui.app import binding_classes
from board.tui.card import CardScreen
from board.tui.dialogs import ConfirmDialog
from board.tui.stranded.browser import StrandedScreen
from board.tui.stranded.buffer import KEYS_FIRST_S, DiffBuffer
from board.tui.stranded.diff_screen import DiffScreen
from board.tui.stranded.strandrows import _card_key, age_text
from board.tui.stranded.target import TargetDialog
from textual.binding import Binding
from textual.widgets import Input, Static

from tests.support.operator import gate
from tests.support.stranded_tui import (
    ESCAPES,
    MARKUP_TITLE,
    Fixture,
    build,
    diff_loaded,
    make_app,
    open_browser,
    open_diff,
    save,
    screen_lines,
    select,
    status,
    stranded_screen,
    wait_loaded_again,
)
from tests.support.tui import run_pilot
from tests.support.waiting import wait_for

SIZE = (120, 32)


@pytest.fixture
def fx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    fixture = build(tmp_path, monkeypatch)
    yield fixture
    fixture.close()


def names(screen: StrandedScreen) -> list[str]:
    return [row.name for row in screen.table.items]


def result_text(screen: StrandedScreen) -> str:
    found = screen.query("#stranded-result")  # mounted by the first verb that reports
    if not found:
        return ""
    panel = found.first(Static)
    return str(panel.render()) if panel.display else ""


def terminal_output(app) -> str:
    """What the app would write to the terminal for a full repaint (styles included)."""
    return app.screen._compositor.render_full_update().render_segments(app.console)


def reconfigure(fx: Fixture, **sections) -> None:
    config.write_default(fx.repo.root, sections)
    fx.repo.board = config.load(fx.repo.root)


async def answer_target(pilot, target: str) -> None:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, TargetDialog), what="the question")
    field = pilot.app.screen.query_one("#target", Input)
    field.value = target
    await pilot.press("enter")


# --- the list ------------------------------------------------------------------------------


async def test_every_save_and_husk_is_listed_with_its_card_title_lane_and_stats(fx) -> None:
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        rows = {row.name: row for row in screen.table.items}
        expected = set(fx.saves.values()) | {fx.husk.name}
        assert set(rows) == expected, f"a save or the husk is missing from the browser: {rows}"
        dirty = rows[fx.saves["dirty"]]
        listed = {b.branch: b for b in stranded.list_stranded(fx.cfg)}[fx.saves["dirty"]]
        assert (dirty.files, dirty.insertions, dirty.deletions) == (
            listed.files,
            listed.insertions,
            listed.deletions,
        ), "the browser's diffstat differs from the recorded one"
        assert (dirty.card_id, dirty.lane) == ("c-1", "ready")
        assert dirty.title == "Parse board.toml with line numbers"
        gone = rows[fx.saves["gone"]]
        assert (gone.card_id, gone.lane, gone.card) == ("c-7", "gone", None), (
            "a save whose card is not on the board was not marked as gone"
        )
        assert rows[fx.husk.name].is_husk
        assert names(screen)[-1] == fx.husk.name, "husks are not listed after the branches"
        text = "\n".join(screen_lines(app))
        assert "4 branches · 1 husk" in text
        assert "moved aside" in text, "the husk row does not say what it is"


async def test_failed_attempts_are_folded_under_their_card_and_enter_opens_the_fold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kept so nothing is thrown away, but out of the way: one closed row per card."""
    fx = build(tmp_path, monkeypatch, attempts=True)
    attempts = [fx.saves[k] for k in ("c-1 attempt 1", "c-1 attempt 2", "c-2 attempt 1")]
    before = fx.refs()
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        shown = names(screen)
        assert not set(attempts) & set(shown), f"the attempts are not folded: {shown}"
        folds = {r.card_id: r for r in screen.table.items if r.is_fold}
        assert set(folds) == {"c-1", "c-2"}, f"not one fold per card: {shown}"
        assert sorted(a.name for a in folds["c-1"].fold) == sorted(attempts[:2])
        assert set(fx.saves.values()) - set(attempts) <= set(shown), "a save went missing"
        text = "\n".join(screen_lines(app))
        assert "7 branches (3 failed attempts) · 1 husk" in text, text
        assert "▸ 2 failed attempts" in text and "▸ 1 failed attempt " in text

        await select(pilot, screen, "attempts of c-2")
        await pilot.press("d")  # one save folded: said as one
        await pilot.pause()
        assert "1 failed attempt of c-2 is folded here; enter opens it" in status(app)[0]
        await select(pilot, screen, "attempts of c-1")
        await pilot.press("d")  # a fold is not a branch: refused in one line, nothing asked
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmDialog) and status(app)[1], status(app)
        assert "2 failed attempts of c-1 are folded here; enter opens them" in status(app)[0]
        await pilot.press("enter")
        await pilot.pause()
        shown = names(screen)
        at = shown.index("attempts of c-1")
        assert sorted(shown[at + 1 : at + 3]) == sorted(attempts[:2]), (
            f"enter did not open the fold with its attempts below it: {shown}"
        )
        assert attempts[2] not in shown, "opening one card's fold opened another's"
        assert screen.current_row().is_fold, "the cursor left the fold"
        assert "▾ 2 failed attempts" in "\n".join(screen_lines(app))
        await select(pilot, screen, attempts[0])
        assert "a failed attempt" in str(screen.query_one("#stranded-detail", Static).render())
        await pilot.press("enter")  # an attempt is a branch like any other: its diff
        diff = await diff_loaded(pilot)
        assert any("try 1" in line for line in screen_lines(app)), "not the attempt's diff"
        assert isinstance(diff, DiffScreen)
        await pilot.press("escape")
        await pilot.pause()
        await select(pilot, screen, "attempts of c-1")
        await pilot.press("enter")
        await pilot.pause()
        assert not set(attempts) & set(names(screen)), "enter did not close the fold"
    assert fx.refs() == before, "looking at attempts changed a ref"
    fx.close()


async def test_candidates_not_chosen_are_folded_under_their_card_like_attempts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A race's other candidates (kind `candidate`, issue 42) are kept, folded under the
    card, closed; enter opens the fold, and each candidate is a branch with its own diff."""
    fx = build(tmp_path, monkeypatch, candidates=True)
    raced = [fx.saves["c-1 candidate 2"], fx.saves["c-1 candidate 3"]]
    before = fx.refs()
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        shown = names(screen)
        assert not set(raced) & set(shown), f"the candidates are not folded: {shown}"
        folds = {r.card_id: r for r in screen.table.items if r.is_fold}
        assert list(folds) == ["c-1"], f"not one fold for c-1: {shown}"
        assert folds["c-1"].name == "candidates of c-1"
        assert sorted(a.name for a in folds["c-1"].fold) == sorted(raced)
        assert set(fx.saves.values()) - set(raced) <= set(shown), "a save went missing"
        text = "\n".join(screen_lines(app))
        assert "6 branches (2 candidates) · 1 husk" in text, text
        assert "▸ 2 candidates" in text, text

        await select(pilot, screen, "candidates of c-1")
        await pilot.press("enter")
        await pilot.pause()
        shown = names(screen)
        at = shown.index("candidates of c-1")
        assert sorted(shown[at + 1 : at + 3]) == sorted(raced), shown
        text = "\n".join(screen_lines(app))
        assert "▾ 2 candidates" in text and text.count("↳ candidate ·") == 2, text
        await select(pilot, screen, raced[1])
        detail = str(screen.query_one("#stranded-detail", Static).render())
        assert "a candidate not chosen" in detail, detail
        await pilot.press("enter")
        await diff_loaded(pilot)
        assert any("candidate 3, line 3" in line for line in screen_lines(app)), (
            "not the candidate's diff"
        )
        await pilot.press("escape")
        await pilot.pause()
        await select(pilot, screen, "candidates of c-1")
        await pilot.press("enter")
        await pilot.pause()
        assert not set(raced) & set(names(screen)), "enter did not close the fold"
    assert fx.refs() == before, "looking at candidates changed a ref"
    fx.close()


async def test_a_cards_attempts_and_candidates_share_one_fold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fx = build(tmp_path, monkeypatch, attempts=True, candidates=True)
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        folds = {r.card_id: r for r in screen.table.items if r.is_fold}
        assert sorted(folds) == ["c-1", "c-2"], names(screen)
        assert folds["c-1"].name == "attempts and candidates of c-1"
        assert len(folds["c-1"].fold) == 4 and folds["c-2"].name == "attempts of c-2"
        text = "\n".join(screen_lines(app))
        assert "9 branches (3 failed attempts, 2 candidates) · 1 husk" in text, text
        assert "▸ 2 failed attempts, 2 candidates" in text, text
    fx.close()


def test_the_card_screen_marks_its_failed_attempts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from board.tui.card import card_stranded

    fx = build(tmp_path, monkeypatch, husk=False, attempts=True)
    lines = card_stranded(fx.cfg, "c-1")
    marked = {line.split()[0] for line in lines if line.endswith("(a failed attempt)")}
    assert marked == {fx.saves["c-1 attempt 1"], fx.saves["c-1 attempt 2"]}, lines
    fx.close()


def test_the_card_screen_marks_its_candidates_not_chosen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from board.tui.card import card_stranded

    fx = build(tmp_path, monkeypatch, husk=False, candidates=True)
    lines = card_stranded(fx.cfg, "c-1")
    marked = {line.split()[0] for line in lines if line.endswith("(a candidate not chosen)")}
    assert marked == {fx.saves["c-1 candidate 2"], fx.saves["c-1 candidate 3"]}, lines
    fx.close()


async def test_the_first_paint_is_the_head_of_the_sorted_list_with_real_stats(
    fx, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the newest rows are read before the first paint; they must be the rows the whole
    list starts with (order, card, stats), not placeholders, and the rest must follow."""
    from board.tui.stranded import browser as tui_stranded

    hold = threading.Event()
    real_load = tui_stranded.load_rows

    def held_load(*args, **kw):  # the whole list waits until the first paint was checked
        hold.wait(10)
        return real_load(*args, **kw)

    monkeypatch.setattr(tui_stranded, "load_rows", held_load)
    monkeypatch.setattr(StrandedScreen, "_head_count", lambda self: 2)
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = stranded_screen(fx)
        await pilot.app.push_screen(screen)
        await wait_for(pilot, lambda: screen.table.painted_items > 0, what="the first rows")
        first = [
            (r.name, r.card_id, r.files, r.insertions, r.deletions) for r in screen.table.items
        ]
        assert not screen.loaded, "the whole list was read before the first paint"
        assert "the newest 2 branches" in "\n".join(screen_lines(app))
        hold.set()
        await wait_for(pilot, lambda: screen.loaded, what="the whole list")
        whole = [
            (r.name, r.card_id, r.files, r.insertions, r.deletions) for r in screen.table.items
        ]
        assert len(whole) == 5, f"the rest of the list did not fill in: {whole}"
        assert first[:2] == whole[:2], (
            f"the first paint was not the head of the list as sorted: {first} vs {whole}"
        )
        assert first[2:] == whole[-1:], f"the husk is not listed after the first rows: {first}"
        listed = {b.branch: b for b in stranded.list_stranded(fx.cfg)}
        for name, _card, files, ins, dels in first[:2]:
            b = listed[name]
            assert (files, ins, dels) == (b.files, b.insertions, b.deletions), (
                f"the first paint showed other stats for {name} than the recorded ones"
            )


async def test_titles_and_names_are_shown_literally_never_as_markup_or_escapes(fx) -> None:
    app = make_app(fx)
    async with run_pilot(app, size=(160, 48)) as pilot:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, fx.saves["escapes"])
        text = "\n".join(screen_lines(app))
        out = terminal_output(app)
        assert "[bold red]x[/] [@click=app.quit]q[/] fix the login ␛[2J" in text, (
            "the card title was parsed as markup or its escape was not shown"
        )
        assert "\x1b[2J" not in out, "an escape sequence from a card title reached the terminal"
        assert MARKUP_TITLE.startswith("[bold red]")


async def test_ages_are_relative_to_the_injected_clock() -> None:
    assert [age_text(s) for s in (5, 65, 3 * 3600 + 5, 2 * 86400, 400 * 86400, None)] == [
        "5s",
        "1m",
        "3h",
        "2d",
        "1y",
        "?",
    ]


async def test_the_sort_key_cycles_columns_and_slash_filters(fx) -> None:
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        stamps = [r.stamp for r in screen.table.items if not r.is_husk]
        assert stamps == sorted(stamps, reverse=True), "the list does not open newest first"
        await pilot.press("s")
        assert screen.table.sort_by == "card"
        cards = [r.card_id for r in screen.table.items if not r.is_husk]
        assert cards == ["c-1", "c-1", "c-2", "c-7"], f"not sorted by card: {cards}"
        for _ in range(3):
            await pilot.press("s")
        assert screen.table.sort_by == "changes"
        changes = [(r.insertions or 0) + (r.deletions or 0) for r in screen.table.items[:-1]]
        assert changes == sorted(changes, reverse=True), f"not by changes: {changes}"
        await pilot.press("r")
        changes = [(r.insertions or 0) + (r.deletions or 0) for r in screen.table.items[:-1]]
        assert changes == sorted(changes), "r did not flip the order"
        await pilot.press("slash")
        await pilot.press(*"gone")
        assert names(screen) == [fx.saves["gone"]], f"the filter did not narrow: {names(screen)}"
        await pilot.press("enter")
        assert screen.table.has_focus, "enter in the filter did not return to the list"
        await pilot.press("escape")
        assert len(names(screen)) == 5, "esc did not clear the filter"
        await pilot.press("escape")
        assert not isinstance(app.screen, StrandedScreen), "esc did not go back"


async def test_s_on_the_board_opens_the_browser(fx) -> None:
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, StrandedScreen), what="the browser")
        await wait_for(pilot, lambda: app.screen.loaded, what="the list")


# --- enter: the diff -----------------------------------------------------------------------


async def test_enter_shows_the_files_then_the_hunks_literally(fx) -> None:
    app = make_app(fx)
    async with run_pilot(app, size=(160, 48)) as pilot:
        screen, diff = await open_diff(pilot, fx, fx.saves["escapes"])
        files = [(f.path, f.added, f.deleted) for f in diff.buffer.files]
        assert files == [("login.py", 1, 0)], f"the file list is wrong: {files}"
        shown = "\n".join(diff.view.text_lines())
        assert "diff --git a/login.py b/login.py" in shown, "the hunks are not shown"
        assert "+print('␛[2J␛]52;c;cm0gLXJmIH4K^G [red]boom[/red]')" in shown, (
            "the diff's escapes were not made visible, or its markup was parsed"
        )
        out = terminal_output(app)
        for raw in ("\x1b[2J", "\x1b]52;", "\x07"):
            assert raw not in out, f"{raw!r} from a diff reached the terminal"
        assert ESCAPES.startswith("print(")
        await pilot.press("escape")
        assert app.screen is screen, "esc did not return to the list"


async def test_the_diff_file_keys_jump_between_files(fx) -> None:
    app = make_app(fx)
    async with run_pilot(app, size=(80, 12)) as pilot:  # short: the diff scrolls
        screen, diff = await open_diff(pilot, fx, fx.saves["dirty"])
        paths = [f.path for f in diff.buffer.files]
        assert paths == ["app.py", "config.py"], paths
        await pilot.press("right_square_bracket")
        assert diff.view.top_line == diff.buffer.files[1].line, "] did not go to the next file"
        await pilot.press("left_square_bracket")
        assert diff.view.top_line == diff.buffer.files[0].line, "[ did not go back a file"
        await pilot.press("tab", "down", "enter")
        assert diff.view.top_line == diff.buffer.files[1].line, "enter on a file did not open it"


def big_branch(fx) -> str:
    """A stranded branch adding one 100,000-line file (a diff git takes a while to write)."""
    big = "stranded/feat-c-1/20260101T120000.000Z"
    body = b"".join(b"generated line %d with some words\n" % i for i in range(100_000))
    base = fx.repo.git("rev-parse", "main")
    head = b"commit refs/heads/%s\ncommitter t <t@t> 1767225600 +0000\ndata 3\nbig\n" % (
        big.encode()
    )
    head += b"from %s\nM 100644 inline big.txt\ndata %d\n" % (base.encode(), len(body))
    res = proc.run(("git", "fast-import", "--quiet"), cwd=fx.cfg.root, input_bytes=head + body)
    assert res.returncode == 0, res.stderr
    return big


async def test_leaving_the_diff_mid_load_kills_git(fx, monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator leaves a huge diff while git still writes it: git must not run on."""
    big = big_branch(fx)
    gate_open = threading.Event()
    git_wrote = threading.Event()
    real_feed = DiffBuffer.feed

    def slow_feed(self: DiffBuffer, data: bytes) -> None:
        real_feed(self, data)
        git_wrote.set()
        gate_open.wait(10)  # the reader stalls, the pipe fills, git blocks mid-write

    monkeypatch.setattr(DiffBuffer, "feed", slow_feed)
    app = make_app(fx)
    try:
        async with run_pilot(app, size=SIZE) as pilot:
            screen = await open_browser(pilot, fx)
            await select(pilot, screen, big)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen), what="the diff")
            diff = app.screen
            # git's own bytes (a preview of the new file may have come first)
            await wait_for(pilot, git_wrote.is_set, what="git's first lines")
            pgid = diff._pgid
            assert pgid and proc.group_alive(pgid) and not diff.buffer.done
            await pilot.press("escape")
            await wait_for(pilot, lambda: not proc.group_alive(pgid), timeout=3, what="git's end")
            assert app.screen is screen, "esc did not return to the list"
    finally:
        gate_open.set()


def test_a_held_buffer_reads_nothing_until_the_keys_stop() -> None:
    """While the operator presses keys, the reader leaves git's bytes in the pipe (git then
    blocks instead of taking a core); they are all read once the keys stop."""
    buffer = DiffBuffer()
    buffer.hold(30)
    reader = threading.Thread(target=buffer.feed, args=(b"diff --git a/x b/x\n",), daemon=True)
    reader.start()
    reader.join(0.3)
    assert reader.is_alive() and buffer.count == 0, "a held buffer took git's bytes"
    buffer.hold(0)  # the keys stopped
    reader.join(5)
    assert not reader.is_alive() and buffer.count == 1 and not buffer.held


async def test_moving_keys_hold_the_diff_s_reading_only_while_git_writes(
    fx, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = big_branch(fx)
    gate_open = threading.Event()
    git_wrote = threading.Event()
    real_feed = DiffBuffer.feed

    def slow_feed(self: DiffBuffer, data: bytes) -> None:
        real_feed(self, data)
        git_wrote.set()
        gate_open.wait(10)  # git is still writing while the keys are pressed

    # The holds are recorded as they are asked for: a hold lasts 0.15 s, and on a loaded
    # machine a key's press can take longer than that, so `held` after the press would
    # say how fast the machine was, not whether the key held the reading.
    holds: list[float] = []
    real_hold = DiffBuffer.hold

    def recorded_hold(self: DiffBuffer, seconds: float = KEYS_FIRST_S) -> None:
        holds.append(seconds)
        real_hold(self, seconds)

    monkeypatch.setattr(DiffBuffer, "feed", slow_feed)
    monkeypatch.setattr(DiffBuffer, "hold", recorded_hold)
    app = make_app(fx)
    try:
        async with run_pilot(app, size=SIZE) as pilot:
            screen = await open_browser(pilot, fx)
            await select(pilot, screen, big)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen), what="the diff")
            diff = app.screen
            await wait_for(pilot, git_wrote.is_set, what="git's first lines")
            await wait_for(pilot, lambda: diff.view.line_count > 30, what="a screenful")
            for key in ("j", "l", "space"):
                holds.clear()
                await pilot.press(key)
                assert holds and min(holds) > 0, f"{key} while git writes did not hold the reading"
            gate_open.set()
            monkeypatch.setattr(DiffBuffer, "feed", real_feed)
            await wait_for(pilot, lambda: diff.buffer.done, timeout=30, what="the diff's end")
            holds.clear()
            await pilot.press("j")
            assert not holds, "a key held a diff already read to its end"
    finally:
        gate_open.set()


def test_the_diff_buffer_indexes_any_chunking_exactly_like_git(fx) -> None:
    args = stranded.diff_args(fx.cfg, fx.saves["dirty"])
    raw = core_git(fx.cfg.root, *args).stdout.encode()
    raw += b"+windows line\r\n"  # a CR must stay (a line-ending change must show)
    raw += b"+" * 5000 + b"\n"  # a line longer than the display cap
    numstat = core_git(fx.cfg.root, *args[:1], "--numstat", *args[3:]).stdout.split("\n")
    expected = {line.split("\t")[2]: line.split("\t")[:2] for line in numstat if line}
    rng = random.Random(7)
    for sizes in ([len(raw)], [1], [3, 50, 7], [rng.randint(1, 200) for _ in range(64)]):
        buffer = DiffBuffer()
        pos = i = 0
        while pos < len(raw):
            step = sizes[i % len(sizes)]
            buffer.feed(raw[pos : pos + step])
            pos += step
            i += 1
        buffer.finish()
        lines = buffer.lines(0, buffer.count)
        want = raw.decode().split("\n")[:-1]
        assert lines == want, f"chunks of {sizes[:3]}: the buffer's lines differ from git's"
        counts = {f.path: [str(f.added), str(f.deleted)] for f in buffer.files}
        counts["config.py"][0] = str(int(counts["config.py"][0]) - 2)  # the two extra lines
        assert lines[-2] == "+windows line\r", "the CR of a CRLF line was dropped"
        assert counts == expected, f"per-file +/- differ from git --numstat: {counts}"


def _files_by_lines(raw: bytes) -> list[tuple[str, int, int, bool, int, int]]:
    """The diff's files read line by line, the plain way: (path, header line, first hunk
    line, binary, +, −), to hold the buffer's block-at-a-time indexing to."""
    files: list[list] = []
    for n, line in enumerate(raw.split(b"\n")[:-1]):
        if line.startswith(b"diff --git "):
            files.append([line.decode().rsplit(" b/", 1)[1], n, -1, False, 0, 0])
        elif not files:
            continue
        elif files[-1][2] < 0:
            if line.startswith(b"@@"):
                files[-1][2] = n
            elif line.startswith(b"Binary files "):
                files[-1][3] = True
        elif line.startswith(b"+"):
            files[-1][4] += 1
        elif line.startswith(b"-"):
            files[-1][5] += 1
    return [tuple(f) for f in files]


def test_the_diff_buffer_finds_files_hunks_and_binaries_only_at_line_starts(
    tmp_path: Path,
) -> None:
    """Lines that look like a header, a hunk or a binary notice inside a file's text are
    text, whatever the chunking; real headers are found wherever a chunk starts or ends."""
    repo = tmp_path / "r"
    repo.mkdir()
    core_git(repo, "init", "-q", "-b", "main")
    (repo / "keep.txt").write_text("one\ntwo\n")
    (repo / "mode.sh").write_text("echo hi\n")
    core_git(repo, "add", "-A")
    core_git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    lookalikes = "diff --git a/x b/x\n@@ -1 +1 @@\nBinary files a/x and b/x differ\n"
    (repo / "keep.txt").write_text("one\n" + lookalikes + "-not a deletion\n")
    (repo / "new.md").write_text(lookalikes * 3 + "@@\n")
    (repo / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (repo / "mode.sh").chmod(0o755)  # a header with no hunk at all
    core_git(repo, "add", "-A")
    raw = core_git(repo, "diff", "--cached", "--no-color", "HEAD").stdout.encode()
    want = _files_by_lines(raw)
    assert {w[0] for w in want} == {"keep.txt", "new.md", "blob.bin", "mode.sh"}
    assert any(w[3] for w in want) and any(w[2] < 0 and not w[3] for w in want)
    rng = random.Random(11)
    for sizes in ([len(raw)], [1], [2, 11, 5], [rng.randint(1, 90) for _ in range(64)]):
        buffer = DiffBuffer()
        pos = i = 0
        while pos < len(raw):
            step = sizes[i % len(sizes)]
            buffer.feed(raw[pos : pos + step])
            pos += step
            i += 1
        buffer.finish()
        got = [(f.path, f.line, f.hunk, f.binary, f.added, f.deleted) for f in buffer.files]
        assert got == want, f"chunks of {sizes[:3]}: {got} != {want}"
        for f in buffer.files:
            assert buffer.in_header(f.line) and (f.hunk < 0 or not buffer.in_header(f.hunk))


# --- p: pick -------------------------------------------------------------------------------


async def test_pick_lands_the_commits_on_the_target_and_only_there(fx) -> None:
    fx.repo.git("branch", "target", "main")
    before = fx.refs()
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, fx.saves["dirty"])
        count = screen.load_count
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, TargetDialog), what="the question")
        field = app.screen.query_one("#target", Input)
        assert field.value == "board/run", "the pick does not default to the run branch"
        await answer_target(pilot, "target")
        await wait_loaded_again(pilot, screen, count)
        line, error = status(app)
        assert not error and line.startswith("picked 2 commits of"), line
        assert "config.py" not in line
        details = result_text(screen)
        assert "target:" in details and "→" in details, f"the new commits are not shown: {details}"
    after = fx.refs()
    moved = {ref for ref in before if before[ref] != after.get(ref)}
    assert moved == {"refs/heads/target"}, f"the pick moved other refs too: {moved}"
    assert fx.repo.show("target", "config.py") == "LINES = 3\nname = 'board'\n"
    assert fx.repo.show("target", "app.py") == "print('hello, board')\nprint('saved')\n"
    assert fx.repo.git("rev-list", "--count", "main..target") == "2"


async def test_a_conflicting_pick_leaves_the_target_unchanged_and_names_the_paths(fx) -> None:
    fx.repo.git("branch", "target", "main")
    tree = fx.cfg.root.parent / "other"
    fx.repo.git("worktree", "add", "-q", str(tree), "target")
    fx.repo.commit(tree, {"app.py": "print('someone else')\n"}, "a rival change")
    fx.repo.git("worktree", "remove", str(tree))
    before = fx.refs()
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, fx.saves["dirty"])
        count = screen.load_count
        await pilot.press("p")
        await answer_target(pilot, "target")
        await wait_loaded_again(pilot, screen, count)
        line, error = status(app)
        assert error, "a conflicting pick was not reported as a refusal"
        assert "conflicts in app.py" in line and "target was left as it was" in line, line
        assert "conflict: app.py" in result_text(screen)
    assert fx.refs() == before, "a conflicting pick changed a ref"


async def test_a_checked_out_run_branch_is_not_offered_and_a_checked_out_target_is_refused(
    fx,
) -> None:
    held = fx.cfg.root.parent / "held"
    fx.repo.git("worktree", "add", "-q", str(held), "board/run")
    before = fx.refs()
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, fx.saves["dirty"])
        count = screen.load_count
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, TargetDialog), what="the question")
        assert app.screen.query_one("#target", Input).value == "", (
            "a run branch checked out elsewhere was offered as the default"
        )
        hint = str(app.screen.query_one("#hint", Static).render())
        assert "board/run is checked out at" in hint, hint
        await answer_target(pilot, "main")  # main: the clone has it checked out
        await wait_loaded_again(pilot, screen, count)
        line, error = status(app)
        assert error and "checked out" in line and "\n" not in line, line
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, TargetDialog), what="the question")
        await pilot.press("escape")
        assert "not done" in status(app)[0], "abandoning the pick did not say so"
    assert fx.refs() == before, "a refused pick changed a ref"


# --- d: discard ----------------------------------------------------------------------------


async def test_discard_asks_naming_the_branch_and_deletes_only_that_ref(fx) -> None:
    branch = fx.saves["gone"]
    before = fx.refs()
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, branch)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        question = str(app.screen.query_one("#question", Static).render())
        assert branch in question and "1 file +1 −0" in question, (
            f"the question does not name the branch and its diffstat: {question}"
        )
        await pilot.press("n")
        await pilot.pause()
        assert fx.refs() == before, "saying no deleted something"
        count = screen.load_count
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        await pilot.press("y")
        await wait_loaded_again(pilot, screen, count)
        assert branch not in names(screen), "the list still shows the discarded branch"
        assert status(app) == (f"discarded stranded branch {branch}", False)
    after = fx.refs()
    gone = set(before) - set(after)
    assert gone == {f"refs/heads/{branch}"}, f"discard deleted {gone}"
    assert all(after[r] == before[r] for r in after), "discard moved a ref it should not touch"


async def test_a_branch_the_board_did_not_make_is_marked_and_discard_names_it(fx) -> None:
    foreign = "stranded/feat-c-1/20250101T000000.000Z"
    fx.repo.git("branch", foreign, "main")  # somebody's, under the board's prefix
    before = fx.refs()
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, foreign)
        row = next(r for r in screen.table.items if r.name == foreign)
        assert row.foreign and not row.attempt
        painted = "\n".join(screen_lines(app))
        assert "not made by the board" in painted and "not a save" in painted, painted
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        question = str(app.screen.query_one("#question", Static).render())
        assert foreign in question and "not made by the board" in question, question
        await pilot.press("n")
        await pilot.pause()
    assert fx.refs() == before, "saying no deleted something"


async def test_discard_of_a_husk_deletes_only_that_directory(fx) -> None:
    husk = fx.husk
    assert husk is not None and (husk / "draft.txt").exists()
    before = fx.refs()
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, husk.name)
        await pilot.press("enter")
        assert "is a husk" in status(app)[0], "enter on a husk did not say why there is no diff"
        count = screen.load_count
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), what="the question")
        question = str(app.screen.query_one("#question", Static).render())
        assert str(husk) in question, f"the question does not name the husk: {question}"
        await pilot.press("y")
        await wait_loaded_again(pilot, screen, count)
    assert not husk.exists(), "the husk was not deleted"
    assert fx.refs() == before, "discarding a husk touched a ref"


# --- S: salvage ----------------------------------------------------------------------------


async def test_salvage_publishes_through_the_gate_and_says_so(fx) -> None:
    reconfigure(fx, gate={"argv": gate("gate_pass.sh"), "timeout_s": 30, "retries": 0})
    branch = fx.saves["dirty"]
    run_before = fx.repo.rev(fx.cfg.board.run_branch)
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, branch)
        count = screen.load_count
        await pilot.press("S")
        assert isinstance(app.screen, ConfirmDialog), "S published without asking"
        assert app.screen.focused is app.screen.query_one("#no"), "No is not focused"
        await pilot.press("enter")  # a stray enter: No
        await pilot.pause()
        assert screen.load_count == count and fx.repo.rev(fx.cfg.board.run_branch) == run_before
        await pilot.press("S", "y")
        await wait_loaded_again(pilot, screen, count)
        line, error = status(app)
        assert not error and line.startswith(f"salvaged {branch}: done, gate passed"), line
        assert branch not in names(screen), "the salvaged branch is still listed"
        assert "folded onto" in result_text(screen)
    assert fx.repo.rev(fx.cfg.board.run_branch) != run_before, "nothing was published"
    assert fx.repo.show(fx.cfg.board.run_branch, "config.py") == "LINES = 3\nname = 'board'\n"
    assert fx.store.get("c-1").lane == "done"


async def test_salvage_over_a_red_gate_publishes_nothing_and_shows_the_tail(fx) -> None:
    reconfigure(fx, gate={"argv": gate("gate_fail.sh"), "timeout_s": 30, "retries": 0})
    before = fx.refs()
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, fx.saves["dirty"])
        count = screen.load_count
        await pilot.press("S", "y")
        await wait_loaded_again(pilot, screen, count)
        line, error = status(app)
        assert error and "published nothing" in line and "gate red" in line, line
        assert "GATE-RED" in result_text(screen), "the gate's tail is not on screen"
    after = fx.refs()
    assert (
        after[f"refs/heads/{fx.cfg.board.run_branch}"]
        == before[f"refs/heads/{fx.cfg.board.run_branch}"]
    )
    assert f"refs/heads/{fx.saves['dirty']}" in after, "a red salvage lost the branch"


# --- y, o ----------------------------------------------------------------------------------


async def test_y_copies_the_recovery_commands_and_shows_them(fx) -> None:
    branch = fx.saves["dirty"]
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, branch)
        await pilot.press("y")
        copied = app.clipboard
        assert f"git diff board/run...{branch}" in copied, f"not on the clipboard: {copied!r}"
        assert f"board stranded pick {branch} --onto board/run" in copied
        shown = result_text(screen)
        for line in copied.strip().splitlines():
            assert line in shown, f"a copied command is not on screen: {line}"


async def test_o_opens_the_card_and_refuses_a_card_that_is_gone(fx) -> None:
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, fx.saves["gone"])
        await pilot.press("o")
        line, error = status(app)
        assert error and "c-7" in line and "no longer on the board" in line, line
        assert app.screen is screen
        await select(pilot, screen, fx.saves["dirty"])
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, CardScreen), what="the card")
        assert app.screen.card_id == "c-1"


async def test_o_on_the_card_screen_lists_only_that_cards_saves(fx) -> None:
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        await pilot.pause()
        await app.push_screen(CardScreen("c-1"))
        await pilot.pause()
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, StrandedScreen), what="the browser")
        screen = app.screen
        await wait_for(pilot, lambda: screen.loaded, what="the list")
        assert sorted(names(screen)) == sorted([fx.saves["dirty"], fx.saves["kept"]]), (
            f"the card screen's o did not list exactly c-1's saves: {names(screen)}"
        )
        await pilot.press("escape")
        assert len(names(screen)) == 5, "esc did not clear the card filter"


async def test_the_keys_are_rebound_by_id_from_board_toml(fx) -> None:
    reconfigure(fx, tui={"keys": {"stranded.pick": "P", "stranded.discard": "X"}})
    app = make_app(fx)
    assert not any("unknown binding id" in p for p in app.problems), app.problems
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, fx.saves["dirty"])
        await pilot.press("p")
        await pilot.pause()
        assert app.screen is screen, "the old key still picks after it was rebound"
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(app.screen, TargetDialog), what="the question")


# --- live ----------------------------------------------------------------------------------


async def test_a_save_made_by_the_loop_appears_without_a_key(fx) -> None:
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        screen = await open_browser(pilot, fx, poll_s=0.05)
        new = await asyncio.to_thread(save, fx, "c-1", {"README.md": "live\n"}, "live")
        await wait_for(pilot, lambda: new in names(screen), what="the new save in the list")
        fx.repo.git("update-ref", "-d", f"refs/heads/{new}")
        await wait_for(pilot, lambda: new not in names(screen), what="the deleted save to go")


async def test_every_theme_draws_the_browser_and_the_diff(fx) -> None:
    app = make_app(fx)
    async with run_pilot(app, size=SIZE) as pilot:
        for name in app.theme_names:
            app.set_board_theme(name)
            screen = await open_browser(pilot, fx)
            await select(pilot, screen, fx.saves["dirty"])
            await pilot.press("enter")
            diff = await diff_loaded(pilot)
            assert "diff --git a/app.py b/app.py" in "\n".join(screen_lines(app)), name
            await pilot.press("escape", "escape")
            assert app.screen is not diff and not isinstance(app.screen, StrandedScreen)


async def test_help_lists_the_browser_keys_by_id(fx) -> None:
    app = make_app(fx)
    async with run_pilot(app, size=(160, 48)) as pilot:
        await open_browser(pilot, fx)
        await pilot.press("question_mark")
        await pilot.pause()
        text = "\n".join(screen_lines(app))
        for ident in ("stranded.pick", "stranded.salvage", "stranded.discard", "stranded.copy"):
            assert ident in text, f"the help does not show {ident}"


def test_every_binding_has_an_id() -> None:
    for cls in binding_classes():
        for binding in cls.BINDINGS:
            assert isinstance(binding, Binding) and binding.id, f"{cls.__name__}: {binding}"


def test_saves_are_real(kept_caches, fx) -> None:
    """The fixture's saves went through the real save (verified branches, stats recorded)."""
    text = saves.stats_text(fx.cfg)
    for branch in fx.saves.values():
        assert fx.repo.rev(branch) in text, f"{branch} has no recorded stats"


# --- snapshots -----------------------------------------------------------------------------


def _browser_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    fx = build(tmp_path, monkeypatch)
    return fx, make_app(fx)


def test_browser_snapshot_80x24(snap_compare, tmp_path, monkeypatch) -> None:
    fx, app = _browser_app(tmp_path, monkeypatch)

    async def run_before(pilot) -> None:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, fx.saves["escapes"])

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
    fx.close()


def test_browser_snapshot_160x48(snap_compare, tmp_path, monkeypatch) -> None:
    fx, app = _browser_app(tmp_path, monkeypatch)

    async def run_before(pilot) -> None:
        await open_browser(pilot, fx)

    assert snap_compare(app, terminal_size=(160, 48), run_before=run_before)
    fx.close()


def _diff_run_before(fx: Fixture):
    async def run_before(pilot) -> None:
        screen, diff = await open_diff(pilot, fx, fx.saves["dirty"])
        assert isinstance(diff, DiffScreen)

    return run_before


def test_diff_snapshot_80x24(snap_compare, tmp_path, monkeypatch) -> None:
    fx, app = _browser_app(tmp_path, monkeypatch)
    assert snap_compare(app, terminal_size=(80, 24), run_before=_diff_run_before(fx))
    fx.close()


def test_diff_snapshot_160x48(snap_compare, tmp_path, monkeypatch) -> None:
    fx, app = _browser_app(tmp_path, monkeypatch)
    assert snap_compare(app, terminal_size=(160, 48), run_before=_diff_run_before(fx))
    fx.close()


def test_browser_with_failed_attempts_snapshot_80x24(snap_compare, tmp_path, monkeypatch) -> None:
    """c-1's fold opened, c-2's closed: both marks and an attempt row on one screen."""
    fx = build(tmp_path, monkeypatch, attempts=True)
    app = make_app(fx)

    async def run_before(pilot) -> None:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, "attempts of c-1")
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
    fx.close()


def test_browser_with_attempts_and_candidates_snapshot_80x24(
    snap_compare, tmp_path, monkeypatch
) -> None:
    """c-1's fold of attempts and candidates opened: both kinds of row under one fold."""
    fx = build(tmp_path, monkeypatch, attempts=True, candidates=True)
    app = make_app(fx)

    async def run_before(pilot) -> None:
        screen = await open_browser(pilot, fx)
        await select(pilot, screen, "attempts and candidates of c-1")
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
    fx.close()


# --- the diff view while git streams ------------------------------------------------------


async def test_lines_arriving_below_the_screen_neither_redraw_it_nor_lay_it_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While a big diff streams in, the view takes new lines five times a second. Lines
    below the screen change only the scrollbar: no row is drawn again and the screen is
    not laid out again (a layout per sync kept the UI thread busy more than half the time,
    and keys waited behind it). Lines that reach the screen are drawn."""
    from board.tui.stranded.diff_view import DiffView
    from textual.app import App, ComposeResult
    from textual.widget import Widget

    class ViewApp(App[None]):
        def compose(self) -> ComposeResult:
            yield DiffView(id="view")

    def lines(start: int, count: int) -> bytes:
        return b"".join(b"+line %d\n" % i for i in range(start, start + count))

    app = ViewApp()
    async with run_pilot(app, size=(60, 20)) as pilot:
        view = app.query_one(DiffView)
        buffer = DiffBuffer()
        view.attach(buffer)
        buffer.feed(lines(0, 10))
        view.sync()
        await pilot.pause()
        assert view.painted_rows == 10
        draws: list[int] = []
        layouts: list[int] = []
        real_draw, real_refresh = view.draw_frame, Widget.refresh
        monkeypatch.setattr(view, "draw_frame", lambda *a: draws.append(1) or real_draw(*a))

        def refresh(self: Widget, *regions: Any, **kwargs: Any) -> Widget:
            """Textual's; a layout asked for (of any widget: the screen is laid out) noted."""
            if kwargs.get("layout"):
                layouts.append(type(self).__name__)
            return real_refresh(self, *regions, **kwargs)

        monkeypatch.setattr(Widget, "refresh", refresh)
        buffer.feed(lines(10, 5))  # these reach the screen: they are drawn
        view.sync()
        await pilot.pause()
        assert draws and view.text_lines()[14].rstrip() == "+line 14", view.text_lines()[12:16]
        buffer.feed(lines(15, 100))
        view.sync()
        await pilot.pause()
        draws.clear()
        layouts.clear()
        for n in range(5):  # all below the screen
            buffer.feed(lines(115 + 50 * n, 50))
            view.sync()
            await pilot.pause()
        assert view.virtual_size.height == buffer.count == 365, "the scrollbar did not follow"
        assert not layouts, f"lines below the screen laid the screen out: {layouts}"
        assert not draws, f"lines below the screen redrew its rows {len(draws)} times"
        assert view.text_lines()[-1].rstrip() == "+line 19"


def test_card_order_is_numeric_and_odd_digits_sort_as_text() -> None:
    """`c-2` before `c-10`; a tail of digits int() cannot read ('²') sorts, not crashes."""
    ids = ["c-10", "c-²", "c-2", "c-1"]
    assert sorted(ids, key=_card_key) == ["c-1", "c-2", "c-10", "c-²"]


async def test_a_file_list_with_its_files_reserved_is_not_laid_out_as_they_arrive(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The diff screen reserves the rows of the files a save recorded: the list has its
    height from the first layout, and files streaming in lay nothing out (each layout of
    the screen, 13 ms at 120x40, fell on the operator's first keys). When the diff ends,
    a count that was wrong costs one layout and the list fits what git wrote."""
    from board.tui.stranded.buffer import DiffFile
    from board.tui.stranded.diff_view import FileList
    from textual.app import App, ComposeResult
    from textual.widget import Widget

    class ListApp(App[None]):
        def compose(self) -> ComposeResult:
            files = FileList(id="files")
            files.reserve(5)
            yield files

    made = [DiffFile(line=10 * i, path=f"f{i}.py") for i in range(6)]
    app = ListApp()
    async with run_pilot(app, size=(60, 40)) as pilot:
        files = app.query_one(FileList)
        await pilot.pause()
        assert files.size.height == 5, "the reserved rows did not give the list its height"
        layouts: list[str] = []
        real_refresh = Widget.refresh

        def refresh(self: Widget, *regions: Any, **kwargs: Any) -> Widget:
            if kwargs.get("layout"):
                layouts.append(type(self).__name__)
            return real_refresh(self, *regions, **kwargs)

        monkeypatch.setattr(Widget, "refresh", refresh)
        for n in range(1, 6):
            files.set_items(made[:n])
            await pilot.pause()
        assert not layouts, f"files arriving within the reserved rows laid it out: {layouts}"
        assert files.size.height == 5
        monkeypatch.setattr(Widget, "refresh", real_refresh)
        files.reserve(0)  # the diff ended with fewer files than recorded
        files.set_items(made[:3])
        await pilot.pause()
        assert files.size.height == 3, "the list did not fit the files git wrote"


async def test_the_diff_screen_reserves_the_files_its_save_recorded(fx) -> None:
    app = make_app(fx)
    async with run_pilot(app, size=(80, 24)) as pilot:
        _browser, diff = await open_diff(pilot, fx, fx.saves["dirty"])
        row = diff.row
        assert row is not None and row.files == 2
        assert diff.expected_files() == 2
        assert diff.files.size.height == 2


def footer_keys(screen: Any) -> set[str]:
    """The descriptions the footer draws (Textual's key widgets, by public type name)."""
    return {key.description for key in screen.query("FooterKey") if key.description}


def bound_keys(screen: Any) -> set[str]:
    """The descriptions the footer should draw: the shown keys, and the palette's."""
    shown = screen.active_bindings.values()
    return {b.description for (_n, b, _e, _t) in shown if b.show or "palette" in b.action}


async def test_opening_the_diff_draws_its_footer_once(fx) -> None:
    """Textual's footer rebuilds every key widget at each bindings signal, and a screen
    sends four as it opens: the diff screen rebuilt its footer five times, 10-25 ms each,
    ahead of the operator's first keys. Once here, with the screen's keys."""
    from board.tui.footer import KeysFooter

    app = make_app(fx)
    async with run_pilot(app, size=(120, 30)) as pilot:
        screen, diff = await open_diff(pilot, fx, fx.saves["dirty"])
        footer = diff.query_one(KeysFooter)
        await pilot.pause(0.1)
        assert footer.rebuilds == 1, f"the footer was rebuilt {footer.rebuilds} times"
        assert footer_keys(diff) == bound_keys(diff)


async def test_the_footer_follows_a_focus_that_shows_other_keys_and_only_that() -> None:
    from board.tui.footer import KeysFooter
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.widget import Widget

    class Pane(Widget, can_focus=True):
        BINDINGS = [Binding("x", "noop", "cut")]
        DEFAULT_CSS = "Pane { height: 3; }"

        def action_noop(self) -> None:
            pass

    class Other(Widget, can_focus=True):
        BINDINGS = [Binding("y", "yank", "yank")]
        DEFAULT_CSS = "Other { height: 3; }"

        def action_yank(self) -> None:
            pass

    class FooterApp(App[None]):
        def compose(self) -> ComposeResult:
            yield Pane(id="a")
            yield Pane(id="b")
            yield Other(id="c")
            yield KeysFooter()

    app = FooterApp()
    async with run_pilot(app, size=(60, 12)) as pilot:
        footer = app.query_one(KeysFooter)
        app.query_one("#a").focus()
        await wait_for(pilot, lambda: "cut" in footer_keys(app.screen), what="the footer")
        await pilot.pause(0.1)
        drawn = footer.rebuilds
        app.query_one("#b").focus()  # the same keys: nothing to rebuild
        await pilot.pause(0.1)
        assert footer.rebuilds == drawn, "a focus with the same keys rebuilt the footer"
        app.query_one("#c").focus()  # other keys: drawn
        await wait_for(pilot, lambda: "yank" in footer_keys(app.screen), what="the new keys")
        assert footer_keys(app.screen) == bound_keys(app.screen)
        assert "cut" not in footer_keys(app.screen)

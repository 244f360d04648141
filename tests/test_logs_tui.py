"""The logs screen under Pilot: following, pausing, searching, switching drives while lines arrive.

Everything runs against the real SQLite store and real files the way the
drive writes them; the clock the screen uses for elapsed times is fixed.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from board.core import logs
from board.core.config import Config
from board.tui.logs import view as view_module
from board.tui.logs.drivelist import format_elapsed
from board.tui.logs.screen import LogsScreen
from board.tui.logs.view import LogView, RepaintGate
from textual import events
from textual.app import App
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static

from tests.support.logs import (
    T0,
    LogsApp,
    append_lines,
    build_board,
    screen_text,
    settled,
    terminal_output,
    view_of,
)
from tests.support.tui import run_pilot
from tests.support.waiting import wait_for

SIZE = (100, 30)


@pytest.fixture
def board(tmp_path: Path):
    cfg, store = build_board(tmp_path)
    yield cfg, store
    store.close()


def live_log(cfg: Config) -> Path:
    return logs.log_path(cfg, "c-2", 1)


def status_text(app: App) -> str:
    return str(app.screen.query_one("#log-status", Static).render())


def last_row(view: LogView) -> str:
    rows = [r.rstrip() for r in view.visible_text() if r.strip()]
    return rows[-1] if rows else ""


async def test_opens_on_the_live_drive_with_its_tail_painted(board) -> None:
    cfg, store = board
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        assert view.path == live_log(cfg), f"opened {view.path}, not the live drive's log"
        assert view.follow, "a freshly opened log did not follow its end"
        assert "a long line: 0123456789" in last_row(view), "the tail was not on screen"


async def test_opens_on_the_card_asked_for_and_falls_back_to_the_latest_drive(board) -> None:
    cfg, store = board
    app = LogsApp(cfg, store, card_id="c-1")
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        assert view_of(app).path == logs.log_path(cfg, "c-1", 2), "not c-1's latest attempt"
        assert "all green" in last_row(view_of(app))
    app = LogsApp(cfg, store, card_id="c-9")  # no drive: the most recent one instead
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        assert view_of(app).path == live_log(cfg)


async def test_earlier_attempts_of_a_card_can_be_selected(board) -> None:
    cfg, store = board
    app = LogsApp(cfg, store, card_id="c-1")
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        await pilot.press("tab", "down")
        await wait_for(pilot, lambda: view_of(app).path == logs.log_path(cfg, "c-1", 1))
        await wait_for(pilot, settled(app))
        assert "gate: 3 failed" in last_row(view_of(app)), "attempt 1's log was not shown"


async def test_a_new_drive_starting_does_not_move_the_operators_selection(board) -> None:
    cfg, store = board
    app = LogsApp(cfg, store, card_id="c-2", refresh_s=0.05)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        screen = app.screen
        chosen = view_of(app).path
        await pilot.press("k")  # the operator is reading, scrolled up
        session, top = view_of(app)._session, view_of(app).top_line
        path = logs.log_path(cfg, "c-3", 2)
        new = store.start_drive("c-3", "smart", 2, str(path.relative_to(cfg.root)), 0)
        store.update_drive(new.id, started_at="2026-03-01T11:59:00.000Z")  # newest: listed first
        await wait_for(pilot, lambda: len(screen.rows) == 5)
        await pilot.pause(0.2)
        first = (screen.rows[0].drive.card, screen.rows[0].drive.attempt)
        assert first == ("c-3", 2), f"the newest live drive is not listed first: {first}"
        assert view_of(app).path == chosen, "a drive starting switched the log being read"
        assert view_of(app)._session == session, "the log was reopened (reading position lost)"
        assert view_of(app).top_line == top and not view_of(app).follow
        drives = screen.query_one("#drives", OptionList)
        assert drives.highlighted_option.id == screen.current.drive.id, "the highlight moved"


async def test_appended_lines_are_followed_at_the_bottom(board) -> None:
    cfg, store = board
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        before = view.line_count
        append_lines(live_log(cfg), [f"fresh {i}" for i in range(100)], T0)
        await wait_for(pilot, lambda: view.line_count == before + 100)
        await wait_for(pilot, settled(app))
        assert last_row(view).endswith("fresh 99"), f"not following: last row {last_row(view)!r}"
        assert "following" in status_text(app)


async def test_scrolling_up_stops_following_and_G_resumes(board) -> None:
    cfg, store = board
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        await pilot.press("k", "k")
        assert not view.follow, "scrolling up did not stop following"
        frozen = view.visible_text()
        append_lines(live_log(cfg), [f"while paused {i}" for i in range(50)], T0)
        await wait_for(pilot, lambda: view.lines_below >= 50)
        assert view.visible_text() == frozen, "the view moved while the operator read it"
        status = status_text(app)
        assert "paused" in status and "G follows" in status, f"no visible marker: {status!r}"
        assert f"{view.lines_below} lines below" in status, f"no count of new lines: {status!r}"
        await pilot.press("G")
        await wait_for(pilot, settled(app))
        assert view.follow and last_row(view).endswith("while paused 49"), last_row(view)
        await pilot.press("pageup")
        assert not view.follow
        await pilot.press("end")
        assert view.follow, "end did not resume following"
        await pilot.press("g")
        assert not view.follow and view.top_line == view.lines_known[0], "g did not go to the top"
        await pilot.press("pagedown", "pagedown", "pagedown")
        assert view.follow, "paging back down to the end did not resume following"


async def test_mouse_wheel_up_stops_following(board) -> None:
    cfg, store = board
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        view.post_message(events.MouseScrollUp(view, 5, 5, 0, -1, 0, False, False, False))
        await pilot.pause()
        assert not view.follow, "the mouse wheel scrolled up but the view kept following"
        append_lines(live_log(cfg), ["new line"], T0)
        await wait_for(pilot, lambda: view.lines_below >= 1)
        assert not view.follow


async def test_search_finds_next_and_previous_matches(board) -> None:
    cfg, store = board
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        lo, _ = view.lines_known
        await pilot.press("g", "slash")
        app.screen.query_one(Input).value = "step 1"
        await pilot.press("enter")
        await wait_for(pilot, lambda: view.match_line is not None)
        assert view.match_line - lo == 1, f"the first match is line {view.match_line - lo}"
        assert not view.follow, "a search match did not stop following"
        await pilot.press("n")
        await wait_for(pilot, lambda: view.match_line - lo == 10)
        await pilot.press("n")
        await wait_for(pilot, lambda: view.match_line - lo == 11)
        await pilot.press("N")
        await wait_for(pilot, lambda: view.match_line - lo == 10)
        await pilot.press("N")
        await wait_for(pilot, lambda: view.match_line - lo == 1)
        assert any("step 10: building" in row for row in view.visible_text()), (
            "the match was not brought into view"
        )
        await pilot.press("slash")
        app.screen.query_one(Input).value = "nowhere to be found"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not view.searching)
        assert "no match" in status_text(app), status_text(app)


async def test_search_wraps_around_from_the_end(board) -> None:
    cfg, store = board
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        lo, _ = view.lines_known
        await pilot.press("slash")
        app.screen.query_one(Input).value = "step 0:"  # above the view: wraps to the top
        await pilot.press("enter")
        await wait_for(pilot, lambda: view.match_line is not None)
        assert view.match_line == lo


async def test_switching_drives_while_lines_arrive_shows_only_the_chosen_log(board) -> None:
    cfg, store = board
    app = LogsApp(cfg, store)
    stop = threading.Event()

    def writer() -> None:  # about 10,000 lines a second
        n = 0
        with open(live_log(cfg), "ab", buffering=0) as fh:
            while not stop.is_set():
                fh.write(b"".join(b"c-2 busy %d\n" % (n + i) for i in range(100)))
                n += 100
                stop.wait(0.01)

    thread = threading.Thread(target=writer)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        thread.start()
        try:
            view = view_of(app)
            await wait_for(pilot, lambda: "c-2 busy" in last_row(view))
            await pilot.press("tab", "down")  # to c-3, while c-2 keeps writing
            await wait_for(pilot, lambda: view.path == logs.log_path(cfg, "c-3", 1))
            await wait_for(pilot, settled(app))
            for _ in range(5):
                await pilot.pause(0.02)
                rows = " ".join(view.visible_text())
                assert "c-2 busy" not in rows, "lines of the live drive leaked into c-3's log"
                assert "waiting on the network" in rows
            await pilot.press("up")
            await wait_for(pilot, lambda: view.path == live_log(cfg))
            await wait_for(pilot, lambda: "c-2 busy" in last_row(view))
            assert view.follow
        finally:
            stop.set()
            thread.join()


async def test_switching_drives_many_times_leaves_no_file_open(board) -> None:
    cfg, store = board
    app = LogsApp(cfg, store)

    mine = str(cfg.logs_dir.resolve())

    def open_logs() -> int:
        """descriptors open on this test's logs (other tests' leftovers are not counted)"""
        fds = os.listdir("/proc/self/fd")
        paths = [os.path.realpath(f"/proc/self/fd/{fd}") for fd in fds]
        return sum(1 for p in paths if p.startswith(mine) and p.endswith(".log"))

    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        for i in range(20):
            card, attempt = ("c-3", 1) if i % 2 else ("c-1", 2)
            view.open(logs.log_path(cfg, card, attempt))
            await wait_for(pilot, settled(app))

        def one_open() -> bool:
            """only the log on screen is open (old ones close in their workers)"""
            return open_logs() == 1

        try:
            await wait_for(pilot, one_open, timeout=15)
        except AssertionError:
            raise AssertionError(
                f"{open_logs()} logs open after switching: descriptors leak"
            ) from None
    assert open_logs() == 0, "the log stayed open after the screen closed"


async def test_wrap_and_timestamps_toggle(board) -> None:
    cfg, store = board
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        assert view.visible_text()[0][:9].count(":") == 2, "timestamps were not shown"
        await pilot.press("t")
        assert not any(row[:9].count(":") == 2 for row in view.visible_text()), (
            "t did not hide the timestamps"
        )
        await pilot.press("w")
        await pilot.pause()
        rows = [r.rstrip() for r in view.visible_text()]
        assert rows[-1].endswith("0123456789"), (
            f"wrapped, the tail was not on the last row: {rows[-3:]}"
        )
        assert sum("0123456789" in r for r in rows) >= 3, "the long line did not wrap"
        assert view.follow
        await pilot.press("w")
        assert not view.wrap


async def test_escape_returns_to_the_previous_screen(board) -> None:
    cfg, store = board

    class Base(App[None]):
        def on_mount(self) -> None:
            self.push_screen(Screen())
            self.push_screen(LogsScreen(cfg, store, refresh_s=0))

    app = Base()
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, LogsScreen))
        await pilot.press("slash")
        await pilot.press("escape")  # first closes the search box
        assert isinstance(app.screen, LogsScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, LogsScreen), "escape did not leave the logs screen"


async def test_a_truncated_log_is_shown_anew(board) -> None:
    cfg, store = board
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        live_log(cfg).write_text("after truncation\n")
        await wait_for(pilot, lambda: view.line_count == 1)
        await wait_for(pilot, settled(app))
        assert last_row(view) == "after truncation"


async def test_a_ten_megabyte_line_is_shown_cut_and_the_keys_still_work(board) -> None:
    cfg, store = board
    with open(live_log(cfg), "ab") as fh:
        fh.write(b"Z" * 10_000_000 + b"\nafter the big one\n")
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        assert last_row(view) == "after the big one"
        await pilot.press("k")
        await pilot.press("end", "right", "w")
        await pilot.pause()
        assert any("line cut: 10,000,000 bytes" in row for row in view.visible_text()), (
            "the cut marker of the huge line was not shown"
        )


async def test_a_huge_log_shows_its_tail_while_the_rest_is_read(board) -> None:
    cfg, store = board
    path = live_log(cfg)
    with open(path, "ab") as fh:  # 4 GB, sparse: zeros above, real lines at the end
        fh.truncate(4 * 1024**3)
        fh.seek(0, os.SEEK_END)
        fh.write(b"\n" + b"".join(b"tail line %d\n" % i for i in range(100)))
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        view = view_of(app) if isinstance(app.screen, LogsScreen) else None
        await wait_for(pilot, lambda: "tail line 99" in last_row(view_of(app)))
        view = view_of(app)
        assert view.scanning, "the whole 4 GB was read before the tail was shown"
        assert "reading" in status_text(app), "no sign that the rest is still being read"
        await pilot.press("k")  # keys work while the scan runs
        assert not view.follow


async def test_leaving_a_log_still_being_read_does_not_stop_following_the_next(
    board, tmp_path: Path
) -> None:
    """The scan of the log left behind may still report in; the new log must keep following."""
    cfg, store = board
    big = tmp_path / "big.log"
    with open(big, "wb") as fh:  # sparse: its scan is still running when we switch
        fh.truncate(4 * 1024**3)
        fh.seek(0, os.SEEK_END)
        fh.write(b"\nlast line of the big log\n")
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        view.open(big)
        await wait_for(pilot, lambda: "last line of the big log" in last_row(view))
        assert view.scanning
        view.open(live_log(cfg))
        await wait_for(pilot, settled(app))
        for i in range(3):
            await pilot.pause(0.1)  # the old scan keeps reporting meanwhile
            append_lines(live_log(cfg), [f"after the switch {i}"], T0)
            await wait_for(pilot, lambda i=i: last_row(view).endswith(f"after the switch {i}"))


async def test_escapes_and_markup_in_logs_and_drive_fields_never_reach_the_terminal(
    board,
) -> None:
    cfg, store = board
    drive = store.list_drives("c-3")[0]
    store.update_drive(drive.id, result="\x1b]0;pwned\x07 \x1b[2J [red]gone[/red]")
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=(160, 48)) as pilot:
        await wait_for(pilot, settled(app))
        screen = "\n".join(screen_text(app))
        out = terminal_output(app)
        for raw in ("\x1b[2J", "\x1b]52;", "\x1b]0;", "\x07", "\x1b[10A", "\x9b", "\r"):
            assert raw not in out, f"{raw!r} from a log or drive field reached the terminal"
        assert "␛[2J␛[H cleared?" in screen, "the clear-screen escape was not shown visibly"
        assert "␛]52;c;cm0gLXJmIH4K^G clipboard?" in screen, "OSC 52 was not shown visibly"
        assert "␛[10A␛[5;5Hmoved?" in screen, "cursor moves were not shown visibly"
        assert "[bold red]x[/] and [link=http://e.x]y[/link]" in screen, "markup was parsed"
        assert "␛]0;pwned^G ␛[2J [red]gone[/red]" in screen, "a drive's result was not literal"


async def test_a_store_that_cannot_be_read_is_reported_not_a_crash(board) -> None:
    cfg, store = board
    store.close()  # every read now fails with a StoreError
    app = LogsApp(cfg, store)
    notes: list[dict[str, Any]] = []  # each notification the app was asked to show
    notify = app.notify

    def noting(message: str, **kwargs: Any) -> None:
        notes.append({"message": message, **kwargs})
        notify(message, **kwargs)

    app.notify = noting  # type: ignore[method-assign]
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(notes) > 0)
        note = notes[0]
        assert note["severity"] == "error" and "drives" in note["title"], note
        assert isinstance(app.screen, LogsScreen), "the screen went away on a store error"


def test_elapsed_is_short() -> None:
    got = [format_elapsed(s) for s in (5, 65, 3600 * 3 + 420, 86400 * 4 + 7300)]
    assert got == ["5s", "1m05s", "3h07m", "4d02h"], got


# --- snapshots -------------------------------------------------------------------------------


def _snapshot_app(tmp_path: Path) -> LogsApp:
    cfg, store = build_board(tmp_path)
    return LogsApp(cfg, store)


async def _settle(pilot) -> None:
    await wait_for(pilot, settled(pilot.app))


def test_logs_screen_snapshot_80x24(snap_compare, tmp_path: Path) -> None:
    app = _snapshot_app(tmp_path)
    assert snap_compare(app, terminal_size=(80, 24), run_before=_settle)
    app.store.close()


def test_logs_screen_snapshot_160x48(snap_compare, tmp_path: Path) -> None:
    app = _snapshot_app(tmp_path)
    assert snap_compare(app, terminal_size=(160, 48), run_before=_settle)
    app.store.close()


# --- following fast without taking the keys' time (issue 27) ---------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_repaint_gate_tells_at_once_after_a_quiet_spell_then_spaces_the_rest() -> None:
    clock = FakeClock()
    gate = RepaintGate(0.25, clock)
    assert not gate.due(), "told with nothing waiting"
    gate.grew()
    assert gate.due(), "the first lines after a quiet spell waited"
    gate.grew()
    clock.now += 0.1
    assert not gate.due(), "told again within the interval"
    assert gate.waiting and gate.wait_s(1.0) == pytest.approx(0.15), "slept past the due time"
    clock.now += 0.15
    assert gate.due() and not gate.waiting, "lines waiting past the interval were not told"
    assert gate.wait_s(1.0) == 1.0
    gate.grew()
    gate.reset()
    assert not gate.due(), "lines of a file left behind were told"


async def test_lines_arriving_fast_are_told_to_the_view_spaced_not_every_poll(board) -> None:
    """A log growing all the time repaints the view once per interval, not once per poll:
    each repaint draws a screenful, its scrollbar and the status line."""
    cfg, store = board
    app = LogsApp(cfg, store, repaint_s=3600)  # an hour: only the first batch is told
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        path = live_log(cfg)
        append_lines(path, ["first batch"], T0)
        await wait_for(pilot, lambda: last_row(view).endswith("first batch"))
        append_lines(path, ["second batch"], T0)
        await wait_for(
            pilot, lambda: view._log is not None and view._log.size == path.stat().st_size
        )
        await pilot.pause(0.2)  # ten polls of the watcher
        assert last_row(view).endswith("first batch"), "told again within the interval"
        view.open(path)  # what was held back is shown by anything that reads the index
        await wait_for(pilot, lambda: last_row(view).endswith("second batch"))


async def test_the_scan_tells_the_view_of_the_lines_above_spaced_not_every_chunk(
    board, tmp_path: Path
) -> None:
    """The tail at once; then the lines found above, each a repaint, no more than once per
    interval (here an hour: none until the scan ends), not once per megabyte read."""
    cfg, store = board
    big = tmp_path / "big.log"
    big.write_bytes(b"".join(b"line %07d of a log read from its end\n" % i for i in range(600_000)))
    grew: list[float] = []

    def hook(message: object) -> None:
        if isinstance(message, LogView.Grew):
            grew.append(0)

    app = LogsApp(cfg, store, repaint_s=3600)
    async with run_pilot(app, size=SIZE, message_hook=hook) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        grew.clear()
        view.open(big)
        await wait_for(pilot, lambda: view.line_count == 600_000 and not view.scanning)
        await wait_for(pilot, settled(app))
        assert last_row(view).endswith("line 0599999 of a log read from its end")
        assert len(grew) <= 3, f"{len(grew)} notices for a 23 MB scan: one per chunk"


async def test_the_status_line_changes_in_the_same_frame_as_the_lines(board) -> None:
    """Appended lines and the count that says so are drawn together: a Status message,
    handled after the view's repaint, cost a second frame for every batch."""
    cfg, store = board
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        seen: list[tuple[int, str]] = []
        sync = view._sync

        def recording_sync() -> None:
            sync()
            seen.append((view.line_count, status_text(app)))

        view._sync = recording_sync  # type: ignore[method-assign]
        before = view.line_count
        append_lines(live_log(cfg), [f"fresh {i}" for i in range(5)], T0)
        await wait_for(pilot, lambda: view.line_count == before + 5)
        counts = [status for count, status in seen if count == before + 5]
        assert counts and f"{before + 5:,} lines" in counts[0], (
            f"the status still said {counts[0] if counts else seen!r} as the lines were drawn"
        )


async def test_the_scan_resumes_only_once_the_tails_frame_is_out(board, tmp_path: Path) -> None:
    """The rest of the scan takes the GIL; started while the tail's first frame is still
    being drawn (a layout when the scrollbars appear), it slowed that very frame."""
    cfg, store = board
    big = tmp_path / "big.log"
    big.write_bytes(b"".join(b"line %d\n" % i for i in range(100_000)))
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        drawn: list[bool] = []
        draw = view.draw_frame

        def recording_draw(*args: object) -> list:
            strips = draw(*args)  # type: ignore[arg-type]
            if strips and view.path == big:
                drawn.append(view._tail_shown.is_set())
            return strips

        view.draw_frame = recording_draw  # type: ignore[method-assign]
        view.open(big)
        await wait_for(pilot, lambda: bool(drawn))
        assert drawn[0] is False, "the scan was let go while the tail's frame was being drawn"
        await wait_for(pilot, view._tail_shown.is_set)


async def test_a_long_logs_tail_is_drawn_before_its_scrollbars_are_laid_out(
    board, tmp_path: Path
) -> None:
    """A scrollbar appearing lays out the whole screen: that first frame cost twice one of
    lines alone, and opening a 1 GB log was slower than a 1 KB one by that much. The tail
    comes first; the bars follow in the next frame, and are then there to stay."""
    cfg, store = board
    big = tmp_path / "big.log"
    big.write_bytes(b"".join(b"line %d of a log longer than the screen\n" % i for i in range(5000)))
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        view.open(None)
        await wait_for(pilot, lambda: not view.show_vertical_scrollbar)
        bars_at_first_frame: list[bool] = []
        draw = view.draw_frame

        def recording_draw(*args: object) -> list:
            strips = draw(*args)  # type: ignore[arg-type]
            if strips and not bars_at_first_frame:
                bars_at_first_frame.append(view.show_vertical_scrollbar)
            return strips

        view.draw_frame = recording_draw  # type: ignore[method-assign]
        view.open(big)
        await wait_for(pilot, lambda: bool(bars_at_first_frame))
        assert bars_at_first_frame == [False], "the tail waited for the scrollbars' layout"
        await wait_for(pilot, lambda: view.show_vertical_scrollbar)
        await wait_for(pilot, settled(app))
        assert last_row(view).endswith("line 4999 of a log longer than the screen")
        assert view.scroll_y == view.max_scroll_y and view.follow, "not at the end once laid out"


def test_repaint_gate_spaces_a_flood_further_than_lines_one_can_read() -> None:
    clock = FakeClock()
    gate = RepaintGate(0.25, clock, flood_interval=0.5)
    gate.grew()
    assert gate.due()
    gate.grew(flood=True)
    clock.now += 0.3
    assert not gate.due(), "a flood was told at the pace of lines one can read"
    assert gate.wait_s(1.0) == pytest.approx(0.2)
    clock.now += 0.2
    assert gate.due() and not gate.flood, "a flood was held past its interval"
    gate.grew()
    clock.now += 0.3
    assert gate.due(), "readable lines were held as long as a flood"


async def test_more_new_lines_than_rows_wait_for_the_flood_interval(
    board, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A few lines are told at once; more than a screenful since the last telling (every
    row replaced: nothing to read) waits for the longer flood interval."""
    monkeypatch.setattr(view_module, "FLOOD_REPAINT_S", 3600)
    cfg, store = board
    app = LogsApp(cfg, store, repaint_s=0)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        path = live_log(cfg)
        append_lines(path, ["a few lines", "read at once"], T0)
        await wait_for(pilot, lambda: last_row(view).endswith("read at once"))
        append_lines(path, [f"flood {i}" for i in range(3 * SIZE[1])], T0)
        await wait_for(
            pilot, lambda: view._log is not None and view._log.size == path.stat().st_size
        )
        await pilot.pause(0.2)  # ten polls of the watcher
        assert last_row(view).endswith("read at once"), "a flood was told at once"


async def test_opening_a_log_draws_its_tail_in_the_first_frame(board, tmp_path: Path) -> None:
    """The tail is read as the log is opened, so the frame that opens it (the drive list's
    highlight) already shows it: left to the scan thread, it came a frame later, and
    Textual paints a second frame 17-33 ms after the first (a 1 KB log took 8 or 40 ms)."""
    cfg, store = board
    big = tmp_path / "big.log"
    big.write_bytes(b"".join(b"line %d\n" % i for i in range(200_000)))
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        view.open(None)
        await pilot.pause(0.1)
        frames: list[list[str]] = []
        draw = view.draw_frame

        def recording_draw(*args: object) -> list:
            strips = draw(*args)  # type: ignore[arg-type]
            frames.append([strip.text.rstrip() for strip in strips])
            return strips

        view.draw_frame = recording_draw  # type: ignore[method-assign]
        view.open(big)
        lo, hi = view.lines_known
        assert hi - lo >= view.size.height, "the tail was not indexed as the log was opened"
        await wait_for(pilot, lambda: bool(frames))
        assert frames[0] and frames[0][-1] == "line 199999", f"first frame: {frames[0][-3:]}"
        await wait_for(pilot, lambda: not view.scanning)
        assert view.line_count == 200_000
        assert view._log is not None and view._log.line(-200_000) == "line 0"


async def test_a_log_that_is_a_fifo_is_opened_by_the_scan_thread(board, tmp_path: Path) -> None:
    """Opening a FIFO blocks until someone writes it: the view leaves it to its thread (and
    a missing file too, which the thread shows once it appears), never to the UI's."""
    cfg, store = board
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    missing = tmp_path / "later.log"
    app = LogsApp(cfg, store)
    async with run_pilot(app, size=SIZE) as pilot:
        await wait_for(pilot, settled(app))
        view = view_of(app)
        view.open(fifo)  # returns: nothing was opened on this thread
        assert view.lines_known == (0, 0)
        view.open(missing)
        missing.write_bytes(b"it came\n")
        await wait_for(pilot, lambda: last_row(view).endswith("it came"))
        try:  # a scan thread still opening the FIFO, if it started, returns
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # ENXIO: nobody has it open for reading
            pass

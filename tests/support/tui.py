"""Fixtures for the board TUI: a real repository and store with a fixed card set, and waits.

The board comes from tests/support/boards.py: the store is the real SQLite file, created
with a fixed clock so no wall-clock time ever renders; the repository is real git (the card
screen asks it for worktrees).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from board.core import proc
from board.core.cards import actions
from board.core.model import Blocked, CardDraft, Drive
from board.core.store import Expect, SQLiteStore
from board.tui.app import BoardApp
from board.tui.board import BoardScreen
from board.tui.widgets import LaneView
from textual.app import App
from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from tests.support.boards import FIXED_NOW, Board, make_board
from tests.support.waiting import wait_for

MARKUP_TITLE = "[bold red]x[/] [@click=app.quit]q[/]"
OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"
CLEAR = "\x1b[2J"


def fixed_now() -> datetime:
    """The TUI's clock in the fixtures: elapsed times, countdowns and heartbeat ages are
    judged at FIXED_NOW, so no wall-clock time ever renders."""
    return datetime.fromisoformat(FIXED_NOW.replace("Z", "+00:00"))


def add(store: SQLiteStore, title: str, lane: str = "backlog", **fields: Any) -> str:
    """Add a card through the core verb, then move it where the fixture wants it."""
    spec = fields.pop("spec", f"spec of {title}")
    draft = CardDraft(
        title=title,
        spec=spec,
        acceptance=fields.pop("acceptance", ""),
        priority=fields.pop("priority", 2),
        labels=list(fields.pop("labels", [])),
        deps=list(fields.pop("deps", [])),
        lane="ready" if lane != "backlog" and spec else "backlog",
    )
    card = actions.add_card(store, draft)
    changes: dict[str, Any] = dict(fields)
    if lane not in ("backlog", "ready"):
        changes["lane"] = lane
    if changes:
        store.update(card.id, Expect(), changes, who="fixture")
    return card.id


def seed(store: SQLiteStore) -> None:
    """The fixed card set the snapshots and most tests use (ids c-1 … c-12)."""
    add(store, "Set up CI pipeline", "ready", priority=1, labels=["infra"])
    add(
        store,
        "Parse board.toml with line numbers",
        "ready",
        spec="Read board.toml with tomllib.\nName the file, line and key of a bad value.",
        acceptance="A bad key is refused with file:line: key.",
        labels=["config", "core"],
        deps=["c-1"],
        blocked=Blocked("held", "waiting for the config review"),
    )
    add(store, "Draw the lanes with the line API", "working", priority=0, branch="feat/c-3-lanes")
    add(store, MARKUP_TITLE, "backlog", priority=3, spec="")
    add(store, "Write the README", "backlog", spec="")
    add(store, "Fold card branches back onto the run branch", "review")
    add(store, "Rename the lanes", "done")
    add(store, "An idea we dropped", "cancelled")
    add(store, "Retry after the rate limit", "ready", blocked=Blocked("rate-limit", "429 from API"))
    add(store, "Gate red on main", "ready", priority=1, blocked=Blocked("gate-red", "3 tests fail"))
    add(store, "Ship 0.1", "backlog", deps=["c-1", "c-3"], acceptance="pip install . works")
    add(store, "A very long title " + "that goes on and on " * 6, "backlog", priority=4)
    store.add_comment("c-2", "the reviewer is out until Monday", "alice")
    actions.comment(store, "c-2", "pinged them again")


def seeded_board(tmp_path: Path, **kw: Any) -> Board:
    board = make_board(tmp_path, **kw)
    seed(board.store)
    return board


LOOP_HOST = "build-host"  # not this machine: the heartbeat's age decides, not a pid
LOOP_PID = 4242
LOOP_STARTED = "2025-12-31T21:48:00.000Z"  # 2h12m before FIXED_NOW, the day before
DRIVE_STARTED = "2025-12-31T23:56:56.000Z"  # 3m04s before FIXED_NOW
PAUSE_UNTIL = "2026-01-01T00:04:12.000Z"  # 4m12s after FIXED_NOW
RETRY_AT = "2026-01-01T00:10:00.000Z"
TWO_TIERS = {
    "coder": {
        "ladder": ["default", "smart"],
        "tiers": {
            "default": {"argv": ["my-agent", "{brief}"]},
            "smart": {"argv": ["a", "{brief}"]},
        },
    }
}


def start_drive(
    board: Board, card: str, tier: str, attempt: int, lines: list[str], started: str = DRIVE_STARTED
) -> Drive:
    """A live drive row for `card` started at `started`, its log holding `lines`."""
    from board.core.logs import LogWriter, log_path

    path = log_path(board.cfg, card, attempt)
    with LogWriter(path, clock=fixed_now) as log:
        for line in lines:
            log.write_line(line)
    drive = board.store.start_drive(
        card, tier, attempt, str(path.relative_to(board.root)), LOOP_PID
    )
    return board.store.update_drive(drive.id, started_at=started)


def live_board(tmp_path: Path) -> Board:
    """A board whose loop runs (a heartbeat from another host, fresh at FIXED_NOW), with a
    working card whose drive has run 3m04s, a tier paused for 4m12s more, and a ready card
    waiting for each of the claim's reasons (`waits.why_waits`), ids c-1 … c-9."""
    from board.core.model import Pause

    board = make_board(tmp_path, config_overrides=TWO_TIERS)
    store = board.store
    working = add(store, "Draw the lanes with the line API", "working", priority=0)
    store.update(working, Expect(), {"surface": ["tui/widgets.py"]}, who="fixture")
    start_drive(board, working, "default", 2, ["cloning the tree", "running the gate: 12 passed"])
    add(store, "Needs the lanes first", "ready", priority=1, deps=[working])
    overlap = add(store, "Touch the lanes again", "ready")
    store.update(overlap, Expect(), {"surface": ["tui/**"]}, who="fixture")
    add(store, "Anything at all, no surface", "ready")
    split = add(store, "Split c-9: too wide", "ready", kind="task", assignee="planner")
    del split
    retry = add(store, "Retry after a dropped connection", "ready")
    store.update(
        retry,
        Expect(),
        {"not_before": RETRY_AT, "surface": ["net/**"], "tries": (("transient", 1),)},
        who="fixture",
    )
    smart = add(store, "On the smart tier", "ready")
    store.update(smart, Expect(), {"surface": ["docs/**"], "rung": "smart"}, who="fixture")
    add(store, "Gate red on main", "ready", blocked=Blocked("gate-red", "3 tests fail"))
    add(store, "Write the README", "backlog", spec="")
    store.pause_tier(Pause("smart", "rate-limit", "429: usage limit", PAUSE_UNTIL, FIXED_NOW))
    store.beat(LOOP_HOST, LOOP_PID, LOOP_STARTED)
    return board


def make_app(
    board: Board,
    theme: str | None = None,
    poll: float = 0.5,
    clock: Callable[[], datetime] = fixed_now,
    live: float | None = None,
) -> BoardApp:
    """The app as `board tui` makes it, with animations and the cursor blink off, on the
    fixed clock; the loop's health is read as often as the store is watched (`live`: other)."""
    app = BoardApp(
        board.cfg,
        board.store,
        theme=theme,
        poll_interval=poll,
        clock=clock,
        live_interval=poll if live is None else live,
    )
    app.animation_level = "none"
    app.cursor_blink = False
    app.status_ttl = 0  # a status line stays: a snapshot taken on a loaded machine is the same
    return app


PILOT_SIZE = (80, 24)  # the terminal a test draws in unless it needs another (Textual's own)


@asynccontextmanager
async def run_pilot(
    app: App[Any], size: tuple[int, int] = PILOT_SIZE, **run: Any
) -> AsyncIterator[Pilot[Any]]:
    """The one way a test starts an app under Pilot: the board's (from `make_app`, on the
    fixed clock) or a test's own small one (the logs screen alone, a widget in a frame), in
    a terminal of a fixed size, with animations and the cursor blink off, so what a test
    reads never depends on when it read it. `run`: the rest of `App.run_test`'s options
    (notifications, message_hook)."""
    app.animation_level = "none"
    app.cursor_blink = False
    async with app.run_test(size=size, **run) as pilot:
        yield pilot


OUR_WORKERS = (
    "board-load",
    "card-load",
    "verbs",
    "store-watch",
    "health",
    "form-save",
    "form-cards",
    "preview",
    "flow-read",
    "deps-read",
)


async def settle(pilot: Pilot[Any], rounds: int = 3) -> None:
    """Let the board's workers finish and their messages land (loads, verbs, the store watch).

    Only the board's own worker groups: other screens (logs) keep watcher threads alive.
    """
    app = pilot.app
    for _ in range(rounds):
        for screen in app.screen_stack:  # the preview reads once the cursor has rested
            while isinstance(screen, BoardScreen) and screen.preview_pending:
                await pilot.pause(0.05)
        ours = [w for w in app.workers if w.group in OUR_WORKERS]
        if ours:  # an empty list would mean "every worker", watchers included
            try:
                await app.workers.wait_for_complete(ours)
            except WorkerCancelled:  # an exclusive worker replaced by a newer: next round
                pass
        await pilot.pause()


async def loaded(pilot: Pilot[Any]) -> BoardScreen:
    """Wait for the first board with the store's cards on screen."""
    app = pilot.app
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, BoardScreen) and app.screen.loaded,
        what="the first board",
    )
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, BoardScreen)
    return screen


def screen_lines(app: BoardApp) -> list[str]:
    """The text of every cell the active screen paints, row by row (what reaches the terminal)."""
    strips = app.screen._compositor.render_strips()
    return ["".join(segment.text for segment in strip) for strip in strips]


def screen_segments(app: BoardApp) -> list[Any]:
    return [seg for strip in app.screen._compositor.render_strips() for seg in strip]


def status(app: BoardApp) -> str:
    return app.last_status[0]


def cli(board: Board, *args: str, timeout: float = 30) -> proc.Result:
    """The real `board` command line in a second OS process."""
    return proc.run(
        (sys.executable, "-m", "board.cli", "-C", str(board.root), *args), timeout=timeout
    )


async def goto(pilot: Pilot[Any], lane_name: str, card_id: str) -> None:
    """Move with the keys (right, then down) until the board's cursor is on `card_id`."""
    screen = pilot.app.screen
    assert isinstance(screen, BoardScreen), f"not on the board: {screen}"
    for _ in range(8):
        if screen.current_lane == lane_name:
            break
        await pilot.press("right")
    assert screen.current_lane == lane_name, f"could not reach lane {lane_name}"
    view = screen.lane_view(lane_name)
    for _ in range(len(view.rows) + 1):
        if view.current and view.current.id == card_id:
            return
        await pilot.press("j")
    shown = [row.card.id for row in view.rows]
    raise AssertionError(f"could not reach {card_id} in {lane_name}: {shown}")


@dataclass
class CssWork:
    """What Textual's stylesheets do, counted: each source parsed (where it was read
    from) and each whole reparse (a new stylesheet parsing every source again)."""

    parsed: list[str]
    reparsed: list[int]


def count_css(monkeypatch: Any) -> CssWork:
    """Count Textual's CSS work at its parser and at `Stylesheet.reparse`, from now on."""
    import textual.css.stylesheet as module

    work = CssWork([], [])
    parse, reparse = module.parse, module.Stylesheet.reparse

    def counted(scope: str, css: str, read_from: Any, *args: Any, **kwargs: Any) -> Any:
        work.parsed.append(str(read_from[0]))
        return parse(scope, css, read_from, *args, **kwargs)

    def reparsing(self: Any) -> None:
        work.reparsed.append(1)
        reparse(self)

    monkeypatch.setattr(module, "parse", counted)
    monkeypatch.setattr(module.Stylesheet, "reparse", reparsing)
    return work


def lane(screen: BoardScreen, name: str) -> LaneView:
    return screen.lane_view(name)


def ids(view: LaneView) -> list[str]:
    return [row.card.id for row in view.rows]

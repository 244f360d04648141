"""Fixtures for the board TUI: a real repository and store with a fixed card set, and waits.

The store is the real SQLite file, created with a fixed clock so no wall-clock time
ever renders; the repository is real git (the card screen asks it for worktrees).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from board.core import config, proc
from board.core.cards import actions
from board.core.model import Blocked, CardDraft
from board.core.store import Expect, SQLiteStore, Store
from board.tui.app import BoardApp
from board.tui.board import BoardScreen
from textual.pilot import Pilot

from tests.support.repos import make_repo
from tests.support.waiting import wait_for

FIXED_NOW = "2026-01-01T00:00:00.000Z"

MARKUP_TITLE = "[bold red]x[/] [@click=app.quit]q[/]"
OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"
CLEAR = "\x1b[2J"


def fixed_clock() -> str:
    return FIXED_NOW


@dataclass
class Board:
    """A repository with board.toml and a store, as `board init` leaves them."""

    root: Path
    cfg: config.Config
    store: Store

    def close(self) -> None:
        self.store.close()


def make_board(
    tmp_path: Path, keys: dict[str, str] | None = None, *, store_url: str = "", **tui: Any
) -> Board:
    """A real git repository with board.toml and an empty store on the fixed clock (the
    SQLite file, or the PostgreSQL database at `store_url`)."""
    root = make_repo(tmp_path, init="", remote=False, commit=False).root
    overrides: dict[str, dict[str, Any]] = {}
    if keys or tui:
        overrides["tui"] = {**tui, **({"keys": keys} if keys else {})}
    if store_url:
        overrides["store"] = {"url": store_url}
    config.write_default(root, overrides)
    cfg = config.load(root)
    cfg.board_dir.mkdir(parents=True, exist_ok=True)
    if not store_url:
        return Board(root, cfg, SQLiteStore(cfg.db_path, create=True, clock=fixed_clock))
    from board.core.store.postgres import PostgresStore

    return Board(root, cfg, PostgresStore(store_url, create=True, clock=fixed_clock))


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


def make_app(board: Board, theme: str | None = None, poll: float = 0.5) -> BoardApp:
    """The app as `board tui` makes it, with animations and the cursor blink off."""
    app = BoardApp(board.cfg, board.store, theme=theme, poll_interval=poll)
    app.animation_level = "none"
    app.cursor_blink = False
    return app


OUR_WORKERS = ("board-load", "card-load", "verbs", "store-watch")


async def settle(pilot: Pilot[Any], rounds: int = 3) -> None:
    """Let the board's workers finish and their messages land (loads, verbs, the store watch).

    Only the board's own worker groups: other screens (logs) keep watcher threads alive.
    """
    app = pilot.app
    for _ in range(rounds):
        ours = [w for w in app.workers if w.group in OUR_WORKERS]
        if ours:  # an empty list would mean "every worker", watchers included
            await app.workers.wait_for_complete(ours)
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

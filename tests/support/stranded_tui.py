"""A fixed repository of stranded work for the browser's Pilot and snapshot tests.

Real git (a bare origin and a clone), saves made by the real `discard_worktree` and
`preserve_worktree`, the real SQLite store. Deterministic for snapshots: commit dates are
pinned through GIT_AUTHOR_DATE/GIT_COMMITTER_DATE, the save stamps come from a fixed
sequence instead of the wall clock, the store has a fixed clock, and the screen's ages are
measured against `NOW`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from board.core.git import naming, saves, worktrees
from board.core.model import CardDraft
from board.core.store import Expect, SQLiteStore
from board.tui.app import BoardApp
from board.tui.stranded.browser import StrandedScreen
from board.tui.stranded.diff_screen import DiffScreen
from textual.pilot import Pilot

from tests.support.repos import Repo, make_repo
from tests.support.waiting import wait_for

NOW = datetime(2026, 1, 6, 12, 0, 0, tzinfo=UTC)
FIRST_STAMP = datetime(2026, 1, 1, 9, 30, 0, tzinfo=UTC)
COMMIT_DATE = "2026-01-01T09:00:00+0000"
MARKUP_TITLE = "[bold red]x[/] [@click=app.quit]q[/] fix the login \x1b[2J"
ESCAPES = "print('\x1b[2J\x1b]52;c;cm0gLXJmIH4K\x07 [red]boom[/red]')\n"


def fixed_clock() -> datetime:
    return NOW


class Stamps:
    """Stands in for `naming.utc_stamp`: every call the next stamp, 7h13m apart."""

    def __init__(self, start: datetime = FIRST_STAMP) -> None:
        self.next = start

    def __call__(self) -> str:
        now = self.next
        self.next = now + timedelta(hours=7, minutes=13)
        return now.strftime("%Y%m%dT%H%M%S") + f".{now.microsecond // 1000:03d}Z"


def pin_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commit dates and save stamps that are the same on every run."""
    monkeypatch.setenv("GIT_AUTHOR_DATE", COMMIT_DATE)
    monkeypatch.setenv("GIT_COMMITTER_DATE", COMMIT_DATE)
    monkeypatch.setattr(naming, "utc_stamp", Stamps())


@dataclass
class Fixture:
    """The repository, the store, and the saves by role."""

    repo: Repo
    store: SQLiteStore
    saves: dict[str, str] = field(default_factory=dict)
    husk: Path | None = None

    @property
    def cfg(self) -> Any:
        return self.repo.cfg

    def refs(self) -> dict[str, str]:
        """Every ref -> commit (to prove a verb moved only what it should)."""
        text = self.repo.git("for-each-ref", "--format=%(refname) %(objectname)")
        return dict(line.split(" ", 1) for line in text.splitlines() if line)

    def close(self) -> None:
        self.store.close()


def _card(store: SQLiteStore, title: str, lane: str) -> str:
    card = store.create(CardDraft(title=title), prefix="c")
    if lane != "backlog":
        store.update(card.id, Expect(), {"lane": lane}, who="fixture")
    return card.id


def save(
    fx: Fixture,
    card: str,
    files: dict[str, str],
    slug: str = "",
    commit: str = "",
    kind: str = naming.KIND_SAVED,
) -> str:
    """A tree for `card` with `files` written (and `commit` ones committed), saved and removed."""
    cfg = fx.cfg
    tree = worktrees.create_worktree(cfg, card, slug)
    if commit:
        fx.repo.commit(tree, {"config.py": commit}, f"{card}: the coder's commit")
    for name, text in files.items():
        path = tree / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    res = worktrees.discard_worktree(
        cfg, tree, store=fx.store, card_id=card, why="fixture", kind=kind
    )
    assert res.saved is not None and res.removed, f"the fixture save failed: {res}"
    return res.saved.branch


def preserve(fx: Fixture, card: str, files: dict[str, str], slug: str = "") -> str:
    """A save of a tree that stays where it is (the operator's stop does this)."""
    tree = worktrees.create_worktree(fx.cfg, card, slug)
    for name, text in files.items():
        (tree / name).write_text(text)
    saved = saves.preserve_worktree(fx.cfg, tree, why="fixture")
    assert saved is not None, "the fixture preserve saved nothing"
    return saved.branch


def make_husk(fx: Fixture, card: str) -> Path:
    """A tree whose git admin entry is gone, moved aside by the real discard."""
    tree = worktrees.create_worktree(fx.cfg, card)
    (tree / "draft.txt").write_text("half a thought\n")
    admin = fx.repo.root / ".git" / "worktrees" / tree.name
    for path in sorted(admin.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    admin.rmdir()
    res = worktrees.discard_worktree(fx.cfg, tree, why="fixture")
    husks = sorted((fx.cfg.worktrees_dir / naming.HUSK_DIR).iterdir())
    assert husks, f"no husk was moved aside: {res}"
    return husks[-1]


def build(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    husk: bool = True,
    attempts: bool = False,
    candidates: bool = False,
) -> Fixture:
    """Four saves over three cards (one of them gone from the board), and one husk; with
    `attempts`, three failed attempts too: two of c-1 and one of c-2; with `candidates`,
    c-1's two best-of-N candidates the race did not choose (trees feat-c-1-2, feat-c-1-3)."""
    pin_time(monkeypatch)
    repo = make_repo(tmp_path)
    repo.cfg.board_dir.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(repo.cfg.db_path, create=True, clock=lambda: "2026-01-01T08:00:00.000Z")
    fx = Fixture(repo, store)
    _card(store, "Parse board.toml with line numbers", "ready")
    _card(store, MARKUP_TITLE, "cancelled")
    fx.saves["dirty"] = save(
        fx,
        "c-1",
        {"app.py": "print('hello, board')\nprint('saved')\n"},
        commit="LINES = 3\nname = 'board'\n",
    )
    fx.saves["escapes"] = save(fx, "c-2", {"login.py": ESCAPES}, slug="fix-login")
    fx.saves["gone"] = save(fx, "c-7", {"notes.txt": "nobody's card any more\n"})
    fx.saves["kept"] = preserve(fx, "c-1", {"lib.py": "line 0\nchanged\n"}, slug="retry")
    if husk:
        fx.husk = make_husk(fx, "c-2")
    if attempts:
        attempt = naming.KIND_ATTEMPT
        fx.saves["c-1 attempt 1"] = save(fx, "c-1", {"app.py": "print('try 1')\n"}, kind=attempt)
        fx.saves["c-1 attempt 2"] = save(fx, "c-1", {"app.py": "print('try 2')\n"}, kind=attempt)
        fx.saves["c-2 attempt 1"] = save(
            fx, "c-2", {"login.py": "login = 1\n"}, slug="fix-login", kind=attempt
        )
    if candidates:
        raced = naming.KIND_CANDIDATE
        for k in (2, 3):
            text = "".join(f"print('candidate {k}, line {i}')\n" for i in range(1, k + 1))
            fx.saves[f"c-1 candidate {k}"] = save(fx, "c-1", {"app.py": text}, str(k), kind=raced)
    return fx


def make_app(fx: Fixture) -> BoardApp:
    """The real app, no store watch (the screens poll on their own), no blink, no animation."""
    app = BoardApp(fx.cfg, fx.store, poll_interval=0)
    app.animation_level = "none"
    app.cursor_blink = False
    return app


def stranded_screen(fx: Fixture, poll_s: float = 0) -> StrandedScreen:
    return StrandedScreen(fx.cfg, fx.store, clock=fixed_clock, poll_s=poll_s)


async def open_browser(pilot: Pilot[Any], fx: Fixture, poll_s: float = 0) -> StrandedScreen:
    """Push the browser and wait for its first list."""
    screen = stranded_screen(fx, poll_s)
    await pilot.app.push_screen(screen)
    await wait_for(pilot, lambda: screen.loaded, what="the first stranded list")
    await wait_for(pilot, lambda: bool(screen.query("FooterKey")), what="the footer keys")
    await pilot.pause()
    return screen


async def select(pilot: Pilot[Any], screen: StrandedScreen, name: str) -> None:
    """Put the cursor on the row named `name` (branch or husk)."""
    table = screen.table
    for i, row in enumerate(table.items):
        if row.name == name:
            table.cursor = i
            await pilot.pause()
            return
    raise AssertionError(f"{name} is not in the list: {[r.name for r in table.items]}")


async def wait_loaded_again(pilot: Pilot[Any], screen: StrandedScreen, before: int) -> None:
    await wait_for(pilot, lambda: screen.load_count > before and not screen.busy, what="a reload")


async def diff_loaded(pilot: Pilot[Any]) -> DiffScreen:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, DiffScreen), what="the diff screen")
    screen = pilot.app.screen
    assert isinstance(screen, DiffScreen)
    await wait_for(pilot, lambda: screen.buffer.done, what="the diff to load")
    await wait_for(pilot, lambda: bool(screen.query("FooterKey")), what="the footer keys")
    await pilot.pause()
    await pilot.pause()
    return screen


def screen_lines(app: BoardApp) -> list[str]:
    """The text of every cell the active screen paints, row by row."""
    strips = app.screen._compositor.render_strips()
    return ["".join(segment.text for segment in strip) for strip in strips]


def status(app: BoardApp) -> tuple[str, bool]:
    return app.last_status


async def open_diff(pilot: Pilot[Any], fx: Fixture, name: str) -> tuple[StrandedScreen, DiffScreen]:
    """From the browser, enter on the row named `name`; the browser and the loaded diff."""
    screen = await open_browser(pilot, fx)
    await select(pilot, screen, name)
    await pilot.press("enter")
    return screen, await diff_loaded(pilot)

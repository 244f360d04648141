"""Shared set-up for the drive, fold, loop and crash tests: a real board over a real repo.

Their board is `make_board(tmp_path, origin=True)` (tests/support/boards.py): a bare origin,
a clone with `board init` done, and a board.toml (`write_config`, here) whose coder tiers
and gates are the real scripts under tests/scripts/. Timeouts are kept to fractions of a
second where a test waits on one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from board.core import config
from board.core.cards import actions
from board.core.model import Card, CardDraft
from board.core.store import SQLiteStore

from tests.support.paths import script
from tests.support.repos import GIT_ENV, git


def board_run(repo: Path, *args: str) -> subprocess.Popen[str]:
    """`board run ARGS` in its own process, as an operator starts it."""
    return subprocess.Popen(
        [sys.executable, "-m", "board.cli", "run", *args],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **GIT_ENV},
    )


def edit_tier(pidfile: Path | None = None) -> list[str]:
    argv = [script("coder_edit.sh"), "{worktree}", "{card}"]
    return argv + ([str(pidfile)] if pidfile else [])


def write_config(
    repo: Path,
    tiers: dict[str, list[str]] | None = None,
    ladder: list[str] | None = None,
    gate: list[str] | None = None,
    board: dict[str, Any] | None = None,
    coder: dict[str, Any] | None = None,
    gate_opts: dict[str, Any] | None = None,
    publish: dict[str, Any] | None = None,
    tree: dict[str, Any] | None = None,
    store: dict[str, Any] | None = None,
    usage: dict[str, str] | None = None,
    budget: dict[str, Any] | None = None,
    notify: dict[str, Any] | None = None,
    imports: dict[str, Any] | None = None,
) -> config.Config:
    """board.toml rewritten for a test: quick ticks, short timeouts, these tiers (`store`:
    the `[store]` table, for a board on PostgreSQL; `usage`: a tier's usage reader, by
    tier name; `budget`, `notify`, `imports`: the `[budget]`, `[notify]`, `[import]` tables)."""
    tiers = tiers or {"default": edit_tier()}
    overrides: dict[str, dict[str, Any]] = {
        "board": {"max_concurrent": 2, "loop_interval_s": 0.05, **(board or {})},
        "coder": {
            "ladder": ladder or list(tiers),
            "tiers": {
                name: {"argv": argv, **({"usage": usage[name]} if name in (usage or {}) else {})}
                for name, argv in tiers.items()
            },
            "timeout_s": 30,
            "first_output_timeout_s": 10,
            "timeout_split_after": 0,
            **(coder or {}),
        },
        "gate": {"argv": gate or [], "retries": 1, "timeout_s": 30, **(gate_opts or {})},
        "publish": {**(publish or {})},
        "tree": {**(tree or {})},
        "store": {**(store or {})},
        "budget": {**(budget or {})},
        "notify": {**(notify or {})},
        "import": {**(imports or {})},
    }
    config.write_default(repo, overrides)
    return config.load(repo)


def add_card(
    store: SQLiteStore,
    title: str = "a feature",
    surface: list[str] | None = None,
    spec: str = "build the feature",
    **kw: Any,
) -> Card:
    draft = CardDraft(title=title, spec=spec, lane="ready", surface=list(surface or []), **kw)
    return actions.add_card(store, draft)


def run_branch_log(cfg: config.Config) -> list[str]:
    """Subjects on the run branch, oldest first, first-parent only."""
    text = git(cfg.root, "log", "--first-parent", "--reverse", "--format=%s", cfg.board.run_branch)
    return text.splitlines()


def show(cfg: config.Config, ref: str, path: str) -> str | None:
    try:
        return git(cfg.root, "show", f"{ref}:{path}")
    except AssertionError:
        return None


def stranded_branches(cfg: config.Config) -> list[str]:
    text = git(cfg.root, "for-each-ref", "--format=%(refname:short)", "refs/heads/stranded/")
    return [x for x in text.splitlines() if x]


def read_pids(path: Path) -> list[int]:
    if not path.exists():
        return []
    return [int(x) for x in path.read_text().split() if x.strip()]


def comments(store: SQLiteStore, card_id: str) -> list[str]:
    return [e.text for e in store.timeline(card_id) if e.kind == "comment"]


def loop_log(cfg: config.Config) -> list[dict[str, Any]]:
    """The loop's log (`.board/loop.log`), one dict a line."""
    log = Path(cfg.board_dir) / "loop.log"
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


def skip_reasons(cfg: config.Config, card_id: str) -> list[str]:
    """The reasons the loop's claim logged for skipping `card_id`."""
    lines = loop_log(cfg)
    return [x["reason"] for x in lines if x.get("event") == "skip" and x.get("card") == card_id]


def events(store: SQLiteStore, card_id: str) -> list[str]:
    return [e.text for e in store.timeline(card_id)]


def drive_one(cfg: config.Config, store: SQLiteStore, card: Card) -> Any:
    """Claim `card` and run its drive to the end in this thread; return the DriveEnd."""
    from board.core.drive import drive

    token = drive.claim(cfg, store, card)
    assert token, f"{card.id} could not be claimed"
    return drive.Drive(cfg, store, card.id, token).run()


def built_tree(
    cfg: config.Config, store: SQLiteStore, card: Card, path: str, text: str
) -> tuple[str, Path, str]:
    """Claim the card, make its tree and commit `text` to `path` in it, as a drive would:
    (the drive's token, the tree, the commit the tree started from)."""
    from board.core.drive import drive
    from board.core.git import worktrees

    token = drive.claim(cfg, store, card)
    assert token
    tree = worktrees.create_worktree(cfg, card.id, store=store)
    start = git(tree, "rev-parse", "HEAD")
    (tree / path).parent.mkdir(parents=True, exist_ok=True)
    (tree / path).write_text(text)
    git(tree, "add", "-A", path)
    git(tree, "commit", "-q", "-m", f"{card.id} work")
    return token, tree, start

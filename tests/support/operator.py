"""Helpers for the push and operator tests: real repos, real trees, real processes.

Trees are made with plain git the way the board lays them out (`.worktrees/feat-<id>` on
`feat/<id>`), so these tests do not depend on how a drive builds them.
"""

from __future__ import annotations

import json
import sys
import threading
import tomllib
from pathlib import Path
from typing import Any

from board.core import config
from board.core.cards import actions
from board.core.model import Card, CardDraft
from board.core.store import Expect, Store, open_store

from tests.support.paths import SCRIPTS, script
from tests.support.repos import git

PR_OK = SCRIPTS / "pr_ok.py"
PR_FAIL = SCRIPTS / "pr_fail.py"


def configure(
    repo: Path, coder: list[str] | None = None, gate: list[str] | None = None, **publish: Any
) -> config.Config:
    """Rewrite board.toml with these [publish] keys, a coder and a gate, and load it; the
    `[store] url` it had (a PostgreSQL board) is kept."""
    sections: dict[str, dict[str, Any]] = {"publish": dict(publish)}
    path = repo / config.CONFIG_NAME
    url = tomllib.loads(path.read_text()).get("store", {}).get("url") if path.exists() else ""
    if url:
        sections["store"] = {"url": url}
    sections["gate"] = {"argv": list(gate or []), "timeout_s": 30, "retries": 0}
    if coder is not None:
        sections["coder"] = {
            "ladder": ["default"],
            "timeout_s": 60,
            "first_output_timeout_s": 20,
            "tiers": {"default": {"argv": list(coder)}},
        }
    config.write_default(repo, sections)
    return config.load(repo)


def coder(name: str) -> list[str]:
    """A test coder from tests/scripts (the drive engineer's shared fixtures)."""
    return ["sh", script(name), "{worktree}", "{card}"]


def gate(name: str) -> list[str]:
    return ["sh", script(name)]


class DriveThread:
    """A real drive of a claimed card running in a thread, with its own store connection."""

    def __init__(self, cfg: config.Config, store: Store, card_id: str) -> None:
        from board.core.drive import drive

        token = drive.claim(cfg, store, store.get(card_id))
        assert token, f"{card_id} could not be claimed"
        self.token = token
        self.cfg = cfg
        self.own = open_store(cfg)
        self.drive = drive.Drive(cfg, self.own, card_id, token)
        self.end: Any = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.end = self.drive.run()
        finally:
            self.own.close()

    def join(self, timeout: float = 30.0) -> Any:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the drive did not end"
        return self.end


def run_drive(cfg: config.Config, store: Store, card_id: str) -> Any:
    return DriveThread(cfg, store, card_id).join()


def pr_argv_ok(record: Path, draft_item: bool = False) -> list[str]:
    """A `gh pr create`-shaped argv for the stub PR service that records each call."""
    argv = [sys.executable, str(PR_OK), str(record), "--head", "{branch}", "--base", "{base}"]
    argv += ["--title", "{title}", "--body-file", "{body_file}"]
    return [*argv, "{draft}"] if draft_item else argv


def pr_calls(record: Path) -> list[dict[str, Any]]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines()]


def add_card(store: Store, title: str = "Add a feature", **kw: Any) -> Card:
    kw.setdefault("spec", "build it")
    return actions.add_card(store, CardDraft(title=title, lane="ready", **kw))


def claim(store: Store, card_id: str, tier: str = "default") -> str:
    """Claim a card as the loop does: a drive row, the card `working` under its token."""
    attempt = store.next_attempt(card_id)
    drive = store.start_drive(card_id, tier, attempt, f".board/logs/{card_id}/{attempt}.log", 0)
    store.update(card_id, Expect(lane="ready"), {"lane": "working", "drive": drive.id}, "loop")
    return drive.id


def make_tree(cfg: config.Config, card: Card, files: dict[str, str], commit: bool = True) -> Path:
    """The card's tree as a drive leaves it: `.worktrees/feat-<id>` on `feat/<id>`, work in it."""
    tree = cfg.worktrees_dir / f"feat-{card.id}"
    git(cfg.root, "worktree", "add", "-q", "-b", f"feat/{card.id}", str(tree), cfg.board.base)
    for name, text in files.items():
        path = tree / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if commit:
        git(tree, "add", "-A")
        git(tree, "commit", "-q", "-m", f"{card.id}: {card.title}")
    return tree


def set_branch(store: Store, card_id: str, branch: str) -> Card:
    return store.update(card_id, Expect(), {"branch": branch}, "loop")


def origin(cfg: config.Config) -> Path:
    return Path(git(cfg.root, "remote", "get-url", "origin"))


def remote_sha(cfg: config.Config, branch: str) -> str | None:
    out = git(origin(cfg), "for-each-ref", "--format=%(objectname)", f"refs/heads/{branch}")
    return out or None


def stranded(cfg: config.Config) -> list[str]:
    out = git(cfg.root, "for-each-ref", "--format=%(refname:short)", "refs/heads/stranded/")
    return out.split()

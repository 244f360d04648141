"""Real git repositories for the worktree and stranded-work tests: a bare origin plus a clone.

Setup runs git through `board.core.proc` (no stdin, own process group, timeout) like the code
under test; board.toml is written with `config.write_default`, no CLI subprocess, so each repo
costs a handful of git calls.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from board.core import config, proc
from board.core.model import CardDraft
from board.core.store import SQLiteStore

GIT_ENV = {
    "GIT_AUTHOR_NAME": "tester",
    "GIT_AUTHOR_EMAIL": "tester@example.com",
    "GIT_COMMITTER_NAME": "tester",
    "GIT_COMMITTER_EMAIL": "tester@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}
CORE_DIR = Path(__file__).resolve().parent.parent


def git(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    """Test-side git; fails the test with git's own words."""
    res = proc.run(("git", *args), cwd=cwd, timeout=60, env={**GIT_ENV, **(env or {})})
    if check and res.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}: {res.stderr.strip()}")
    return res.stdout.rstrip("\n")


@dataclass
class Repo:
    root: Path
    origin: Path | None
    cfg: config.Config

    def git(self, *args: str, cwd: Path | None = None, check: bool = True) -> str:
        return git(cwd or self.root, *args, check=check)

    def stranded(self, under: str = "") -> dict[str, str]:
        """Short name -> commit of every branch under stranded/ (optionally stranded/<under>/)."""
        pattern = "refs/heads/stranded/" + (f"{under}/" if under else "")
        text = self.git("for-each-ref", "--format=%(refname) %(objectname)", pattern)
        return {
            line.split()[0][len("refs/heads/") :]: line.split()[1]
            for line in text.splitlines()
            if line
        }

    def show(self, ref: str, path: str) -> str | None:
        """A file's content at `ref`, or None when it is not there."""
        res = proc.run(("git", "show", f"{ref}:{path}"), cwd=self.root, timeout=30, env=GIT_ENV)
        return res.stdout if res.returncode == 0 else None

    def rev(self, ref: str) -> str | None:
        res = proc.run(
            ("git", "rev-parse", "--verify", "-q", ref), cwd=self.root, timeout=30, env=GIT_ENV
        )
        return res.stdout.strip() or None

    def commit(self, cwd: Path, files: dict[str, str], message: str) -> str:
        for name, text in files.items():
            path = cwd / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        git(cwd, "add", "--", *files)
        git(cwd, "commit", "-q", "-m", message)
        return git(cwd, "rev-parse", "HEAD")

    def store(self) -> SQLiteStore:
        """The real store file, as `board init` makes it."""
        self.cfg.board_dir.mkdir(parents=True, exist_ok=True)
        return SQLiteStore(self.cfg.db_path, create=True)


def make_repo(tmp_path: Path, remote: bool = True, name: str = "clone") -> Repo:
    """A clone of a bare origin (or a lone repo) with main pushed, a run branch and board.toml."""
    root = tmp_path / name
    origin: Path | None = None
    if remote:
        origin = tmp_path / f"{name}-origin.git"
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
        git(tmp_path, "clone", "-q", str(origin), str(root))
        git(root, "checkout", "-q", "-b", "main")
    else:
        git(tmp_path, "init", "-q", "-b", "main", str(root))
    (root / "README.md").write_text("demo\n")
    (root / "app.py").write_text("print('hello')\n")
    (root / "lib.py").write_text("".join(f"line {i}\n" for i in range(20)))
    (root / ".gitignore").write_text("node_modules/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    if remote:
        git(root, "push", "-q", "-u", "origin", "main")
    git(root, "branch", "board/run", "main")
    config.write_default(root)
    exclude = root / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.write_text(".board/\n.worktrees/\nboard.toml\n")
    return Repo(root=root, origin=origin, cfg=config.load(root))


def new_card(store: SQLiteStore, title: str = "a card") -> str:
    return store.create(CardDraft(title=title), prefix="c").id


def comments(store: SQLiteStore, card_id: str) -> list[str]:
    return [e.text for e in store.timeline(card_id) if e.kind == "comment"]


def python_argv(code: str) -> list[str]:
    """Run a snippet in a fresh interpreter (for the two-process and SIGKILL tests)."""
    return [sys.executable, "-c", code]


def child_env(**extra: str) -> dict[str, str]:
    env = {**GIT_ENV, **extra}
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    return env

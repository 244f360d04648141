"""Real git repositories for the tests, from one builder, and the test side's git and CLI.

`make_repo` makes a bare origin and a clone (or a lone repository) with main committed and
pushed, and sets the board up in it one of two ways:

- `init="direct"` (the default): board.toml written by `config.write_default`, the run branch
  made with git, `.board/`, `.worktrees/` and board.toml excluded. A handful of git calls and
  no process for the CLI: what most tests need, cheaply.
- `init="cli"`: the real `board init`, in its own process, as an operator runs it (board.toml
  from its template, the store, the run branch, the excludes init writes). For tests of the
  command line and of the loop end to end, which must see a repository exactly as init
  leaves it; it costs an interpreter start per repository.
- `init=""`: no board at all (for the tests of init itself and of what a verb says without it).

Setup runs git through `board.core.proc` (no stdin, own process group, timeout) like the
code under test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from board.core import config, proc
from board.core.model import CardDraft
from board.core.store import Store, open_store

GIT_ENV = {
    "GIT_AUTHOR_NAME": "tester",
    "GIT_AUTHOR_EMAIL": "tester@example.com",
    "GIT_COMMITTER_NAME": "tester",
    "GIT_COMMITTER_EMAIL": "tester@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}

# What main holds in every test repository.
FILES = {
    "README.md": "demo\n",
    "app.py": "print('hello')\n",
    "lib.py": "".join(f"line {i}\n" for i in range(20)),
    ".gitignore": "node_modules/\n",
}


def git(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    """Test-side git; fails the test with git's own words. Its output, less the last newline."""
    res = proc.run(("git", *args), cwd=cwd, timeout=60, env={**GIT_ENV, **(env or {})})
    if check and res.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}: {res.stderr.strip()}")
    return res.stdout.rstrip("\n")


def run_cli(
    cwd: Path,
    *args: str,
    input_text: str | None = None,
    timeout: float = 60,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the real `board` command line in a subprocess, as an operator would (in `env`
    when given, whole: a HOME of the test's own, no PG* variables)."""
    return subprocess.run(
        [sys.executable, "-m", "board.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input_text,
        stdin=None if input_text is not None else subprocess.DEVNULL,
        timeout=timeout,
        env={**os.environ, **GIT_ENV} if env is None else env,
    )


@dataclass
class Repo:
    """A repository `make_repo` made: its root, its origin (None for a lone one), its board."""

    root: Path
    origin: Path | None
    board: config.Config | None = None

    @property
    def cfg(self) -> config.Config:
        """board.toml as it was when the repository was made."""
        assert self.board is not None, "no board in this repository (made with init='')"
        return self.board

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

    def store(self) -> Store:
        """The real store board.toml names (the file, as `board init` makes it, by default)."""
        self.cfg.board_dir.mkdir(parents=True, exist_ok=True)
        return open_store(self.cfg, create=True)


def make_repo(
    tmp_path: Path,
    *,
    init: str = "direct",
    remote: bool = True,
    commit: bool = True,
    store_url: str = "",
) -> Repo:
    """A clone of a bare origin (or, `remote=False`, a lone repository) with main committed
    (and pushed), and the board set up as `init` says (see the module's docstring).

    `store_url` puts the board on that PostgreSQL database (`board init --store URL`, or
    `[store] url` in the board.toml written directly) instead of the SQLite file.

    `commit=False` makes a lone repository with nothing in it, for tests that build its
    history themselves.
    """
    assert init in ("direct", "cli", ""), f"no such init: {init!r}"
    assert commit or (not remote and init != "direct"), "an empty repository has no run branch"
    root = tmp_path / ("clone" if remote else "repo")
    origin: Path | None = None
    if remote:
        origin = tmp_path / "origin.git"
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
        git(tmp_path, "clone", "-q", str(origin), str(root))
        git(root, "checkout", "-q", "-b", "main")
    else:
        git(tmp_path, "init", "-q", "-b", "main", str(root))
    if commit:
        for name, text in FILES.items():
            (root / name).write_text(text)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
        if remote:
            git(root, "push", "-q", "-u", "origin", "main")
    if init == "cli":
        res = run_cli(root, "init", *(("--store", store_url) if store_url else ()))
        assert res.returncode == 0, f"board init failed: {res.stderr}"
    elif init == "direct":
        git(root, "branch", "board/run", "main")
        config.write_default(root, {"store": {"url": store_url}} if store_url else None)
        exclude = root / ".git" / "info" / "exclude"
        exclude.parent.mkdir(parents=True, exist_ok=True)
        exclude.write_text(".board/\n.worktrees/\nboard.toml\n")
    assert init or not store_url, "no board.toml to name the store in"
    return Repo(root=root, origin=origin, board=config.load(root) if init else None)


def new_card(store: Store, title: str = "a card") -> str:
    return store.create(CardDraft(title=title), prefix="c").id


def comments(store: Store, card_id: str) -> list[str]:
    return [e.text for e in store.timeline(card_id) if e.kind == "comment"]


def python_argv(code: str) -> list[str]:
    """Run a snippet in a fresh interpreter (for the two-process and SIGKILL tests)."""
    return [sys.executable, "-c", code]


def child_env(**extra: str) -> dict[str, str]:
    env = {**GIT_ENV, **extra}
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    return env

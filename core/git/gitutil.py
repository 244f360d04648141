"""Git through one door: every git call runs via `proc.run` (no stdin, own group, timeout).

Every git call is a git command, so invariant 3 (no stdin, its own process group, a
timeout) holds for git too, and the plumbing the board relies on (merge-tree
--write-tree, update-ref with an old value) is there as git has it. GitPython is not a
dependency: see docs/architecture.md ("Why not GitPython").
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypedDict, Unpack

from board.core import locks, proc
from board.core.errors import BoardError, GitError, Refused

MIN_GIT = (2, 38)
GIT_TIMEOUT_S = 120.0

# A save must never run hooks or sign; the identity is pinned so commits are reproducible.
BOARD_IDENTITY = {
    "GIT_AUTHOR_NAME": "board",
    "GIT_AUTHOR_EMAIL": "board@localhost",
    "GIT_COMMITTER_NAME": "board",
    "GIT_COMMITTER_EMAIL": "board@localhost",
}
NO_HOOKS = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false")


def git(
    cwd: str | Path,
    *args: str,
    timeout: float = GIT_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    input_bytes: bytes | None = None,
) -> proc.Result:
    """Run `git <args>` in `cwd`; raise GitError with git's own words when `check` and it fails.

    `git worktree` runs under the repository's admin lock (see `_admin_lock`)."""
    if _subcommand(args) == "worktree":
        began = time.monotonic()
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(admin_locked(cwd, timeout))
        except Refused:
            if check:
                raise GitError(f"git {' '.join(args[:3])}: timed out") from None
            return proc.Result(("git", *args), -9, "", "timed out", timed_out=True)
        with stack:
            left = max(timeout - (time.monotonic() - began), 1.0)
            return _git(cwd, args, left, env, check, input_bytes)
    return _git(cwd, args, timeout, env, check, input_bytes)


@contextlib.contextmanager
def admin_locked(cwd: str | Path, timeout: float = GIT_TIMEOUT_S) -> Iterator[None]:
    """Hold the repository's admin lock (`_admin_lock`) while the board changes
    .git/worktrees itself: an admin folder deleted while `git worktree add` reads them
    all failed the add with "Invalid path '.git/worktrees/…'", a card's self-heal in 1
    round of 20 at 6 drives. Refused after `timeout` seconds."""
    lock = _admin_lock(cwd)
    if lock is None:
        yield
        return
    held = locks.FileLock(lock)
    held.acquire(timeout, f"the worktree admin lock {lock} is held; try again")
    try:
        yield
    finally:
        held.release()


def _subcommand(args: Sequence[str]) -> str:
    """The git command in `args`, past the options before it (`-c key=value`, `-C dir`)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-c", "-C") else 1
    return args[i] if i < len(args) else ""


@functools.lru_cache(maxsize=64)
def _admin_lock_of(cwd: str) -> Path | None:
    res = proc.run(
        ("git", "rev-parse", "--path-format=absolute", "--git-common-dir"),
        cwd=cwd,
        timeout=GIT_TIMEOUT_S,
        env={"LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"},
    )
    if res.returncode != 0 or res.timed_out or not res.stdout.strip():
        return None
    return Path(res.stdout.strip()) / "board-worktree.lock"


def _admin_lock(cwd: str | Path) -> Path | None:
    """The file whose lock serialises the board's own `git worktree` calls on one
    repository (threads and processes alike): git writes a new tree's admin folder
    (.git/worktrees/NAME) in steps, and a `worktree list` or `remove` that reads it
    half-written fails with "failed to read .git/worktrees/…/commondir", which cost a card
    a self-heal in 3 of 5 rounds of 40 cards at 6 drives. None outside a repository: git
    then fails on its own words."""
    return _admin_lock_of(str(Path(cwd).resolve()))


def _git(
    cwd: str | Path,
    args: Sequence[str],
    timeout: float,
    env: Mapping[str, str] | None,
    check: bool,
    input_bytes: bytes | None,
) -> proc.Result:
    full_env = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}
    if env:
        full_env.update(env)
    res = proc.run(
        ("git", *args),
        cwd=cwd,
        timeout=timeout,
        env=full_env,
        input_bytes=input_bytes,
    )
    if res.missing:
        if not Path(cwd).is_dir():  # Popen says "not found" for a missing cwd too
            raise BoardError(f"{cwd}: no such directory")
        raise BoardError("git is not installed or not on PATH: board needs git >= 2.38")
    if check and (res.returncode != 0 or res.timed_out):
        what = "timed out" if res.timed_out else (res.stderr.strip() or res.stdout.strip())
        raise GitError(f"git {' '.join(args[:3])}: {what.splitlines()[-1] if what else 'failed'}")
    return res


class GitOptions(TypedDict, total=False):
    """The options `ok` passes on to `git`, typed so a misspelt one fails the type check."""

    timeout: float
    env: Mapping[str, str] | None
    input_bytes: bytes | None


class CheckedGitOptions(GitOptions, total=False):
    """The options `out` passes on to `git`: `ok`'s, and whether a failure raises."""

    check: bool


def lines(text: str) -> list[str]:
    """git's output as lines, split at its newlines only. `str.splitlines` also splits at
    U+0085, U+2028 and other breaks that git allows inside a branch name, a path or a commit
    subject, which would cut one ref or commit in two."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return parts


def out(cwd: str | Path, *args: str, **kw: Unpack[CheckedGitOptions]) -> str:
    """stdout of a git command, stripped of its final newline."""
    return git(cwd, *args, **kw).stdout.rstrip("\n")


def ok(cwd: str | Path, *args: str, **kw: Unpack[GitOptions]) -> bool:
    return git(cwd, *args, check=False, **kw).returncode == 0


def version() -> tuple[int, int, int]:
    import shutil  # only `require_git` asks: most verbs never import it

    if shutil.which("git") is None:
        raise BoardError("git is not installed or not on PATH: board needs git >= 2.38")
    text = out(Path.cwd() if Path.cwd().exists() else "/", "--version")
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not m:
        raise BoardError(f"cannot read git's version from {text!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def require_git() -> None:
    """Refuse to start on a git without `merge-tree --write-tree` (2.38)."""
    v = version()
    if v[:2] < MIN_GIT:
        raise BoardError(
            f"git {'.'.join(map(str, v))} is too old: board needs git >= 2.38 "
            "(for merge-tree --write-tree)"
        )


def toplevel(start: str | Path) -> Path:
    """The root of the main working tree that contains `start`."""
    res = git(start, "rev-parse", "--path-format=absolute", "--git-common-dir", check=False)
    if res.returncode != 0:
        raise BoardError(
            f"{Path(start).resolve()} is not inside a git repository: run `git init` first"
        )
    common = Path(res.stdout.strip())
    if common.name == ".git":
        return common.parent
    top = git(start, "rev-parse", "--show-toplevel", check=False)
    if top.returncode == 0 and top.stdout.strip():
        return Path(top.stdout.strip())
    raise BoardError(f"{Path(start).resolve()} is a bare repository: board needs a working tree")


def is_commit_id(text: str) -> bool:
    """A full object id as git prints one (SHA-1 or SHA-256, lower case): a name that
    cannot mean anything but itself, so nothing needs asking git what it names."""
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def rev(cwd: str | Path, ref: str) -> str | None:
    """The commit a ref names, or None."""
    res = git(cwd, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    return res.stdout.strip() or None if res.returncode == 0 else None


def detect_base(cwd: str | Path, remote: str = "origin") -> tuple[str, str] | None:
    """The branch a board here should build for, and where that came from.

    The remote's default branch wins (`refs/remotes/<remote>/HEAD`, which `git clone`
    sets; read locally, no network): it is what the team builds for, whatever branch
    this clone happens to have checked out. Without one, the branch checked out now
    (a `master` repository gets `master`, even before its first commit). None when
    HEAD is detached and the remote names no default.
    """
    res = git(cwd, "symbolic-ref", "--quiet", f"refs/remotes/{remote}/HEAD", check=False)
    target = res.stdout.strip()
    prefix = f"refs/remotes/{remote}/"
    if res.returncode == 0 and target.startswith(prefix) and rev(cwd, target):
        return target[len(prefix) :], f"the default branch of {remote}"
    res = git(cwd, "symbolic-ref", "--quiet", "HEAD", check=False)
    head = res.stdout.strip()
    if res.returncode == 0 and head.startswith("refs/heads/"):
        return head[len("refs/heads/") :], "the branch checked out here"
    return None


def short_ref(ref: str) -> str:
    """`refs/heads/x` → `x`, `refs/remotes/origin/x` → `origin/x`."""
    for prefix in ("refs/heads/", "refs/remotes/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref


def check_branch_name(cwd: str | Path, name: str) -> None:
    """Refuse a name git would not accept as a branch."""
    if not name or git(cwd, "check-ref-format", "--branch", name, check=False).returncode != 0:
        raise GitError(f"not a valid branch name: {name!r}")


def identity_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(BOARD_IDENTITY)
    if extra:
        env.update(extra)
    return env


def argv_with(cmd: Sequence[str], **subs: str) -> list[str]:
    """Substitute {name} placeholders inside each argv item; never joins into a shell string."""
    result = []
    for item in cmd:
        for key, value in subs.items():
            item = item.replace("{" + key + "}", value)
        result.append(item)
    return result


def is_git_repo_dir(path: Path) -> bool:
    return (path / ".git").exists()


def env_without_git_vars() -> dict[str, str]:
    """The environment minus GIT_DIR & co, so a git call made from a hook context is not misled."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


READ_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}  # reads only


def stream_bytes(
    cwd: str | Path,
    args: Sequence[str],
    on_chunk: Callable[[bytes], None],
    timeout: float,
    on_start: Callable[[int], None] | None = None,
) -> proc.Result:
    """A reading git command's output passed on in raw chunks as git writes it (a diff too
    big to hold as one string, a blob to sniff); `on_start` gets git's process group, so a
    viewer closed mid-load kills it at once. The reader is its own: the diff view's
    `on_chunk` waits while the operator types, and must hold no other child's output."""
    return proc.stream(
        ("git", *args),
        cwd,
        timeout,
        on_line=_no_line,
        env=READ_ENV,
        on_start=on_start,
        on_chunk=on_chunk,
        own_reader=True,
    )


def _no_line(_line: str) -> None:
    """`stream_bytes` takes raw chunks; no line callback is made."""

"""A live tree's work against its start point, as a patch, without touching the tree.

The TUI's `d` on a working card shows what its coder has written so far, untracked files
included. `git diff` alone sees only tracked files, and `git add -N` or `git add -A` would
change the tree's own index under a running coder and the board's commit (the drive owns
that index). So the working state is staged the way a save stages it (`stage_all`: scratch
directories left out, hidden index bits looked through, the board's node_modules links
dropped) into a private copy of the index (`GIT_INDEX_FILE` at a temporary file, copied
with its mtime as the save does so git's racy-clean check still sees a same-size edit),
written as a tree object, and that tree is diffed against the point the tree started from.
The tree, its index, its branch and its HEAD are never written. The blobs `git add` writes
are loose objects nothing refers to; git's gc prunes them.

The start point is where the card's work begins: the merge base of the tree's HEAD and
the start ref (the run branch in `fold` mode, the base in `push` mode), so a commit the
board made in the tree is shown as the card's work and what other cards folded since is not.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from board.core import proc
from board.core.config import BoardSection, Config
from board.core.errors import GitError
from board.core.git import gitutil, runbranch
from board.core.git.gitutil import git, out
from board.core.git.naming import NO_PARENT_TREE, _gitfile_dir
from board.core.git.snapshot import stage_all

LIVE_DIFF_TIMEOUT_S = 600.0
_GIT_ENV = gitutil.READ_ENV
_DIFF_OPTS = (
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


def start_point(cfg: Config, tree: Path) -> str:
    """The commit the tree's work is measured from: the merge base of its HEAD and the
    start ref; HEAD itself when there is none (an unrelated history); the empty tree when
    the tree has no commit at all."""
    head = git(tree, "rev-parse", "--verify", "-q", "HEAD", check=False).stdout.strip()
    if not head:
        return NO_PARENT_TREE
    base = runbranch.start_ref(cfg)
    res = git(tree, "merge-base", head, base, check=False)
    return res.stdout.strip() or head


def working_tree_object(board: BoardSection, tree: Path) -> str:
    """The tree object of everything the tree holds now (committed, staged, modified,
    untracked), staged into a private index; the tree's own index is only read (copied)."""
    gitdir = _gitfile_dir(tree) if (tree / ".git").is_file() else tree / ".git"
    if gitdir is None or not gitdir.is_dir():
        raise GitError(f"{tree} is not a git worktree (no admin entry)")
    with tempfile.TemporaryDirectory(prefix="board-live-diff-") as scratch:
        private = Path(scratch) / "index"
        with contextlib.suppress(FileNotFoundError):
            shutil.copy2(gitdir / "index", private)
        env = {"GIT_INDEX_FILE": str(private)}
        stage_all(board, tree, env)
        return out(tree, "write-tree", env=env)


def live_diff_args(cfg: Config, tree: Path) -> list[str]:
    """The `git diff` arguments of the tree's work now against its start point."""
    start = start_point(cfg, tree)
    snapshot = working_tree_object(cfg.board, tree)
    return ["diff", "--patch", *_DIFF_OPTS, start, snapshot]


def stream_live_diff(
    cfg: Config,
    tree: Path,
    on_chunk: Callable[[bytes], None],
    on_start: Callable[[int], None] | None = None,
    timeout: float = LIVE_DIFF_TIMEOUT_S,
) -> proc.Result:
    """The live tree's patch, its bytes passed on as git writes them (the diff view's feed);
    `on_start` gets git's process group, so a viewer closed mid-load kills it."""
    return gitutil.stream_bytes(tree, live_diff_args(cfg, tree), on_chunk, timeout, on_start)


__all__ = ["live_diff_args", "start_point", "stream_live_diff", "working_tree_object"]

"""What a card's kept tree is in the middle of: a hand rebase, or a finished resolution.

A fold conflict keeps the card's tree and branch. Before this module, an operator who
rebased that tree onto the run branch by hand and then unblocked the card saw it thrown
into a stranded branch and rebuilt from scratch. Now the drive asks here first: a tree
whose rebase is still in progress is never touched (the card is blocked again, saying
how to finish), and a tree whose branch already holds the run branch's tip plus work of
its own is taken as the build: gated and folded, with no coder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import gitutil, runbranch, worktrees


def is_worktree(tree: Path) -> bool:
    return (tree / ".git").is_file() and not tree.is_symlink()


def card_tree(cfg: Any, card: Any) -> Path | None:
    """The card's tree on its branch (or its only tree), if one is on disk."""
    trees = [t for t in worktrees.card_trees(cfg, card.id) if is_worktree(t)]
    for tree in trees:
        branch = gitutil.out(tree, "branch", "--show-current", check=False)
        if card.branch and branch == card.branch:
            return tree
    return trees[0] if len(trees) == 1 else None


def rebase_in_progress(tree: Path) -> bool:
    """Whether a rebase was started in `tree` and neither finished nor aborted."""
    res = gitutil.git(tree, "rev-parse", "--absolute-git-dir", check=False)
    if res.returncode != 0:
        return False
    gitdir = Path(res.stdout.strip())
    return (gitdir / "rebase-merge").exists() or (gitdir / "rebase-apply").exists()


def unmerged_paths(tree: Path) -> list[str]:
    res = gitutil.git(tree, "diff", "--name-only", "--diff-filter=U", "-z", check=False)
    return sorted({p for p in res.stdout.split("\0") if p})


def resolved_onto_run(cfg: Any, tree: Path) -> str | None:
    """The run tip when `tree`'s HEAD holds it and work of its own (a finished hand
    resolution, ready to gate and fold); None otherwise, and always in `push` mode."""
    if not runbranch.folds(cfg) or rebase_in_progress(tree):
        return None
    tip = gitutil.rev(cfg.root, f"refs/heads/{cfg.run_branch}")
    head = gitutil.rev(tree, "HEAD")
    if tip is None or head is None or head == tip:
        return None
    if not gitutil.ok(tree, "merge-base", "--is-ancestor", tip, head):
        return None
    return tip


__all__ = ["card_tree", "is_worktree", "rebase_in_progress", "resolved_onto_run", "unmerged_paths"]

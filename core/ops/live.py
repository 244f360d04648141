"""What the verbs on live work share: the per-card lock, saving a card's trees, the tree a
publish works from.

`card_lock` lets one approve, salvage or resolve run per card at a time across
processes; a second one refuses at once, naming who holds it, changing nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from board.core import locks
from board.core.cards import split
from board.core.config import Config
from board.core.errors import BoardError, Refused, StrandedWorkError
from board.core.git import gitutil, naming, runbranch, treestate, worktrees
from board.core.model import Card
from board.core.publish import publish
from board.core.store import Store

WHO = "operator"
BOARD = "board"
TAIL_LINES = 20


@contextlib.contextmanager
def card_lock(cfg: Config, card_id: str, what: str) -> Iterator[None]:
    """One approve or salvage per card at a time, across processes; a second one refuses.

    Not waited for: the operator is told at once who holds it, and nothing is changed.
    """
    path = runbranch.lock_path(cfg, f"card-{card_id}")

    def busy(holder: str) -> str:
        return (
            f"{card_id}: {holder or 'another approve or salvage'} is running; "
            f"wait for it to finish (lock {path})"
        )

    with locks.file_lock(path, 0, busy, holder=f"{what} (pid {os.getpid()})"):
        yield


def tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def save_trees(
    cfg: Config, store: Store, card_id: str, why: str, trees: list[Path] | None = None
) -> tuple[list[str], list[str]]:
    """Save-then-remove trees of the card: (stranded branches made, trees kept and why)."""
    saved: list[str] = []
    kept: list[str] = []
    for tree in naming.card_trees(cfg, card_id) if trees is None else trees:
        try:
            res = worktrees.discard_worktree(cfg, tree, store=store, card_id=card_id, why=why)
        except (StrandedWorkError, BoardError) as exc:
            kept.append(f"{cfg.rel(tree)}: {exc.line()}")
            store.add_comment(card_id, f"its tree was kept: {exc.line()}", BOARD)
            continue
        saved += [s.branch for s in ([res.saved] if res.saved else []) + res.branch_saves]
        if res.existed and not res.removed:
            kept.append(f"{cfg.rel(tree)}: {res.kept or 'kept'}")
    return saved, kept


def fold_source(cfg: Config, card: Card) -> Path | str:
    """The card's tree to fold from, or its branch when no tree is left (refused: neither)."""
    tree = treestate.card_tree(cfg, card)
    if tree is not None:
        return tree
    if not card.branch or gitutil.rev(cfg.root, f"refs/heads/{card.branch}") is None:
        raise Refused(f"{card.id}: has neither a tree nor a branch: nothing to publish")
    path = cfg.worktrees_dir / naming.tree_name(card.id)
    if os.path.lexists(path):
        raise Refused(f"{card.id}: {path} is in the way and is not on {card.branch}")
    return card.branch


def tree_on(cfg: Config, card: Card, source: Path | str) -> Path:
    """A tree with the card branch checked out: its own, or a new one on the branch."""
    if isinstance(source, Path):
        return source
    path = cfg.worktrees_dir / naming.tree_name(card.id)
    cfg.worktrees_dir.mkdir(parents=True, exist_ok=True)
    gitutil.git(cfg.root, *gitutil.NO_HOOKS, "worktree", "add", "-q", str(path), source)
    return path


def branch_to_push(cfg: Config, card: Card) -> str:
    tree = treestate.card_tree(cfg, card)
    branch = gitutil.out(tree, "branch", "--show-current", check=False) if tree else ""
    branch = branch or card.branch
    if not branch or gitutil.rev(cfg.root, f"refs/heads/{branch}") is None:
        raise Refused(f"{card.id}: has no branch to push: nothing to publish")
    return branch


def after_fold(cfg: Config, store: Store, card_id: str, tree: Path, why: str) -> None:
    """A folded card's tree goes through the save (nothing is left to save) and its branch."""
    branch = gitutil.out(tree, "branch", "--show-current", check=False)
    save_trees(cfg, store, card_id, why, [tree])
    publish.drop_folded_branch(cfg, branch)
    split.clear_count(store, card_id)


__all__ = ["card_lock", "save_trees"]

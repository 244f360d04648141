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

from board.core.config import Config
from board.core.errors import BoardError
from board.core.git import gitutil, naming, runbranch
from board.core.model import REQUEUE_EVENT, RESUME_EVENT, Card, Event
from board.core.store import Store


def is_worktree(tree: Path) -> bool:
    return (tree / ".git").is_file() and not tree.is_symlink()


def card_tree(cfg: Config, card: Card) -> Path | None:
    """The card's tree on its branch (or its only tree), if one is on disk."""
    trees = [t for t in naming.card_trees(cfg, card.id) if is_worktree(t)]
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


def resolved_onto_run(cfg: Config, tree: Path) -> str | None:
    """The run tip when `tree`'s HEAD holds it and work of its own (a finished hand
    resolution, ready to gate and fold); None otherwise, and always in `push` mode."""
    if not runbranch.folds(cfg.publish) or rebase_in_progress(tree):
        return None
    tip = gitutil.rev(cfg.root, f"refs/heads/{cfg.board.run_branch}")
    head = gitutil.rev(tree, "HEAD")
    if tip is None or head is None or head == tip:
        return None
    if not gitutil.ok(tree, "merge-base", "--is-ancestor", tip, head):
        return None
    return tip


# ---------------------------------------------------------------------------------------------
# what happened to the card between two builds


_BUILD_STARTS = ("claimed by drive ", "salvage of ")


def _starts_build(event: Event) -> bool:
    return event.kind == "event" and any(m in event.text for m in _BUILD_STARTS)


def since_last_build(store: Store, card_id: str) -> list[Event]:
    """The card's events since its previous build began, up to this build's claim (newest
    first): what happened to the card between the two builds, and during the last one."""
    events = list(reversed(store.timeline(card_id)))
    found: list[Event] = []
    seen_own = False
    for event in events:
        if _starts_build(event):
            if seen_own:
                break
            seen_own = True
            continue
        if seen_own:
            found.append(event)
    return found


def requeued_since_last_build(store: Store, card_id: str) -> bool:
    """Whether the operator requeued the card since its last build: a requeue means
    "rebuild", so a kept tree is saved and a fresh one made, never carried on from."""
    return any(e.kind == REQUEUE_EVENT for e in since_last_build(store, card_id))


def note_resumable(store: Store, cfg: Config, card_id: str, branches: list[str]) -> str:
    """Record that the card's own tree was saved mid-build (a stop, a shutdown, a crash) to
    one of `branches`: the next build starts from that work instead of from scratch.
    Returns the branch recorded ('' when none of them holds the card's own tree)."""
    branch = own_branch(card_id, branches)
    if branch:
        try:
            store.add_event(card_id, branch, "board", kind=RESUME_EVENT)
        except BoardError:
            return ""
    return branch


def own_branch(card_id: str, branches: list[str]) -> str:
    """The branch among `branches` that saved the card's own tree (`feat-<id>`), or ''."""
    own = f"{naming.STRANDED}{naming.tree_name(card_id)}/"
    return next((b for b in branches if b.startswith(own)), "")


def resume_branch(store: Store, cfg: Config, card_id: str) -> str:
    """The branch holding the work of the card's interrupted build, if the next build should
    continue from it: saved since the last build began, still there, and no requeue since
    (a requeue means "rebuild"). '' otherwise."""
    events = since_last_build(store, card_id)
    if any(e.kind == REQUEUE_EVENT for e in events):
        return ""
    for event in events:
        if event.kind == RESUME_EVENT:
            branch = event.text.strip()
            if gitutil.rev(cfg.root, f"refs/heads/{branch}") is not None:
                return branch
            return ""
    return ""


def apply_saved(cfg: Config, tree: Path, branch: str) -> list[str]:
    """Put the work saved on `branch` into a fresh `tree` as uncommitted changes, merged
    three ways onto the tree's HEAD (so it lands on a newer start point too). Returns the
    conflicting paths, with the tree left untouched, when it does not apply."""
    tip = gitutil.out(cfg.root, "rev-parse", "--verify", f"refs/heads/{branch}^{{commit}}")
    res = gitutil.git(
        tree, "merge-tree", "--write-tree", "--name-only", "--no-messages", "HEAD", tip, check=False
    )
    lines = gitutil.lines(res.stdout)
    if res.returncode != 0:
        paths = sorted({p for p in lines[1:] if p}) if res.returncode == 1 else []
        return paths or [f"(git: {res.stderr.strip() or 'merge-tree failed'})"]
    gitutil.git(tree, "read-tree", "-m", "-u", "HEAD", lines[0].strip())
    gitutil.git(tree, "reset", "-q")  # the work stays in the files; the index is HEAD's again
    return []


__all__ = [
    "apply_saved",
    "note_resumable",
    "own_branch",
    "requeued_since_last_build",
    "resume_branch",
    "since_last_build",
    "card_tree",
    "is_worktree",
    "rebase_in_progress",
    "resolved_onto_run",
    "unmerged_paths",
]

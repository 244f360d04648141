"""Whether a dependency's work is in a tree: said on a card whose coder failed without it.

Tried on a real history, card 2's coder failed ("exited 3") because its tree lacked the
file card 1 had created, and nothing on the card pointed at the dependency. When a
coder or gate fails, the drive asks this module, and the block or climb reason names
each dependency whose work the tree did not start with.

A dependency's work is found from its fold (the `folded onto <run> at <sha>` event), or
else its card branch, local or on the remote. Work whose content is already in the tree
(squash-merged, rebased) counts as present.
"""

from __future__ import annotations

import re
from pathlib import Path

from board.core.config import Config
from board.core.errors import BoardError
from board.core.git import gitutil
from board.core.model import Card
from board.core.store import Store

_FOLDED = re.compile(r"folded onto \S+ at ([0-9a-f]{7,40})")


def work_commit(cfg: Config, store: Store, dep_id: str) -> tuple[str, str] | None:
    """(commit, where) of a dependency's work, or None when none is found."""
    try:
        timeline = store.timeline(dep_id)
    except BoardError:
        return None
    for event in reversed(timeline):
        m = _FOLDED.search(event.text)
        if m:
            commit = gitutil.rev(cfg.root, m.group(1))
            if commit:
                return commit, f"folded onto {cfg.board.run_branch}"
    names = [f"refs/heads/feat/{dep_id}"]
    if cfg.publish.remote:
        names.append(f"refs/remotes/{cfg.publish.remote}/feat/{dep_id}")
    for name in names:
        commit = gitutil.rev(cfg.root, name)
        if commit:
            return commit, f"on {name.removeprefix('refs/heads/').removeprefix('refs/remotes/')}"
    return None


def _holds(cwd: str | Path, start: str, commit: str) -> bool:
    """Whether `start` holds `commit`: as an ancestor, or its content (a merge adds nothing)."""
    if gitutil.ok(cwd, "merge-base", "--is-ancestor", commit, start):
        return True
    res = gitutil.git(
        cwd, "merge-tree", "--write-tree", "--no-messages", start, commit, check=False
    )
    if res.returncode != 0:
        return False
    tree = gitutil.rev(cwd, start)
    own = gitutil.out(cwd, "rev-parse", f"{tree}^{{tree}}") if tree else ""
    return res.stdout.split("\n", 1)[0].strip() == own


def missing(cfg: Config, store: Store, card: Card, start: str) -> list[str]:
    """One phrase per dependency whose work the tree that started at `start` lacks."""
    found = []
    for dep in card.deps:
        work = work_commit(cfg, store, dep)
        if work is None:
            continue
        commit, where = work
        try:
            if _holds(cfg.root, start, commit):
                continue
        except BoardError:
            continue
        found.append(f"{dep}'s work ({commit[:10]}, {where}) is not in it")
    return found


def note(cfg: Config, store: Store, card: Card, start: str) -> str:
    """'' or `; its tree (started at …) lacks …`, to append to a failure's reason."""
    if not start or not card.deps:
        return ""
    try:
        lacking = missing(cfg, store, card, start)
    except BoardError:
        return ""
    if not lacking:
        return ""
    return f"; its tree (started at {start[:10]}) lacks a dependency: {'; '.join(lacking)}"


__all__ = ["missing", "note", "work_commit"]

"""A tree that provably holds nothing to save goes without the save's snapshot: a speed
trick, fenced here.

Why: every card's tree is removed after its fold, through `discard_worktree`, which first
takes the full snapshot a save needs (its history, a private index, `git add -A`,
`write-tree`, the diff): about ten git processes, for a tree whose one commit the run
branch now holds and whose files are its commit's. With 100 drives that was 3,000
processes a run of 300 cards that found nothing to save, on a machine whose two cores were
already the limit (bench_fleet).

Here three questions decide it, each a git process of its own:

- `git status --porcelain=v2 --branch -z --untracked-files=all --ignore-submodules=none`:
  no change, staged or not, no untracked file (ignored ones are not saved either), no
  submodule moved; and HEAD is on the tree's own branch (not detached);
- `git ls-files -v`: no entry hides an edit from status (assume-unchanged, skip-worktree
  with its file present: the snapshot's `hidden_paths`);
- HEAD is the run branch's tip or an ancestor of it, so no commit of the tree's is held by
  it alone; or HEAD is the card's commit that its fold has just replayed onto the run branch
  (`replayed`, given by the drive from the fold's own result) and the replayed commit is
  there. The replay is the card's change byte for byte on the run branch's tip
  (core/git/quickfold.py, held to the rebase commit for commit by tests/test_quickfold.py);
  catching the tree up to it first wrote every file the run branch had gained since the tree
  started, only for the removal to delete them.

Anything else (one answer not as above, or git failing) returns None and the snapshot
decides, as before. tests/test_quickclean.py holds it to the snapshot: over every kind of
work the worktree tests name, whenever this says clean, the snapshot finds the tree empty.
"""

from __future__ import annotations

from pathlib import Path

from board.core.config import BoardSection
from board.core.errors import BoardError
from board.core.git import gitutil
from board.core.git.naming import _branch_of_tree_name
from board.core.git.snapshot import Work, hidden_paths


def clean_and_held(
    board: BoardSection, tree: Path, replayed: tuple[str, str] | None = None
) -> Work | None:
    """The tree's `Work` (empty: nothing to save) when it provably holds nothing the run
    branch does not; None when only the snapshot can say. `replayed`: (the card's commit,
    the commit its fold made of it on the run branch), from the fold that just ended: taken
    as the fold's word (the second is not checked to be the first's replay), so only the
    fold's own result may be passed."""
    own = _branch_of_tree_name(tree.name)
    if not own:
        return None
    res = gitutil.git(
        tree,
        "status",
        "--porcelain=v2",
        "--branch",
        "-z",
        "--untracked-files=all",
        "--ignore-submodules=none",
        check=False,
    )
    if res.returncode != 0 or res.timed_out:
        return None
    head = branch = ""
    for entry in res.stdout.split("\0"):
        if not entry:
            continue
        if not entry.startswith("# "):
            return None  # a change, an unmerged path, an untracked file
        key, _, value = entry[2:].partition(" ")
        if key == "branch.oid":
            head = value
        elif key == "branch.head":
            branch = value
    if branch != own or not gitutil.is_commit_id(head):
        return None  # detached, another branch, or no commit yet
    try:
        assumed, skipped = hidden_paths(tree)
    except BoardError:
        return None
    if assumed or skipped:
        return None
    run = f"refs/heads/{board.run_branch}"
    held = head
    if replayed is not None and head == replayed[0] and gitutil.is_commit_id(replayed[1]):
        held = replayed[1]  # the card's commit, replayed: its change is in that commit
    if not gitutil.ok(tree, "merge-base", "--is-ancestor", held, run):
        return None
    ref = f"refs/heads/{own}"
    return Work(tree=tree, head=head, branch=ref, branch_tip=head)

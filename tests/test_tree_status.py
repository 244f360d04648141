"""The drive's one `git status` (harvest.tree_status) is held to what it replaced: the tree's
HEAD and branch as `rev-parse` and `branch --show-current` name them, its changes as
`--porcelain=v1` lists them, and `staged()` to what a `git reset -q` would change in the
index (the harvest skips that reset when nothing is staged).

Each case is a real card tree left in one state: every state tests/test_quickclean.py
names (an edit, a staged change, a deletion, an edit behind an index bit, a detached HEAD,
a nested repository, ...) and those a coder leaves in a harvest (names with spaces and
quotes, an intent-to-add entry, an unmerged path, its own commit, a scratch file).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from board.core.drive import harvest
from board.core.git import worktrees

from tests.support.repos import Repo, git
from tests.test_quickclean import CASES as QUICKCLEAN_CASES


def _v1(r: Repo, t: Path) -> list[tuple[str, str]]:
    """The changes as the drive read them before: `--porcelain=v1`, scratch and the board's
    node_modules links left out by the same rules."""
    out = git(t, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all")
    found = []
    for entry in out.split("\0"):
        if len(entry) < 4:
            continue
        xy, path = entry[:2], entry[3:]
        if any(path == s.strip("/") or path.startswith(s.strip("/") + "/")
               for s in r.cfg.board.scratch):  # fmt: skip
            continue
        found.append((xy, path))
    return found


def _unmerged(r: Repo, t: Path) -> None:
    (t / "app.py").write_text("print('ours')\n")
    git(t, "commit", "-q", "-am", "ours")
    git(t, "checkout", "-q", "-b", "theirs", "HEAD~1")
    (t / "app.py").write_text("print('theirs')\n")
    git(t, "commit", "-q", "-am", "theirs")
    git(t, "checkout", "-q", "feat/c-1")
    git(t, "merge", "-q", "theirs", check=False)


def _coder_commit(r: Repo, t: Path) -> None:
    (t / "done.txt").write_text("the coder committed this\n")
    git(t, "add", "done.txt")
    git(t, "commit", "-q", "-m", "the coder's own")
    (t / "after.txt").write_text("and left this\n")


def _write(*files: tuple[str, str]) -> Callable[[Repo, Path], None]:
    def state(r: Repo, t: Path) -> None:
        for name, text in files:
            (t / name).parent.mkdir(parents=True, exist_ok=True)
            (t / name).write_text(text)

    return state


CASES: dict[str, Callable[[Repo, Path], None]] = {
    **{name: make for name, (make, _) in QUICKCLEAN_CASES.items()},
    "names with spaces, quotes and a tab": _write(
        ("a dir/with space.txt", "x\n"), ('quote"d.txt', "y\n"), ("tab\there.txt", "z\n")
    ),
    "an intent-to-add entry": lambda r, t: (
        (t / "ita.txt").write_text("soon\n"),
        git(t, "add", "-N", "ita.txt"),
    ),
    "a staged new file and an edit of it": lambda r, t: (
        (t / "new.txt").write_text("one\n"),
        git(t, "add", "new.txt"),
        (t / "new.txt").write_text("two\n"),
    ),
    "an unmerged path": _unmerged,
    "the coder's own commit and a file after it": _coder_commit,
    "a scratch file and a real one": lambda r, t: [
        _write((f"{s.strip('/')}/note.md", "scratch\n"), ("real.txt", "work\n"))(r, t)
        for s in r.cfg.board.scratch[:1]
    ],
}


@pytest.mark.parametrize("case", list(CASES))
def test_one_status_says_what_rev_parse_branch_and_v1_status_said(r: Repo, case: str) -> None:
    t = worktrees.create_worktree(r.cfg, "c-1")
    CASES[case](r, t)
    status = harvest.tree_status(r.cfg.board, t)  # first: it clears the hiding index bits
    head = git(t, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False).strip()
    assert status.head == (head or None), case
    assert status.branch == git(t, "branch", "--show-current").strip(), case
    assert status.changes == _v1(r, t), case
    assert harvest.tree_changes(r.cfg.board, t) == status.changes
    before = git(t, "ls-files", "-s", "-z")
    git(t, "reset", "-q", check=False)
    assert status.staged() == (git(t, "ls-files", "-s", "-z") != before), (
        f"{case}: staged() said {status.staged()}, the reset said otherwise"
    )

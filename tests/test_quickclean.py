"""quickclean is held to the save's snapshot: it says a tree is clean only when the snapshot
finds nothing to save in it.

Each case is a real worktree of a card, put in one state of the kinds the worktree tests
name (tests/test_worktrees.py: an edit, a staged change, a deletion, an untracked file, an
edit behind an index bit, a same-size edit in the same second, a commit the run branch does
not hold, a detached HEAD, a nested repository, ...). For every one, quickclean's answer is
checked against `snapshot.unpublished_work`; the expected answer is named too, so the trick
cannot silently stop covering its one common case (a tree whose commit was folded).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from board.core.git import quickclean, snapshot, worktrees

from tests.support.repos import Repo, git


def _fold(r: Repo, t: Path) -> None:
    """The card's one commit, and the run branch moved onto it (as a fold that fast-forwards)."""
    (t / "work.txt").write_text("the card's work\n")
    git(t, "add", "-A")
    git(t, "commit", "-q", "-m", "the card's commit")
    r.git("update-ref", f"refs/heads/{r.cfg.board.run_branch}", git(t, "rev-parse", "HEAD"))


def _hide(bit: str) -> Callable[[Repo, Path], None]:
    def state(r: Repo, t: Path) -> None:
        _fold(r, t)
        (t / "app.py").write_text("print('hidden edit')\n")
        git(t, "update-index", bit, "app.py")

    return state


def _same_second(r: Repo, t: Path) -> None:
    _fold(r, t)
    r.git("config", "core.trustctime", "false")
    app = t / "app.py"
    past = app.stat().st_mtime_ns - 100 * 10**9
    os.utime(app, ns=(past, past))
    git(t, "update-index", "--refresh")
    app.write_text("print('SAVED')\n")  # the same size as print('hello')
    os.utime(app, ns=(past, past))
    index = Path(git(t, "rev-parse", "--path-format=absolute", "--git-path", "index"))
    os.utime(index, ns=(past, past))


def _folded_then_moved_back(r: Repo, t: Path) -> None:
    before = r.rev(r.cfg.board.run_branch)
    _fold(r, t)
    r.git("update-ref", f"refs/heads/{r.cfg.board.run_branch}", before or "")


def _nested(r: Repo, t: Path) -> None:
    _fold(r, t)
    inner = t / "vendor" / "lib"
    inner.mkdir(parents=True)
    git(inner, "init", "-q")


def _ignored_only(r: Repo, t: Path) -> None:
    _fold(r, t)
    exclude = Path(git(t, "rev-parse", "--path-format=absolute", "--git-path", "info/exclude"))
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.write_text("*.log\n")
    (t / "build.log").write_text("a build's output\n")
    (t / "empty-dir").mkdir()


def _undone_commit(r: Repo, t: Path) -> None:
    (t / "work.txt").write_text("tried\n")
    git(t, "add", "-A")
    git(t, "commit", "-q", "-m", "tried, then taken back")
    git(t, "reset", "-q", "--hard", "HEAD~1")  # the commit is in the reflog only


def _edit(name: str, text: str) -> Callable[[Repo, Path], None]:
    def state(r: Repo, t: Path) -> None:
        _fold(r, t)
        (t / name).parent.mkdir(parents=True, exist_ok=True)
        (t / name).write_text(text)

    return state


def _then(*steps: Callable[[Path], object]) -> Callable[[Repo, Path], None]:
    def state(r: Repo, t: Path) -> None:
        _fold(r, t)
        for step in steps:
            step(t)

    return state


CASES: dict[str, tuple[Callable[[Repo, Path], None], bool]] = {
    # name: (how the tree is left, whether quickclean may say clean)
    "fresh": (lambda r, t: None, True),
    "folded": (_fold, True),
    "folded, ignored files and an empty directory": (_ignored_only, True),
    "a commit taken back": (_undone_commit, True),
    "an edit": (_edit("app.py", "print('edited')\n"), False),
    "a new file": (_edit("notes/deep/idea.txt", "an idea\n"), False),
    "a staged edit": (
        _then(lambda t: (t / "app.py").write_text("staged\n"), lambda t: git(t, "add", "app.py")),
        False,
    ),
    "a deletion": (_then(lambda t: (t / "lib.py").unlink()), False),
    "a staged deletion": (_then(lambda t: git(t, "rm", "-q", "lib.py")), False),
    "a mode change": (_then(lambda t: (t / "app.py").chmod(0o755)), False),
    "an edit behind assume-unchanged": (_hide("--assume-unchanged"), False),
    "an edit behind skip-worktree": (_hide("--skip-worktree"), False),
    "a same-size edit in the same second": (_same_second, False),
    "a commit the run branch does not hold": (
        lambda r, t: (
            (t / "work.txt").write_text("unfolded\n"),
            git(t, "add", "-A"),
            git(t, "commit", "-q", "-m", "not folded"),
        ),
        False,
    ),
    "folded, then the run branch moved back": (_folded_then_moved_back, False),
    "a detached HEAD": (_then(lambda t: git(t, "checkout", "-q", "--detach")), False),
    "another branch": (_then(lambda t: git(t, "checkout", "-q", "-b", "elsewhere")), False),
    "a nested repository": (_nested, False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_quickclean_says_clean_only_where_the_snapshot_finds_nothing(r: Repo, case: str) -> None:
    make, may = CASES[case]
    t = worktrees.create_worktree(r.cfg, "c-1")
    make(r, t)
    quick = quickclean.clean_and_held(r.cfg.board, t)
    work = snapshot.unpublished_work(r.cfg, t)
    if quick is not None:
        assert quick.empty and work.empty, f"{case}: clean said, but the snapshot found {work}"
        assert (quick.branch, quick.branch_tip, quick.detached) == (
            work.branch,
            work.branch_tip,
            work.detached,
        ), f"{case}: the branch the removal deletes differs"
    assert (quick is not None) == may, f"{case}: quickclean said {quick}"


def test_a_folded_tree_goes_without_the_snapshot_and_its_branch_goes_too(
    r: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = worktrees.create_worktree(r.cfg, "c-1")
    _fold(r, t)
    taken: list[Path] = []
    real = snapshot._snapshot

    def counted(cfg, tree):  # noqa: ANN001, ANN202 - the snapshot's own signature
        taken.append(tree)
        return real(cfg, tree)

    monkeypatch.setattr(snapshot, "_snapshot", counted)
    monkeypatch.setattr(worktrees.saves, "_snapshot", counted, raising=False)
    res = worktrees.discard_worktree(r.cfg, t, why="test")
    assert res.removed and res.saved is None and r.stranded() == {}
    assert taken == [], "the snapshot was taken of a tree the run branch holds whole"
    assert r.rev("refs/heads/feat/c-1") is None, "the card's branch was left behind"
    assert "feat-c-1" not in r.git("worktree", "list")


def test_a_card_commit_the_fold_replayed_goes_without_the_snapshot_or_a_catch_up(
    r: Repo,
) -> None:
    """The fold replays a card's one commit onto a run branch that moved on, and the tree
    it is removed from next is not caught up to the replay (which wrote every file the run
    branch gained): told of the replay, quickclean holds the card's commit as held, as the
    replay carries its change byte for byte. Without the replay named, or with another
    commit named, or with anything in the tree, the snapshot decides as before."""
    from board.core.git import gitutil, quickfold

    board, run = r.cfg.board, f"refs/heads/{r.cfg.board.run_branch}"
    t = worktrees.create_worktree(r.cfg, "c-1")
    start = git(t, "rev-parse", "HEAD")
    (t / "work.txt").write_text("the card's work\n")
    git(t, "add", "-A")
    git(t, "commit", "-q", "-m", "c-1: the card's commit")
    head = git(t, "rev-parse", "HEAD")
    other = worktrees.create_worktree(r.cfg, "c-2")  # another card folded meanwhile
    (other / "other.txt").write_text("another card's work\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "c-2: another card")
    tip = git(other, "rev-parse", "HEAD")
    r.git("update-ref", run, tip)
    one = quickfold.read(t, head, start)
    assert one is not None
    new = quickfold.replay(r.root, one, tip, dict(gitutil.BOARD_IDENTITY))
    assert new is not None and new != head
    r.git("update-ref", run, new, tip)
    assert r.git("diff", f"{new}^", new) == git(t, "diff", start, head), "not the card's change"

    assert quickclean.clean_and_held(board, t) is None, "its commit is not on the run branch"
    r.git("update-ref", run, tip, new)  # the replay not on the run branch (yet, or now)
    assert quickclean.clean_and_held(board, t, (head, new)) is None, "a replay not held"
    r.git("update-ref", run, new, tip)
    assert quickclean.clean_and_held(board, t, (start, new)) is None, "another commit named"
    (t / "app.py").write_text("print('after the fold')\n")
    assert quickclean.clean_and_held(board, t, (head, new)) is None, "an edit went unseen"
    git(t, "checkout", "-q", "--", "app.py")
    quick = quickclean.clean_and_held(board, t, (head, new))
    assert quick is not None and quick.empty
    assert (quick.branch, quick.branch_tip) == ("refs/heads/feat/c-1", head)

    res = worktrees.discard_worktree(r.cfg, t, why="test", replayed=(head, new))
    assert res.removed and res.saved is None and r.stranded() == {}
    assert res.branch_deleted == "refs/heads/feat/c-1" and r.rev("refs/heads/feat/c-1") is None

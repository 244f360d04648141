"""The save interrupted with SIGKILL at each step: running the edge again loses nothing.

A child process runs the real save-then-remove with BOARD_TEST_KILL_AT naming the step where
it kills itself (SIGKILL: no cleanup, no finally). After the kill the work must be in its tree
or on a verified branch; after running the edge again it must be on exactly one verified
branch and the tree gone, with no leftovers.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from board.core import proc
from board.core.git import faults, naming, worktrees

from tests.support.repos import Repo, child_env, make_repo, python_argv

STEPS = [
    "after-snapshot",
    "after-commit-tree",
    "after-update-ref",
    "before-remove",
    "during-remove",
]


def _dirty_tree(r: Repo) -> Path:
    t = worktrees.create_worktree(r.cfg, "c-1")
    r.commit(t, {"committed.py": "unpushed = 1\n"}, "unpushed work")
    (t / "app.py").write_text("edited\n")
    (t / "untracked.txt").write_text("untracked\n")
    return t


def _holds_the_work(r: Repo, ref: str) -> bool:
    return (
        r.show(ref, "committed.py") == "unpushed = 1\n"
        and r.show(ref, "app.py") == "edited\n"
        and r.show(ref, "untracked.txt") == "untracked\n"
    )


def _tree_holds_the_work(t: Path) -> bool:
    return (
        (t / "committed.py").is_file()
        and (t / "app.py").read_text() == "edited\n"
        and (t / "untracked.txt").read_text() == "untracked\n"
    )


@pytest.mark.parametrize("step", STEPS)
def test_a_save_killed_at_any_step_loses_nothing_and_a_rerun_ends_on_one_branch(
    tmp_path: Path, step: str
) -> None:
    r = make_repo(tmp_path)
    t = _dirty_tree(r)
    code = (
        "from pathlib import Path\n"
        "from board.core import config; from board.core.git import worktrees\n"
        f"cfg = config.load(Path({str(r.root)!r}))\n"
        f"worktrees.discard_worktree(cfg, Path({str(t)!r}), why='a shutdown')\n"
    )
    env = child_env(**{faults.FAULT_KILL_ENV: step})
    res = proc.run(python_argv(code), cwd=r.root, timeout=60, env=env)
    assert res.returncode == -signal.SIGKILL, f"the save was not killed at {step}: {res.stderr}"

    # right after the kill: the work is in its tree, or on a branch that holds all of it
    saved = [b for b in r.stranded("feat-c-1") if _holds_the_work(r, b)]
    assert (t.exists() and _tree_holds_the_work(t)) or saved, f"killed at {step}: the work is lost"

    # the edge again (the next boot's reap): exactly one verified branch, the tree gone
    again = worktrees.discard_worktree(r.cfg, t, why="the next boot")
    branches = r.stranded("feat-c-1")
    assert len(branches) == 1, f"killed at {step}: after the rerun {len(branches)} branches"
    (branch,) = branches
    assert _holds_the_work(r, branch), f"killed at {step}: the branch does not hold the work"
    assert not t.exists(), f"killed at {step}: the saved tree was never removed"
    assert "feat-c-1" not in r.git("worktree", "list", "--porcelain"), "a stale admin entry"
    trash = r.cfg.worktrees_dir / naming.TRASH_DIR
    assert not trash.exists() or not any(trash.iterdir()), "a killed removal left leftovers"
    if step in ("after-update-ref", "before-remove"):
        assert again.saved is not None and again.saved.reused, "a verified save was made twice"
    # and the path is usable again
    fresh = worktrees.create_worktree(r.cfg, "c-1")
    assert r.git("status", "--porcelain", cwd=fresh) == ""

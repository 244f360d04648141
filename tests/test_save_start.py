"""A save says where its tree started (issue 39, item 10), and a branch the board did not
make is not taken for a save.

The diff, the stats and the recovery commands of a save used to compare with where trees
start today (`run branch...save`): for a tree made by hand from `origin/main` while the run
branch lagged, the base's commits showed as if the coder had written them ("2 files +110"
for a one-line rescue). Each save's trailer now records `start=`, the commit its tree's own
work starts from. Real git: a bare origin, a clone, the board's own verbs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from board.core import ops
from board.core.git import naming, saves, stranded, worktrees
from board.core.model import CardDraft
from board.core.store import Expect

from board.cli import entry as cli
from tests.support.repos import Repo

BASE_WORK = "".join(f"upstream line {i}\n" for i in range(55))


def _lagging_run_branch(r: Repo) -> str:
    """origin/main two commits (110 lines) past the run branch; its tip."""
    r.commit(r.root, {"upstream_a.py": BASE_WORK}, "upstream a")
    r.commit(r.root, {"upstream_b.py": BASE_WORK}, "upstream b")
    r.git("push", "-q", "origin", "main")
    r.git("fetch", "-q", "origin")
    assert r.rev(r.cfg.board.run_branch) != r.rev("origin/main")
    return r.rev("origin/main") or ""


def _hand_made_tree(r: Repo, start: str) -> Path:
    """A tree at the board's own path and branch name, made by hand from `start`."""
    tree = r.cfg.worktrees_dir / "feat-c-1"
    r.git("worktree", "add", "-q", "-b", naming.branch_for("c-1", ""), str(tree), start)
    return tree


def _save(r: Repo, tree: Path) -> saves.SaveResult:
    res = worktrees.discard_worktree(r.cfg, tree, why="test")
    assert res.saved is not None, res
    return res.saved


def test_a_hand_made_tree_from_a_newer_base_shows_only_its_own_change(r: Repo) -> None:
    upstream = _lagging_run_branch(r)
    tree = _hand_made_tree(r, "origin/main")
    (tree / "app.py").write_text("print('rescued')\n")
    saved = _save(r, tree)
    assert saved.start == upstream, "the save did not record where its tree started"
    assert saves.trailer_of(r.cfg, saved.commit)["start"] == upstream
    assert (saved.stats.files, saved.stats.insertions, saved.stats.deletions) == (1, 1, 1)
    (listed,) = stranded.list_stranded(r.cfg)
    assert (listed.files, listed.insertions, listed.deletions) == (1, 1, 1)
    shown = stranded.show(r.cfg, saved.branch)
    assert "app.py" in shown and "upstream_a.py" not in shown, shown
    argv = stranded.diff_args(r.cfg, saved.branch)
    assert argv[-1].startswith(upstream), argv
    # the recovery commands compare with the start, and the pick carries the change alone
    lines = worktrees._save_lines(r.cfg, saved)
    assert any(f"git diff {upstream}..." in line for line in lines), lines
    result = ops.pick(r.cfg, saved.branch)
    assert result.ok and len(result.picked) == 1, result
    target = r.cfg.board.run_branch
    assert r.show(target, "upstream_a.py") is None, "the pick carried the base's commits"
    assert r.show(target, "app.py") == "print('rescued')\n"


def test_a_hand_commit_in_the_tree_is_part_of_its_work(r: Repo) -> None:
    upstream = _lagging_run_branch(r)
    tree = _hand_made_tree(r, "origin/main")
    r.commit(tree, {"lib_extra.py": "x = 1\n"}, "by hand")
    (tree / "app.py").write_text("print('rescued')\n")
    saved = _save(r, tree)
    assert saved.start == upstream
    assert (saved.stats.files, saved.stats.insertions) == (2, 2)
    result = ops.pick(r.cfg, saved.branch)
    assert result.ok and len(result.picked) == 2, result
    assert r.show(r.cfg.board.run_branch, "lib_extra.py") == "x = 1\n"
    assert r.show(r.cfg.board.run_branch, "upstream_b.py") is None


def test_a_board_tree_records_its_start_point_though_the_run_branch_moved_on(r: Repo) -> None:
    start = r.rev(r.cfg.board.run_branch)
    tree = worktrees.create_worktree(r.cfg, "c-2")
    r.commit(tree, {"feature.py": "feature = 1\n"}, "the coder's commit")
    (tree / "extra.py").write_text("extra = 2\n")
    # the run branch moves on meanwhile (another card folded)
    other = r.cfg.worktrees_dir.parent / "other"
    r.git("worktree", "add", "-q", "--detach", str(other), r.cfg.board.run_branch)
    moved = r.commit(other, {"folded.py": "f = 1\n"}, "another card")
    r.git("branch", "-f", r.cfg.board.run_branch, moved)
    r.git("worktree", "remove", "--force", str(other))
    saved = _save(r, tree)
    assert saved.start == start
    assert (saved.stats.files, saved.stats.insertions) == (2, 2)
    assert "folded.py" not in stranded.show(r.cfg, saved.branch)


def test_a_save_from_before_the_start_was_recorded_keeps_today_s_rule(r: Repo) -> None:
    tree = worktrees.create_worktree(r.cfg, "c-3")
    (tree / "app.py").write_text("print('old')\n")
    saved = _save(r, tree)
    # the same save as an older board wrote it: no start= in its trailer
    message = r.git("log", "-1", "--format=%B", saved.commit).replace(f" start={saved.start}", "")
    assert "start=" not in message
    old = r.git("commit-tree", f"{saved.commit}^{{tree}}", "-p", f"{saved.commit}^", "-m", message)
    r.git("update-ref", f"refs/heads/{saved.branch}", old)
    assert saves.start_of(r.cfg, old) is None
    assert stranded.diff_args(r.cfg, saved.branch)[-1].startswith(f"{r.cfg.board.run_branch}...")


# a branch the board did not make -------------------------------------------------------------


def _run(r: Repo, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["-C", str(r.root), *argv])
    got = capsys.readouterr()
    return code, got.out, got.err


def test_a_hand_made_stranded_branch_is_foreign_never_pruned_and_discard_asks(
    r: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    store = r.store()
    card = store.create(CardDraft(title="done card"), prefix="c")
    store.update(card.id, Expect(), {"lane": "done"}, who="test")
    tree = worktrees.create_worktree(r.cfg, card.id)
    (tree / "app.py").write_text("print('saved')\n")
    ours = _save(r, tree).branch
    foreign = f"stranded/feat-{card.id}/20250101T000000.000Z"
    r.git("branch", foreign, "main")  # somebody's branch, under the board's prefix
    code, out, _ = _run(r, capsys, "stranded", "list", "--json")
    kinds = {item["branch"]: item["kind"] for item in json.loads(out)}
    assert kinds == {ours: naming.KIND_SAVED, foreign: naming.KIND_FOREIGN}, kinds
    code, out, _ = _run(r, capsys, "stranded", "list")
    assert "not made by the board" in out
    # prune deletes the done card's save, never the foreign branch
    code, out, err = _run(r, capsys, "stranded", "prune", "--card", card.id, "--yes")
    assert code == 0, err
    assert r.rev(ours) is None and r.rev(foreign) is not None
    assert foreign not in out
    # discard asks about it by name; --yes does not answer for it
    code, _, err = _run(r, capsys, "stranded", "discard", foreign, "--yes")
    assert code != 0 and "did not make" in err, err
    assert r.rev(foreign) is not None, "discard deleted a branch the board did not make"
    store.close()

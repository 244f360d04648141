"""Serial fold-back (seed 003) against real git: four at once, conflicts, CAS, the run lock."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from board.core.cards import actions
from board.core.drive import drive
from board.core.errors import Refused
from board.core.git import quickfold
from board.core.loop import Loop
from board.core.publish import publish

from tests.support.boards import make_board
from tests.support.loop import (
    add_card,
    built_tree,
    events,
    run_branch_log,
    show,
    stranded_branches,
)
from tests.support.repos import git
from tests.support.waiting import wait_for


def _commit_on_run(cfg, path: str, text: str) -> str:
    """Move the run branch by one commit touching `path`, without checking it out."""
    side = cfg.root.parent / "side"
    git(cfg.root, "worktree", "add", "-q", "--detach", str(side), cfg.board.run_branch)
    (side / path).write_text(text)
    git(side, "add", "-A")
    git(side, "commit", "-q", "-m", "someone else's change")
    new = git(side, "rev-parse", "HEAD")
    git(cfg.root, "update-ref", f"refs/heads/{cfg.board.run_branch}", new)
    git(cfg.root, "worktree", "remove", "--force", str(side))
    return new


def test_four_drives_on_disjoint_surfaces_all_fold_in_serial_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg, store = make_board(tmp_path, origin=True, board={"max_concurrent": 4})
    cards = [add_card(store, f"part {i}", surface=[f"work/c-{i}.txt"]) for i in range(1, 5)]
    monkeypatch.setenv("CODER_SLEEP", "0.3")  # so the four really overlap
    loop = Loop(cfg, store)
    loop.run(once=True)

    assert [store.get(c.id).lane for c in cards] == ["done"] * 4, [
        (c.id, store.get(c.id).lane, store.get(c.id).blocked) for c in cards
    ]
    claims = [
        line for line in (cfg.board_dir / "loop.log").read_text().splitlines() if '"claim"' in line
    ]
    assert len(claims) == 4, "the four cards were not claimed in one tick"
    subjects = run_branch_log(cfg)
    assert subjects[0] == "initial" and len(subjects) == 5, f"a fold was lost: {subjects}"
    assert sorted(subjects[1:]) == [f"c-{i}: part {i}" for i in range(1, 5)]
    for i in range(1, 5):
        assert show(cfg, cfg.board.run_branch, f"work/c-{i}.txt") == f"work of c-{i}", (
            f"c-{i}'s commit is not on the run branch"
        )
    parents = git(cfg.root, "log", "--format=%p", cfg.board.run_branch).splitlines()
    assert all(len(p.split()) <= 1 for p in parents), "the run branch is not a serial line"
    # serial order: the run branch's order is the order the cards went done
    done_at = {}
    for c in cards:
        for e in store.timeline(c.id):
            if "→ done" in e.text:
                done_at[f"{c.id}: {c.title}"] = e.seq
    assert subjects[1:] == sorted(subjects[1:], key=done_at.__getitem__)
    assert stranded_branches(cfg) == []
    store.close()


def test_a_fold_conflict_keeps_the_branch_and_blocks_naming_the_paths(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "edits app.py", surface=["app.py"])
    token, tree, start = built_tree(cfg, store, card, "app.py", "print('mine')\n")
    tip_before = git(cfg.root, "rev-parse", "feat/c-1")
    run_before = _commit_on_run(cfg, "app.py", "print('theirs')\n")

    res = publish.fold(cfg, store, store.get(card.id), tree, token, start=start)

    after = store.get(card.id)
    assert res.outcome == "blocked" and res.paths == ["app.py"], res
    assert after.blocked is not None and after.blocked.cls == "fold-conflict"
    assert "app.py" in after.blocked.reason, "the conflict reason does not name the path"
    assert after.lane == "ready" and after.drive == ""
    assert git(cfg.root, "rev-parse", "feat/c-1") == tip_before, "the card branch was changed"
    assert git(cfg.root, "rev-parse", cfg.board.run_branch) == run_before, "the run branch moved"
    assert not (Path(git(tree, "rev-parse", "--git-dir")) / "rebase-merge").exists(), (
        "the rebase was left half-done"
    )
    assert git(tree, "status", "--porcelain") == ""
    store.close()


def test_a_fold_through_the_drive_keeps_tree_and_branch_on_conflict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "conflicts", surface=["work/**"])
    monkeypatch.setenv("CODER_SLEEP", "1")
    token = drive.claim(cfg, store, card)
    ends = []
    runner = threading.Thread(
        target=lambda: ends.append(drive.Drive(cfg, store, card.id, token).run())
    )
    runner.start()
    # while the coder works, someone else folds a different work/c-1.txt onto the run branch
    wait_for(lambda: (cfg.worktrees_dir / "feat-c-1" / "work" / "c-1.txt").exists())
    git(cfg.root, "worktree", "add", "-q", "--detach", str(tmp_path / "side"), cfg.board.run_branch)
    (tmp_path / "side" / "work").mkdir()
    (tmp_path / "side" / "work" / "c-1.txt").write_text("someone else's c-1\n")
    git(tmp_path / "side", "add", "-A")
    git(tmp_path / "side", "commit", "-q", "-m", "side")
    git(
        cfg.root,
        "update-ref",
        f"refs/heads/{cfg.board.run_branch}",
        git(tmp_path / "side", "rev-parse", "HEAD"),
    )
    git(cfg.root, "worktree", "remove", "--force", str(tmp_path / "side"))
    runner.join(30)

    end = ends[0]
    assert end.outcome == "blocked" and end.cls == "fold-conflict", end
    assert show(cfg, "feat/c-1", "work/c-1.txt") == "work of c-1", "the card branch was lost"
    assert (cfg.worktrees_dir / "feat-c-1").exists(), "the conflicted tree was removed"
    store.close()


def test_a_card_built_on_a_newer_base_folds_with_the_base_commit_it_relies_on(
    tmp_path: Path,
) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    (cfg.root / "lib.txt").write_text("lib v1\n")  # main moves on after the run branch
    git(cfg.root, "add", "lib.txt")
    git(cfg.root, "commit", "-q", "-m", "add lib")
    git(cfg.root, "push", "-q", "origin", "main")
    card = add_card(store, "extends lib", surface=["lib.txt"])
    token, tree, start = built_tree(cfg, store, card, "lib.txt", "lib v2\n")
    _commit_on_run(cfg, "README.md", "the run branch moved too\n")  # so the fold rebases

    res = publish.fold(cfg, store, store.get(card.id), tree, token, start=start)

    assert res.outcome == "done", f"a card relying on a newer base could not fold: {res}"
    assert show(cfg, cfg.board.run_branch, "lib.txt") == "lib v2"
    assert show(cfg, cfg.board.run_branch, "README.md") == "the run branch moved too"
    store.close()


def test_a_fold_refuses_while_a_worktree_has_the_run_branch_checked_out(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "blocked by a checkout", surface=["work/**"])
    token, tree, start = built_tree(cfg, store, card, "work/c-1.txt", "x\n")
    git(cfg.root, "checkout", "-q", cfg.board.run_branch)
    run_before = git(cfg.root, "rev-parse", cfg.board.run_branch)
    status_before = git(cfg.root, "status", "--porcelain")

    res = publish.fold(cfg, store, store.get(card.id), tree, token, start=start)

    assert res.outcome == "blocked", res
    assert "checked out" in res.reason and str(cfg.root) in res.reason
    assert git(cfg.root, "rev-parse", cfg.board.run_branch) == run_before, (
        "the fold moved the run branch under the operator's checkout"
    )
    assert git(cfg.root, "status", "--porcelain") == status_before, (
        "the operator's checkout was touched"
    )
    store.close()


@pytest.mark.parametrize("way", ["rebase", "replay"])
def test_a_card_moved_between_rebase_and_update_ref_is_not_published(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str
) -> None:
    """Both ways a fold makes the card's commit on the run branch's tip (the rebase in the
    tree, or quickfold's replay without it) are followed by the same check of the card."""
    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "moved at the last moment", surface=["work/**"])
    token, tree, start = built_tree(cfg, store, card, "work/c-1.txt", "x\n")
    _commit_on_run(cfg, "README.md", "moved on\n")  # so the fold really rebases
    run_before = git(cfg.root, "rev-parse", cfg.board.run_branch)
    module, name = (publish, "_rebase") if way == "rebase" else (quickfold, "replay")
    real = getattr(module, name)
    called = []

    def then_requeue(*args, **kw):
        result = real(*args, **kw)
        called.append(result)
        actions.requeue(store, card.id, "operator changed their mind")
        return result

    if way == "rebase":
        monkeypatch.setattr(quickfold, "read", lambda *a, **k: None)
    monkeypatch.setattr(module, name, then_requeue)
    res = publish.fold(cfg, store, store.get(card.id), tree, token, start=start)

    assert called, f"the fold never went the {way} way"
    assert res.outcome == "stood-aside", res
    assert git(cfg.root, "rev-parse", cfg.board.run_branch) == run_before, (
        "a card requeued under its fold was published"
    )
    assert store.get(card.id).lane == "ready"
    store.close()


@pytest.mark.parametrize("way", ["rebase", "replay"])
def test_the_run_branch_moves_only_by_compare_and_swap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str
) -> None:
    """Someone outside the lock moves the run branch mid-fold: the fold makes the card's
    commit again on the new tip, whichever way (rebase or replay) made it the first time."""
    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "raced", surface=["work/**"])
    token, tree, start = built_tree(cfg, store, card, "work/c-1.txt", "x\n")
    module, name = (publish, "_rebase") if way == "rebase" else (quickfold, "replay")
    real = getattr(module, name)
    raced: list[str] = []

    def then_race(*args, **kw):
        result = real(*args, **kw)
        if not raced:
            raced.append(_commit_on_run(cfg, "README.md", "raced in\n"))
        return result

    if way == "rebase":
        monkeypatch.setattr(quickfold, "read", lambda *a, **k: None)
    monkeypatch.setattr(module, name, then_race)
    _commit_on_run(cfg, "app.py", "print('moved')\n")
    res = publish.fold(cfg, store, store.get(card.id), tree, token, start=start)
    assert res.outcome == "done", res
    assert raced, f"the fold never went the {way} way"
    assert git(cfg.root, "merge-base", "--is-ancestor", raced[0], cfg.board.run_branch) == "", (
        "the racing commit was overwritten by the fold"
    )
    assert show(cfg, cfg.board.run_branch, "README.md") == "raced in"
    assert show(cfg, cfg.board.run_branch, "work/c-1.txt") == "x"
    assert git(tree, "rev-parse", "HEAD") == git(cfg.root, "rev-parse", cfg.board.run_branch), (
        "the card's tree was not left where the fold put its commit"
    )
    assert git(tree, "status", "--porcelain") == "", "the card's tree does not match its commit"
    store.close()


LOCK_HOLDER = r"""
import sys, time
from pathlib import Path
from board.core import config
from board.core.publish import publish
cfg = config.load(Path(sys.argv[1]))
with publish.run_lock(cfg):
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def test_the_run_lock_holds_across_processes(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(cfg.root), "1.0"],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(Refused, match="busy"):
            with publish.run_lock(cfg, timeout=0.2):
                pass
        started = time.monotonic()
        with publish.run_lock(cfg, timeout=10):
            waited = time.monotonic() - started
        assert waited > 0.3, "a second process entered the run lock while it was held"
    finally:
        holder.wait(10)
    store.close()


def test_review_operator_parks_the_built_card_in_review_with_its_tree(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True, publish={"review": "operator"})
    card = add_card(store, "needs a look", surface=["work/**"])
    token = drive.claim(cfg, store, card)
    end = drive.Drive(cfg, store, card.id, token).run()
    after = store.get(card.id)
    assert end.outcome == "review" and after.lane == "review" and after.drive == ""
    assert run_branch_log(cfg) == ["initial"], "a card under operator review was published"
    assert (cfg.worktrees_dir / "feat-c-1" / "work" / "c-1.txt").exists(), "its tree is gone"
    assert show(cfg, "feat/c-1", "work/c-1.txt") == "work of c-1"
    assert any("waits for the operator's review" in e for e in events(store, card.id))
    store.close()

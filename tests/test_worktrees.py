"""Nothing is lost: the worktree lifecycle against real git (a bare origin plus a clone).

Each test is named after the loss it guards against; each was red-checked against a build
with the save disabled (see the report of issue 3).
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from board.core import proc
from board.core.errors import GitError, Refused, StrandedWorkError
from board.core.git import faults, naming, removal, saves, snapshot, worktrees

from tests.support.repos import (
    Repo,
    child_env,
    comments,
    git,
    make_repo,
    new_card,
    python_argv,
)
from tests.support.waiting import wait_for


def tree(r: Repo, card: str = "c-1", slug: str = "") -> Path:
    return worktrees.create_worktree(r.cfg, card, slug)


def only_save(r: Repo, tree_dir: str = "feat-c-1") -> str:
    saves = r.stranded(tree_dir)
    assert len(saves) == 1, f"expected exactly one stranded branch for {tree_dir}, got {saves}"
    return next(iter(saves))


def ancestor(r: Repo, commit: str, of: str) -> bool:
    argv = ("git", "merge-base", "--is-ancestor", commit, of)
    return proc.run(argv, cwd=r.root, timeout=30).returncode == 0


# names -----------------------------------------------------------------------------------


def test_tree_and_branch_names_carry_the_card_id_and_slug() -> None:
    assert naming.tree_name("c-12") == "feat-c-12"
    assert naming.tree_name("c-12", "fix-login") == "feat-c-12-fix-login"
    assert naming.branch_for("c-12", "fix-login") == "feat/c-12-fix-login"
    assert naming.card_id_of("feat-c-12", "c") == "c-12"
    assert naming.card_id_of("feat-c-12-fix-login", "c") == "c-12"
    assert naming.card_id_of("feat-c-120", "c") == "c-120", "c-120's tree was read as c-12's"
    assert naming.card_id_of("feat-c-12.test1", "c") is None, "a test-rung tree read as a card's"
    assert naming.card_id_of("feat-x-1", "c") is None
    with pytest.raises(Refused):
        naming.tree_name("c-1", "../../etc")
    with pytest.raises(Refused):
        naming.tree_name("not an id")


def test_a_cards_trees_are_found_by_name_whatever_created_them(r: Repo) -> None:
    mine = [tree(r, "c-1"), tree(r, "c-1", "retry")]
    tree(r, "c-10")
    hand_made = r.cfg.worktrees_dir / "feat-c-1-by-hand"
    r.git("worktree", "add", "-q", "-b", "by-hand", str(hand_made), "main")
    (r.cfg.worktrees_dir / "feat-c-1.test1").mkdir()
    found = naming.card_trees(r.cfg, "c-1")
    assert found == sorted([*mine, hand_made]), f"c-1's trees were not all found: {found}"


# what counts as work ------------------------------------------------------------------------


def test_modified_tracked_file_is_saved_not_destroyed(r: Repo) -> None:
    t = tree(r)
    head = r.git("rev-parse", "HEAD", cwd=t)
    (t / "app.py").write_text("print('edited')\n")
    res = worktrees.discard_worktree(r.cfg, t, why="test")
    assert res.removed and not t.exists(), "the saved tree was never removed"
    name = only_save(r)
    assert r.show(name, "app.py") == "print('edited')\n", (
        "the modified file was destroyed, not saved"
    )
    assert r.rev(f"{name}^") == head, "the save is not a commit on the tree's HEAD"
    assert res.saved is not None and res.saved.branch == name


@pytest.mark.parametrize("space", ["\u00a0", "\u0085", "\u2028"])
def test_a_commit_on_a_branch_named_with_a_unicode_space_is_work(r: Repo, space: str) -> None:
    """git allows a no-break space in a branch name; the tree's branch must be read whole,
    or the branch itself looks like another ref holding the commit and the commit no work."""
    t = r.cfg.worktrees_dir / "feat-c-1-by-hand"
    r.git("worktree", "add", "-q", "-b", f"by{space}hand", str(t), "main")
    (t / "app.py").write_text("print('committed')\n")
    git(t, "commit", "-qam", "the coder's commit")
    work = snapshot.unpublished_work(r.cfg, t)
    assert work.branch == f"refs/heads/by{space}hand", work.branch
    assert [c.split(" ", 1)[1] for c in work.commits] == ["the coder's commit"], work.commits


def test_a_commit_subject_with_a_unicode_line_break_is_one_commit(r: Repo) -> None:
    """git keeps U+2028 and U+0085 in a subject; the commits read back are one each, whole
    (split at those, a piece of a subject became a commit of its own)."""
    t = tree(r)
    (t / "app.py").write_text("print('committed')\n")
    git(t, "commit", "-qam", "one\u2028two\u0085three")
    work = snapshot.unpublished_work(r.cfg, t)
    assert [c.split(" ", 1)[1] for c in work.commits] == ["one\u2028two\u0085three"], work.commits


def test_staged_change_is_saved_not_destroyed(r: Repo) -> None:
    t = tree(r)
    (t / "staged.py").write_text("staged = True\n")
    (t / "README.md").write_text("staged edit\n")
    git(t, "add", "staged.py", "README.md")
    worktrees.discard_worktree(r.cfg, t)
    name = only_save(r)
    assert r.show(name, "staged.py") == "staged = True\n", "the staged new file was destroyed"
    assert r.show(name, "README.md") == "staged edit\n", "the staged edit was destroyed"


def test_deleted_file_is_saved_not_destroyed(r: Repo) -> None:
    t = tree(r)
    (t / "lib.py").unlink()
    git(t, "rm", "-q", "--cached", "app.py")  # a staged deletion too (the file stays on disk)
    (t / "app.py").unlink()
    worktrees.discard_worktree(r.cfg, t)
    name = only_save(r)
    assert r.show(name, "lib.py") is None, "the deletion of lib.py was lost, not saved"
    assert r.show(name, "app.py") is None, "the staged deletion of app.py was lost"
    assert r.show(name, "README.md") == "demo\n"


def test_untracked_file_is_saved_not_destroyed(r: Repo) -> None:
    t = tree(r)
    (t / "notes" / "deep").mkdir(parents=True)
    (t / "notes" / "deep" / "idea.txt").write_text("an idea\n")
    worktrees.discard_worktree(r.cfg, t)
    name = only_save(r)
    assert r.show(name, "notes/deep/idea.txt") == "an idea\n", (
        "the untracked change was destroyed, not saved"
    )


@pytest.mark.parametrize("bit", ["--assume-unchanged", "--skip-worktree"])
def test_an_edit_hidden_behind_an_index_bit_is_saved_not_destroyed(r: Repo, bit: str) -> None:
    """git status and git add -A do not look behind these bits: the tree looked empty."""
    t = tree(r)
    (t / "app.py").write_text("print('hidden edit')\n")
    git(t, "update-index", bit, "app.py")
    (t / "lib.py").unlink()  # a deletion behind the bit, too
    git(t, "update-index", bit, "lib.py")
    assert r.git("status", "--porcelain", cwd=t) == "", "premise: git status sees nothing"
    gitdir = Path(r.git("rev-parse", "--path-format=absolute", "--git-dir", cwd=t))
    index_before = (gitdir / "index").read_bytes()
    work = snapshot.unpublished_work(r.cfg, t)
    assert not work.empty, f"the hidden edit was judged no work ({bit})"
    assert (gitdir / "index").read_bytes() == index_before, "the look changed the tree's index"
    res = worktrees.discard_worktree(r.cfg, t, why="test")
    name = only_save(r)
    assert r.show(name, "app.py") == "print('hidden edit')\n", (
        f"the edit behind {bit} was destroyed, not saved"
    )
    if bit == "--assume-unchanged":
        assert r.show(name, "lib.py") is None, "the deletion behind the bit was lost"
    assert res.removed


@pytest.mark.parametrize("layout", ["v2", "v3", "v4", "split-index", "untracked-cache"])
def test_edits_behind_index_bits_are_saved_whatever_the_index_format(r: Repo, layout: str) -> None:
    """The hidden entries are found in every index format git writes, the listing's first
    entry included (its tag starts the listing: no NUL before it)."""
    t = tree(r)
    (t / ".gitignore").write_text("node_modules/\n# hidden edit\n")  # the first entry
    git(t, "update-index", "--assume-unchanged", ".gitignore")
    if layout != "v2":  # a skip-worktree bit needs the extended flags of v3 and later
        (t / "lib.py").write_text("skipped edit\n")
        git(t, "update-index", "--skip-worktree", "lib.py")
    if layout.startswith("v"):
        git(t, "update-index", "--index-version", layout[1:])
    elif layout == "split-index":
        git(t, "update-index", "--split-index")
    else:
        git(t, "update-index", "--untracked-cache")
        (t / "new.txt").write_text("untracked\n")
        git(t, "status", "--porcelain")  # fills the cache
    gitdir = Path(r.git("rev-parse", "--path-format=absolute", "--git-dir", cwd=t))
    header = (gitdir / "index").read_bytes()[:8]
    if layout.startswith("v"):
        assert header == b"DIRC" + int(layout[1:]).to_bytes(4, "big"), f"premise: {header!r}"
    assert r.git("status", "--porcelain", "-uno", cwd=t) == "", "premise: git sees no edit"
    admin = sorted(p.name for p in gitdir.iterdir())
    work = snapshot.unpublished_work(r.cfg, t)
    assert sorted(p.name for p in gitdir.iterdir()) == admin, "the look left files behind"
    expected = ["M .gitignore"] + (["M lib.py"] if layout != "v2" else [])
    expected += ["A new.txt"] if layout == "untracked-cache" else []
    assert sorted(work.changes) == sorted(expected), f"hidden edits missed ({layout})"
    saved = saves.preserve_worktree(r.cfg, t, why="test")
    assert saved is not None
    assert r.show(saved.branch, ".gitignore") == "node_modules/\n# hidden edit\n"
    if layout != "v2":
        assert r.show(saved.branch, "lib.py") == "skipped edit\n", "the skip-worktree edit"


def test_a_sparse_checkouts_absent_file_is_not_saved_as_a_deletion(r: Repo) -> None:
    """skip-worktree on a file that is not there is a sparse checkout's, not a coder's edit."""
    t = tree(r)
    git(t, "update-index", "--skip-worktree", "lib.py")
    (t / "lib.py").unlink()
    (t / "new.txt").write_text("real work\n")
    worktrees.discard_worktree(r.cfg, t, why="test")
    name = only_save(r)
    assert r.show(name, "new.txt") == "real work\n"
    assert r.show(name, "lib.py") is not None, "an absent sparse file was saved as deleted"


def test_edits_outside_a_sparse_checkouts_patterns_are_saved_not_destroyed(r: Repo) -> None:
    """In a sparse checkout git clears the skip-worktree bit of a file that is there as it
    reads the index (so no listing shows it hidden), yet `git add` leaves every path outside
    the patterns alone: an edited file there, and a new one, must be saved all the same."""
    t = tree(r)
    git(t, "sparse-checkout", "set", "--no-cone", "/README.md")
    assert not (t / "lib.py").exists() and not (t / "app.py").exists(), "premise: sparse"
    (t / "lib.py").write_text("edited outside the patterns\n")
    work = snapshot.unpublished_work(r.cfg, t)
    assert work.changes == ["M lib.py"], "the edit was judged no work: the tree would go"
    (t / "extra.txt").write_text("new outside the patterns\n")
    work = snapshot.unpublished_work(r.cfg, t)
    assert sorted(work.changes) == ["A extra.txt", "M lib.py"], work.changes
    worktrees.discard_worktree(r.cfg, t, why="test")
    name = only_save(r)
    assert r.show(name, "lib.py") == "edited outside the patterns\n", "the edit was lost"
    assert r.show(name, "extra.txt") == "new outside the patterns\n", "the new file was lost"
    assert r.show(name, "app.py") == "print('hello')\n", "an absent sparse file was deleted"


def test_a_same_size_edit_in_the_same_second_is_saved_not_destroyed(r: Repo) -> None:
    """git's racy-clean check: the save's private index must keep the real index's mtime."""
    t = tree(r)
    r.git("config", "core.trustctime", "false")
    app = t / "app.py"
    past = app.stat().st_mtime_ns - 100 * 10**9
    os.utime(app, ns=(past, past))
    r.git("update-index", "--refresh", cwd=t)  # the index now records that mtime
    app.write_text("print('SAVED')\n")  # the same size as print('hello')
    os.utime(app, ns=(past, past))  # and the same mtime as indexed
    index = Path(r.git("rev-parse", "--path-format=absolute", "--git-path", "index", cwd=t))
    os.utime(index, ns=(past, past))  # the index was written in that same second
    res = worktrees.discard_worktree(r.cfg, t)
    assert res.saved is not None, "a same-second, same-size edit was destroyed, not saved"
    assert r.show(res.saved.branch, "app.py") == "print('SAVED')\n"


def test_committed_but_unpushed_commit_is_saved_not_destroyed(r: Repo) -> None:
    t = tree(r)
    commit = r.commit(t, {"feature.py": "feature = 1\n"}, "feature")
    work = snapshot.unpublished_work(r.cfg, t)
    assert [c.split()[0] for c in work.commits] == [commit], f"unpushed commit not counted: {work}"
    worktrees.discard_worktree(r.cfg, t)
    name = only_save(r)
    assert ancestor(r, commit, name), "the card branch's unpushed commit is gone"
    assert r.show(name, "feature.py") == "feature = 1\n"
    assert r.rev("refs/heads/feat/c-1") is None, "the tree's branch outlived a verified save"


def test_detached_head_commit_is_saved_with_the_left_branch_tip(r: Repo) -> None:
    t = tree(r)
    on_branch = r.commit(t, {"a.py": "a = 1\n"}, "on the branch")
    git(t, "checkout", "-q", "--detach", "HEAD~1")
    detached = r.commit(t, {"b.py": "b = 2\n"}, "on a detached HEAD")
    (t / "c.py").write_text("c = 3\n")
    work = snapshot.unpublished_work(r.cfg, t)
    assert work.detached and len(work.commits) == 2, f"detached work miscounted: {work}"
    worktrees.discard_worktree(r.cfg, t)
    name = only_save(r)
    assert ancestor(r, detached, name), "the detached HEAD's commit was lost with its tree"
    assert ancestor(r, on_branch, name), "the branch tip the detached HEAD left was lost"
    parents = r.git("rev-list", "--parents", "-n1", name).split()[1:]
    assert parents == [detached, on_branch], (
        f"the left branch tip is not the second parent: {parents}"
    )
    assert r.show(name, "c.py") == "c = 3\n", "the detached tree's uncommitted file was lost"


def test_rebased_work_counts_as_published_not_stranded(r: Repo) -> None:
    t = tree(r)
    commit = r.commit(t, {"feature.py": "feature = 1\n"}, "feature")
    r.commit(r.root, {"other.py": "other = 1\n"}, "main moved on")
    git(r.root, "cherry-pick", commit)  # the rebase: same content, a new commit on main
    git(r.root, "push", "-q", "origin", "main")
    work = snapshot.unpublished_work(r.cfg, t)
    assert work.empty, f"rebased (already published) history read as stranded: {work.describe()}"
    res = worktrees.discard_worktree(r.cfg, t)
    assert res.saved is None and r.stranded() == {}, "published history was saved as stranded"
    assert res.removed


def test_squash_merged_work_counts_as_published_not_stranded(r: Repo) -> None:
    t = tree(r)
    r.commit(t, {"feature.py": "feature = 1\n"}, "part 1")
    r.commit(t, {"feature.py": "feature = 2\n", "more.py": "x\n"}, "part 2")
    git(r.root, "merge", "-q", "--squash", "feat/c-1")
    git(r.root, "commit", "-q", "-m", "squashed")
    git(r.root, "push", "-q", "origin", "main")
    work = snapshot.unpublished_work(r.cfg, t)
    assert work.empty, f"squash-merged history read as stranded: {work.describe()}"


def test_unmerged_commit_is_not_taken_for_published_work(r: Repo) -> None:
    """Guard for the content check: a commit main does not hold still counts."""
    t = tree(r)
    r.commit(t, {"app.py": "print('mine')\n"}, "mine")
    r.commit(r.root, {"app.py": "print('theirs')\n"}, "theirs")
    git(r.root, "push", "-q", "origin", "main")
    assert not snapshot.unpublished_work(r.cfg, t).empty, "a conflicting commit read as published"


def test_a_commit_another_ref_holds_is_not_stranded(r: Repo) -> None:
    t = tree(r)
    r.commit(t, {"feature.py": "feature = 1\n"}, "feature")
    git(t, "push", "-q", "origin", "feat/c-1")
    assert snapshot.unpublished_work(r.cfg, t).empty, "a pushed commit read as stranded"


@pytest.mark.parametrize("ignored", [False, True], ids=["not-ignored", "in-info-exclude"])
def test_scratch_only_tree_counts_as_empty_and_is_never_saved(r: Repo, ignored: bool) -> None:
    if ignored:  # as `board init` leaves it
        with (r.root / ".git" / "info" / "exclude").open("a") as fh:
            fh.write(".board-scratch/\n")
    t = tree(r)
    (t / ".board-scratch" / "sub").mkdir(parents=True)
    (t / ".board-scratch" / "sub" / "notes.txt").write_text("coder scratch\n")
    work = snapshot.unpublished_work(r.cfg, t)
    assert work.empty, f"scratch counted as work: {work.changes}"
    res = worktrees.discard_worktree(r.cfg, t)
    assert res.removed and res.saved is None and r.stranded() == {}


@pytest.mark.parametrize("ignored", [False, True], ids=["not-ignored", "in-info-exclude"])
def test_a_save_asks_git_about_scratch_only_when_a_scratch_path_is_there(
    r: Repo, ignored: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`git add` fails only on an ignored path that is there, so an absent scratch
    directory is excluded as it is and costs no `check-ignore` process; a present one is
    still asked about, and stays out of the save either way."""
    if ignored:
        with (r.root / ".git" / "info" / "exclude").open("a") as fh:
            fh.write(".board-scratch/\n")
    t = tree(r)
    (t / "feature.py").write_text("f = 1\n")
    calls: list[str] = []
    real = snapshot.git

    def counting(cwd, *args, **kw):  # a pass-through that counts: git still runs for real
        calls.append(next(a for a in args if not a.startswith("-") and "=" not in a))
        return real(cwd, *args, **kw)

    monkeypatch.setattr(snapshot, "git", counting)
    work = snapshot.unpublished_work(r.cfg, t)
    assert work.changes == ["A feature.py"] and "check-ignore" not in calls, calls
    (t / ".board-scratch").mkdir()
    (t / ".board-scratch" / "x").write_text("x\n")
    calls.clear()
    work = snapshot.unpublished_work(r.cfg, t)
    assert work.changes == ["A feature.py"], f"scratch counted as work: {work.changes}"
    assert calls.count("check-ignore") == 1, calls


def test_node_modules_link_only_tree_counts_as_empty(r: Repo) -> None:
    t = tree(r)
    (r.root / "node_modules").mkdir()
    os.symlink(r.root / "node_modules", t / "node_modules")  # the board's link, under node_modules/
    work = snapshot.unpublished_work(r.cfg, t)
    assert work.empty, f"the board's node_modules link counted as work: {work.changes}"


@pytest.mark.parametrize("ignored", [False, True], ids=["not-ignored", "in-info-exclude"])
def test_scratch_and_node_modules_link_stay_out_of_a_save_with_real_work(
    r: Repo, ignored: bool
) -> None:
    if ignored:
        with (r.root / ".git" / "info" / "exclude").open("a") as fh:
            fh.write(".board-scratch/\n")
    t = tree(r)
    os.symlink("/nonexistent", t / "node_modules")
    (t / ".board-scratch").mkdir()
    (t / ".board-scratch" / "x").write_text("x\n")
    (t / "feature.py").write_text("f = 1\n")
    worktrees.discard_worktree(r.cfg, t)
    name = only_save(r)
    files = r.git("ls-tree", "-r", "--name-only", name).split()
    assert "feature.py" in files, "the real work was not saved"
    assert "node_modules" not in files, f"the save carried the board's link: {files}"
    assert not any(f.startswith(".board-scratch") for f in files), (
        f"the save carried scratch: {files}"
    )


def test_stage_all_never_stages_the_node_modules_link_or_scratch(r: Repo) -> None:
    t = tree(r)
    os.symlink("/nonexistent", t / "node_modules")
    (t / ".board-scratch").mkdir()
    (t / ".board-scratch" / "x").write_text("x\n")
    (t / "feature.py").write_text("f = 1\n")
    left_out = snapshot.stage_all(r.cfg.board, t)
    staged = r.git("diff", "--cached", "--name-only", cwd=t).split()
    assert staged == ["feature.py"], f"the commit would carry the board's link or scratch: {staged}"
    assert left_out == ["node_modules"]


def test_the_save_leaves_the_tree_its_index_and_branch_untouched(r: Repo) -> None:
    t = tree(r)
    (t / "app.py").write_text("edited\n")
    (t / "staged.py").write_text("s\n")
    git(t, "add", "staged.py")
    (t / "new.txt").write_text("n\n")
    gitdir = Path(r.git("rev-parse", "--path-format=absolute", "--git-dir", cwd=t))
    before = (
        (gitdir / "index").read_bytes(),
        r.git("rev-parse", "HEAD", "refs/heads/feat/c-1", cwd=t),
        r.git("status", "--porcelain", cwd=t),
    )
    saved = saves.preserve_worktree(r.cfg, t)
    assert saved is not None
    after = (
        (gitdir / "index").read_bytes(),
        r.git("rev-parse", "HEAD", "refs/heads/feat/c-1", cwd=t),
        r.git("status", "--porcelain", cwd=t),
    )
    assert after == before, "the save changed the tree, its index or its branch"
    assert not list(gitdir.glob("board-save-*")), "the save left its private index behind"
    msg = r.git("log", "-1", "--format=%an <%ae>%n%B", saved.branch)
    assert msg.startswith("board <board@localhost>"), f"the save's identity is not pinned: {msg}"
    assert "Board-Save: tree=feat-c-1 card=c-1 files=3 insertions=3 deletions=1" in msg, msg


def test_describe_names_what_a_tree_holds(r: Repo) -> None:
    t = tree(r)
    assert snapshot.unpublished_work(r.cfg, t).describe() == "nothing unpublished"
    r.commit(t, {"f.py": "1\n"}, "one")
    (t / "g.py").write_text("2\n")
    (t / "h.py").write_text("3\n")
    assert (
        snapshot.unpublished_work(r.cfg, t).describe() == "2 uncommitted changes, 1 unpushed commit"
    )


# the save's safety ---------------------------------------------------------------------------


def test_an_existing_stranded_name_is_never_overwritten(
    r: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    stamp = "20250101T000000.000Z"
    monkeypatch.setattr(naming, "utc_stamp", lambda: stamp)
    main = r.rev("main")
    for name in (stamp, f"{stamp}-2"):
        r.git("update-ref", f"refs/heads/stranded/feat-c-1/{name}", "main")
    t = tree(r)
    (t / "app.py").write_text("mine\n")
    res = worktrees.discard_worktree(r.cfg, t)
    assert r.rev(f"stranded/feat-c-1/{stamp}") == main, (
        "an existing stranded branch was overwritten"
    )
    assert r.rev(f"stranded/feat-c-1/{stamp}-2") == main, (
        "an existing stranded branch was overwritten"
    )
    assert res.saved is not None and res.saved.branch == f"stranded/feat-c-1/{stamp}-3"
    assert r.show(res.saved.branch, "app.py") == "mine\n"


def test_a_rejecting_reference_transaction_hook_does_not_stop_the_save(r: Repo) -> None:
    t = tree(r)
    (t / "app.py").write_text("mine\n")
    marker = r.root.parent / "hook-ran"
    hooks = r.root / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in ("reference-transaction", "pre-commit", "post-commit"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\necho {name} >> '{marker}'\nexit 1\n")
        hook.chmod(0o755)
    res = worktrees.discard_worktree(r.cfg, t)
    assert res.saved is not None and res.removed, "the rejecting hook stopped the save"
    assert not marker.exists(), f"a hook ran during the save: {marker.read_text()}"
    assert r.show(res.saved.branch, "app.py") == "mine\n"


def test_a_failed_save_keeps_the_tree_exactly_and_says_why(r: Repo) -> None:
    t = tree(r)
    (t / "app.py").write_text("mine\n")
    (t / "new.txt").write_text("new\n")
    status = r.git("status", "--porcelain", cwd=t)
    r.git("branch", "stranded/feat-c-1", "main")  # takes the name: no stranded/feat-c-1/… possible
    with pytest.raises(StrandedWorkError) as info:
        worktrees.discard_worktree(r.cfg, t, why="test")
    msg = info.value.line()
    assert str(t) in msg and "2 uncommitted changes" in msg, msg
    assert "stranded/feat-c-1" in msg, f"the refusal does not say why: {msg}"
    assert "Recover:" in msg and "discard:" in msg, f"the refusal gives no way out: {msg}"
    assert (t / "app.py").read_text() == "mine\n", "unsaved work was destroyed"
    assert r.git("status", "--porcelain", cwd=t) == status, "the unsaved tree was changed"
    r.git("branch", "-D", "stranded/feat-c-1")  # the operator frees the name: recovery works
    res = worktrees.discard_worktree(r.cfg, t)
    assert res.removed and r.show(only_save(r), "new.txt") == "new\n"


@pytest.mark.parametrize("with_commit", [True, False], ids=["committed", "empty-repo"])
def test_a_nested_repository_is_refused_with_its_files_intact(r: Repo, with_commit: bool) -> None:
    t = tree(r)
    nested = t / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "lib.c").write_text("int x;\n")
    if with_commit:
        git(nested, "add", "lib.c")
        git(nested, "commit", "-q", "-m", "nested")
    (nested / "wip.c").write_text("int wip;\n")
    (t / "app.py").write_text("mine\n")
    with pytest.raises(StrandedWorkError) as info:
        worktrees.discard_worktree(r.cfg, t)
    assert "nested git repository" in info.value.line()
    assert (nested / "wip.c").read_text() == "int wip;\n", "the nested repo's files were deleted"
    assert (nested / "lib.c").exists() and (t / "app.py").read_text() == "mine\n"
    assert r.stranded() == {}, "a nested repo was half-saved (only a gitlink)"


def test_a_husk_is_moved_aside_bytes_intact_with_its_branch_commits_saved(r: Repo) -> None:
    t = tree(r)
    commit = r.commit(t, {"feature.py": "feature = 1\n"}, "unpushed")
    (t / "loose.bin").write_bytes(bytes(range(256)))
    admin = Path(r.git("rev-parse", "--path-format=absolute", "--git-dir", cwd=t))
    shutil.rmtree(admin)  # the admin entry is gone: a husk
    res = worktrees.discard_worktree(r.cfg, t, why="test")
    assert res.husk_to is not None and not t.exists(), "the husk still blocks its path"
    assert res.husk_to.parent == r.cfg.worktrees_dir / ".stranded"
    assert (res.husk_to / "loose.bin").read_bytes() == bytes(range(256)), "the husk's bytes changed"
    assert (res.husk_to / "feature.py").read_text() == "feature = 1\n"
    name = only_save(r)
    assert ancestor(r, commit, name), "the husk branch's unique commit was lost"
    again = worktrees.create_worktree(r.cfg, "c-1")
    assert again == t and (t / "app.py").exists(), "the path was not usable after the husk moved"


def test_a_locked_tree_is_never_deleted(r: Repo) -> None:
    t = tree(r)
    (t / "app.py").write_text("operator's\n")
    r.git("worktree", "lock", "--reason", "mine", str(t))
    res = worktrees.discard_worktree(r.cfg, t)
    assert not res.removed and "locked" in res.kept
    assert (t / "app.py").read_text() == "operator's\n", "the operator's locked tree was deleted"
    reaped = worktrees.reap_card(r.cfg, "c-1")
    assert t.exists() and not reaped[0].removed, "the reap deleted a locked tree"
    with pytest.raises(Refused):
        worktrees.create_worktree(r.cfg, "c-1")
    assert (t / "app.py").read_text() == "operator's\n"


def _read_only(path: Path) -> None:
    for dirpath, _dirs, filenames in os.walk(path, topdown=False):
        for f in filenames:
            p = Path(dirpath) / f
            if not p.is_symlink():
                p.chmod(0o444)
        Path(dirpath).chmod(0o555)


def test_a_read_only_tree_is_deleted_after_its_save(tmp_path: Path) -> None:
    as_nobody = os.geteuid() == 0 and shutil.which("setpriv") is not None
    # root ignores permission bits: drop to nobody, in a directory nobody can reach
    base = Path(tempfile.mkdtemp(prefix="board-ro-")) if as_nobody else tmp_path
    try:
        r = make_repo(base)
        t = tree(r)
        (t / "sub").mkdir()
        (t / "sub" / "locked.txt").write_text("read only\n")
        _read_only(t)
        if as_nobody:
            nobody = 65534
            for dirpath, dirnames, filenames in os.walk(base):
                for name in [*dirnames, *filenames]:
                    os.lchown(Path(dirpath) / name, nobody, nobody)
            os.chown(base, nobody, nobody)
            code = (
                "import json; from pathlib import Path\n"
                "from board.core import config; from board.core.git import worktrees\n"
                f"cfg = config.load(Path({str(r.root)!r}))\n"
                f"res = worktrees.discard_worktree(cfg, Path({str(t)!r}))\n"
                "print(json.dumps(res.to_json()))\n"
            )
            argv = ["setpriv", f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups"]
            env = child_env(HOME=str(base))
            res = proc.run([*argv, *python_argv(code)], cwd=base, timeout=60, env=env)
            assert res.returncode == 0, res.stderr
            result = json.loads(res.stdout.strip().splitlines()[-1])
            for dirpath, dirnames, filenames in os.walk(base):  # back to root, for git's checks
                for name in [*dirnames, *filenames]:
                    os.lchown(Path(dirpath) / name, 0, 0)
            removed = result["removed"]
            branch = result["saved"]["branch"] if result["saved"] else None
        else:
            got = worktrees.discard_worktree(r.cfg, t)
            removed, branch = got.removed, got.saved.branch if got.saved else None
        assert branch is not None, "the read-only tree's work was not saved"
        assert removed and not t.exists(), "the saved read-only tree was never removed"
        assert r.show(branch, "sub/locked.txt") == "read only\n"
    finally:
        if as_nobody:
            shutil.rmtree(base, ignore_errors=True)


def test_two_processes_removing_one_tree_make_one_save_and_one_removal(r: Repo) -> None:
    t = tree(r)
    (t / "app.py").write_text("mine\n")
    code = (
        "import json; from pathlib import Path\n"
        "from board.core import config; from board.core.git import worktrees\n"
        f"cfg = config.load(Path({str(r.root)!r}))\n"
        f"res = worktrees.discard_worktree(cfg, Path({str(t)!r}), why='race')\n"
        "print(json.dumps(res.to_json()))\n"
    )
    # each holds the tree between its snapshot and its write, so without the lock both save
    env = child_env(BOARD_TEST_PAUSE_AT="after-snapshot:0.6")
    outs: list[proc.Result] = []

    def run() -> None:
        outs.append(proc.run(python_argv(code), cwd=r.root, timeout=60, env=env))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert all(o.returncode == 0 for o in outs), [o.stderr for o in outs]
    results = [json.loads(o.stdout.strip().splitlines()[-1]) for o in outs]
    saves = [x for x in results if x["saved"]]
    removals = [x for x in results if x["removed"]]
    assert len(saves) == 1, f"two edges made {len(saves)} saves of one tree"
    assert len(removals) == 1, f"two edges made {len(removals)} removals of one tree"
    assert len(r.stranded()) == 1, f"one tree, several stranded branches: {r.stranded()}"


def test_a_branch_that_does_not_read_back_keeps_the_tree(r: Repo) -> None:
    """The save is verified: a branch moved between its creation and the read-back fails it."""
    t = tree(r)
    (t / "app.py").write_text("mine\n")
    code = (
        "from pathlib import Path\n"
        "from board.core import config; from board.core.git import worktrees\n"
        "from board.core.errors import StrandedWorkError\n"
        f"cfg = config.load(Path({str(r.root)!r}))\n"
        "try:\n"
        f"    worktrees.discard_worktree(cfg, Path({str(t)!r}))\n"
        "except StrandedWorkError as exc:\n"
        "    print('REFUSED', exc.line())\n"
    )
    env = child_env(BOARD_TEST_PAUSE_AT="after-update-ref:1.5")
    done: list[proc.Result] = []
    child = threading.Thread(
        target=lambda: done.append(proc.run(python_argv(code), cwd=r.root, timeout=60, env=env))
    )
    child.start()
    wait_for(r.stranded, 30, "the save's branch")
    (name,) = r.stranded()
    r.git("update-ref", f"refs/heads/{name}", "main")  # someone moves it before the read-back
    child.join()
    assert "REFUSED" in done[0].stdout and "read-back" in done[0].stdout, done[0].stdout
    assert (t / "app.py").read_text() == "mine\n", "the tree went on an unverified save"


@pytest.mark.skipif(
    not Path("/dev/shm").is_dir() or os.stat("/dev/shm").st_dev == os.stat("/tmp").st_dev,
    reason="needs a second filesystem (tmpfs at /dev/shm)",
)
def test_a_tree_on_another_filesystem_is_saved_then_deleted(r: Repo) -> None:
    far = Path(tempfile.mkdtemp(dir="/dev/shm")) / "feat-c-1"
    try:
        r.git("worktree", "add", "-q", "-b", "feat/c-1", str(far), "main")
        (far / "app.py").write_text("far away\n")
        res = worktrees.discard_worktree(r.cfg, far)
        assert res.saved is not None and r.show(res.saved.branch, "app.py") == "far away\n"
        assert res.removed and not far.exists(), f"the saved tree was kept: {res.kept}"
        assert "feat-c-1" not in r.git("worktree", "list"), "its admin entry outlived it"
    finally:
        shutil.rmtree(far.parent, ignore_errors=True)


def test_a_clean_tree_goes_without_a_save(r: Repo) -> None:
    t = tree(r)
    res = worktrees.discard_worktree(r.cfg, t)
    assert res.removed and res.saved is None and r.stranded() == {}
    assert "feat-c-1" not in r.git("worktree", "list"), "the admin entry outlived the tree"
    assert r.rev("refs/heads/feat/c-1") is None


# the edges ---------------------------------------------------------------------------------


def test_create_worktree_saves_what_is_at_its_path_then_starts_fresh_from_origin(r: Repo) -> None:
    t = tree(r)
    (t / "app.py").write_text("attempt 1\n")
    r.commit(r.root, {"local.py": "ahead of origin\n"}, "local main only")
    again = worktrees.create_worktree(r.cfg, "c-1")
    assert again == t
    assert r.show(only_save(r), "app.py") == "attempt 1\n", "the re-dispatch destroyed the work"
    assert r.git("rev-parse", "HEAD", cwd=t) == r.rev("origin/main"), "not built from origin/main"
    assert r.git("status", "--porcelain", cwd=t) == "", "the fresh tree is not clean"
    assert r.git("symbolic-ref", "HEAD", cwd=t) == "refs/heads/feat/c-1"
    upstream = r.git("config", "--get", "branch.feat/c-1.merge", check=False)
    assert upstream == "", "the card branch tracks the base (a push would go to main)"


def _smudge_filter(r: Repo, script: str, commit: bool = True) -> None:
    """The base's `*.txt` files go through a required smudge filter: `script`, a Python
    program reading the blob on stdin (git runs it in the tree being checked out)."""
    filt = r.root.parent / "smudge.py"
    filt.write_text(script)
    r.git("config", "filter.board-test.smudge", shlex.join([sys.executable, str(filt)]))
    r.git("config", "filter.board-test.clean", "cat")
    r.git("config", "filter.board-test.required", "true")
    if not commit:
        return
    r.commit(r.root, {".gitattributes": "*.txt filter=board-test\n", "a.txt": "a\n"}, "filtered")
    r.git("push", "-q", "origin", "main")


def test_a_trees_checkout_does_not_hold_the_repositorys_admin_lock(r: Repo) -> None:
    """A card's checkout may take seconds (100,000 files); the admin lock serialises every
    tree's `git worktree` call, so a checkout under it held all other cards' trees back."""
    release = r.root.parent / "release"
    _smudge_filter(
        r,
        "import os, sys, time\n"
        f"release = {str(release)!r}\n"
        "deadline = time.monotonic() + 20\n"
        "while 'feat-c-1' in os.getcwd() and not os.path.exists(release)\\\n"
        "        and time.monotonic() < deadline:\n"
        "    time.sleep(0.02)\n"
        "sys.stdout.write(sys.stdin.read())\n",
    )
    slow = threading.Thread(target=worktrees.create_worktree, args=(r.cfg, "c-1"))
    slow.start()
    try:
        wait_for(lambda: (r.cfg.worktrees_dir / "feat-c-1" / ".git").exists(), 20, "c-1's tree")
        other = worktrees.create_worktree(r.cfg, "c-2")
        assert (other / "a.txt").read_text() == "a\n"
        assert slow.is_alive(), "c-2's tree waited for c-1's checkout to end"
    finally:
        release.touch()
        slow.join(60)
    assert (r.cfg.worktrees_dir / "feat-c-1" / "a.txt").read_text() == "a\n"
    assert r.git("status", "--porcelain", cwd=r.cfg.worktrees_dir / "feat-c-1") == ""


def test_a_tree_whose_checkout_fails_is_taken_away_and_git_says_why(r: Repo) -> None:
    _smudge_filter(r, "import sys\nsys.stderr.write('smudge says no')\nsys.exit(3)\n")
    with pytest.raises(GitError, match="smudge|filter"):
        worktrees.create_worktree(r.cfg, "c-1")
    path = r.cfg.worktrees_dir / "feat-c-1"
    assert not os.path.lexists(path), "a half-checked-out tree was left at its path"
    assert "feat-c-1" not in r.git("worktree", "list"), "its admin entry was left"
    assert r.stranded() == {}, "a tree holding nothing of anyone's was saved"
    _smudge_filter(r, "import sys\nsys.stdout.write(sys.stdin.read())\n", commit=False)
    again = worktrees.create_worktree(r.cfg, "c-1")
    assert (again / "a.txt").read_text() == "a\n", "the next tree at that path was not made"


def test_create_worktree_starts_from_local_base_without_a_remote(tmp_path: Path) -> None:
    r = make_repo(tmp_path, remote=False)
    t = worktrees.create_worktree(r.cfg, "c-1", "slug")
    assert t.name == "feat-c-1-slug"
    assert r.git("rev-parse", "HEAD", cwd=t) == r.rev("main")
    assert r.git("symbolic-ref", "HEAD", cwd=t) == "refs/heads/feat/c-1-slug"


def test_create_worktree_refuses_before_anything_moves_when_the_save_fails(r: Repo) -> None:
    t = tree(r)
    (t / "app.py").write_text("attempt 1\n")
    head = r.git("rev-parse", "HEAD", cwd=t)
    r.git("branch", "stranded/feat-c-1", "main")
    with pytest.raises(StrandedWorkError):
        worktrees.create_worktree(r.cfg, "c-1")
    assert (t / "app.py").read_text() == "attempt 1\n", "create_worktree destroyed unsaved work"
    assert r.git("rev-parse", "HEAD", cwd=t) == head


def test_create_worktree_keeps_a_leftover_branchs_unique_commits(r: Repo) -> None:
    t = tree(r)
    commit = r.commit(t, {"f.py": "1\n"}, "left on the branch")
    r.git("worktree", "remove", "--force", str(t))  # someone else removed the tree, not the branch
    worktrees.create_worktree(r.cfg, "c-1")
    assert ancestor(r, commit, only_save(r)), "resetting the card branch lost its commit"


def test_reap_saves_every_tree_of_the_card_and_says_where_on_the_card(r: Repo) -> None:
    store = r.store()
    card = new_card(store)
    a = tree(r, card)
    b = tree(r, card, "retry")
    (a / "app.py").write_text("a\n")
    r.commit(b, {"b.py": "b\n"}, "b's commit")
    results = worktrees.reap_card(r.cfg, card, store=store)
    assert all(x.removed for x in results) and not a.exists() and not b.exists()
    assert len(r.stranded()) == 2, f"the reap did not save every tree: {r.stranded()}"
    notes = comments(store, card)
    assert len(notes) == 2, f"each save should comment once: {notes}"
    for note, res in zip(notes, results, strict=True):
        assert res.saved is not None
        branch = res.saved.branch
        assert branch in note and "1 file changed, +1 -" in note, note
        assert f"git diff board/run...{branch}" in note, note
        assert f"board stranded pick {branch}" in note and f"git branch -D {branch}" in note, note
        assert "The tree left its path" in note, note
    store.close()


def test_the_reap_keeps_a_tree_it_cannot_save_goes_on_and_says_so(r: Repo) -> None:
    store = r.store()
    card = new_card(store)
    a = tree(r, card)
    b = tree(r, card, "two")
    (a / "app.py").write_text("a\n")
    (b / "app.py").write_text("b\n")
    r.git("branch", f"stranded/feat-{card}", "main")  # a's save cannot get a name
    results = worktrees.reap_card(r.cfg, card, store=store)
    assert a.exists() and (a / "app.py").read_text() == "a\n", "unsaved work was destroyed"
    assert not b.exists() and len(r.stranded(f"feat-{card}-two")) == 1, "the reap stopped early"
    kept = [x for x in results if not x.removed]
    assert len(kept) == 1 and kept[0].error
    assert any("could not be saved" in n and "still at" in n for n in comments(store, card))
    store.close()


def test_fresh_build_saves_every_tree_the_card_owns(r: Repo) -> None:
    a = tree(r, "c-1")
    b = tree(r, "c-1", "old")
    (a / "x.py").write_text("x\n")
    (b / "y.py").write_text("y\n")
    worktrees.fresh_build_prepare(r.cfg, "c-1")
    assert not a.exists() and not b.exists()
    assert len(r.stranded()) == 2, "the fresh build built over stranded work without saving it"


def test_fresh_build_raises_when_a_tree_cannot_be_saved(r: Repo) -> None:
    a = tree(r, "c-1")
    (a / "inner").mkdir()
    git(a / "inner", "init", "-q")
    (a / "inner" / "f").write_text("f\n")
    with pytest.raises(StrandedWorkError):
        worktrees.fresh_build_prepare(r.cfg, "c-1")
    assert (a / "inner" / "f").exists(), "a tree that could not be saved was removed"


def test_the_orphan_sweep_touches_only_done_cancelled_and_unknown_cards(
    r: Repo, caplog: pytest.LogCaptureFixture
) -> None:
    lanes = {"c-1": "done", "c-2": "cancelled", "c-4": "working", "c-5": "done"}
    trees = {c: tree(r, c) for c in ("c-1", "c-2", "c-3", "c-4", "c-5")}
    for t in trees.values():
        (t / "app.py").write_text(f"{t.name}\n")
    rung = r.cfg.worktrees_dir / "feat-c-1.test1"
    r.git("worktree", "add", "-q", "--detach", str(rung), "main")
    odd = r.cfg.worktrees_dir / "feat-c-x-odd"
    odd.mkdir()
    live = {trees["c-5"]}
    caplog.set_level(logging.WARNING, logger="board.worktrees")
    for _ in range(2):
        worktrees.sweep_orphans(r.cfg, lanes.get, live)
    gone = {c for c, t in trees.items() if not t.exists()}
    assert gone == {"c-1", "c-2", "c-3"}, f"the sweep touched the wrong trees: {gone}"
    assert trees["c-5"].exists(), "the sweep removed a tree a live drive holds"
    assert rung.exists() and odd.exists(), "the sweep removed a tree with no readable card id"
    assert len(r.stranded()) == 3
    unparsed = [m for m in caplog.messages if "feat-c-x-odd" in m]
    assert len(unparsed) == 1, f"an unparsable name should be logged once: {unparsed}"


def test_ignored_files_are_not_saved_but_the_save_comment_names_what_was_dropped(
    r: Repo,
) -> None:
    """Ignored is not work (a pushed .env would leak), but the removal deletes it: say so."""
    exclude = r.root / ".git" / "info" / "exclude"
    exclude.write_text(exclude.read_text() + ".env\nbuild/\n*.log\n")
    store = r.store()
    card = new_card(store)
    t = tree(r, card)
    (t / "app.py").write_text("print('work')\n")
    (t / ".env").write_text("TOKEN=secret-1234\n")  # 18 bytes
    (t / "build" / "obj").mkdir(parents=True)
    for name in ("a.o", "b.o", "obj/c.o"):
        (t / "build" / name).write_bytes(b"x" * 100)
    (t / "debug.log").write_text("12345\n")  # 6 bytes
    (t / "node_modules" / "pkg").mkdir(parents=True)  # `node_modules/` is in .gitignore
    (t / "node_modules" / "pkg" / "index.js").write_text("module.exports = 1\n")  # 19 bytes
    res = worktrees.discard_worktree(r.cfg, t, store=store, card_id=card, why="test")
    name = only_save(r)
    assert r.show(name, "app.py") == "print('work')\n"
    for path in (".env", "build/a.o", "debug.log", "node_modules/pkg/index.js"):
        assert r.show(name, path) is None, f"an ignored file was saved: {path}"
    assert res.ignored is not None
    assert (res.ignored.files, res.ignored.bytes) == (6, 18 + 300 + 6 + 19), res.ignored
    said = "\n".join(comments(store, card))
    assert "6 ignored files (343 bytes): .env, build/, debug.log, node_modules/" in said, (
        f"the save's comment does not name the ignored files it dropped: {said}"
    )
    assert "not saved" in said
    store.close()


def test_the_save_comment_names_only_the_first_ignored_paths(r: Repo) -> None:
    dropped = removal.Dropped(files=9, bytes=1234567, paths=[f"f{i}.log" for i in range(9)])
    assert dropped.text() == (
        "9 ignored files (1,234,567 bytes): f0.log, f1.log, f2.log, f3.log, f4.log and 4 more"
    )


def test_nothing_a_drive_started_still_runs_in_a_tree_when_it_is_saved(
    r: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any removal (a reap, the sweep, boot) first kills what a drive started there, found
    by BOARD_WORKTREE in its environment; the operator's own shell in the tree is spared."""
    t = tree(r)
    ledger = tmp_path / "ledger"
    loop = (
        'n=0; while :; do n=$((n+1)); echo "marker $n" >> "$0/m.txt" 2>/dev/null || exit 0; '
        'echo $n >> "$1"; sleep 0.01; done'
    )
    orphan = subprocess.Popen(
        ["sh", "-c", loop, str(t), str(ledger)],
        env={**os.environ, "BOARD_WORKTREE": str(t)},
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    shell = subprocess.Popen(
        ["sleep", "60"], cwd=t, stdin=subprocess.DEVNULL, start_new_session=True
    )  # the operator, cd'd into the tree to look
    try:
        wait_for(
            lambda: ledger.exists() and len(ledger.read_text().split()) >= 3,
            10,
            "the orphan's first writes (it never wrote)",
        )
        # a save that takes a while: the window in which an orphan's writes were lost
        monkeypatch.setenv(faults.FAULT_PAUSE_ENV, "after-snapshot:0.3")
        res = worktrees.discard_worktree(r.cfg, t, why="test")
        monkeypatch.delenv(faults.FAULT_PAUSE_ENV)
        orphan_alive = orphan.poll() is None
        shell_alive = shell.poll() is None
    finally:
        for child in (orphan, shell):
            if child.poll() is None:
                os.killpg(child.pid, 9)
            child.wait()
    assert res.removed
    assert not orphan_alive, "a process the drive started was left running in the tree"
    assert shell_alive, "a process with no mark, merely inside the tree, was killed"
    saved = r.show(only_save(r), "m.txt") or ""
    kept = {int(x.split()[1]) for x in saved.splitlines()}
    lost = sorted(set(map(int, ledger.read_text().split())) - kept)
    assert lost == [], f"{len(lost)} lines written during the save were lost: {lost[:10]}"


def test_a_tree_where_a_drives_process_cannot_be_stopped_is_kept_as_it_is(
    r: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stand-in for an unkillable writer: the kill is made to miss (an injected fault)."""
    t = tree(r)
    (t / "app.py").write_text("edited\n")
    writer = subprocess.Popen(
        ["sleep", "60"],
        env={**os.environ, "BOARD_WORKTREE": str(t)},
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    monkeypatch.setattr(proc, "kill_group", lambda pgid, sig=9: False)
    monkeypatch.setattr(proc, "MARK_KILL_S", 0.2)
    try:
        with pytest.raises(StrandedWorkError, match="could not be stopped"):
            worktrees.discard_worktree(r.cfg, t, why="test")
    finally:
        os.killpg(writer.pid, 9)
        writer.wait()
    assert (t / "app.py").read_text() == "edited\n", "the tree was touched"
    assert r.stranded() == {}, "a tree was saved while something still ran in it"


def test_save_comment_says_when_the_tree_did_not_leave(r: Repo) -> None:
    res = worktrees.RemoveResult(
        tree=r.cfg.worktrees_dir / "feat-c-1", card="c-1", removed=False, kept="locked"
    )
    assert "still at .worktrees/feat-c-1: locked" in worktrees.save_comment(r.cfg, res)


def test_stat_bits_of_the_helper(tmp_path: Path) -> None:
    """_make_writable gives the owner write access back (used when a delete meets read-only)."""
    d = tmp_path / "d"
    (d / "e").mkdir(parents=True)
    (d / "e" / "f").write_text("f")
    _read_only(d)
    removal._make_writable(d)
    assert os.stat(d / "e").st_mode & stat.S_IWUSR and os.stat(d / "e" / "f").st_mode & stat.S_IWUSR

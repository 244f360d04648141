"""Fold on real histories: trees start at the run tip, and a fold conflict has ways out.

Each test names the defect it guards. They run real git (a bare origin and a clone), real
coder and gate scripts under tests/scripts/, the real store, and the real `board` command
line where the operator would type it.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from board.core.cards import actions
from board.core.drive import drive
from board.core.git import treestate
from board.core.store import SQLiteStore

from tests.support.boards import make_board
from tests.support.loop import add_card, board_run, events, run_branch_log, show, stranded_branches
from tests.support.paths import script
from tests.support.repos import git, run_cli
from tests.support.waiting import wait_for


def until_idle(cfg) -> tuple[int, str, str]:
    """`board run --until-idle` in its own process, as a script or CI would run it."""
    proc = board_run(cfg.root, "--until-idle", "--quiet")
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:  # never leave a loop running behind a failed test
            proc.kill()
            proc.wait(10)
    return proc.returncode, out, err


# --- the start point ----------------------------------------------------------------------


def test_a_chain_of_dependent_cards_folds_in_order_with_plain_run_until_idle(
    tmp_path: Path,
) -> None:
    """Before: every tree started from the base, so card 2 never saw card 1's folded code
    and was blocked terminal ("coder exited 3") until the base was moved by hand."""
    cfg, store = make_board(
        tmp_path, origin=True, tiers={"default": [script("coder_chain.sh"), "{worktree}", "{card}"]}
    )
    one = add_card(store, "step 1", surface=["work/**"])
    two = add_card(store, "step 2", surface=["work/**"], deps=[one.id])
    three = add_card(store, "step 3", surface=["work/**"], deps=[two.id])
    store.close()

    code, _, err = until_idle(cfg)

    store = SQLiteStore(cfg.db_path)
    lanes = {c: (store.get(c).lane, store.get(c).blocked) for c in (one.id, two.id, three.id)}
    assert code == 0, f"--until-idle did not end 0: {err} {lanes}"
    assert all(lane == "done" for lane, _ in lanes.values()), lanes
    assert show(cfg, cfg.board.run_branch, "work/chain.txt") == "step 1\nstep 2\nstep 3"
    assert run_branch_log(cfg)[1:] == ["c-1: step 1", "c-2: step 2", "c-3: step 3"]
    assert git(cfg.root, "rev-parse", "main") == git(cfg.root, "rev-parse", "origin/main"), (
        "the base was moved"
    )
    store.close()


def test_until_idle_exits_non_zero_naming_the_cards_that_did_not_end_done(
    tmp_path: Path,
) -> None:
    cfg, store = make_board(
        tmp_path, origin=True, tiers={"default": [script("coder_fail.sh"), "{worktree}", "{card}"]}
    )
    fails = add_card(store, "cannot be built", surface=["work/**"])
    waits = add_card(store, "waits on it", surface=["other/**"], deps=[fails.id])
    store.close()

    code, _, err = until_idle(cfg)

    assert code == 1, err
    assert err.count("\n") == 1 and f"{fails.id} (ready, blocked terminal)" in err, err
    assert waits.id not in err, "a card the run never claimed was named as its failure"


def test_a_coder_failing_without_its_dependencys_work_says_so_in_the_block(
    tmp_path: Path,
) -> None:
    """Before: "the coder exited 3" and nothing pointing at the dependency."""
    cfg, store = make_board(
        tmp_path, origin=True, tiers={"default": [script("coder_chain.sh"), "{worktree}", "{card}"]}
    )
    one = add_card(store, "step 1", surface=["work/**"])
    two = add_card(store, "step 2", surface=["work/**"], deps=[one.id])
    # c-1's work sits on its branch only (say it was marked done by hand before its merge)
    side = tmp_path / "side"
    git(cfg.root, "worktree", "add", "-q", "-b", "feat/c-1", str(side), "main")
    (side / "work").mkdir()
    (side / "work" / "chain.txt").write_text("step 1\n")
    git(side, "add", "-A")
    git(side, "commit", "-q", "-m", "c-1 by hand")
    c1_work = git(side, "rev-parse", "HEAD")
    git(cfg.root, "worktree", "remove", "--force", str(side))
    actions.done(store, None, one.id, reason="merged by hand")

    end = drive.Drive(cfg, store, two.id, drive.claim(cfg, store, store.get(two.id))).run()

    blocked = store.get(two.id).blocked
    assert end.outcome == "blocked" and blocked is not None and blocked.cls == "terminal", end
    assert "exited 3" in blocked.reason
    assert f"{one.id}'s work ({c1_work[:10]}, on feat/c-1) is not in it" in blocked.reason, (
        blocked.reason
    )
    store.close()


def test_a_base_that_moved_on_is_taken_into_the_run_branch_before_a_tree_starts(
    tmp_path: Path,
) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    run_before = _commit_on_run(cfg, tmp_path, "folded.txt", "folded\n", "an earlier fold")
    (cfg.root / "lib.txt").write_text("from the base\n")  # people commit to main meanwhile
    git(cfg.root, "add", "lib.txt")
    git(cfg.root, "commit", "-q", "-m", "someone committed to main")
    git(cfg.root, "push", "-q", "origin", "main")
    card = add_card(store, "needs both", surface=["work/**"])

    end = drive.Drive(cfg, store, card.id, drive.claim(cfg, store, card)).run()

    assert end.outcome == "done", end
    for path in ("lib.txt", "folded.txt", "work/c-1.txt"):
        assert show(cfg, cfg.board.run_branch, path) is not None, f"{path} is not on the run branch"
    parents = git(cfg.root, "log", "--format=%P", "-n", "1", f"{cfg.board.run_branch}~1").split()
    assert parents == [run_before, git(cfg.root, "rev-parse", "origin/main")], (
        "the base was not taken in by a merge commit on top of the run branch"
    )
    store.close()


def test_a_take_in_that_conflicts_claims_nothing_and_says_so_once(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    run_before = _commit_on_run(cfg, tmp_path, "app.py", "print('run')\n", "run edits app.py")
    (cfg.root / "app.py").write_text("print('base')\n")
    git(cfg.root, "commit", "-q", "-am", "main edits app.py")
    git(cfg.root, "push", "-q", "origin", "main")
    card = add_card(store, "waits", surface=["work/**"])
    store.close()

    code, _, err = until_idle(cfg)

    store = SQLiteStore(cfg.db_path)
    assert store.get(card.id).lane == "ready", "a card was claimed anyway"
    assert code == 1 and err.count("\n") == 1, err
    assert "conflicts with the run branch in app.py" in err, err
    assert git(cfg.root, "rev-parse", cfg.board.run_branch) == run_before, "the run branch moved"
    log = (cfg.board_dir / "loop.log").read_text()
    said = [line for line in log.splitlines() if "conflicts with the run branch in app.py" in line]
    assert len(said) == 1, f"the operator was not told exactly once: {said}"
    store.close()


# --- a fold conflict, and its three ways out ---------------------------------------------


def _conflicted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiers=None, **kw):
    """A board where c-1's fold conflicts: while its coder rewrites app.py, someone folds
    another app.py onto the run branch. Returns (cfg, store, card, the rival commit)."""
    tiers = tiers or {"default": [script("coder_replace.py"), "{worktree}", "{card}"]}
    cfg, store = make_board(tmp_path, origin=True, tiers=tiers, **kw)
    card = add_card(store, "rewrites app.py", surface=["app.py"])
    monkeypatch.setenv("SLOW_C_1", "1")
    token = drive.claim(cfg, store, card)
    ends = []
    runner = threading.Thread(
        target=lambda: ends.append(drive.Drive(cfg, store, card.id, token).run())
    )
    runner.start()
    wait_for(lambda: (cfg.worktrees_dir / "feat-c-1").exists(), what="c-1's tree")
    rival = _commit_on_run(cfg, tmp_path, "app.py", "print('rival')\n", "c-9: the rival")
    runner.join(30)
    monkeypatch.delenv("SLOW_C_1")
    assert ends and ends[0].outcome == "blocked" and ends[0].cls == "fold-conflict", ends
    return cfg, store, store.get(card.id), rival


def _commit_on_run(cfg, tmp_path: Path, path: str, text: str, message: str) -> str:
    side = tmp_path / "side"
    git(cfg.root, "worktree", "add", "-q", "--detach", str(side), cfg.board.run_branch)
    (side / path).write_text(text)
    git(side, "add", "-A")
    git(side, "commit", "-q", "-m", message)
    new = git(side, "rev-parse", "HEAD")
    git(cfg.root, "update-ref", f"refs/heads/{cfg.board.run_branch}", new)
    git(cfg.root, "worktree", "remove", "--force", str(side))
    return new


def test_the_block_names_the_other_side_and_ways_out_that_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg, store, card, rival = _conflicted(tmp_path, monkeypatch)
    reason = card.blocked.reason
    assert "app.py" in reason and f"{rival[:7]} c-9: the rival" in reason, reason
    for way in (f"board requeue {card.id}", f"board resolve {card.id}",
                f"board stranded salvage {card.id}"):  # fmt: skip
        assert way in reason, f"{way!r} is not offered: {reason}"
    store.close()


def test_requeue_rebuilds_on_the_run_tip_with_the_conflict_in_the_brief(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: requeue rebuilt from the base into the same conflict, one more stranded
    branch each time."""
    briefs = tmp_path / "briefs.txt"
    monkeypatch.setenv("BRIEFS", str(briefs))
    cfg, store, card, rival = _conflicted(tmp_path, monkeypatch)
    run_cli(cfg.root, "requeue", card.id)
    store.close()

    code, _, err = until_idle(cfg)

    store = SQLiteStore(cfg.db_path)
    assert code == 0 and store.get(card.id).lane == "done", (err, store.get(card.id))
    assert show(cfg, cfg.board.run_branch, "app.py") == "print('from c-1')"
    assert git(cfg.root, "merge-base", "--is-ancestor", rival, cfg.board.run_branch) == ""
    second = briefs.read_text().split("=== c-1\n")[2]
    assert "## The last fold conflicted" in second and "app.py" in second, second
    assert f"{rival[:7]} c-9: the rival" in second, "the brief does not name the other side"
    assert len(stranded_branches(cfg)) <= 1, "the requeue left a stranded branch per try"
    store.close()


def test_salvage_refuses_in_one_line_while_it_conflicts_then_folds_once_the_other_side_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: salvage failed on the same conflict and suggested itself again, in several
    lines on stdout."""
    cfg, store, card, rival = _conflicted(tmp_path, monkeypatch)
    refs = git(cfg.root, "for-each-ref", "--format=%(refname) %(objectname)")
    version = store.get(card.id).version

    res = run_cli(cfg.root, "stranded", "salvage", card.id)

    assert res.returncode != 0 and res.stdout == "", res.stdout
    assert res.stderr.count("\n") == 1 and "app.py" in res.stderr, res.stderr
    assert f"board resolve {card.id}" in res.stderr
    assert git(cfg.root, "for-each-ref", "--format=%(refname) %(objectname)") == refs
    assert store.get(card.id).version == version, "a refused salvage changed the card"

    # the other side moves: app.py is back as c-1's tree started from it
    _commit_on_run(cfg, tmp_path, "app.py", "print('hello')\n", "c-9 reverted")
    res = run_cli(cfg.root, "stranded", "salvage", card.id)

    assert res.returncode == 0, res.stderr
    assert store.get(card.id).lane == "done"
    assert show(cfg, cfg.board.run_branch, "app.py") == "print('from c-1')"
    store.close()


def test_salvage_of_a_stranded_branch_replays_it_on_the_run_tip_named_after_the_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg, store, card, _ = _conflicted(tmp_path, monkeypatch)
    actions.requeue(store, card.id)  # the kept tree goes to a stranded branch at the rebuild
    from board.core.git import worktrees

    worktrees.fresh_build_prepare(cfg, card.id, store=store)
    [branch] = stranded_branches(cfg)
    _commit_on_run(cfg, tmp_path, "app.py", "print('hello')\n", "c-9 reverted")
    _commit_on_run(cfg, tmp_path, "other.txt", "moved on\n", "c-8: unrelated")
    actions.hold(store, card.id, "salvaging by hand")

    res = run_cli(cfg.root, "stranded", "salvage", branch)

    assert res.returncode == 0, res.stderr
    subject = git(cfg.root, "log", "-1", "--format=%s", cfg.board.run_branch)
    assert subject == f"c-1: rewrites app.py (salvaged from {branch})", subject
    assert show(cfg, cfg.board.run_branch, "app.py") == "print('from c-1')"
    assert show(cfg, cfg.board.run_branch, "other.txt") == "moved on", "the salvage lost a fold"
    store.close()


def test_resolve_leaves_the_conflict_then_continue_gates_folds_and_moves_the_card_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: no way to resolve by hand; a hand rebase then `unblock` was thrown into a
    stranded branch and rebuilt from scratch."""
    gate_log = tmp_path / "gate.txt"
    cfg, store, card, rival = _conflicted(
        tmp_path, monkeypatch, gate=[script("gate_record.sh"), str(gate_log), "{card}"]
    )
    tree = cfg.worktrees_dir / "feat-c-1"

    res = run_cli(cfg.root, "resolve", card.id)

    assert res.returncode == 0, res.stderr
    assert (
        "conflicts in app.py" in res.stdout and f"board resolve {card.id} --continue" in res.stdout
    )
    assert f"the other side ({cfg.board.run_branch}): {rival[:7]} c-9: the rival" in res.stdout
    assert f"cd {tree.relative_to(cfg.root)}" in res.stdout and "git add -- app.py" in res.stdout
    assert treestate.rebase_in_progress(tree), "no rebase was left stopped at the conflict"
    after = store.get(card.id)
    assert after.blocked.cls == "fold-conflict" and "being resolved by hand" in after.blocked.reason

    early = run_cli(cfg.root, "resolve", card.id, "--continue")
    assert early.returncode != 0 and early.stderr.count("\n") == 1, early.stderr
    assert "still unmerged" in early.stderr and "app.py" in early.stderr

    (tree / "app.py").write_text("print('rival')\nprint('from c-1')\n")
    git(tree, "add", "app.py")
    done = run_cli(cfg.root, "resolve", card.id, "--continue")

    assert done.returncode == 0, done.stderr
    assert store.get(card.id).lane == "done"
    assert show(cfg, cfg.board.run_branch, "app.py") == "print('rival')\nprint('from c-1')"
    assert git(cfg.root, "merge-base", "--is-ancestor", rival, cfg.board.run_branch) == ""
    assert f"argv: {card.id}" in gate_log.read_text(), "the gate did not run on the resolution"
    store.close()


def test_unblock_takes_a_tree_resolved_by_hand_as_the_build_and_never_one_mid_rebase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg, store, card, rival = _conflicted(tmp_path, monkeypatch)
    tree = cfg.worktrees_dir / "feat-c-1"
    res = run_cli(cfg.root, "resolve", card.id)
    assert res.returncode == 0 and treestate.rebase_in_progress(tree)
    head = git(tree, "rev-parse", "HEAD")

    # unblocked mid-rebase: the card is blocked again, the tree not touched
    actions.unblock(store, card.id)
    end = drive.Drive(cfg, store, card.id, drive.claim(cfg, store, store.get(card.id))).run()
    assert end.outcome == "blocked" and "rebase is in progress" in end.reason, end
    assert treestate.rebase_in_progress(tree) and git(tree, "rev-parse", "HEAD") == head
    assert stranded_branches(cfg) == [], "a tree mid-rebase was saved away"

    # finished by hand with plain git, then unblocked: that tree is the build, no coder runs
    (tree / "app.py").write_text("print('by hand')\n")
    git(tree, "add", "app.py")
    git(tree, "-c", "core.editor=true", "rebase", "--continue")
    actions.unblock(store, card.id)
    from tests.support.loop import write_config

    cfg = write_config(
        cfg.root, tiers={"default": [script("coder_fail.sh"), "{worktree}", "{card}"]}
    )
    end = drive.Drive(cfg, store, card.id, drive.claim(cfg, store, store.get(card.id))).run()

    assert end.outcome == "done", end
    assert show(cfg, cfg.board.run_branch, "app.py") == "print('by hand')", (
        "the hand resolution was lost"
    )
    assert git(cfg.root, "merge-base", "--is-ancestor", rival, cfg.board.run_branch) == ""
    assert any("took the kept tree" in e for e in events(store, card.id)), "a coder ran anyway"
    store.close()


# --- gates that know the card, picks that agree --------------------------------------------


def test_the_gate_gets_card_and_brief_in_its_argv_and_environment(tmp_path: Path) -> None:
    record = tmp_path / "gate.txt"
    cfg, store = make_board(
        tmp_path, origin=True, gate=[script("gate_record.sh"), str(record), "{card}", "{brief}"]
    )
    card = add_card(store, "gated", surface=["work/**"])

    end = drive.Drive(cfg, store, card.id, drive.claim(cfg, store, card)).run()

    assert end.outcome == "done", end
    text = record.read_text()
    brief = str(cfg.worktrees_dir / "feat-c-1" / ".board-scratch" / "brief.md")
    assert f"argv: {card.id} {brief}" in text, text
    assert f"BOARD_CARD={card.id}" in text and f"BOARD_BRIEF={brief}" in text, text
    store.close()


def test_pick_defaults_to_the_base_in_push_mode_and_names_the_card_in_its_commit(
    tmp_path: Path,
) -> None:
    cfg, store = make_board(tmp_path, origin=True, publish={"mode": "push"})
    card = add_card(store, "Add modulo", surface=["work/**"])
    from board.core.git import worktrees

    tree = worktrees.create_worktree(cfg, card.id)
    (tree / "mod.py").write_text("mod = 1\n")
    worktrees.discard_worktree(cfg, tree, store=store, card_id=card.id, why="a test")
    [branch] = stranded_branches(cfg)
    git(cfg.root, "checkout", "-q", "-b", "elsewhere")  # main is not checked out now
    store.close()

    res = run_cli(cfg.root, "stranded", "pick", branch)

    assert res.returncode == 0, res.stderr
    assert "onto main" in res.stdout, res.stdout
    subject = git(cfg.root, "log", "-1", "--format=%s", "main")
    assert subject == f"c-1: Add modulo (picked from {branch})", subject
    assert "Board-Save" not in git(cfg.root, "log", "-1", "--format=%B", "main")


# --- a history replayed as cards -----------------------------------------------------------

HISTORY = [
    ("calc: add", {"calc.py": "def add(a, b):\n    return a + b\n",
                   "test_calc.py": "import unittest\nfrom calc import add\n\n\n"
                   "class T(unittest.TestCase):\n    def test_add(self):\n"
                   "        self.assertEqual(add(2, 3), 5)\n"}),
    ("calc: sub, tested", {"calc.py": "def add(a, b):\n    return a + b\n\n\n"
                           "def sub(a, b):\n    return a - b\n",
                           "test_sub.py": "import unittest\nfrom calc import sub\n\n\n"
                           "class T(unittest.TestCase):\n    def test_sub(self):\n"
                           "        self.assertEqual(sub(5, 3), 2)\n"}),
    ("util: a helper module", {"util.py": "from calc import add, sub\n\n\n"
                               "def both(a, b):\n    return add(a, b), sub(a, b)\n"}),
    ("util: tested", {"test_util.py": "import unittest\nfrom util import both\n\n\n"
                      "class T(unittest.TestCase):\n    def test_both(self):\n"
                      "        self.assertEqual(both(5, 3), (8, 2))\n"}),
    ("calc: mul, and util uses it", {
        "calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\n"
                   "def mul(a, b):\n    return a * b\n",
        "util.py": "from calc import add, mul, sub\n\n\n"
                   "def both(a, b):\n    return add(a, b), sub(a, b)\n\n\n"
                   "def square(a):\n    return mul(a, a)\n"}),
    ("rename the add test", {"test_calc.py": None, "test_add.py":
        "import unittest\nfrom calc import add\n\n\n"
        "class T(unittest.TestCase):\n    def test_add(self):\n"
        "        self.assertEqual(add(2, 3), 5)\n"}),
]  # fmt: skip


def test_a_history_of_dependent_commits_replayed_as_cards_ends_equal_to_upstream(
    tmp_path: Path,
) -> None:
    """Each card's coder applies one real commit's patch; the history's own tests are the
    gate; each card depends on the one before. The run branch must end with exactly the
    history's last tree."""
    import sys

    from tests.support.loop import write_config
    from tests.support.repos import make_repo

    source = tmp_path / "upstream"
    git(tmp_path, "init", "-q", "-b", "main", str(source))
    (source / "README.md").write_text("a tiny library\n")
    # as a real project has: the gate (unittest) writes bytecode beside the code, and with
    # nothing ignoring it the board's commit takes it in (where PYTHONDONTWRITEBYTECODE is
    # not set), so the run branch would end with __pycache__/ that upstream never had
    (source / ".gitignore").write_text("__pycache__/\n")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "initial")
    shas = []
    for message, files in HISTORY:
        for name, text in files.items():
            if text is None:
                git(source, "rm", "-q", name)
            else:
                (source / name).write_text(text)
                git(source, "add", name)
        git(source, "commit", "-q", "-m", message)
        shas.append(git(source, "rev-parse", "HEAD"))

    (tmp_path / "board").mkdir()
    clone = make_repo(tmp_path / "board", init="").root
    git(clone, "fetch", "-q", str(source), "main")
    git(clone, "reset", "-q", "--hard", f"{shas[0]}~1")
    git(clone, "push", "-q", "-f", "origin", "main")
    run_cli(clone, "init")
    cfg = write_config(
        clone,
        tiers={"replay": [script("coder_apply_commit.py"), "{brief}", "{worktree}"]},
        gate=[sys.executable, "-m", "unittest", "-q"],
    )
    store = SQLiteStore(cfg.db_path)
    prev = None
    for (message, _), sha in zip(HISTORY, shas, strict=True):
        card = add_card(
            store,
            message,
            spec=f"apply-commit: {sha} {source}",
            deps=[prev] if prev else [],
        )
        prev = card.id
    store.close()

    code, _, err = until_idle(cfg)

    store = SQLiteStore(cfg.db_path)
    cards = [(c.id, c.lane, c.blocked) for c in store.list_cards()]
    store.close()
    log = (cfg.board_dir / "loop.log").read_text().splitlines()
    said = f"cards: {cards}\nrun branch: {run_branch_log(cfg)}\nloop log:\n" + "\n".join(log)
    assert code == 0, f"{err}\n{said}"
    assert git(clone, "rev-parse", f"{cfg.board.run_branch}^{{tree}}") == git(
        source, "rev-parse", "HEAD^{tree}"
    ), f"the run branch's tree is not the history's last tree\n{said}"
    assert len(run_branch_log(cfg)) == 1 + len(HISTORY)

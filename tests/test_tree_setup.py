"""Trees a project can build in: `[tree] setup` in every fresh tree, ignored files copied in
from the checkout, and a copied secret that never reaches a branch.

Everything is real: the repositories (a bare origin and a clone), the setups, coders and
gates (scripts under tests/scripts/), the store. The PR command of the push test is the
stub PR service (pr_ok.py), the one thing that cannot run here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from board.core.cards import waits
from board.core.git import treefiles, worktrees
from board.core.loop import Loop
from board.core.model import SETUP_PAUSE
from board.core.ops import status

from tests.support.boards import make_board
from tests.support.loop import (
    add_card,
    comments,
    drive_one,
    edit_tier,
    events,
    loop_log,
    stranded_branches,
)
from tests.support.operator import pr_argv_ok
from tests.support.paths import script
from tests.support.repos import git, run_cli

TOKEN = "s3cr3t-token-0123456789"


def _log(cfg, card_id: str, attempt: int = 1) -> str:
    return (cfg.logs_dir / card_id / f"{attempt}.log").read_text()


def _records(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    return [dict(x.split("=", 1) for x in line.split()) for line in path.read_text().splitlines()]


def _refs_holding(repo: Path, text: str) -> list[str]:
    """Every ref of `repo` whose history adds or removes `text` anywhere."""
    refs = git(repo, "for-each-ref", "--format=%(refname)").splitlines()
    found = []
    for ref in refs:
        if git(repo, "log", "--format=%H", f"-S{text}", ref):
            found.append(ref)
    return found


def _with_env_file(clone: Path) -> None:
    """A project whose tests read a `.env` nobody commits, named by a .worktreeinclude."""
    (clone / ".gitignore").write_text("node_modules/\n.env\n")
    (clone / ".worktreeinclude").write_text("# files a tree needs\n.env\n")


def _write_env(root: Path) -> None:
    (root / ".env").write_text(f"DEBUG=1\nAPI_TOKEN={TOKEN}\n")


# ---------------------------------------------------------------------------------------------
# setup


def test_setup_runs_in_the_fresh_tree_before_the_coder_with_no_stdin_and_its_environment(
    tmp_path: Path,
) -> None:
    record = tmp_path / "setups.txt"
    cfg, store = make_board(
        tmp_path,
        origin=True,
        gate=[script("gate_needs_setup.sh")],
        tree={"setup": [[script("setup_record.sh"), "0", str(record)]]},
    )
    card = add_card(store, surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "done", f"{end.outcome}: {end.reason}"
    (entry,) = _records(record)
    tree = cfg.worktrees_dir / f"feat-{card.id}"
    assert entry == {
        "card": card.id,
        "worktree": str(tree),
        "root": str(cfg.root),
        "slot": "1",
        "cwd": str(tree),
        "stdin": "0",
    }
    log = _log(cfg, card.id)
    heading = log.index("== setup: 1 command(s) from [tree] setup ==")
    assert heading < log.index("setup: installed for") < log.index("board: coder (tier")
    assert "setup 1 of 1 ended: exited 0" in log


def test_without_setup_the_gate_that_needs_it_is_red(tmp_path: Path) -> None:
    """The other half of the test above: the same gate fails in a tree nothing set up."""
    cfg, store = make_board(tmp_path, origin=True, gate=[script("gate_needs_setup.sh")])
    card = add_card(store, surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "blocked" and end.cls == "gate-red", f"{end.outcome} {end.cls}"


def test_every_fresh_tree_runs_setup_a_climb_included(tmp_path: Path) -> None:
    record = tmp_path / "setups.txt"
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={
            "low": [script("coder_fail.sh"), "{worktree}", "{card}"],
            "high": edit_tier(),
        },
        tree={"setup": [[script("setup_record.sh"), "0", str(record)]]},
    )
    card = add_card(store, surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "done", f"{end.outcome}: {end.reason}"
    assert len(_records(record)) == 2, "the next rung's fresh tree was not set up"


def test_a_tree_resumed_after_stop_and_unblock_is_set_up_again(tmp_path: Path) -> None:
    """A resumed tree is a fresh tree with the stopped work applied: it needs its
    dependencies again, and the setup runs there over the resumed work."""
    import threading

    from board.core import ops as operator
    from board.core.cards import actions
    from board.core.drive import drive

    from tests.support.waiting import wait_for

    record = tmp_path / "setups.txt"
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": [script("coder_resume.sh"), "{worktree}", "{card}"]},
        gate=[script("gate_needs_setup.sh")],
        tree={"setup": [[script("setup_record.sh"), "0", str(record)]]},
    )
    card = add_card(store, "two sittings", surface=["work/**"])
    token = drive.claim(cfg, store, card)
    ends: list = []
    runner = threading.Thread(
        target=lambda: ends.append(drive.Drive(cfg, store, card.id, token).run())
    )
    runner.start()
    part = cfg.worktrees_dir / f"feat-{card.id}" / "work" / f"{card.id}.txt"
    wait_for(lambda: part.exists() and "part 1" in part.read_text(), what="part 1")
    operator.stop(store, cfg, card.id, "going home")
    runner.join(30)
    actions.unblock(store, card.id)
    end = drive.Drive(cfg, store, card.id, drive.claim(cfg, store, store.get(card.id))).run()
    assert end.outcome == "done", f"{end.outcome}: {end.reason}"
    assert len(_records(record)) == 2, "the resumed tree was not set up again"
    log = _log(cfg, card.id, 2)
    assert log.index("continues from the interrupted build") < log.index("== setup:")
    store.close()


def test_a_failing_setup_blocks_setup_failed_climbs_no_rung_and_two_in_a_row_stop_claims(
    tmp_path: Path,
) -> None:
    ran = tmp_path / "coders.txt"
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"low": edit_tier(ran), "high": edit_tier(ran)},
        board={"max_concurrent": 1},
        tree={"setup": [[script("setup_record.sh"), "3"]]},
    )
    cards = [add_card(store, f"card {n}", surface=[f"work/c-{n}.txt"]) for n in (1, 2, 3)]
    loop = Loop(cfg, store)
    assert loop.run(until_idle=True) == 0
    first, second, third = (store.get(c.id) for c in cards)
    for card in (first, second):
        assert card.blocked is not None and card.blocked.cls == "setup-failed", card.blocked
        reason = card.blocked.reason
        assert "setup_record.sh" in reason and "exited 3" in reason, reason
        assert "no rung was climbed" in reason, reason
        said = "\n".join(comments(store, card.id))
        assert "the lockfile does not match package.json" in said, "the setup's tail is not shown"
        tiers = {d.tier for d in store.list_drives() if d.card == card.id}
        assert tiers == {"low"}, f"a failed setup climbed the ladder: {tiers}"
        tree = cfg.worktrees_dir / f"feat-{card.id}"
        assert tree.is_dir(), "the tree of a failed setup was not kept for the operator"
    assert not ran.exists(), "a coder ran in a tree whose setup failed"
    assert third.lane == "ready" and third.blocked is None and not third.drive
    pause = waits.active_pause(store.pauses(), SETUP_PAUSE)
    assert pause is not None and pause.cls == "setup-failed"
    assert first.id in pause.reason and second.id in pause.reason
    told = [x for x in loop_log(cfg) if x["event"] == "setup-paused"]
    assert len(told) == 1, f"the operator was told {len(told)} times"
    why = waits.why_waits(cfg, third, waits.claim_view(store))
    assert why.startswith("claims are paused (board resume setup): 2 cards in a row"), why
    lines = "\n".join(status.status_lines(status.board_status(cfg, store)))
    assert "setup: setup-failed until the operator acts" in lines, lines
    res = run_cli(cfg.root, "resume", "setup")
    assert res.returncode == 0, res.stderr
    assert "setup resumed" in res.stdout
    assert waits.active_pause(store.pauses(), SETUP_PAUSE) is None
    store.close()


def test_a_setup_that_worked_starts_the_count_again(tmp_path: Path) -> None:
    """Fail, work, fail: never two in a row, so claims never stop."""
    cfg, store = make_board(tmp_path, origin=True, board={"max_concurrent": 1})
    loop = Loop(cfg, store)
    from board.core.drive.drive import DriveEnd

    for n, setup in enumerate(("failed", "ok", "failed")):
        loop._count_setup(DriveEnd(f"c-{n}", "blocked", "x", "d", cls="setup-failed", setup=setup))
    assert waits.active_pause(store.pauses(), SETUP_PAUSE) is None
    loop._count_setup(DriveEnd("c-9", "blocked", "x", "d", cls="setup-failed", setup="failed"))
    assert waits.active_pause(store.pauses(), SETUP_PAUSE) is not None
    store.close()


def test_a_setup_that_leaves_something_git_would_commit_fails(tmp_path: Path) -> None:
    gen = tmp_path / "gen.py"
    gen.write_text("open('generated.txt', 'w').write('made by setup')\n")
    cfg, store = make_board(tmp_path, origin=True, tree={"setup": [["python3", str(gen)]]})
    card = add_card(store, surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.cls == "setup-failed", f"{end.outcome} {end.cls}: {end.reason}"
    assert "generated.txt" in end.reason and "git would commit" in end.reason, end.reason


def test_a_setup_past_its_timeout_is_killed_whole(tmp_path: Path) -> None:
    cfg, store = make_board(
        tmp_path, origin=True, tree={"setup": [["sleep", "30"]], "setup_timeout_s": 0.5}
    )
    card = add_card(store, surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.cls == "setup-failed", f"{end.outcome} {end.cls}"
    assert "ran past tree.setup_timeout_s (0.5s)" in end.reason, end.reason


def test_drives_at_once_get_different_slots(tmp_path: Path) -> None:
    record = tmp_path / "setups.txt"
    cfg, store = make_board(
        tmp_path,
        origin=True,
        board={"max_concurrent": 2},
        tree={"setup": [[script("setup_record.sh"), "0", str(record), "1"]]},
    )
    for n in (1, 2):
        add_card(store, f"card {n}", surface=[f"work/c-{n}.txt"])
    assert Loop(cfg, store).run(until_idle=True) == 0
    slots = sorted(r["slot"] for r in _records(record))
    assert slots == ["1", "2"], f"two drives at once shared a slot: {slots}"
    store.close()


# ---------------------------------------------------------------------------------------------
# the files a tree needs


def test_a_worktreeinclude_file_reaches_the_gate_and_no_ref_after_success(
    tmp_path: Path,
) -> None:
    cfg, store = make_board(
        tmp_path, origin=True, gate=[script("gate_reads_env.sh")], setup=_with_env_file
    )
    _write_env(cfg.root)
    card = add_card(store, surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "done", f"{end.outcome}: {end.reason}"
    log = _log(cfg, card.id)
    size = (cfg.root / ".env").stat().st_size
    assert f"copied .env ({size} bytes)" in log
    assert TOKEN not in log, "the drive log shows the copied file's contents"
    assert "gate: read API_TOKEN from .env" in log
    assert _refs_holding(cfg.root, TOKEN) == []
    assert _refs_holding(cfg.root.parent / "origin.git", TOKEN) == []


def test_a_copied_file_is_on_no_ref_after_a_failed_attempts_save(tmp_path: Path) -> None:
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={
            "low": [script("coder_fail.sh"), "{worktree}", "{card}"],
            "high": edit_tier(),
        },
        setup=_with_env_file,
    )
    _write_env(cfg.root)
    card = add_card(store, surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "done", f"{end.outcome}: {end.reason}"
    assert stranded_branches(cfg), "the failed attempt was not saved"
    assert _refs_holding(cfg.root, TOKEN) == []
    said = "\n".join(comments(store, card.id))
    assert re.search(r"Saved to stranded/\S+ \(a failed attempt\): 1 file changed", said), said


def test_a_copied_file_is_on_no_ref_after_a_push(tmp_path: Path) -> None:
    """The PR service is the stub (pr_ok.py); the push goes to the real bare origin."""
    cfg, store = make_board(
        tmp_path,
        origin=True,
        setup=_with_env_file,
        publish={"mode": "push", "pr_argv": pr_argv_ok(tmp_path / "prs.jsonl")},
    )
    _write_env(cfg.root)
    card = add_card(store, surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "review", f"{end.outcome}: {end.reason}"
    origin = cfg.root.parent / "origin.git"
    assert git(origin, "rev-parse", "--verify", f"refs/heads/feat/{card.id}")
    assert _refs_holding(origin, TOKEN) == []
    assert _refs_holding(cfg.root, TOKEN) == []


def test_tracked_and_unignored_files_are_refused_with_the_reason(tmp_path: Path) -> None:
    def project(clone: Path) -> None:
        (clone / ".worktreeinclude").write_text("README.md\nnotes.txt\nnode_modules/\n")
        (clone / ".gitignore").write_text("node_modules/\n")

    cfg, store = make_board(tmp_path, origin=True, setup=project, tree={"copy": ["app.py"]})
    (cfg.root / "notes.txt").write_text("mine\n")
    (cfg.root / "node_modules" / "dep").mkdir(parents=True)
    (cfg.root / "node_modules" / "dep" / "index.js").write_text("x\n")
    plan = treefiles.plan(cfg)
    refused = dict(plan.refused)
    assert plan.files == []
    assert "git tracks it" in refused["README.md"] and "git tracks it" in refused["app.py"]
    assert "no ignore rule matches it" in refused["notes.txt"]
    assert "a copy is not an install" in refused["node_modules/dep/index.js"]
    card = add_card(store, surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "done", f"{end.outcome}: {end.reason}"
    log = _log(cfg, card.id)
    assert "not copied README.md: git tracks it" in log
    assert show_ref(cfg, "board/run", "notes.txt") is None


def show_ref(cfg, ref: str, path: str) -> str | None:
    try:
        return git(cfg.root, "show", f"{ref}:{path}")
    except AssertionError:
        return None


def test_a_coder_that_writes_a_copied_secret_is_blocked_and_the_value_is_on_no_ref(
    tmp_path: Path,
) -> None:
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": [script("coder_leak.sh"), "{worktree}"], "next": edit_tier()},
        setup=_with_env_file,
    )
    _write_env(cfg.root)
    card = add_card(store)
    end = drive_one(cfg, store, card)
    assert end.outcome == "blocked" and end.cls == "secret-leak", f"{end.outcome} {end.cls}"
    after = store.get(card.id)
    assert after.blocked is not None and after.blocked.cls == "secret-leak"
    reason = after.blocked.reason
    assert "app.py line 2" in reason and "API_TOKEN" in reason and ".env" in reason, reason
    said = "\n".join([reason, *events(store, card.id), *comments(store, card.id)])
    assert TOKEN not in said, "the card's timeline shows the secret"
    assert TOKEN not in _log(cfg, card.id).replace(f"API_TOKEN={TOKEN}", "")
    tree = cfg.worktrees_dir / f"feat-{card.id}"
    assert TOKEN in (tree / "app.py").read_text(), "the tree was not kept as it was"
    assert {d.tier for d in store.list_drives() if d.card == card.id} == {"default"}
    assert _refs_holding(cfg.root, TOKEN) == []
    with pytest.raises(treefiles.SecretLeak):
        worktrees.discard_worktree(cfg, tree, store=store, card_id=card.id, why="a test")
    assert TOKEN in (tree / "app.py").read_text(), "a refused save removed the tree"
    assert _refs_holding(cfg.root, TOKEN) == []
    store.close()


def test_the_boards_own_files_are_never_copied(tmp_path: Path) -> None:
    """A repository's `.worktreeinclude` is input: `*` must not copy the store or the trees."""

    def project(clone: Path) -> None:
        (clone / ".worktreeinclude").write_text("*\n")
        (clone / ".gitignore").write_text("node_modules/\n.env\n")

    cfg, store = make_board(tmp_path, origin=True, setup=project)
    _write_env(cfg.root)
    (cfg.worktrees_dir / "feat-c-9").mkdir(parents=True)
    (cfg.worktrees_dir / "feat-c-9" / "x.txt").write_text("another tree's\n")
    plan = treefiles.plan(cfg)
    assert [p for p, _ in plan.files] == [".env"]
    refused = dict(plan.refused)
    assert refused[".board/board.db"].startswith("the board's own")
    assert refused[".worktrees/feat-c-9/x.txt"].startswith("the board's own")
    store.close()


def test_a_copy_is_never_written_through_a_symlink_in_the_tree(tmp_path: Path) -> None:
    """The run branch (a card folded it) has `conf` as a symlink to a folder outside the
    tree, while the checkout has a real `conf/` with an ignored file: the copy is refused
    rather than written wherever the link points."""
    outside = tmp_path / "outside"
    outside.mkdir()

    def project(clone: Path) -> None:
        (clone / ".gitignore").write_text("node_modules/\nconf/local.env\n")
        (clone / ".worktreeinclude").write_text("conf/local.env\n")

    cfg, store = make_board(tmp_path, origin=True, setup=project)
    (cfg.root / "conf").mkdir()
    (cfg.root / "conf" / "local.env").write_text(f"API_TOKEN={TOKEN}\n")
    side = tmp_path / "side"
    git(cfg.root, "worktree", "add", "-q", str(side), "board/run")
    (side / "conf").symlink_to(outside)
    git(side, "add", "conf")
    git(side, "commit", "-q", "-m", "conf is a link")
    git(cfg.root, "worktree", "remove", "--force", str(side))
    card = add_card(store, surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "done", f"{end.outcome}: {end.reason}"
    assert list(outside.iterdir()) == [], "the copy was written through the tree's symlink"
    assert "not copied conf/local.env: a folder on its path in the tree is a symlink" in _log(
        cfg, card.id
    )
    store.close()


def test_a_coder_that_plants_fifos_cannot_hang_the_leak_check(tmp_path: Path) -> None:
    """Invariant 8: the copied file and a new file, both symlinks to a FIFO no one writes.
    A read that follows the link (or blocks on it) never returns; the drive must end."""
    import threading

    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": [script("coder_fifo.sh"), "{worktree}", str(tmp_path / "fifo")]},
        setup=_with_env_file,
    )
    _write_env(cfg.root)
    card = add_card(store)
    ends: list = []
    runner = threading.Thread(target=lambda: ends.append(drive_one(cfg, store, card)))
    runner.daemon = True
    runner.start()
    runner.join(60)
    assert not runner.is_alive(), "the drive hung on a FIFO the coder planted"
    assert ends and ends[0].outcome == "done", ends
    store.close()

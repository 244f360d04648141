"""Crash recovery: `kill -9` of `board run` mid-drive, then a restart, loses nothing."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from board.core import proc
from board.core.cards import actions
from board.core.drive import drive
from board.core.git import faults
from board.core.loop import Loop
from board.core.publish import publish

from tests.support.boards import make_board
from tests.support.loop import (
    add_card,
    board_run,
    edit_tier,
    events,
    read_pids,
    show,
    stranded_branches,
    write_config,
)
from tests.support.paths import script
from tests.support.procs import group_members
from tests.support.repos import GIT_ENV
from tests.support.waiting import has_text, wait_for


def test_kill_9_of_board_run_mid_drive_then_a_restart_loses_nothing(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    sleepy = [script("coder_sleepy.sh"), "{worktree}", "{card}", str(pids)]
    cfg, store = make_board(tmp_path, origin=True, tiers={"default": sleepy})
    card = add_card(store, "interrupted", surface=["work/**"])
    tree = cfg.worktrees_dir / "feat-c-1"

    run = board_run(cfg.root)
    try:
        wait_for(lambda: has_text(tree / "work" / "c-1.txt"), what="the coder's edit")
        wait_for(lambda: read_pids(pids), what="the coder's pid")
        run.send_signal(signal.SIGKILL)
        run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    (coder,) = read_pids(pids)
    assert group_members(coder), "premise: the coder outlives a killed loop (own session)"
    assert store.get(card.id).lane == "working", "premise: the card was mid-drive"

    # the restart's boot: the dead drive's group is killed, its tree saved, card back to ready
    recovered = Loop(cfg, store).boot()
    assert recovered == [card.id]
    after = store.get(card.id)
    assert after.lane == "ready" and after.drive == "" and after.blocked is None, after
    assert group_members(coder) == [], "the dead drive's coder was left running"
    saved = stranded_branches(cfg)
    assert len(saved) == 1, f"the interrupted tree was not saved: {saved}"
    assert show(cfg, saved[0], "work/c-1.txt") == "work of c-1, unfinished", (
        "the interrupted drive's work was lost"
    )
    assert not tree.exists()
    assert {r.status for r in store.list_drives(card.id)} == {"crashed"}
    assert any("recovered at boot" in e for e in events(store, card.id))

    # and a real restart with a coder that finishes: the card is built and folded, its
    # tree starting from the interrupted work (resume means resume)
    write_config(cfg.root, tiers={"default": edit_tier()})
    res = subprocess.run(
        [sys.executable, "-m", "board.cli", "run", "--once"],
        cwd=cfg.root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, **GIT_ENV},
    )
    assert res.returncode == 0, res.stderr
    assert store.get(card.id).lane == "done"
    assert show(cfg, cfg.board.run_branch, "work/c-1.txt") == "work of c-1, unfinished\nwork of c-1"
    assert stranded_branches(cfg) == saved, "the saved branch was lost or overwritten"
    store.close()


def test_a_loop_killed_after_its_fold_moved_the_run_branch_ends_the_card_done_once(
    tmp_path: Path,
) -> None:
    """The fold moves the run branch, then marks the card done in the store. A loop killed
    between the two (bench_fleet's kill run caught it: 1 card in 300) left the work folded
    and the card working; the restart built it again on top of its own work, so a coder
    that appends folded it twice, and one that writes the same file left the card blocked
    `terminal` ("changed nothing"). The restart finds the fold and ends the card done."""
    cfg, store = make_board(tmp_path, origin=True, tiers={"default": edit_tier()})
    card = add_card(store, "folded, then the loop was killed", surface=["work/**"])
    env = {**os.environ, **GIT_ENV, faults.FAULT_KILL_ENV: "after-fold-ref"}
    argv = [sys.executable, "-m", "board.cli", "run", "--once"]
    killed = subprocess.run(argv, cwd=cfg.root, capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, timeout=120, env=env)  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert store.get(card.id).lane == "working", "premise: the card was not marked done"
    assert show(cfg, cfg.board.run_branch, "work/c-1.txt") == "work of c-1", (
        "premise: the fold had moved the run branch"
    )
    tip = _rev(cfg.root, cfg.board.run_branch)
    (row,) = store.list_drives(card.id)
    tree = cfg.worktrees_dir / "feat-c-1"
    assert publish.landed_commit(cfg, [row.id], tree) == tip, "found from the card's tree"
    assert publish.landed_commit(cfg, [row.id], None, row.started_at) == tip, "by its start"
    later = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    assert publish.landed_commit(cfg, [row.id], None, later) == "", "before its start"
    assert publish.landed_commit(cfg, ["d-0000000000"], tree) == ""
    assert publish.landed_commit(cfg, [row.id], None) == "", "no bound: not looked for"

    env.pop(faults.FAULT_KILL_ENV)
    again = subprocess.run(argv, cwd=cfg.root, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=120, env=env)  # fmt: skip
    assert again.returncode == 0, again.stderr

    after = store.get(card.id)
    assert after.lane == "done" and after.blocked is None, after
    assert _rev(cfg.root, cfg.board.run_branch) == tip, "the card was folded a second time"
    assert show(cfg, cfg.board.run_branch, "work/c-1.txt") == "work of c-1"
    assert [d.status for d in store.list_drives(card.id)] == ["crashed"], "built again"
    assert any("had folded its work" in e for e in events(store, card.id))
    store.close()


def _rev(root: Path, ref: str) -> str:
    return subprocess.run(["git", "rev-parse", ref], cwd=root, capture_output=True, text=True,
                          check=True, stdin=subprocess.DEVNULL).stdout.strip()  # fmt: skip


def test_a_restart_keeps_the_block_of_a_card_held_when_its_loop_died(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "held then crashed", surface=["work/**"])
    token = drive.claim(cfg, store, card, owner_pid=2**22 + 1)  # a pid no process has
    from board.core.git import worktrees

    tree = worktrees.create_worktree(cfg, card.id, store=store)
    (tree / "work").mkdir()
    (tree / "work" / "c-1.txt").write_text("half\n")
    actions.hold(store, card.id, "operator hold")

    Loop(cfg, store).boot()

    after = store.get(card.id)
    assert after.lane == "ready" and after.blocked is not None
    assert after.blocked.cls == "held", "the boot dropped the card's block"
    assert store.get_drive(token).status == "crashed"
    saved = stranded_branches(cfg)
    assert len(saved) == 1 and show(cfg, saved[0], "work/c-1.txt") == "half"
    store.close()


def test_boot_leaves_a_card_whose_drive_is_alive_in_another_process(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "owned by a live salvage", surface=["work/**"])
    holder = subprocess.Popen(["sleep", "30"], stdin=subprocess.DEVNULL)
    try:
        drive.claim(cfg, store, card, owner_pid=holder.pid)
        assert Loop(cfg, store).boot() == []
        assert store.get(card.id).lane == "working", "boot took a card from a live drive"
    finally:
        holder.kill()
        holder.wait()
    store.close()


# Takes the store's write lock once GO exists, says so with HELD, keeps it until RELEASE.
LOCK_HOLDER = """
import os, sqlite3, sys, time
db, go, held, release = sys.argv[1:5]
deadline = time.monotonic() + 60
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.005)
conn = sqlite3.connect(db, timeout=30, isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
open(held, "w").close()
while not os.path.exists(release) and time.monotonic() < deadline:
    time.sleep(0.01)
conn.execute("ROLLBACK")
"""


def test_an_orphan_coder_that_outlives_a_kill_9_while_the_store_was_locked_loses_no_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop dies between starting the coder and recording its group (the store's write
    lock was busy): the orphan, ignoring SIGPIPE, writes on. Boot must stop it before it
    saves the tree, or what it writes during the save is lost with the tree."""
    pids, ledger = tmp_path / "pids", tmp_path / "ledger"
    coder = [script("coder_markers.sh"), "{worktree}", "{card}", str(pids), str(ledger)]
    cfg, store = make_board(tmp_path, origin=True, tiers={"default": coder})
    card = add_card(store, "orphaned", surface=["work/**"])
    tree = cfg.worktrees_dir / "feat-c-1"
    go, held, release = tmp_path / "go", tmp_path / "held", tmp_path / "release"
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(cfg.db_path), str(go), str(held), str(release)],
        stdin=subprocess.DEVNULL,
    )
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "git").symlink_to(script("git_hold_worktree_add.sh"))
    env = {
        **os.environ,
        **GIT_ENV,
        "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
        "REAL_GIT": shutil.which("git") or "git",
        "GIT_HOLD_STARTED": str(go),  # the claim is written; the lock is taken here
        "GIT_HOLD_UNTIL": str(held),
    }
    run = subprocess.Popen(
        [sys.executable, "-m", "board.cli", "run"],
        cwd=cfg.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    coder_pid = 0
    try:
        wait_for(lambda: len(read_pids(ledger)) >= 3, what="the coder's first markers")
        (coder_pid,) = read_pids(pids)
        (row,) = store.list_drives(card.id)  # a read: the write lock does not stop it
        assert row.pgid == 0, "premise: the coder's group was never recorded"
        run.send_signal(signal.SIGKILL)
        run.communicate(timeout=30)
        written = len(read_pids(ledger))
        wait_for(lambda: len(read_pids(ledger)) >= written + 10, what="the orphan writing on")
        assert group_members(coder_pid), "premise: the orphan coder outlived the loop"
        release.touch()
        holder.wait(timeout=30)
        # a save that takes a while: the window in which an orphan's writes were lost
        monkeypatch.setenv(faults.FAULT_PAUSE_ENV, "after-snapshot:0.3")
        recovered = Loop(cfg, store).boot()
        monkeypatch.delenv(faults.FAULT_PAUSE_ENV)
    finally:
        release.touch()
        for child in (run, holder):
            if child.poll() is None:
                child.kill()
                child.wait()
        alive = group_members(coder_pid) if coder_pid else []
        if alive:
            proc.kill_group(coder_pid)

    assert recovered == [card.id]
    assert alive == [], f"the orphan coder was left running: {alive}"
    saved = stranded_branches(cfg)
    assert len(saved) == 1, f"the orphan's tree was not saved once: {saved}"
    text = show(cfg, saved[0], "work/markers.txt") or ""
    kept = {int(line.split()[1]) for line in text.splitlines() if line.startswith("marker ")}
    lost = sorted(set(read_pids(ledger)) - kept)
    assert lost == [], f"{len(lost)} markers written into the tree were lost: {lost[:12]}"
    assert not tree.exists()
    store.close()

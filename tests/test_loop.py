"""The loop: one per board, claims with surface overlap, the sweep, and SIGTERM shutdown."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from board.core import failures
from board.core.cards import actions
from board.core.loop import BoardLock, Loop, _card_order, globs_overlap, surfaces_overlap
from board.core.model import Blocked, Pause
from board.core.store import Expect

from tests.support.boards import make_board
from tests.support.loop import add_card, board_run, events, read_pids, show, stranded_branches
from tests.support.paths import script
from tests.support.procs import group_members
from tests.support.repos import GIT_ENV, git
from tests.support.waiting import has_text, wait_for


def _loop_log(cfg) -> list[dict]:
    path = cfg.board_dir / "loop.log"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


# ---------------------------------------------------------------------------------------------
# surfaces


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        ("src/a.py", "src/a.py", True),
        ("src/a.py", "src/b.py", False),
        ("src/*.py", "src/b.py", True),
        ("src/*.py", "src/b.txt", False),
        ("src/*.py", "src/*.txt", False),
        ("src/**", "src/deep/x.py", True),
        ("src", "src/deep/x.py", True),
        ("src/", "src/x", True),
        ("src", "srcx/a.py", False),
        ("docs/**", "src/**", False),
        ("*.md", "docs/a.md", True),
        ("a*b", "ab*", True),
        ("work/c-1.txt", "work/c-2.txt", False),
        ("calc/plugins/**", "calc/mul.py", False),
    ],
)
def test_glob_overlap_is_conservative(a: str, b: str, overlap: bool) -> None:
    assert globs_overlap(a, b) is overlap
    assert globs_overlap(b, a) is overlap


def test_a_card_without_a_surface_overlaps_everything() -> None:
    assert surfaces_overlap([], ["a.py"]) is not None
    assert surfaces_overlap(["a.py"], []) is not None
    assert surfaces_overlap(["a.py"], ["b.py"]) is None


def test_overlapping_surfaces_are_never_driven_at_once_and_every_skip_is_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg, store = make_board(tmp_path, origin=True, board={"max_concurrent": 3})
    a = add_card(store, "a", surface=["work/c-1.txt"])
    b = add_card(store, "b", surface=["work/c-2.txt", "work/c-1.txt"])
    c = add_card(store, "c", surface=["work/c-3.txt"])
    d = add_card(store, "d", surface=["work/c-4.*"])
    e = add_card(store, "e", surface=["work/c-5.txt"])
    loop = Loop(cfg, store)
    monkeypatch.setenv("CODER_SLEEP", "0.2")
    claimed = loop.tick()
    loop.wait()
    assert claimed == [a.id, c.id, d.id], f"claims broke queue order or overlap: {claimed}"
    log = _loop_log(cfg)
    skips = [x for x in log if x["event"] == "skip"]
    assert skips and skips[0]["card"] == b.id and "overlaps working c-1" in skips[0]["reason"]
    waits = [x for x in log if x["event"] == "wait"]
    assert (
        waits
        and waits[0]["waiting"] == [e.id]
        and "every drive is busy (3 of 3" in waits[0]["reason"]
    )
    assert {x["card"] for x in log if x["event"] == "claim"} == {a.id, c.id, d.id}
    loop.tick()  # a is done now: b may go
    loop.wait()
    assert store.get(b.id).lane == "done" and store.get(e.id).lane == "done"
    store.close()


# ---------------------------------------------------------------------------------------------
# one loop per board


def test_a_second_board_run_refuses_and_names_the_pid_holding_the_board(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    lock = BoardLock(cfg)
    lock.acquire()
    try:
        res = subprocess.run(
            [sys.executable, "-m", "board.cli", "run", "--once"],
            cwd=cfg.root,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
            env={**os.environ, **GIT_ENV},
        )
    finally:
        lock.release()
    assert res.returncode != 0
    assert f"pid {os.getpid()}" in res.stderr, f"the refusal does not name the holder: {res.stderr}"
    assert len(res.stderr.strip().splitlines()) == 1
    store.close()


# ---------------------------------------------------------------------------------------------
# the sweep


def _block(store, card_id: str, cls: str, reason: str) -> None:
    card = store.get(card_id)
    store.update(card_id, Expect(version=card.version), {"blocked": Blocked(cls, reason)}, "test")


def test_self_healing_blocks_are_requeued_at_most_twice_then_told_once(tmp_path: Path) -> None:
    # merge-conflict has no failure rule, so board.self_heal_max (2) is its limit
    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "flaky", surface=["work/**"])
    for n in (1, 2):
        _block(store, card.id, "merge-conflict", f"network blip {n}")
        Loop(cfg, store).sweep()  # a fresh Loop each time: the count must survive restarts
        after = store.get(card.id)
        assert after.blocked is None and after.lane == "ready", f"heal {n} did not requeue"
        assert dict(after.tries)["merge-conflict"] == n
    _block(store, card.id, "merge-conflict", "network blip 3")
    Loop(cfg, store).sweep()
    Loop(cfg, store).sweep()
    after = store.get(card.id)
    assert after.blocked is not None, "a self-healing block was cleared a third time"
    told = [e for e in events(store, card.id) if "the operator is told" in e]
    assert len(told) == 1, f"the operator was told {len(told)} times: {told}"
    assert "already retried 2 time(s)" in told[0]
    store.close()


def test_a_human_block_is_reported_once_even_across_restarts(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "red", surface=["work/**"])
    _block(store, card.id, "gate-red", "test_x failed")
    for _ in range(3):
        Loop(cfg, store).sweep()
    assert store.get(card.id).blocked.cls == "gate-red", "the sweep cleared a human block"
    told = [e for e in events(store, card.id) if "the operator is told" in e]
    assert len(told) == 1, f"told {len(told)} times"
    logged = [x for x in _loop_log(cfg) if x["event"] == "blocked"]
    assert len(logged) == 1 and logged[0]["reason"] == "test_x failed"
    # a new block (after an unblock) is news again
    actions.unblock(store, card.id)
    Loop(cfg, store).sweep()
    _block(store, card.id, "gate-red", "test_x failed")
    Loop(cfg, store).sweep()
    told = [e for e in events(store, card.id) if "the operator is told" in e]
    assert len(told) == 2, "a block that came back was not reported"
    store.close()


def test_orphan_trees_of_done_cards_are_reaped_through_the_save(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "finished elsewhere", surface=["work/**"])
    tree = cfg.worktrees_dir / "feat-c-1"
    git(cfg.root, "worktree", "add", "-q", "-b", "feat/c-1", str(tree), "main")
    (tree / "leftover.txt").write_text("only copy\n")
    card = store.get(card.id)
    store.update(card.id, Expect(version=card.version), {"lane": "done"}, "test")
    Loop(cfg, store).sweep()
    assert not tree.exists(), "the orphan tree was not reaped"
    saved = stranded_branches(cfg)
    assert len(saved) == 1 and show(cfg, saved[0], "leftover.txt") == "only copy", (
        "the orphan's work was destroyed, not saved"
    )
    store.close()


# ---------------------------------------------------------------------------------------------
# shutdown


def test_sigterm_saves_every_drive_tree_and_puts_each_card_back_in_ready(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": [script("coder_sleepy.sh"), "{worktree}", "{card}", str(pids)]},
    )
    a = add_card(store, "a", surface=["work/c-1.txt"])
    b = add_card(store, "b", surface=["work/c-2.txt"])
    run = board_run(cfg.root)
    try:
        wait_for(lambda: len(read_pids(pids)) == 2, what="two coders running")
        for cid in (a.id, b.id):
            tree = cfg.worktrees_dir / f"feat-{cid}"
            wait_for(lambda t=tree, c=cid: has_text(t / "work" / f"{c}.txt"), what="edits")
        run.send_signal(signal.SIGTERM)
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err
    for cid in (a.id, b.id):
        card = store.get(cid)
        assert card.lane == "ready" and card.drive == "" and card.blocked is None, card
        assert any("SIGTERM" in e for e in events(store, cid)), "no word of the shutdown"
    saved = stranded_branches(cfg)
    assert len(saved) == 2, f"shutdown did not save both trees: {saved}"
    texts = sorted(show(cfg, s, f"work/{s.split('/')[1][5:]}.txt") or "" for s in saved)
    assert texts == ["work of c-1, unfinished", "work of c-2, unfinished"], texts
    assert not any(cfg.worktrees_dir.glob("feat-*")), "shutdown left a tree behind"
    for pgid in read_pids(pids):
        assert group_members(pgid) == [], "a coder outlived the shutdown"
    statuses = {r.status for r in store.list_drives()}
    assert statuses == {"stopped"}, statuses
    store.close()


def test_shutdown_leaves_the_tree_of_a_drive_that_stood_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": [script("coder_sleepy.sh"), "{worktree}", "{card}", str(pids)]},
    )
    card = add_card(store, "held, then shut down", surface=["work/**"])
    loop = Loop(cfg, store)
    loop.tick()
    tree = cfg.worktrees_dir / "feat-c-1"
    wait_for(lambda: (tree / "work" / "c-1.txt").exists(), what="the edit")
    actions.hold(store, card.id, "hands off")
    loop.shutdown()
    after = store.get(card.id)
    assert after.lane == "ready" and after.blocked.cls == "held", after
    assert (tree / "work" / "c-1.txt").exists(), "shutdown removed a stood-aside drive's tree"
    assert stranded_branches(cfg) == [], "shutdown saved (and reaped) a tree it had let go of"
    (pgid,) = read_pids(pids)
    assert group_members(pgid) == []
    store.close()


def test_a_planner_task_waits_when_no_planner_is_configured(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    task = add_card(store, "Split c-9: x", kind="task", assignee=cfg.planner.name)
    loop = Loop(cfg, store)
    assert loop.tick() == []
    skips = [x for x in _loop_log(cfg) if x["event"] == "skip" and x["card"] == task.id]
    assert skips and "no planner command" in skips[0]["reason"]
    loop.tick()
    assert len([x for x in _loop_log(cfg) if x["event"] == "skip"]) == 1, "skip logged twice"
    store.close()


def test_card_ids_order_by_their_number_and_odd_digits_do_not_crash_the_loop() -> None:
    """A hand-edited id whose tail is digits to str.isdigit but not to int() ('²') sorts as
    text instead of stopping the loop's pass with a ValueError."""
    ids = ["c-10", "c-²", "c-2", "c-٣", "c-1"]
    assert sorted(ids, key=_card_order) == ["c-1", "c-2", "c-10", "c-²", "c-٣"]


def test_until_idle_does_not_stop_while_a_tier_pause_lapses_after_the_tick(
    tmp_path: Path,
) -> None:
    """A tier paused until a time (a named rate-limit reset): a tick finds the only ready
    card's tier still paused and claims nothing; the pause lapses before the loop asks
    whether it is idle. The loop then lifted the pause, saw no card waiting for a time,
    called itself idle and stopped with the card ready and never run (a CI run of
    test_backoff's named reset). Here the pause is made to lapse at exactly that moment
    (the tick sleeps past it before returning); the drive, git and the store are real."""
    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "after the reset", surface=["work/**"])
    until = datetime.now(UTC) + timedelta(seconds=0.5)
    store.pause_tier(Pause("default", "rate-limit", "429", failures.stamp(until), "s"))

    class PauseLapsesAfterTheTick(Loop):
        def tick(self) -> list[str]:
            claimed = super().tick()
            if not claimed and not self.running:
                time.sleep(max(0.0, (until - datetime.now(UTC)).total_seconds()) + 0.05)
            return claimed

    loop = PauseLapsesAfterTheTick(cfg, store)
    assert loop.run(until_idle=True) == 0
    lane = store.get(card.id).lane
    assert lane == "done", f"the loop stopped with the card {lane}, its tier's pause lapsed"
    store.close()


def test_until_idle_does_not_stop_while_a_drive_that_just_ended_freed_the_next_card(
    tmp_path: Path,
) -> None:
    """A chain c-1 -> c-2: a tick finds c-2 waiting on c-1 (still running) and claims
    nothing; c-1's drive ends before the loop asks whether it is idle. The loop saw no claim
    and no running drive, called itself idle and stopped with c-2 ready and never run, and
    `--until-idle` exited 0: a replayed history ended short of upstream in a CI run. Here
    the drive is made to end at exactly that moment (the tick waits for it before
    returning); the drives, git and the store are real."""
    cfg, store = make_board(tmp_path, origin=True)
    one = add_card(store, "step 1", surface=["work/**"])
    two = add_card(store, "step 2", surface=["work/**"], deps=[one.id])

    class DriveEndsAfterTheTick(Loop):
        def tick(self) -> list[str]:
            claimed = super().tick()
            if not claimed:
                for run in list(self.running.values()):
                    run.thread.join(60)  # the drive ends between the tick and the idle check
            return claimed

    loop = DriveEndsAfterTheTick(cfg, store)
    assert loop.run(until_idle=True) == 0
    lanes = {c.id: store.get(c.id).lane for c in (one, two)}
    assert lanes == {one.id: "done", two.id: "done"}, f"the loop stopped before c-2 ran: {lanes}"
    store.close()

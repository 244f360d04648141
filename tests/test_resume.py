"""Resume means resume: a build interrupted by `stop` (or a shutdown) continues from the
work it left, on the next build, instead of starting over (real git, real processes)."""

from __future__ import annotations

import threading
from pathlib import Path

from board.core import ops as operator
from board.core.cards import actions
from board.core.drive import drive

from tests.support.boards import make_board
from tests.support.loop import add_card, events, show
from tests.support.paths import script
from tests.support.repos import git
from tests.support.waiting import wait_for


def _board(tmp_path: Path):
    return make_board(
        tmp_path,
        origin=True,
        tiers={"default": [script("coder_resume.sh"), "{worktree}", "{card}"]},
    )


def _stopped(cfg, store, card):
    """Drive `card` in a thread until its coder wrote part 1, then `board stop` it."""
    token = drive.claim(cfg, store, card)
    ends = []
    runner = threading.Thread(
        target=lambda: ends.append(drive.Drive(cfg, store, card.id, token).run())
    )
    runner.start()
    part = cfg.worktrees_dir / f"feat-{card.id}" / "work" / f"{card.id}.txt"
    wait_for(lambda: part.exists() and "part 1" in part.read_text(), what="part 1")
    stopped = operator.stop(store, cfg, card.id, "going home")
    runner.join(30)
    assert not runner.is_alive() and ends[0].outcome == "stood-aside", ends
    return stopped


def test_stop_then_unblock_continues_from_the_stopped_work(tmp_path: Path) -> None:
    """Before: unblock restarted from scratch and the stopped coder's part 1 was only on a
    stranded branch; the next coder never saw it."""
    cfg, store = _board(tmp_path)
    card = add_card(store, "two sittings", surface=["work/**"])
    stopped = _stopped(cfg, store, card)
    assert stopped.saved and any("continues from it" in x for x in stopped.lines), stopped.lines
    [branch] = stopped.saved

    actions.unblock(store, card.id)
    end = drive.Drive(cfg, store, card.id, drive.claim(cfg, store, store.get(card.id))).run()

    assert end.outcome == "done", end
    assert show(cfg, cfg.board.run_branch, f"work/{card.id}.txt") == "part 1\npart 2"
    said = [e for e in events(store, card.id) if "continues from the interrupted build" in e]
    assert said and branch in said[0], "the card does not say where the build continued from"
    assert git(cfg.root, "rev-parse", "--verify", "-q", f"refs/heads/{branch}"), (
        "the stopped work's branch was consumed"
    )
    store.close()


def test_a_requeue_after_a_stop_means_a_fresh_build(tmp_path: Path) -> None:
    cfg, store = _board(tmp_path)
    card = add_card(store, "two sittings", surface=["work/**"])
    _stopped(cfg, store, card)

    actions.requeue(store, card.id, "start over please")
    end = drive.Drive(cfg, store, card.id, drive.claim(cfg, store, store.get(card.id))).run()

    assert end.outcome == "blocked" and "exited 3" in end.reason, (
        "a requeued card continued from the stopped work"
    )
    store.close()


def test_stopped_work_that_no_longer_applies_gives_a_fresh_build_said_on_the_card(
    tmp_path: Path,
) -> None:
    cfg, store = _board(tmp_path)
    card = add_card(store, "two sittings", surface=["work/**"])
    _stopped(cfg, store, card)
    side = tmp_path / "side"  # meanwhile the run branch gets a different work/c-1.txt
    git(cfg.root, "worktree", "add", "-q", "--detach", str(side), cfg.board.run_branch)
    (side / "work").mkdir()
    (side / "work" / f"{card.id}.txt").write_text("someone else's\n")
    git(side, "add", "-A")
    git(side, "commit", "-q", "-m", "rival")
    git(
        cfg.root, "update-ref", f"refs/heads/{cfg.board.run_branch}", git(side, "rev-parse", "HEAD")
    )
    git(cfg.root, "worktree", "remove", "--force", str(side))

    actions.unblock(store, card.id)
    drive.Drive(cfg, store, card.id, drive.claim(cfg, store, store.get(card.id))).run()

    said = [e for e in events(store, card.id) if "starts fresh" in e]
    assert said and "does not apply" in said[0] and f"work/{card.id}.txt" in said[0], events(
        store, card.id
    )
    store.close()


def test_a_build_interrupted_by_a_shutdown_continues_at_the_next_run(tmp_path: Path) -> None:
    cfg, store = _board(tmp_path)
    card = add_card(store, "two sittings", surface=["work/**"])
    runner = drive.Drive(cfg, store, card.id, drive.claim(cfg, store, card))
    ends = []
    thread = threading.Thread(target=lambda: ends.append(runner.run()))
    thread.start()
    part = cfg.worktrees_dir / f"feat-{card.id}" / "work" / f"{card.id}.txt"
    wait_for(lambda: part.exists() and "part 1" in part.read_text(), what="part 1")
    runner.interrupt("board run got SIGTERM")
    thread.join(30)
    assert ends and ends[0].outcome == "stopped", ends

    end = drive.Drive(cfg, store, card.id, drive.claim(cfg, store, store.get(card.id))).run()

    assert end.outcome == "done", end
    assert show(cfg, cfg.board.run_branch, f"work/{card.id}.txt") == "part 1\npart 2"
    store.close()


def test_unblock_after_a_hold_continues_from_the_tree_the_drive_kept(tmp_path: Path) -> None:
    """A hold makes the drive stand aside and keep its tree as it is (here: the coder's
    part 1, uncommitted); the next build saves that tree and continues from it."""
    from board.core.git import worktrees

    cfg, store = _board(tmp_path)
    card = add_card(store, "two sittings", surface=["work/**"])
    tree = worktrees.create_worktree(cfg, card.id, store=store)  # as the held drive left it
    (tree / "work").mkdir()
    (tree / "work" / f"{card.id}.txt").write_text("part 1\n")
    (cfg.worktrees_dir / f".{card.id}.first-sitting-done").touch()
    actions.hold(store, card.id, "let me look first")

    actions.unblock(store, card.id)
    end = drive.Drive(cfg, store, card.id, drive.claim(cfg, store, store.get(card.id))).run()

    assert end.outcome == "done", end
    assert show(cfg, cfg.board.run_branch, f"work/{card.id}.txt") == "part 1\npart 2"
    store.close()

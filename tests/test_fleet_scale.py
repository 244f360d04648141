"""What 100 drives at once on one host need of the loop (issue 45, tests/bench/bench_fleet.py):
per-tick work that does not grow with the square of the drives, a fresh tree that does not
queue behind the folds, lock waiters that do not poll, a coder's watcher that does not wake
20 times a second, and a cleanup that leaves a removal in flight to its own thread. Each on
a real repository, the real store and real child processes."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from board.core import config, locks, proc
from board.core.config import Config
from board.core.errors import Refused
from board.core.git import gitutil, naming, removal, runbranch, worktrees
from board.core.loop import Loop, Running
from board.core.model import Card, CardDraft
from board.core.store import Expect, SQLiteStore

from tests.support.repos import Repo, make_repo
from tests.support.waiting import wait_for


def _board(tmp_path: Path, **publish: object) -> tuple[Repo, config.Config]:
    r = make_repo(tmp_path)
    config.write_default(r.root, {"publish": dict(publish)} if publish else None)
    return r, config.load(r.root)


@contextlib.contextmanager
def _held_by_another_thread(lock: Callable[[], AbstractContextManager[None]]) -> Iterator[None]:
    """`lock()` held by another thread for the block, as a fold holds the run lock or a tree
    being made holds the repository's admin lock."""
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with lock():
            held.set()
            done.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        yield
    finally:
        done.set()
        holder.join(10)


# -- the orphan sweep reads the worktrees directory once a tick, not once a drive --------------


def test_trees_by_card_finds_what_card_trees_finds(tmp_path: Path) -> None:
    _, cfg = _board(tmp_path)
    names = ["feat-c-1", "feat-c-12", "feat-c-120", "feat-c-12-fix-login", "feat-c-12.test1",
             "notes", ".trash"]  # fmt: skip
    for name in names:
        (cfg.worktrees_dir / name).mkdir(parents=True)
    found = naming.trees_by_card(cfg)
    assert naming.trees_by_card(cfg, naming.tree_names(cfg.worktrees_dir)) == found
    assert found == {
        "c-1": [cfg.worktrees_dir / "feat-c-1"],
        "c-12": [cfg.worktrees_dir / "feat-c-12", cfg.worktrees_dir / "feat-c-12-fix-login"],
        "c-120": [cfg.worktrees_dir / "feat-c-120"],
    }
    for card in ("c-1", "c-12", "c-120", "c-7"):
        assert naming.card_trees(cfg, card) == found.get(card, [])
    # the listing both read: every name but the hidden ones, in name order, as pathlib
    plain = sorted(p.name for p in cfg.worktrees_dir.iterdir() if not p.name.startswith("."))
    assert naming.tree_names(cfg.worktrees_dir) == plain
    assert naming.tree_names(tmp_path / "no such dir") == []


def _live_drives(tmp_path: Path, done: int) -> tuple[Config, SQLiteStore, Loop, list[Card]]:
    """A loop with 40 running drives, each card's tree there; the first `done` cards done
    (their drives still removing their trees), the rest working."""
    _, cfg = _board(tmp_path)
    cfg.board_dir.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(cfg.db_path, create=True)
    loop = Loop(cfg, store)
    cards = []
    for i in range(40):
        card = store.create(CardDraft(title=f"card {i}", lane="ready"), "c", "test")
        lane = "done" if i < done else "working"
        card = store.update(card.id, Expect(), {"lane": lane}, "test")
        (cfg.worktrees_dir / f"feat-{card.id}").mkdir(parents=True)
        loop.running[card.id] = Running(card.id, f"d-{i}", threading.Thread(target=print))
        cards.append(card)
    return cfg, store, loop, cards


def test_the_sweep_reads_the_trees_once_whatever_the_drives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 running drives, each with its tree: one tick's orphan sweep lists the worktrees
    directory a fixed number of times (it listed it once per running drive, 40 here)."""
    cfg, store, loop, cards = _live_drives(tmp_path, done=0)
    reads = []
    real = os.scandir

    def counted(path: Any) -> Any:
        if Path(path) == cfg.worktrees_dir:
            reads.append(path)
        return real(path)

    monkeypatch.setattr(os, "scandir", counted)
    loop._sweep_orphans(cards)
    store.close()
    assert len(reads) <= 2, f"the worktrees directory was read {len(reads)} times"
    assert all((cfg.worktrees_dir / f"feat-{c.id}").is_dir() for c in cards)  # none swept


def test_a_tick_whose_trees_are_all_at_work_reads_the_names_once_and_sweeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 working cards, each with its tree: one listing of the worktrees directory and no
    sweep past it (the live trees and the sweep's own pass over the names were made every
    tick, 1.7 ms of a 4.6 ms tick at 100 drives). A tree whose card is done and whose drive
    is gone is still found and removed through its save on the next tick."""
    cfg, store, loop, cards = _live_drives(tmp_path, done=0)
    swept: list[set[Path]] = []
    real = worktrees.sweep_orphans

    def counted(cfg: Config, lane_of: Any, live: set[Path], **kw: Any) -> Any:
        swept.append(live)
        return real(cfg, lane_of, live, **kw)

    monkeypatch.setattr(worktrees, "sweep_orphans", counted)
    loop._sweep_orphans(cards)
    assert swept == [], "the sweep ran past the listing with every tree at work"
    gone = store.update(cards[0].id, Expect(), {"lane": "done"}, "test")
    del loop.running[gone.id]
    loop._sweep_orphans([gone, *cards[1:]])
    store.close()
    assert len(swept) == 1
    assert not (cfg.worktrees_dir / f"feat-{gone.id}").exists()
    assert all((cfg.worktrees_dir / f"feat-{c.id}").is_dir() for c in cards[1:])


def test_a_done_cards_tree_its_drive_still_removes_is_kept_without_resolving_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 live drives, one of whose cards just went done (its drive is removing the tree):
    the sweep keeps that tree by its path as given, and resolves no live tree's path (it
    resolved all 40 each such tick: 35,000 lstat calls in a wave of 100 drives)."""
    cfg, store, loop, cards = _live_drives(tmp_path, done=1)
    resolved = []
    real = Path.resolve

    def counted(self: Path, strict: bool = False) -> Path:
        resolved.append(self)
        return real(self, strict)

    with monkeypatch.context() as m:
        m.setattr(Path, "resolve", counted)
        loop._sweep_orphans(cards)
    store.close()
    trees = [p for p in resolved if p != cfg.worktrees_dir]
    assert trees == [], f"{len(trees)} trees' paths were resolved"
    assert all((cfg.worktrees_dir / f"feat-{c.id}").is_dir() for c in cards)  # none swept


# -- a fresh tree's start point does not wait on the run lock ------------------------------------


def test_the_start_point_is_read_without_the_run_lock_when_the_base_is_in(
    tmp_path: Path,
) -> None:
    """A fold holds the run lock (here, another thread); a fresh tree's start point is the
    run branch's tip all the same, at once, and is the tip the locked path gives."""
    r, cfg = _board(tmp_path, timeout_s=0.5)
    tip = r.rev(cfg.board.run_branch)
    with _held_by_another_thread(lambda: runbranch.run_lock(cfg)):
        began = time.monotonic()
        got = runbranch.start_point(cfg)  # refused after 0.5 s when it waited for the lock
        assert time.monotonic() - began < 0.4
    assert got == tip
    with runbranch.run_lock(cfg):
        assert runbranch.take_in_base(cfg).tip == got


def test_the_start_points_check_asks_git_twice_at_most_and_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every claim and fresh tree asks whether the run branch holds the base: one reading of
    both refs and, only when they differ, the ancestry (it was four git processes). The
    answers are the locked path's: the tip when it holds the base, None when not."""
    r, cfg = _board(tmp_path)
    real = proc.run
    calls: list[str] = []

    def counting(argv, *args, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
        if argv[0] == "git":
            calls.append(" ".join(argv[1:3]))
        return real(argv, *args, **kw)

    def asked() -> tuple[str | None, list[str]]:
        calls.clear()
        monkeypatch.setattr(proc, "run", counting)
        try:
            return runbranch.tip_holding_base(cfg), list(calls)
        finally:
            monkeypatch.setattr(proc, "run", real)

    tip = r.rev(cfg.board.run_branch)
    assert asked() == (tip, ["for-each-ref --format=%(refname) %(objectname) %(objecttype)"])
    side = r.commit(r.root, {"side.txt": "on the run branch\n"}, "a fold")
    r.git("update-ref", f"refs/heads/{cfg.board.run_branch}", side)
    got, said = asked()
    assert got == side and len(said) == 2 and said[1] == "merge-base --is-ancestor", said
    r.git("reset", "-q", "--hard", "HEAD~1")
    r.commit(r.root, {"upstream.txt": "moved on\n"}, "the base moves on")
    r.git("push", "-q", "origin", "HEAD:main")
    r.git("fetch", "-q", "origin")
    got, said = asked()
    assert got is None and len(said) == 2, "a run branch without the base was taken as its start"
    with runbranch.run_lock(cfg):
        assert runbranch.take_in_base(cfg).tip != side  # the locked path merges it in


def test_a_base_that_moved_on_is_still_taken_in_under_the_lock(tmp_path: Path) -> None:
    r, cfg = _board(tmp_path, timeout_s=0.5)
    before = r.rev(cfg.board.run_branch)
    r.commit(r.root, {"upstream.txt": "moved on\n"}, "the base moves on")
    r.git("push", "-q", "origin", "main")
    r.git("fetch", "-q", "origin")
    base = r.rev("origin/main")
    got = runbranch.start_point(cfg)
    assert got == r.rev(cfg.board.run_branch) != before
    assert gitutil.ok(r.root, "merge-base", "--is-ancestor", base or "", got)
    with runbranch.run_lock(cfg, timeout=0):  # and it let the lock go
        pass


# -- the threads of one process wait for a file lock without polling it --------------------------


def test_threads_waiting_for_one_lock_do_not_poll_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten threads wait 0.6 s for a lock another thread holds: each gets it in turn, and the
    file is tried a few dozen times, not every 20 ms by each (about 300)."""
    path = tmp_path / "run.lock"
    tries = []
    real = locks.fcntl.flock

    def counted(fd: int, op: int) -> None:
        if op & locks.fcntl.LOCK_EX:
            tries.append(op)
        real(fd, op)

    monkeypatch.setattr(locks.fcntl, "flock", counted)
    order: list[int] = []
    first = locks.FileLock(path)
    first.acquire(1, "busy")

    def waiter(n: int) -> None:
        with locks.file_lock(path, 10, "busy"):
            order.append(n)
            time.sleep(0.01)

    threads = [threading.Thread(target=waiter, args=(n,)) for n in range(10)]
    for t in threads:
        t.start()
    time.sleep(0.6)
    first.release()
    for t in threads:
        t.join(10)
    assert sorted(order) == list(range(10))
    assert len(tries) < 80, f"{len(tries)} tries of the file"


def test_a_lock_held_by_another_thread_still_refuses_after_its_timeout(tmp_path: Path) -> None:
    path = tmp_path / "run.lock"
    held = locks.FileLock(path, holder="4242 there")
    held.acquire(1, "busy")
    said: list[str] = []

    def other() -> None:
        try:
            locks.FileLock(path).acquire(0.2, lambda who: f"held by {who}")
        except Refused as exc:
            said.append(str(exc))

    t = threading.Thread(target=other)
    t.start()
    t.join(10)
    held.release()
    assert said == ["held by 4242 there"]
    with locks.file_lock(path, 0, "busy"):  # free again, for this thread and any
        pass


# -- a coder's watcher wakes less as the coder runs, never past a deadline -----------------------


def test_the_watcher_sleeps_longer_as_the_child_runs_but_never_past_a_deadline() -> None:
    assert proc._poll_s(0.0) == 0.05
    assert proc._poll_s(2.0) == pytest.approx(0.2)
    assert proc._poll_s(60.0) == proc.STREAM_POLL_MAX_S
    assert proc._poll_s(60.0, 60.1) == pytest.approx(0.1)
    assert proc._poll_s(60.0, 0, 60.2) == pytest.approx(0.2)
    assert proc._poll_s(9.999, 10.0) == 0.005


def test_a_child_whose_start_could_not_be_recorded_does_not_outlive_the_call(
    tmp_path: Path,
) -> None:
    """A drive records its coder's group as the coder starts; when the store is away past
    reconnect_s that write raises, and the coder ran on after its drive and its loop had
    ended (test_store_reconnect caught it under load). Its whole group goes with the error."""
    started: list[int] = []
    marker = tmp_path / "grandchild.pid"

    def record(pid: int) -> None:
        started.append(pid)
        wait_for(marker.exists, 10, "the grandchild")
        raise RuntimeError("the store is unreachable")

    code = (
        "import subprocess, sys, time\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(marker)!r}, 'w').write(str(g.pid))\n"
        "time.sleep(60)\n"
    )
    with pytest.raises(RuntimeError, match="unreachable"):
        proc.stream([sys.executable, "-c", code], cwd=tmp_path, timeout=60,
                    on_line=lambda line: None, on_start=record)  # fmt: skip
    grandchild = int(marker.read_text())
    assert started and not proc.pid_alive(started[0]), "the child outlived the failed start"
    wait_for(lambda: not proc.pid_alive(grandchild), 5, "the grandchild killed with its group")


def test_a_silent_coder_is_stopped_at_its_first_output_timeout_not_later(tmp_path: Path) -> None:
    began = time.monotonic()
    res = proc.stream(
        [sys.executable, "-c", "import time; time.sleep(30)"],
        cwd=tmp_path,
        timeout=30,
        on_line=lambda line: None,
        first_output_timeout=3.0,
    )
    took = time.monotonic() - began
    assert res.first_output_timed_out
    assert 3.0 <= took < 3.0 + 0.08 + proc.KILL_GRACE_S, took


def test_a_talking_coder_is_stopped_at_its_timeout_not_later(tmp_path: Path) -> None:
    lines: list[str] = []
    began = time.monotonic()
    res = proc.stream(
        [sys.executable, "-u", "-c", "import time\nwhile True: print('x'); time.sleep(0.1)"],
        cwd=tmp_path,
        timeout=3.0,
        on_line=lines.append,
    )
    took = time.monotonic() - began
    assert res.timed_out and len(lines) > 10
    assert 3.0 <= took < 3.0 + 0.08 + proc.KILL_GRACE_S, took


# -- a tree in .trash that this process is deleting is left to it ---------------------------------


def test_cleanup_leaves_a_removal_in_flight_to_its_thread(tmp_path: Path) -> None:
    _, cfg = _board(tmp_path)
    trash = cfg.worktrees_dir / removal.TRASH_DIR
    mine = trash / f"feat-c-1-{naming.utc_stamp()}-{os.getpid()}"
    left = trash / f"feat-c-2-{naming.utc_stamp()}-99999999"  # a killed process's
    for d in (mine, left):
        (d / "src").mkdir(parents=True)
        (d / "src" / "a.py").write_text("x\n")
    with removal._deleting_mu:
        removal._deleting.add(mine)
    try:
        removal.cleanup(cfg)
        assert (mine / "src" / "a.py").exists()
        assert not left.exists()
    finally:
        with removal._deleting_mu:
            removal._deleting.discard(mine)
    removal.cleanup(cfg)
    assert not mine.exists()


def test_a_tree_nothing_runs_in_is_looked_for_in_proc_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Removing a tree looks for processes marked with it: once when there are none (twice
    before, 5 ms of each removal with 100 coders' processes to read); a process that runs
    marked with it is still killed before the tree goes, and the looks go on until none is."""
    r, cfg = _board(tmp_path)
    looks: list[object] = []
    real = proc.marked_processes

    def counted(marks: Any) -> Any:
        looks.append(marks)
        return real(marks)

    monkeypatch.setattr(proc, "marked_processes", counted)
    idle = Path(worktrees.create_worktree(cfg, "c-1"))
    looks.clear()
    assert removal.stop_what_runs_in(idle) == []
    assert len(looks) == 1
    busy = Path(worktrees.create_worktree(cfg, "c-2"))
    env = {**os.environ, proc.MARK_TREE: str(busy)}
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        cwd=busy, env=env, stdin=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        wait_for(lambda: real({proc.MARK_TREE: [str(busy)]}) != [], timeout=10)
        looks.clear()
        result = worktrees.discard_worktree(cfg, busy, card_id="c-2", why="test")
        assert child.wait(10) == -9, "the marked process was not killed"
        assert result.removed and not busy.exists()
        assert len(looks) >= 3  # found, killed, then none left
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)


@pytest.mark.parametrize(
    "text",
    ["/w/feat-c-1/.git\n", "/w/feat-c-1/.git/", "/w//feat-c-1/./.git", "rel/.git", "/.git", "",
     "  \n", "/w/caf\u00e9/.git", "no-slash", "/", "//"],
)  # fmt: skip
def test_an_admin_entrys_tree_is_read_as_pathlib_read_it(tmp_path: Path, text: str) -> None:
    """cleanup reads a hundred admin entries with plain os calls (it went through pathlib,
    4 ms a tree made or removed with 100 live trees): the tree each names is the one
    `Path(text).parent` named, as far as the file system can tell."""
    admin = tmp_path / "admin"
    admin.mkdir()
    (admin / "gitdir").write_text(text, encoding="utf-8")
    stripped = text.strip()
    before = Path(stripped).parent if stripped else None
    got = removal._admin_target_text(str(admin))
    if before is None:
        assert got is None
    else:
        assert got is not None and os.path.realpath(got) == os.path.realpath(before)
    assert not removal._admin_target_text(str(tmp_path / "none"))


def test_the_admin_entries_are_listed_in_name_order_and_only_directories(tmp_path: Path) -> None:
    _, cfg = _board(tmp_path)
    root = naming.common_dir(cfg) / "worktrees"
    root.mkdir(exist_ok=True)
    for name in ("b", "a", "c"):
        (root / name).mkdir()
    (root / "stray-file").write_text("")
    assert [p.name for p in removal._admin_entries(cfg)] == ["a", "b", "c"]


# -- a SIGTERM that lands while the loop's main thread holds its wake lock -----------------------

SIGNAL_CHILD = """
import os, signal, sys, threading, time
sys.path.insert(0, {root!r})
from board.core import config, loopsignals
from board.core.loop import Loop
from board.core.store import SQLiteStore

from pathlib import Path
cfg = config.load(Path({repo!r}))
cfg.board_dir.mkdir(parents=True, exist_ok=True)
loop = Loop(cfg, SQLiteStore(cfg.db_path, create=True))
restore = loopsignals.install(loop._note_signal)
# the moment `wake.wait` returns (its lock taken back) or `wake.set` runs in the main
# thread: the handler runs there, between two steps; threading.Event has no public way in
with loop.wake._cond:
    os.kill(os.getpid(), signal.SIGTERM)
    for _ in range(1000):  # the handler runs at one of these steps
        pass
loopsignals.nap(loop.wake, 5, loop._noted)  # a noted signal ends the nap at once
print("stopping" if loop._take_signal() else "running", flush=True)
restore()
"""


def test_a_sigterm_while_the_main_thread_holds_the_wake_lock_stops_the_loop(
    tmp_path: Path,
) -> None:
    """`board run` hung for good when SIGTERM came while its main thread held the lock of
    its wake event (its handler waited for that lock), and every drive then hung on it."""
    _, cfg = _board(tmp_path)
    root = str(Path(__file__).resolve().parents[1])
    code = SIGNAL_CHILD.format(root=root, repo=str(cfg.root))
    began = time.monotonic()
    res = proc.run([sys.executable, "-c", code], cwd=tmp_path, timeout=20)
    assert not res.timed_out, "the loop hung in its signal handler"
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["stopping"]
    assert time.monotonic() - began < 15


def test_the_claims_ask_for_the_base_without_the_run_lock_when_it_is_in(
    tmp_path: Path,
) -> None:
    """A fold holds the run lock (another thread): the loop's check before its claims (has
    the run branch taken in the base?) answers at once, and a base that moved on is still
    taken in under the lock once it is free."""
    r, cfg = _board(tmp_path, timeout_s=0.5)
    cfg.board_dir.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(cfg.db_path, create=True)
    loop = Loop(cfg, store)
    with _held_by_another_thread(lambda: runbranch.run_lock(cfg)):
        began = time.monotonic()
        conflicts = loop._base_conflicts()  # refused after 0.5 s when it waited for the lock
        assert time.monotonic() - began < 0.4
        assert not conflicts and loop.base_problem == ""
    r.commit(r.root, {"upstream.txt": "moved on\n"}, "the base moves on")
    r.git("push", "-q", "origin", "main")
    r.git("fetch", "-q", "origin")
    assert not loop._base_conflicts()
    assert gitutil.ok(r.root, "merge-base", "--is-ancestor", "origin/main", cfg.board.run_branch)
    store.close()


def test_where_a_branch_is_checked_out_is_asked_without_the_admin_lock(tmp_path: Path) -> None:
    """The fold asks whether the run branch is checked out, and a dropped card branch
    whether it still is: while `git worktree` calls hold the repository's admin lock (here
    another thread, as a tree being made does), both answer at once and rightly, for the
    main checkout and a linked tree alike."""
    r, cfg = _board(tmp_path)
    tree = tmp_path / "linked"
    r.git("worktree", "add", "-q", "-b", "feat/c-9", str(tree))
    lock = gitutil._admin_lock(cfg.root)
    assert lock is not None
    with _held_by_another_thread(lambda: locks.file_lock(lock, 10, "busy")):
        began = time.monotonic()
        main_branch = r.git("branch", "--show-current")
        assert runbranch.checked_out_at(cfg, main_branch) == str(cfg.root)
        assert runbranch.checked_out_at(cfg, "feat/c-9") == str(tree)
        assert runbranch.checked_out_at(cfg, cfg.board.run_branch) is None
        assert time.monotonic() - began < 2.0, "it waited for the admin lock"


# -- the loop's tick: woken by the store's writes, one reading of the cards -------------------


def test_a_write_to_the_store_wakes_the_loop_before_its_interval(tmp_path: Path) -> None:
    """loop_interval_s 30: a card added by another process (another store connection) is
    seen within a second, not at the next interval; with nothing written the loop sleeps."""
    _, cfg = _board(tmp_path)
    config.write_default(cfg.root, {"board": {"loop_interval_s": 30}})
    cfg = config.load(cfg.root)
    cfg.board_dir.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(cfg.db_path, create=True)
    loop = Loop(cfg, store)
    ticks: list[float] = []
    real = loop.tick

    def counted() -> list[str]:
        ticks.append(time.monotonic())
        return real()

    loop.tick = counted  # type: ignore[method-assign]
    thread = threading.Thread(target=loop.run, daemon=True)
    thread.start()
    other = SQLiteStore(cfg.db_path)
    try:
        deadline = time.monotonic() + 10
        while not ticks and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)
        assert len(ticks) == 1, f"the loop ticked {len(ticks)} times with nothing written"
        written = time.monotonic()
        other.create(CardDraft(title="added elsewhere", lane="backlog"), "c", "test")
        while len(ticks) < 2 and time.monotonic() < written + 3:
            time.sleep(0.05)
        assert len(ticks) >= 2, "the write waited for the loop's interval"
        assert ticks[1] - written < 1.5
    finally:
        loop.request_stop("test over")
        thread.join(30)
        other.close()
        store.close()


def test_a_tick_reads_the_cards_once_when_nobody_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep's reading serves the claims (it was read three times a tick: the sweep,
    the ready queue, the claims' view); a write between the two makes the claims read
    again, so they never decide on a board that moved."""
    _, cfg = _board(tmp_path)
    cfg.board_dir.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(cfg.db_path, create=True)
    for i in range(5):
        store.create(CardDraft(title=f"held {i}", lane="backlog"), "c", "test")
    loop = Loop(cfg, store)
    reads: list[int] = []
    real = store.list_cards

    def counted(*args: object, **kw: object) -> object:
        reads.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(store, "list_cards", counted)
    assert loop.tick() == []
    assert len(reads) == 1, f"one quiet tick read every card {len(reads)} times"
    reads.clear()
    real_budgets = loop.budgets

    def budgets_then_a_write() -> None:
        real_budgets()
        store.create(CardDraft(title="written mid-tick", lane="backlog"), "c", "test")

    monkeypatch.setattr(loop, "budgets", budgets_then_a_write)
    loop.tick()
    assert len(reads) == 2, "the claims decided on cards read before a write"
    store.close()


def test_with_every_drive_busy_a_tick_does_not_read_the_cards_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """max_concurrent 2, both drives busy, writes landing all the time (as 100 drives
    write): the claims would only say what waits, so they use the sweep's reading."""
    _, cfg = _board(tmp_path)
    config.write_default(cfg.root, {"board": {"max_concurrent": 2}})
    cfg = config.load(cfg.root)
    cfg.board_dir.mkdir(parents=True, exist_ok=True)
    store = SQLiteStore(cfg.db_path, create=True)
    for i in range(3):
        store.create(CardDraft(title=f"ready {i}", spec="s", lane="ready"), "c", "test")
    loop = Loop(cfg, store)
    for i in range(2):
        loop.running[f"c-{90 + i}"] = Running(f"c-{90 + i}", f"d-{i}", threading.Thread())
    reads: list[int] = []
    real = store.list_cards

    def counted(*args: object, **kw: object) -> object:
        reads.append(1)
        return real(*args, **kw)

    real_budgets = loop.budgets

    def budgets_then_a_write() -> None:
        real_budgets()
        store.create(CardDraft(title="written mid-tick", lane="backlog"), "c", "test")

    monkeypatch.setattr(store, "list_cards", counted)
    monkeypatch.setattr(loop, "budgets", budgets_then_a_write)
    assert loop.tick() == []
    assert len(reads) == 1, f"a tick with no free drive read every card {len(reads)} times"
    assert any(x.get("event") == "wait" for x in map(json.loads, loop.log_path.open()))
    store.close()


# -- a drive that waits its turn at the fold holds no slot --------------------------------------


def test_a_drive_waiting_to_publish_frees_its_slot_and_the_next_card_builds_meanwhile(
    tmp_path: Path,
) -> None:
    """At 100 drives a wave of coders ends together and queues at the serial fold; the next
    wave's coders start as each is committed, not as each is folded. Past max_concurrent
    drives waiting to publish, they hold slots again, so trees never pile up unbounded."""
    from board.tui.health import header_parts, read_health

    from tests.support.boards import make_board
    from tests.support.loop import add_card

    cfg, store = make_board(tmp_path, origin=True, board={"max_concurrent": 1})
    a = add_card(store, "a", surface=["work/c-1.txt"])
    b = add_card(store, "b", surface=["work/c-2.txt"])
    c = add_card(store, "c", surface=["work/c-3.txt"])
    loop = Loop(cfg, store)

    def built(card: str) -> bool:
        run = loop.running.get(card)
        return run is not None and run.drive is not None and run.drive.built

    with _held_by_another_thread(lambda: runbranch.run_lock(cfg)):  # the fold queue
        assert loop.tick() == [a.id]
        wait_for(lambda: built(a.id), timeout=20)
        assert loop.tick() == [b.id], "a drive waiting at the fold still held its slot"
        assert store.get(a.id).lane == "working"
        wait_for(lambda: built(b.id), timeout=20)
        assert loop.in_use() == 1  # two wait to publish, one past max_concurrent
        assert loop.tick() == [], "more drives waited to publish than max_concurrent allows"
        health = read_health(cfg, store)
        assert (health.publishing, health.in_use) == (2, 1)
        said = "".join(text for text, _ in header_parts(health, 0, 120))
        assert "drives 1/1 +2 publishing" in said
        assert "waits its turn to publish" in health.drives[a.id].text()
    loop.wait()
    assert [store.get(x.id).lane for x in (a, b)] == ["done", "done"]
    assert loop.tick() == [c.id]
    loop.wait()
    assert store.get(c.id).lane == "done"
    store.close()


def test_a_replayed_cards_tree_is_removed_without_a_catch_up_or_a_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two cards built side by side: the second's commit is replayed onto the first's fold.
    Its tree goes next, so it is not caught up to the replay (every file the run branch
    gained since it started, written then deleted), and the removal, told of the replay,
    saves nothing: no stranded branch, the card branch gone, both cards' work on the run."""
    from board.core.git import quickfold, snapshot

    from tests.support.boards import make_board
    from tests.support.loop import add_card

    cfg, store = make_board(tmp_path, origin=True, board={"max_concurrent": 2})
    a = add_card(store, "a", surface=["work/c-1.txt"])
    b = add_card(store, "b", surface=["work/c-2.txt"])
    caught: list[str] = []
    real = quickfold.catch_up

    def catch_up(tree: Path, one: Any, new: str) -> bool:
        caught.append(tree.name)
        return real(tree, one, new)

    made: list[str] = []
    real_replay = quickfold.replay

    def replay(*args: Any, **kw: Any) -> str | None:
        new = real_replay(*args, **kw)
        made.append(new or "")
        return new

    snapped: list[str] = []
    real_snapshot = snapshot._snapshot

    def counted(cfg: Config, tree: Path) -> Any:
        snapped.append(tree.name)
        return real_snapshot(cfg, tree)

    monkeypatch.setattr(quickfold, "catch_up", catch_up)
    monkeypatch.setattr(quickfold, "replay", replay)
    monkeypatch.setattr(snapshot, "_snapshot", counted)
    monkeypatch.setattr(worktrees.saves, "_snapshot", counted, raising=False)
    loop = Loop(cfg, store)
    assert loop.tick() == [a.id, b.id]
    loop.wait()
    assert [store.get(x.id).lane for x in (a, b)] == ["done", "done"]
    run = f"refs/heads/{cfg.board.run_branch}"
    for card in ("c-1", "c-2"):
        assert gitutil.out(cfg.root, "show", f"{run}:work/{card}.txt")
        assert gitutil.rev(cfg.root, f"refs/heads/feat/{card}") is None
    log = gitutil.out(cfg.root, "log", "--format=%s", run)
    assert log.count("c-1:") == 1 and log.count("c-2:") == 1
    assert len([m for m in made if m]) == 1, f"the second fold did not replay: {made}"
    stranded = gitutil.out(cfg.root, "for-each-ref", "--format=%(refname)", "refs/heads/stranded/")
    assert stranded == "", f"a tree whose work the run branch holds was saved: {stranded}"
    assert caught == [], f"a tree removed next was caught up first: {caught}"
    assert snapped == [], f"the snapshot was taken of a tree the run branch holds: {snapped}"
    assert list(cfg.worktrees_dir.glob("feat-*")) == []
    store.close()

"""Benchmark: the board's own cost per card against the raw git doing the same work.

N cards (default 200), each with a coder that edits one file, driven by the real loop
with 4 concurrent drives: fresh worktree, brief, coder, the board's commit, the fold
(rebase onto the run branch + compare-and-swap update-ref), the reap. The baseline, in
the same run and on a second repository made the same way, does the same work with bare
git commands and the same coder script, 4 workers at once, the fold serialized under a
lock as the board's is (half of it before the board's run, half after):

    git worktree add -b B PATH BASE; CODER; git add -A; git commit;
    git rebase --onto RUN START; git update-ref RUN NEW OLD; git worktree remove; git branch -D

Reported: wall time per card for both, their ratio (issue 27's target: <= 2x), and the
cards lost or stuck (target 0: every card done, its file on the run branch, no tree or
drive left), each with whether it was met. The baseline retries a `worktree add` that lost
git's own race with a concurrent one (as it does `worktree remove`), undoing it first.

    /tmp/venv/bin/python tests/bench/bench_drive.py [--cards 200] [--concurrent 4] [--dir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from board.core import config, proc
from board.core.cards import actions
from board.core.errors import GitError  # noqa: E402
from board.core.git import gitutil  # noqa: E402
from board.core.loop import Loop  # noqa: E402
from board.core.model import CardDraft  # noqa: E402
from board.core.store import SQLiteStore  # noqa: E402

from board.cli import main as board_main  # noqa: E402

TARGET = 2.0
CODER = str(Path(__file__).resolve().parents[1] / "scripts" / "coder_edit.sh")
IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def g(cwd: Path, *args: str) -> str:
    return gitutil.out(cwd, *args, env=IDENTITY)


def make_repo(base: Path) -> Path:
    """A bare origin and a clone with a few hundred files, pushed; board init done."""
    origin, clone = base / "origin.git", base / "clone"
    g(base, "init", "-q", "--bare", "-b", "main", str(origin))
    g(base, "clone", "-q", str(origin), str(clone))
    g(clone, "checkout", "-q", "-b", "main")
    for i in range(300):
        d = clone / "src" / f"pkg{i % 10}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod{i}.py").write_text(f"VALUE = {i}\n")
    (clone / "README.md").write_text("bench\n")
    g(clone, "add", "-A")
    g(clone, "commit", "-q", "-m", "initial")
    g(clone, "push", "-q", "-u", "origin", "main")
    if board_main(["-C", str(clone), "init"]) != 0:
        raise SystemExit("board init failed")
    return clone


def bench_board(clone: Path, cards: int, concurrent: int) -> tuple[float, list[str]]:
    overrides = {
        "board": {"max_concurrent": concurrent, "loop_interval_s": config.MIN_INTERVAL_S},
        "coder": {
            "ladder": ["default"],
            "tiers": {"default": {"argv": [CODER, "{worktree}", "{card}"]}},
            "timeout_s": 120,
            "first_output_timeout_s": 60,
        },
    }
    config.write_default(clone, overrides)
    cfg = config.load(clone)
    store = SQLiteStore(cfg.db_path)
    for i in range(1, cards + 1):
        actions.add_card(
            store,
            CardDraft(
                title=f"card {i}", spec="edit one file", lane="ready", surface=[f"work/c-{i}.txt"]
            ),  # fmt: skip
        )
    loop = Loop(cfg, store)
    loop.lock.acquire()
    started = time.monotonic()
    deadline = started + 3600
    try:
        while time.monotonic() < deadline:
            loop.tick()
            if not loop.running and not actions.ready_queue(store):
                break
            loop.wake.wait(cfg.board.loop_interval_s)
            loop.wake.clear()
        loop.wait()
    finally:
        loop.lock.release()
    wall = time.monotonic() - started
    problems = check(cfg, store, cards)
    store.close()
    return wall, problems


def check(cfg: config.Config, store: SQLiteStore, cards: int) -> list[str]:
    problems = []
    lanes = {c.id: c for c in store.list_cards()}
    files = set(g(cfg.root, "ls-tree", "-r", "--name-only", cfg.board.run_branch, "work").split())
    for i in range(1, cards + 1):
        card = lanes[f"c-{i}"]
        if card.lane != "done":
            problems.append(f"{card.id} is {card.lane} ({card.blocked})")
        if f"work/c-{i}.txt" not in files:
            problems.append(f"{card.id}'s file is not on {cfg.board.run_branch}")
    live = store.live_drives()
    if live:
        problems.append(f"{len(live)} drive(s) still running")
    left = [p.name for p in cfg.worktrees_dir.glob("feat-*")]
    if left:
        problems.append(f"trees left: {left[:5]}")
    return problems


def bench_raw(clone: Path, first: int, last: int, concurrent: int) -> float:
    """The same worktree/coder/commit/rebase/update-ref/remove work in bare git, 4 at once."""
    root = clone
    run = "refs/heads/bench/run"
    if gitutil.rev(root, run) is None:
        g(root, "update-ref", run, g(root, "rev-parse", "origin/main"))
    before = len(g(root, "rev-list", f"origin/main..{run}").split())
    fold_lock = threading.Lock()
    todo = list(range(first, last + 1))
    todo_lock = threading.Lock()
    errors: list[str] = []

    def one(i: int) -> None:
        card = f"r-{i}"
        tree = root / ".rawtrees" / card
        branch = f"raw/{card}"
        base = "origin/main"
        for attempt in range(3):  # concurrent `worktree add`s race in git itself too
            try:
                g(root, "worktree", "add", "-q", "--no-track", "-b", branch, str(tree), base)
                break
            except GitError:  # "failed to read .git/worktrees/<other>/commondir": undo, again
                if attempt == 2:
                    raise
                gitutil.git(root, "worktree", "remove", "--force", str(tree), check=False)
                gitutil.git(root, "worktree", "prune", check=False)
                gitutil.git(root, "branch", "-q", "-D", branch, check=False)
                time.sleep(0.05)
        start = g(tree, "rev-parse", "HEAD")
        res = proc.run([CODER, str(tree), card], cwd=tree, timeout=60)
        if res.returncode != 0:
            errors.append(res.stderr)
        g(tree, "add", "-A")
        g(tree, "commit", "-q", "-m", card)
        with fold_lock:
            tip = g(root, "rev-parse", run)
            g(tree, "rebase", "-q", "--onto", tip, start)
            new = g(tree, "rev-parse", "HEAD")
            g(root, "update-ref", run, new, tip)
        for attempt in range(3):  # concurrent `worktree add`/`remove` race in git itself
            try:
                g(root, "worktree", "remove", "--force", str(tree))
                break
            except GitError:
                if attempt == 2:
                    raise
                time.sleep(0.05)
        g(root, "branch", "-q", "-D", branch)

    def worker() -> None:
        while True:
            with todo_lock:
                if not todo:
                    return
                i = todo.pop(0)
            try:
                one(i)
            except Exception as exc:  # a dead worker would make the baseline look quicker
                errors.append(f"r-{i}: {exc}")

    started = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(concurrent)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    count = len(g(root, "rev-list", f"origin/main..{run}").split()) - before
    if count != last - first + 1 or errors:
        raise SystemExit(f"baseline broken: {count} commits, errors {errors[:2]}")
    return wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, default=200)
    ap.add_argument("--concurrent", type=int, default=4)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    os.environ.update(IDENTITY)
    base = Path(tempfile.mkdtemp(prefix="bench-drive-", dir=args.dir))
    try:
        (base / "b").mkdir()
        (base / "r").mkdir()
        board_clone = make_repo(base / "b")
        raw_clone = make_repo(base / "r")
        # the baseline runs half before and half after the board, so drift in a shared
        # machine's load weighs on both sides alike
        half = args.cards // 2
        raw = bench_raw(raw_clone, 1, half, args.concurrent)
        wall, problems = bench_board(board_clone, args.cards, args.concurrent)
        raw += bench_raw(raw_clone, half + 1, args.cards, args.concurrent)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    per_board = wall / args.cards * 1000
    per_raw = raw / args.cards * 1000
    ratio = wall / raw
    print(f"cards: {args.cards}, concurrent drives: {args.concurrent}, cpus: {os.cpu_count()}")
    print(f"raw git (same work, same coder):  {raw:7.2f} s  = {per_raw:6.1f} ms/card")
    print(f"board (loop, drive, fold, reap):  {wall:7.2f} s  = {per_board:6.1f} ms/card")
    met = ratio <= TARGET
    print(f"ratio board/raw: {ratio:.2f}x, target <= {TARGET:.1f}x: {'met' if met else 'not met'}")
    print(f"cards lost or stuck: {len(problems)}, target 0: {'not met' if problems else 'met'}")
    for p in problems[:10]:
        print(f"  {p}")
    return 0 if met and not problems else 1


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the board on a 100,000-file repository (issue 45).

The repository is generated here (small files in 1,000 directories, three commits) with
`git fast-import`, kept as a bare origin under /tmp (`--cache`) and cloned afresh each
run. Three parts, each a ratio against git doing the same in the same run:

1. Per card: the board's own work for a card whose coder edits one file (a fresh tree,
   the coder, the board's commit, the fold onto the run branch, the save or reap of the
   tree), driven by the real loop, against bare git doing the same (bench_drive's
   baseline: worktree add, coder, add -A, commit, rebase, update-ref, worktree remove),
   half of the baseline before the board's run and half after. Target: <= 1.3x.
2. The save of the tree with 1,000 files changed against `git add -A` into a copy of the
   index + `git write-tree` (bench_save's baseline), alternating rounds. Target: <= 1.2x.
3. The stranded browser's first paint over 2,000 stranded branches against
   `git for-each-ref` with each save's trailer (bench_stranded_tui's part 1), alternating
   rounds. Target: <= 2x.

Where git's own cost dominates (a tree of 100,000 files checked out), the figures say so:
the baseline's time per card, its `worktree add` alone, and the board's.

    .venv/bin/python tests/bench/bench_bigrepo.py [--files 100000] [--cards 8]
        [--concurrent 2] [--changed 1000] [--branches 2000] [--rounds 5]
        [--only drive|save|stranded] [--cache DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_drive  # noqa: E402
import bench_save  # noqa: E402
import bench_stranded_tui  # noqa: E402
from board.core import config, proc  # noqa: E402
from board.core.git import gitutil, stranded, worktrees  # noqa: E402
from board.core.model import CardDraft  # noqa: E402
from board.core.store import SQLiteStore  # noqa: E402
from board.tui.app import BoardApp  # noqa: E402
from board.tui.stranded.strandrows import load_rows, sort_rows  # noqa: E402

from board.cli import main as board_main  # noqa: E402
from tests.support.repos import GIT_ENV  # noqa: E402
from tests.support.stranded import make_branches  # noqa: E402

DRIVE_TARGET = 1.3
SAVE_TARGET = 1.2
STRANDED_TARGET = 2.0
CACHE = Path(tempfile.gettempdir()) / "board-bench-bigrepo"
PER_DIR = 100


def name_of(i: int) -> str:
    return f"src/d{i // PER_DIR:04d}/m{i % PER_DIR:02d}.py"


def generate(origin: Path, files: int) -> None:
    """A bare repository of `files` small files and three commits, by one fast-import."""
    gitutil.out(origin.parent, "init", "-q", "--bare", "-b", "main", str(origin))
    chunks: list[bytes] = []
    stamp = 1767225600
    for n, (label, step) in enumerate((("initial", 1), ("second", 100), ("third", 97))):
        msg = f"{label} commit\n".encode()
        head = f"commit refs/heads/main\ncommitter bench <b@b> {stamp + n} +0000\n"
        chunks.append(head.encode() + b"data %d\n" % len(msg) + msg)
        for i in range(0, files, step):
            body = b"# module %d, %s\nVALUE = %d\n" % (i, label.encode(), i * step)
            chunks.append(
                b"M 100644 inline %s\ndata %d\n%s\n" % (name_of(i).encode(), len(body), body)
            )
        chunks.append(b"\n")
    res = proc.run(
        ("git", "fast-import", "--quiet"), cwd=origin, timeout=600, input_bytes=b"".join(chunks)
    )
    if res.returncode != 0:
        raise SystemExit(f"fast-import failed: {res.stderr}")
    gitutil.out(origin, "gc", "-q")


def cached_origin(cache: Path, files: int) -> Path:
    """The generated repository, made once and kept under `cache` between runs."""
    origin = cache / f"{files}-files-v1.git"
    if not (origin / "refs" / "heads" / "main").exists() and not (origin / "packed-refs").exists():
        shutil.rmtree(origin, ignore_errors=True)
        cache.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        generate(origin, files)
        print(
            f"generated {files:,} files, 3 commits, in {time.perf_counter() - t:.1f} s ({origin})"
        )
    return origin


def clone(origin: Path, where: Path) -> Path:
    """A bare origin of its own (objects hard-linked) and a clone of it, board init done."""
    where.mkdir(parents=True)
    own = where / "origin.git"
    gitutil.out(where, "clone", "-q", "--bare", str(origin), str(own))
    root = where / "clone"
    gitutil.out(where, "clone", "-q", str(own), str(root))
    if board_main(["-C", str(root), "init"]) != 0:
        raise SystemExit("board init failed")
    return root


def timed_git(cwd: Path, *args: str) -> float:
    start = time.perf_counter()
    gitutil.out(cwd, *args, env=bench_drive.IDENTITY)
    return time.perf_counter() - start


def part_drive(origin: Path, base: Path, cards: int, concurrent: int) -> dict[str, Any]:
    """1. The loop's work per card against bare git's, on two clones of the repository."""
    board_clone = clone(origin, base / "b")
    raw_clone = clone(origin, base / "r")
    # git's own share: one tree of the repository checked out, and removed
    tree = base / "alone"
    add = timed_git(raw_clone, "worktree", "add", "-q", "--detach", str(tree), "origin/main")
    remove = timed_git(raw_clone, "worktree", "remove", "--force", str(tree))
    half = cards // 2
    raw = bench_drive.bench_raw(raw_clone, 1, half, concurrent)
    wall, problems = bench_drive.bench_board(board_clone, cards, concurrent)
    raw += bench_drive.bench_raw(raw_clone, half + 1, cards, concurrent)
    return {"raw": raw, "board": wall, "problems": problems, "add": add, "remove": remove}


def part_save(
    origin: Path, base: Path, changed: int, rounds: int
) -> tuple[float, float, float, float]:
    """2. The save of a card's tree with `changed` files rewritten, against add -A + write-tree."""
    root = clone(origin, base / "s")
    cfg = config.load(root)
    tree = worktrees.create_worktree(cfg, "c-1")
    files = len(gitutil.out(tree, "ls-files").splitlines())
    names = [name_of(i) for i in range(0, files, max(1, files // changed))][:changed]
    times: dict[str, list[float]] = {"baseline": [], "save": []}
    cpus: dict[str, list[float]] = {"baseline": [], "save": []}
    round_no = 0
    for _ in range(rounds):
        for side in ("baseline", "save"):
            round_no += 1
            bench_save.rewrite(tree, names, round_no)
            before = children_cpu()
            if side == "baseline":
                times[side].append(bench_save.baseline(tree))
            else:
                times[side].append(bench_save.board_save(cfg, tree))
            cpus[side].append(children_cpu() - before)
    med = {k: statistics.median(v) for k, v in times.items()}
    cpu = {k: statistics.median(v) for k, v in cpus.items()}
    return med["baseline"], med["save"], cpu["baseline"], cpu["save"]


def children_cpu() -> float:
    """CPU seconds of the git children so far: what a side costs when no core is free."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def part_stranded(origin: Path, base: Path, branches: int, rounds: int) -> tuple[float, ...]:
    """3. The stranded browser's first paint, bench_stranded_tui's rounds on this repository."""
    root = clone(origin, base / "t")
    cfg = config.load(root)
    store = SQLiteStore(cfg.db_path)
    make_branches(root, branches)
    for i in range(500):
        store.create(CardDraft(title=f"card number {i} with a title of ordinary length"), "c")
    stranded.list_stranded(cfg)  # the stats file, as the saves would have written it
    listed = sort_rows(load_rows(cfg, store, datetime.now(UTC)), "age")
    out: list[tuple[float, ...]] = []

    async def run_app() -> None:
        app = BoardApp(cfg, store, poll_interval=0)
        app.animation_level = "none"
        async with app.run_test(size=bench_stranded_tui.SIZE) as pilot:
            await pilot.pause(0.5)
            out.append(await bench_stranded_tui.browser_rounds(app, rounds, listed))

    asyncio.run(run_app())
    store.close()
    return out[0]


def verdict(ok: bool) -> str:
    return "met" if ok else "not met"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--cards", type=int, default=8)
    ap.add_argument("--concurrent", type=int, default=2)
    ap.add_argument("--changed", type=int, default=1_000)
    ap.add_argument("--branches", type=int, default=2_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", choices=("drive", "save", "stranded"))
    ap.add_argument("--cache", type=Path, default=CACHE, help=f"kept repository (default {CACHE})")
    ap.add_argument("--dir", default=None, help="where the clones go (a tmpfs: /dev/shm)")
    opts = ap.parse_args()
    os.environ.update(GIT_ENV)
    os.environ.update(bench_drive.IDENTITY)
    print(f"load average: {os.getloadavg()[0]:.2f}, cpus: {os.cpu_count()}")
    origin = cached_origin(opts.cache, opts.files)
    oks: list[bool] = []
    base = Path(tempfile.mkdtemp(prefix="board-bench-bigrepo-", dir=opts.dir))
    os.environ["BOARD_CACHE_DIR"] = str(base / "cache")
    try:
        if opts.only in (None, "drive"):
            d = part_drive(origin, base / "drive", opts.cards, opts.concurrent)
            ratio = d["board"] / d["raw"]
            ok = ratio <= DRIVE_TARGET and not d["problems"]
            oks.append(ok)
            n = opts.cards
            print(f"\n1. per card, {n} cards, {opts.concurrent} at once, {opts.files:,} files")
            raw, ours = d["raw"], d["board"]
            print(f"   bare git (same work, same coder): {raw:7.2f} s = {raw / n:6.2f} s/card")
            print(f"   board (loop, drive, fold, reap):  {ours:7.2f} s = {ours / n:6.2f} s/card")
            print(
                f"   git alone: worktree add {d['add']:.2f} s, worktree remove {d['remove']:.2f} s"
            )
            met = verdict(ratio <= DRIVE_TARGET)
            print(f"   ratio {ratio:.2f}x (target <= {DRIVE_TARGET}x): {met}")
            print(f"   cards lost or stuck: {len(d['problems'])} {d['problems'][:3]}")
        if opts.only in (None, "save"):
            bare, ours, bare_cpu, ours_cpu = part_save(
                origin, base / "save", opts.changed, opts.rounds
            )
            ratio = ours / bare
            oks.append(ratio <= SAVE_TARGET)
            print(f"\n2. save, {opts.changed:,} of {opts.files:,} files changed", end="")
            print(f" ({opts.rounds} rounds)")
            print(
                f"   git add -A into an index copy + write-tree: {bare * 1000:8.1f} ms"
                f"   git's cpu {bare_cpu * 1000:8.1f} ms"
            )
            print(
                f"   board save (preserve_worktree):             {ours * 1000:8.1f} ms"
                f"   git's cpu {ours_cpu * 1000:8.1f} ms"
            )
            print(
                f"   ratio {ratio:.2f}x (target <= {SAVE_TARGET}x): {verdict(ratio <= SAVE_TARGET)}"
            )
        if opts.only in (None, "stranded"):
            first, whole, same, plain, sig = part_stranded(
                origin, base / "stranded", opts.branches, opts.rounds
            )
            ratio = first / same
            oks.append(ratio <= STRANDED_TARGET)
            print(f"\n3. stranded browser, {opts.branches:,} branches", end="")
            print(f" ({opts.rounds} rounds, loose refs)")
            print(f"   first paint:                                {first * 1000:8.1f} ms")
            print(f"   the whole table painted:                    {whole * 1000:8.1f} ms")
            print(f"   git for-each-ref + Board-Save trailers:     {same * 1000:8.1f} ms")
            print(f"   git for-each-ref, refs only:                {plain * 1000:8.1f} ms")
            met = verdict(ratio <= STRANDED_TARGET)
            print(f"   ratio {ratio:.2f}x (target <= {STRANDED_TARGET}x): {met}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"\nload average: {os.getloadavg()[0]:.2f}")
    print("all targets met" if all(oks) else "some targets missed")
    return 0 if all(oks) else 1


if __name__ == "__main__":
    raise SystemExit(main())

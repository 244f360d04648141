"""Benchmark: the listing behind `board stranded list` over 2,000 stranded branches.

Compared in the same run, in-process, against a bare `git for-each-ref refs/heads/stranded/`.
Target (issue 27): at most 1.5x, with loose and with packed refs. The stats come from each
save commit's `Board-Save:` trailer, recorded at save time in the stats file with the
branch's name, so the listing is one git call whatever the number of branches; each row is
made from the file while git runs, and kept beside it for as long as the file is unchanged.
The figure with the target is that listing; the one after it ("just after a save") appends a
line to the stats file before every round, as a save does, so each listing reads the lines
appended since the rows were kept (informative).

    /tmp/venv/bin/python tests/bench/bench_stranded_list.py [--branches 2000] [--rounds 15]
        [--warmup N]

The branches are made with `git fast-import` (real save commits with real trailers); the
figures are printed for loose refs and again after `git pack-refs --all`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from board.core import proc
from board.core.git import saves, stranded  # noqa: E402

from tests.support.repos import GIT_ENV, git, make_repo  # noqa: E402
from tests.support.stranded import make_branches  # noqa: E402

TARGET = 1.5  # issue 27


def measure(cfg, rounds: int, changed: bool = False, warmup: int = 0) -> tuple[float, float, int]:
    """Medians of `rounds` alternating rounds, after `warmup` rounds not counted."""
    bare: list[float] = []
    ours: list[float] = []
    listed = 0
    stats = saves.stats_file(cfg)
    assert stats is not None, "the caches are on"
    for _ in range(warmup + rounds):
        if changed:  # as a save does: one more line (the last again: nothing else changes)
            with stats.open("a") as f:
                f.write(stats.read_text().splitlines(keepends=True)[-1])
        start = time.perf_counter()
        res = proc.run(
            ("git", "for-each-ref", "refs/heads/stranded/"), cwd=cfg.root, timeout=60, env=GIT_ENV
        )
        bare.append(time.perf_counter() - start)
        assert res.returncode == 0
        start = time.perf_counter()
        items = stranded.list_stranded(cfg)
        ours.append(time.perf_counter() - start)
        listed = len(items)
        assert all(x.files is not None for x in items)
    return statistics.median(bare[warmup:]), statistics.median(ours[warmup:]), listed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--branches", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument(
        "--warmup",
        type=int,
        default=0,
        help="rounds run first and not counted (default 0, the target's figure): on a "
        "machine whose first rounds run slow, this shows where the listing settles",
    )
    opts = ap.parse_args()
    if opts.warmup:
        print(f"the first {opts.warmup} rounds of each series are not counted (--warmup)")
    os.environ.update(GIT_ENV)
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="board-bench-list-") as tmp:
        # the stats file and the kept rows (core/cachedir.py) in the temp directory
        os.environ["BOARD_CACHE_DIR"] = str(Path(tmp) / "cache")
        repo = make_repo(Path(tmp))
        make_branches(repo.root, opts.branches)
        for label in ("loose refs", "packed refs"):
            if label == "packed refs":
                git(repo.root, "pack-refs", "--all")
            bare, ours, listed = measure(repo.cfg, opts.rounds, warmup=opts.warmup)
            ratio = ours / bare
            worst = max(worst, ratio)
            print(f"{label}: {listed} branches listed with card, tree, stamp, commit and diffstat")
            print(f"  bare git for-each-ref refs/heads/stranded/: median {bare * 1000:.1f} ms")
            print(f"  stranded.list_stranded (in-process):        median {ours * 1000:.1f} ms")
            verdict = "met" if ratio <= TARGET else "not met"
            print(f"  ratio: {ratio:.2f}x (target <= {TARGET}x): {verdict}")
            bare, ours, _ = measure(repo.cfg, opts.rounds, changed=True, warmup=opts.warmup)
            print(f"  just after a save (its line read anew): {ours * 1000:.1f} ms, ", end="")
            print(f"{ours / bare:.2f}x bare git ({bare * 1000:.1f} ms)")
    verdict = "met" if worst <= TARGET else "not met"
    print(f"worst ratio: {worst:.2f}x (target <= {TARGET}x): {verdict}")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: the save of a 20,000-file tree with 1,000 files changed.

Compared in the same run against what any save must do at least: `git add -A` into a copy of
the tree's index plus `git write-tree`. Target (issue 27): the save costs at most 1.2x that
baseline.

    /tmp/venv/bin/python tests/bench/bench_save.py [--files 20000] [--changed 1000] [--rounds 5]

Each measurement first rewrites the changed files with fresh content, so both sides hash and
write the same amount of new objects.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from board.core import proc
from board.core.git import saves, worktrees  # noqa: E402

from tests.support.repos import GIT_ENV, git, make_repo  # noqa: E402

TARGET = 1.2  # issue 27


def populate(root: Path, files: int) -> list[str]:
    names = []
    per_dir = 100
    for i in range(files):
        name = f"pkg{i // per_dir:03d}/mod{i % per_dir:03d}.py"
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# module {i}\nVALUE = {i}\n" + "x = 1\n" * 20)
        names.append(name)
    return names


def rewrite(tree: Path, names: list[str], round_no: int) -> None:
    for name in names:
        (tree / name).write_text(f"# changed in round {round_no}\nVALUE = {round_no}\n")


def baseline(tree: Path) -> float:
    """`git add -A` into a copy of the tree's index, then `git write-tree`."""
    gitdir = Path(git(tree, "rev-parse", "--path-format=absolute", "--git-dir"))
    private = gitdir / "bench.index"
    start = time.perf_counter()
    shutil.copy2(gitdir / "index", private)
    env = {**GIT_ENV, "GIT_INDEX_FILE": str(private)}
    for args in (("add", "-A"), ("write-tree",)):
        res = proc.run(("git", *args), cwd=tree, env=env, timeout=300)
        assert res.returncode == 0, res.stderr
    took = time.perf_counter() - start
    private.unlink()
    return took


def board_save(cfg, tree: Path) -> float:
    start = time.perf_counter()
    saved = saves.preserve_worktree(cfg, tree, why="bench")
    took = time.perf_counter() - start
    assert saved is not None and saved.stats.files > 0
    git(cfg.root, "update-ref", "-d", saved.ref)  # the next round saves afresh
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--changed", type=int, default=1_000)
    ap.add_argument("--rounds", type=int, default=5)
    opts = ap.parse_args()
    os.environ.update(GIT_ENV)
    with tempfile.TemporaryDirectory(prefix="board-bench-save-") as tmp:
        t0 = time.perf_counter()
        repo = make_repo(Path(tmp))
        names = populate(repo.root, opts.files)
        git(repo.root, "add", "-A")
        git(repo.root, "commit", "-q", "-m", "many files")
        git(repo.root, "push", "-q", "origin", "main")
        git(repo.root, "fetch", "-q")
        tree = worktrees.create_worktree(repo.cfg, "c-1")
        print(
            f"setup: {opts.files} files, {opts.changed} changed ({time.perf_counter() - t0:.1f}s)"
        )
        changed = names[:: max(1, len(names) // opts.changed)][: opts.changed]
        base_times, save_times = [], []
        round_no = 0
        for _ in range(opts.rounds):
            for side in ("baseline", "save"):
                round_no += 1
                rewrite(tree, changed, round_no)
                if side == "baseline":
                    base_times.append(baseline(tree))
                else:
                    save_times.append(board_save(repo.cfg, tree))
        base = statistics.median(base_times)
        save = statistics.median(save_times)
        ratio = save / base
        print(f"baseline (add -A into an index copy + write-tree): median {base * 1000:.1f} ms")
        print(f"board save (preserve_worktree, verified branch):   median {save * 1000:.1f} ms")
        verdict = "met" if ratio <= TARGET else "not met"
        print(f"ratio: {ratio:.2f}x (target <= {TARGET}x): {verdict}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())

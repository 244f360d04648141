"""Benchmark: the board's per-card setup of a fresh tree against `npm ci` alone.

A Node project with N dependencies (default 40 packages of 20 files each, as tarballs under
vendor/ referenced `file:`, so `npm ci` unpacks each one as it does a registry package from
a warm cache, with no network), its package-lock.json written by real `npm install`, and an
ignored `.env` that `[tree] copy` names. Each round makes two equivalent fresh trees with
`git worktree add` (not timed) and times, in alternating order:

- baseline: `npm ci` alone in the tree (through board.core.proc, as any caller would);
- board: what a drive does to a fresh tree before its coder: the copy of the ignored files
  (`treefiles.copy_into`), then `[tree] setup` = [["npm", "ci"]] (`setup.run_setup`, with
  its `git status` before and after).

Reported: the medians and their ratio (issue 37's target: <= 1.1x).

    /tmp/venv/bin/python tests/bench/bench_setup.py [--deps 40] [--files 20] [--rounds 7]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from board.core import config, proc  # noqa: E402
from board.core.drive import setup  # noqa: E402
from board.core.git import treefiles  # noqa: E402

from tests.support.repos import GIT_ENV, git, make_repo  # noqa: E402

TARGET = 1.1  # issue 37
NPM_ENV = {"npm_config_audit": "false", "npm_config_fund": "false"}
NPM_ENV["npm_config_update_notifier"] = "false"


def _tarball(path: Path, name: str, files: int) -> None:
    """An npm package tarball (every entry under package/), as `npm pack` writes one."""
    with tarfile.open(path, "w:gz") as tar:
        members = {"package/package.json": json.dumps({"name": name, "version": "1.0.0"})}
        for i in range(files):
            body = f"module.exports = {{ n: {i}, name: {name!r} }};\n" + "// pad\n" * 40
            members[f"package/lib/m{i:03d}.js"] = body
        members["package/index.js"] = "module.exports = require('./lib/m000.js');\n"
        for member, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))


def make_project(tmp: Path, deps: int, files: int) -> config.Config:
    repo = make_repo(tmp, init="direct")
    root = repo.root
    vendor = root / "vendor"
    vendor.mkdir()
    dependencies = {}
    for i in range(deps):
        name = f"pkg-{i:03d}"
        _tarball(vendor / f"{name}-1.0.0.tgz", name, files)
        dependencies[name] = f"file:vendor/{name}-1.0.0.tgz"
    package = {"name": "app", "version": "1.0.0", "private": True}
    package.update(scripts={"test": "node --test test/"}, dependencies=dependencies)
    (root / "package.json").write_text(json.dumps(package, indent=2) + "\n")
    (root / ".gitignore").write_text("node_modules/\n.env\n")
    res = proc.run(("npm", "install"), cwd=root, timeout=600, env=NPM_ENV)
    assert res.returncode == 0, f"npm install: {res.stderr}"
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a node project")
    (root / ".env").write_text("API_TOKEN=not-a-real-token-123456\n")  # ignored, copied
    config.write_default(root, {"tree": {"setup": [["npm", "ci"]], "copy": [".env"]}})
    return config.load(root)


def fresh_tree(cfg: config.Config, name: str) -> tuple[Path, str]:
    path = cfg.worktrees_dir / name
    git(cfg.root, "worktree", "add", "-q", "--detach", str(path), "HEAD")
    return path, git(path, "rev-parse", "HEAD")


def drop_tree(cfg: config.Config, path: Path) -> None:
    git(cfg.root, "worktree", "remove", "--force", str(path))
    shutil.rmtree(path, ignore_errors=True)


def baseline(cfg: config.Config, tree: Path, _start: str) -> float:
    t0 = time.perf_counter()
    res = proc.run(("npm", "ci"), cwd=tree, timeout=600, env=NPM_ENV)
    took = time.perf_counter() - t0
    assert res.returncode == 0, res.stderr
    return took


OVERHEAD: list[float] = []  # the board's own part of each round: all but npm ci's run


def board_setup(cfg: config.Config, tree: Path, start: str) -> float:
    lines: list[str] = []
    t0 = time.perf_counter()
    plan = treefiles.copy_into(cfg, tree, start)
    end = setup.run_setup(cfg.tree, tree, setup.tree_env(cfg, tree, "c-1", 1), lines.append)
    took = time.perf_counter() - t0
    assert end.ok, f"{end.reason}\n{end.tail}"
    assert [p for p, _ in plan.files] == [".env"], plan.lines()
    OVERHEAD.append(took - sum(seconds for _, seconds in end.steps))
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deps", type=int, default=40)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=7)
    opts = ap.parse_args()
    if shutil.which("npm") is None:
        print("npm is not on PATH: nothing to measure", file=sys.stderr)
        return 2
    os.environ.update(GIT_ENV)
    os.environ.update(NPM_ENV)
    with tempfile.TemporaryDirectory(prefix="board-bench-setup-") as tmp:
        t0 = time.perf_counter()
        cfg = make_project(Path(tmp), opts.deps, opts.files)
        warm, start = fresh_tree(cfg, "warm")  # the npm cache and the page cache, warm
        baseline(cfg, warm, start)
        drop_tree(cfg, warm)
        print(
            f"project: {opts.deps} dependencies of {opts.files} files, npm cache warm "
            f"({time.perf_counter() - t0:.1f}s)"
        )
        times: dict[str, list[float]] = {"baseline": [], "board": []}
        sides = {"baseline": baseline, "board": board_setup}
        for n in range(opts.rounds):
            order = ("baseline", "board") if n % 2 == 0 else ("board", "baseline")
            for side in order:
                tree, start = fresh_tree(cfg, f"{side}-{n}")
                times[side].append(sides[side](cfg, tree, start))
                drop_tree(cfg, tree)
        base = statistics.median(times["baseline"])
        board = statistics.median(times["board"])
        ratio = board / base
        print(f"baseline (npm ci alone in a fresh tree):          median {base * 1000:.0f} ms")
        print(f"board (copy_into + run_setup [[npm, ci]], status): median {board * 1000:.0f} ms")
        print(f"  rounds: baseline {[round(t * 1000) for t in times['baseline']]} ms")
        print(f"          board    {[round(t * 1000) for t in times['board']]} ms")
        print(
            f"the board's own part (copy, git status before and after, streaming): median "
            f"{statistics.median(OVERHEAD) * 1000:.0f} ms"
        )
        verdict = "met" if ratio <= TARGET else "not met"
        print(f"ratio: {ratio:.2f}x (target <= {TARGET}x): {verdict}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())

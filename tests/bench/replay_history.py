"""Replay a real project's history as cards, and check the run branch ends equal to upstream.

    python tests/bench/replay_history.py SOURCE_REPO [--count 28] [--to REV]
        [--gate "python -m unittest -q" | --init-tree] [--keep DIR]

Each of the last `--count` first-parent commits up to `--to` (default HEAD) becomes one card,
depending on the card before it; its coder (tests/scripts/coder_apply_commit.py) applies
that commit's patch against its first parent, the project's own test suite is the gate,
and `board run --until-idle` drains the board. The run branch's final tree must equal the
upstream tree of the last commit. It prints the wall time, the time the gates took (read
from the drive logs' timestamps) and the board's own time per card (everything but the
coder and the gate).

The source is any local clone (e.g. one brought in with the search tool's `fetch`); nothing
of it is committed here. Not collected by pytest: it runs for minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CODER = HERE.parent / "scripts" / "coder_apply_commit.py"
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "replay",
    "GIT_AUTHOR_EMAIL": "replay@localhost",
    "GIT_COMMITTER_NAME": "replay",
    "GIT_COMMITTER_EMAIL": "replay@localhost",
}


def run(*args: str, cwd: Path, timeout: float = 600) -> str:
    res = subprocess.run(
        args,
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        env=ENV,
    )
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed in {cwd}: {res.stderr.strip()}")
    return res.stdout.strip()


def board(*args: str, cwd: Path, timeout: float = 7200) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "board.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        env=ENV,
    )


def write_config(
    clone: Path, gate: list[str], tree: dict | None = None, max_concurrent: int | None = None
) -> None:
    """board.toml for a replay: the apply-commit coder as its one tier, `gate` as the gate."""
    from board.core import config

    board_section: dict = {"loop_interval_s": 0.5}
    if max_concurrent is not None:
        board_section["max_concurrent"] = max_concurrent
    config.write_default(
        clone,
        {
            "coder": {
                "tiers": {
                    "replay": {"argv": [sys.executable, str(CODER), "{brief}", "{worktree}"]}
                },
                "ladder": ["replay"],
                "timeout_split_after": 0,
            },
            "gate": {"argv": gate, "retries": 0, "timeout_s": 1800},
            "tree": tree or {},
            "board": board_section,
        },
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", type=Path)
    ap.add_argument("--count", type=int, default=28)
    ap.add_argument("--to", default="HEAD")
    ap.add_argument("--gate", default="python -m unittest -q", help="split like argv, no shell")
    ap.add_argument("--keep", type=Path, help="build the board here and keep it")
    ap.add_argument(
        "--init-tree",
        action="store_true",
        help="keep the [tree] setup and the gate `board init` found (a tree-local "
        "environment for a Python package), instead of --gate",
    )
    args = ap.parse_args()
    source = args.source.resolve()
    shas = run(
        "git", "rev-list", "--first-parent", f"--max-count={args.count}", args.to, cwd=source
    ).split()[::-1]
    if len(shas) < args.count:
        raise SystemExit(f"only {len(shas)} first-parent commits up to {args.to}")
    gate = [sys.executable if a == "python" else a for a in shlex.split(args.gate)]
    work = args.keep or Path(tempfile.mkdtemp(prefix="replay-"))
    work.mkdir(parents=True, exist_ok=True)
    origin, clone = work / "origin.git", work / "clone"
    run("git", "init", "-q", "--bare", "-b", "main", str(origin), cwd=work)
    run("git", "clone", "-q", str(origin), str(clone), cwd=work)
    run("git", "fetch", "-q", str(source), shas[-1], cwd=clone)
    run("git", "checkout", "-q", "-B", "main", f"{shas[0]}^1", cwd=clone)
    run("git", "push", "-q", "-u", "origin", "main", cwd=clone)
    init = board("init", cwd=clone)
    if init.returncode != 0:
        raise SystemExit(init.stderr)
    from board.core import config

    found = config.load(clone)
    gate_argv = list(found.gate.argv) if args.init_tree else gate
    tree = {"setup": [list(a) for a in found.tree.setup]} if args.init_tree else {}
    print(f"init: {init.stdout.strip()}" if args.init_tree else "", end="\n" * args.init_tree)
    write_config(clone, gate_argv, tree=tree)
    prev = ""
    for sha in shas:
        subject = run("git", "log", "-1", "--format=%s", sha, cwd=source)
        cmd = ["card", "add", subject[:200], "--ready", "--spec", f"apply-commit: {sha} {source}"]
        if prev:
            cmd += ["--dep", prev]
        added = board(*cmd, "--json", cwd=clone)
        if added.returncode != 0:
            raise SystemExit(added.stderr)
        prev = json.loads(added.stdout)["id"]
    started = time.monotonic()
    res = board("run", "--until-idle", "--quiet", cwd=clone)
    wall = time.monotonic() - started
    upstream = run("git", "rev-parse", f"{shas[-1]}^{{tree}}", cwd=clone)
    run_tree = run("git", "rev-parse", "board/run^{tree}", cwd=clone)
    cards = json.loads(board("card", "list", "--json", cwd=clone).stdout)
    done = sum(1 for c in cards if c["lane"] == "done")
    coder_s, gate_s = _step_times(clone)
    own = wall - coder_s - gate_s
    print(f"source: {source} ({shas[0][:10]}..{shas[-1][:10]}, {len(shas)} first-parent commits)")
    print(f"board run --until-idle: exit {res.returncode}; {done}/{len(cards)} cards done")
    if res.stderr.strip():
        print(f"  stderr: {res.stderr.strip()}")
    print(f"wall {wall:.1f}s; coders {coder_s:.1f}s; gates {gate_s:.1f}s")
    print(f"the board's own time: {own:.1f}s, {own / max(1, len(shas)):.2f}s a card")
    equal = run_tree == upstream
    print(f"run branch tree {'EQUALS' if equal else 'DIFFERS FROM'} upstream ({run_tree[:10]})")
    print(f"board kept at {work}" if args.keep else f"board in {work}")
    return 0 if equal and res.returncode == 0 else 1


def _step_times(clone: Path) -> tuple[float, float]:
    """Seconds spent in coders and gates, from the drive logs' `board:` lines' stamps."""
    from datetime import datetime

    coder = gate = 0.0
    for log in (clone / ".board" / "logs").glob("*/*.log"):
        marks = []
        for line in log.read_text(errors="replace").splitlines():
            stamp, _, rest = line.partition(" ")
            try:
                at = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
            except ValueError:
                continue
            marks.append((at, rest))
        for (at, rest), nxt in zip(marks, marks[1:], strict=False):
            if rest.startswith("board: coder (tier"):
                end = next((a for a, r in marks if a >= at and "coder ended" in r), nxt[0])
                coder += end - at
            elif rest.startswith("board: gate: ["):
                end = next((a for a, r in marks if a > at and r.startswith("board: gate: the")), at)
                gate += end - at
    return coder, gate


if __name__ == "__main__":
    sys.exit(main())

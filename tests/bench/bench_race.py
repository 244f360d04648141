"""Benchmark: a best-of-3 race's wall time against a single drive of its slowest candidate.

Three candidates of one card (tests/scripts/coder_candidate.sh) sleep 1, 2 and 3 s before
writing 1, 2 and 3 lines; every one is gated by the real gate (tests/scripts/
gate_candidate.sh), the smallest green folds and the other two are saved. The baseline is
one drive of the same coder as its slowest candidate (it sleeps 3 s, writes 3 lines), on
the same kind of board, through the same loop, gate and fold. Each side runs on a fresh
board (a bare origin and a clone with `board init` done, made before the clock starts),
from the loop's start to the card done; the two sides alternate, race first, so a shared
machine's load weighs on both alike. The candidates run side by side, so the race should
cost about one candidate's wall time (issue 42's target: <= 1.2x).

    .venv/bin/python tests/bench/bench_race.py [--runs 3] [--sleeps 1,2,3] [--dir DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from board.core import config  # noqa: E402
from board.core.cards import actions  # noqa: E402
from board.core.git import gitutil  # noqa: E402
from board.core.loop import Loop  # noqa: E402
from board.core.model import CardDraft  # noqa: E402
from board.core.store import SQLiteStore  # noqa: E402

from board.cli import main as board_main  # noqa: E402

TARGET = 1.2
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
CODER = str(SCRIPTS / "coder_candidate.sh")
GATE = str(SCRIPTS / "gate_candidate.sh")
IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def g(cwd: Path, *args: str) -> str:
    return gitutil.out(cwd, *args, env=IDENTITY)


def race_board(base: Path, tier: list[str], best_of: int) -> Path:
    """A bare origin and a clone with a few files, pushed; `board init` done; board.toml
    racing `best_of` candidates of `tier` under the real gate."""
    base.mkdir(parents=True)
    origin, clone = base / "origin.git", base / "clone"
    g(base, "init", "-q", "--bare", "-b", "main", str(origin))
    g(base, "clone", "-q", str(origin), str(clone))
    g(clone, "checkout", "-q", "-b", "main")
    for i in range(50):
        d = clone / "src" / f"pkg{i % 5}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod{i}.py").write_text(f"VALUE = {i}\n")
    g(clone, "add", "-A")
    g(clone, "commit", "-q", "-m", "initial")
    g(clone, "push", "-q", "-u", "origin", "main")
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        code = board_main(["-C", str(clone), "init"])
    if code != 0:
        raise SystemExit(f"board init failed: {said.getvalue()}")
    overrides = {
        "board": {"max_concurrent": 3, "loop_interval_s": config.MIN_INTERVAL_S},
        "coder": {
            "ladder": ["default"],
            "tiers": {"default": {"argv": tier}},
            "timeout_s": 120,
            "first_output_timeout_s": 0,  # a candidate is silent while it sleeps
            "best_of": best_of,
        },
        "gate": {"argv": [GATE, "{worktree}"], "retries": 0, "timeout_s": 60},
    }
    config.write_default(clone, overrides)
    return clone


def one_card(clone: Path) -> tuple[float, str]:
    """The loop from its start until the card is done: (wall seconds, what went wrong)."""
    cfg = config.load(clone)
    store = SQLiteStore(cfg.db_path)
    try:
        card = actions.add_card(
            store,
            CardDraft(title="raced", spec="write lines", lane="ready", surface=["work/**"]),
        )
        started = time.monotonic()
        Loop(cfg, store).run(until_idle=True)
        wall = time.monotonic() - started
        after = store.get(card.id)
        if after.lane != "done":
            return wall, f"{card.id} is {after.lane} ({after.blocked})"
        return wall, ""
    finally:
        store.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sleeps", default="1,2,3", help="each candidate's sleep, in seconds")
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    sleeps = [int(s) for s in args.sleeps.split(",")]
    n, slowest = len(sleeps), len(sleeps)
    os.environ.update(IDENTITY)
    base = Path(tempfile.mkdtemp(prefix="bench-race-", dir=args.dir))
    sizes = ",".join(f"{k}@{s}" for k, s in enumerate(sleeps, 1))
    ratios: list[float] = []
    problems: list[str] = []
    print(f"candidates: {n}, sleeping {args.sleeps} s; cpus: {os.cpu_count()}")
    try:
        for run in range(1, args.runs + 1):
            log = base / f"coders-{run}.log"
            race_tier = [CODER, "{worktree}", "{card}", sizes, str(log), "{brief}"]
            # the slowest candidate alone: `env` gives it the k the race would (no shell)
            single_tier = ["env", f"BOARD_CANDIDATE={slowest}", *race_tier]
            race, why_race = one_card(race_board(base / f"race-{run}", race_tier, n))
            single, why_single = one_card(race_board(base / f"single-{run}", single_tier, 1))
            problems += [w for w in (why_race, why_single) if w]
            ratio = race / single
            ratios.append(ratio)
            print(
                f"run {run}: race of {n} {race:6.2f} s, single drive of the slowest "
                f"{single:6.2f} s, ratio {ratio:.2f}x"
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    ratio = statistics.median(ratios)
    met = ratio <= TARGET and not problems
    print(
        f"median ratio race/single: {ratio:.2f}x ({', '.join(f'{r:.2f}' for r in ratios)}), "
        f"target <= {TARGET:.1f}x: {'met' if met else 'not met'}; "
        f"load {os.getloadavg()[0]:.1f}"
    )
    for p in problems:
        print(f"  {p}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

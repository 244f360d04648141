"""Benchmark: what each start-up trick of `board card list` saves (issue 40).

The command line keeps three tricks, fenced in board/cli/quick.py and core/tomlcache.py:
reading the plain forms of `card list` without argparse, leaving without the interpreter's
teardown after a listing, and keeping board.toml's TOML reading in the cache directory. A
trick that saves under 5% of what the operator waits for goes (issue 40); this prints each
one's share, so the page docs/performance.md gives is the one measured.

Each variant is the same listing, on the same board, through the same harness
(`python -c` running `board.cli.entry.main` as the `board` program does), with one trick
turned off: the fast reading replaced by argparse's (`quick.card_list_args` declines), the
early exit by the interpreter's own end (`quick.leave` returns), the TOML cache by an
unset cache directory (`BOARD_CACHE_DIR=""`); and "plain", all three off. Rounds alternate
the variants; each figure is the median of the rounds' wall clock and of the child's CPU
time (user + system, from wait4), which a shared machine's load stretches less.

With --instructions (valgrind installed), each variant also runs once under callgrind and
its instruction count is printed: the figure a loaded machine does not move.

    .venv/bin/python tests/bench/bench_tricks.py [--rounds 21] [--cards 0] [--instructions]
        [--installed PYTHON]   (a venv's python with board installed by `pip install .`:
                                the figures an operator's install gives; default this one)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

FLOOR = 0.05  # a trick saving less than this share of the listing goes

HARNESS = (
    "import sys\n"
    "sys.argv = ['board', 'card', 'list']\n"
    "from board.cli import quick\n"
    "{patch}\n"
    "from board.cli.entry import main\n"
    "sys.exit(main())\n"
)

VARIANTS: dict[str, tuple[str, dict[str, str]]] = {
    "all tricks": ("", {}),
    "without the fast reading": ("quick.card_list_args = lambda argv: None", {}),
    "without the early exit": ("quick.leave = lambda code: None", {}),
    "without the TOML cache": ("", {"BOARD_CACHE_DIR": ""}),
    "plain (none)": (
        "quick.card_list_args = lambda argv: None\nquick.leave = lambda code: None",
        {"BOARD_CACHE_DIR": ""},
    ),
}


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one child: no stdin, its own process group."""
    start = time.perf_counter()
    child = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    err = child.stderr.read() if child.stderr else b""
    if child.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed ({child.returncode}): {err.decode()[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def instructions(argv: list[str], cwd: Path, env: dict[str, str]) -> int:
    """The instructions one child runs to its exit, counted by callgrind."""
    res = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        start_new_session=True,
    )
    for line in res.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    raise SystemExit(f"callgrind said no count: {res.stderr[-500:]}")


def fill_cards(store: Any, cards: int) -> None:
    """`cards` plain cards, in one transaction."""
    from board.core.model import CardDraft

    with store.transaction() as tx:
        for i in range(cards):
            tx.create(CardDraft(title=f"card {i}"), prefix="c", who="bench")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--cards", type=int, default=0)
    ap.add_argument("--instructions", action="store_true", help="count them with callgrind")
    ap.add_argument("--installed", default=sys.executable, help="the python board runs under")
    opts = ap.parse_args()
    from tests.support.boards import make_board

    with tempfile.TemporaryDirectory() as tmp:
        board = make_board(Path(tmp))  # the tests' board: a git repository, board.toml, store
        fill_cards(board.store, opts.cards)
        board.close()
        root = board.root
        cache = Path(tmp) / "cache"
        walls: dict[str, list[float]] = {v: [] for v in VARIANTS}
        cpus: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for r in range(opts.rounds + 1):
            for name, (patch, extra) in VARIANTS.items():
                env = {**os.environ, "BOARD_CACHE_DIR": str(cache), **extra}
                argv = [opts.installed, "-c", HARNESS.format(patch=patch)]
                wall, cpu = timed(argv, root, env)
                if r:  # the first round fills the cache and the page cache
                    walls[name].append(wall)
                    cpus[name].append(cpu)
        load = os.getloadavg()[0]
        counts: dict[str, int] = {}
        if opts.instructions:
            for name, (patch, extra) in VARIANTS.items():
                env = {**os.environ, "BOARD_CACHE_DIR": str(cache), **extra}
                argv = [opts.installed, "-c", HARNESS.format(patch=patch)]
                counts[name] = instructions(argv, root, env)
    base_wall = statistics.median(walls["all tricks"])
    base_cpu = statistics.median(cpus["all tricks"])
    print(f"board card list, {opts.cards} cards, {opts.rounds} alternating rounds, load {load:.1f}")
    print(f"{'variant':28} {'wall ms':>8} {'cpu ms':>8} {'vs all (wall)':>14} {'vs all (cpu)':>13}")
    for name in VARIANTS:
        w, c = statistics.median(walls[name]), statistics.median(cpus[name])
        print(
            f"{name:28} {w * 1e3:8.1f} {c * 1e3:8.1f} {w / base_wall:13.2f}x {c / base_cpu:12.2f}x"
        )
    print()
    for name in list(VARIANTS)[1:4]:
        saved = 1 - base_cpu / statistics.median(cpus[name])
        verdict = "keeps its place" if saved >= FLOOR else "under 5%: should go"
        print(f"{name[8:]:22} saves {saved:6.1%} of the listing's CPU ({verdict})")
    if counts:
        print()
        for name, n in counts.items():
            print(f"{name:28} {n / 1e6:8.1f}M instructions {n / counts['all tricks']:6.2f}x")
        for name in list(VARIANTS)[1:4]:
            saved = 1 - counts["all tricks"] / counts[name]
            verdict = "keeps its place" if saved >= FLOOR else "under 5%: should go"
            print(f"{name[8:]:22} saves {saved:6.1%} of the instructions ({verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

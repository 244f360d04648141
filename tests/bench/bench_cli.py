"""Benchmark: the `board` command line's answer time, from a real (non-editable) install.

1. `board card list` on an empty board, against `python -c pass` of the same interpreter:
   what every verb pays before it does anything (the interpreter, then the parser).
2. `board card list --json` with 10,000 cards, against the `sqlite3` command line's `-json`
   over the same rows (`SELECT <the card columns> FROM cards ORDER BY seq`; the card listing
   reads each card's deps too). Without the sqlite3 program the baseline is Python's own
   sqlite3 module printing the rows as JSON, and the script says so.

Targets (issue 27): at most 3x each, printed as met or not met; and (issue 45) the JSON
listing within 1.1x of its floor. Beside each, a floor in the
same rounds: what any Python program doing the verb's work pays at least, against the same
baseline. For the empty board, `python -c "import sqlite3, tomllib, argparse"` (the standard
library a verb needs to read board.toml and the store and its command line); for the JSON,
a Python program that reads the same rows with the sqlite3 module and prints them with
json's C encoder (no checks, no indent). A floor over 3x means the target is out of reach
of a Python command line on this machine, and the script says so.

How: the working tree (board/, core/, tui/, themes/, pyproject, README) is copied to a
temporary directory and `pip install`ed, not editable, into a venv made there, as an
operator installs it (pip compiles the bytecode). If that install cannot
reach the package index, or with --no-deps, board is laid out in the temp venv's
site-packages as its wheel would be (no index, no build; compiled with compileall) and the
current venv's site-packages goes on the temp venv's path, last, for the dependencies. The
boards are the tests' (tests/support/boards.py: a git repository, board.toml as `board init`
writes it, the store); the 10,000 cards are written through the store in one transaction.
Rounds alternate the six commands, so all see the same machine; each figure
is a median of wall clock, with the children's CPU time beside it (on a machine others
share, the wall clock stretches with their load; the CPU time says what the command costs).

    .venv/bin/python tests/bench/bench_cli.py [--cards 10000] [--rounds 15] [--no-deps]
        [--venv DIR]   (reuse a venv with board installed, e.g. from an earlier --keep)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

TARGET = 3.0
FLOOR_TARGET = 1.1  # issue 45: the JSON listing against its floor
COPIED = ("board", "core", "tui", "themes", "pyproject.toml", "README.md")
INSTALL_TIMEOUT_S = 600


def run(argv: list[str], cwd: Path | None = None, timeout: float = 120) -> str:
    """A child with no stdin, in its own process group; its stdout, or exit naming it."""
    res = subprocess.run(
        argv,
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        timeout=timeout,
    )
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({res.returncode}): {res.stderr[-2000:]}")
    return res.stdout


def install(tmp: Path, no_deps: bool) -> Path:
    """A venv under `tmp` with board installed from a copy of the working tree; its bin/."""
    src = tmp / "src"
    src.mkdir()
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in COPIED:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=skip)
        else:
            shutil.copy2(path, src / name)
    venv = tmp / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    if not no_deps:
        try:
            run([*pip, str(src)], timeout=INSTALL_TIMEOUT_S)
            return venv / "bin"
        except (SystemExit, subprocess.TimeoutExpired) as exc:
            print(f"pip install with dependencies failed, installing board alone: {exc}")
    # laid out as the wheel lays it out (pyproject's package-dir), with the script pip writes
    python = venv / "bin" / "python"
    site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]))
    site = Path(str(site).strip())
    for name, under in (("board", "board"), ("core", "board/core"), ("tui", "board/tui")):
        shutil.copytree(src / name, site / under, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(src / "themes", site / "board" / "themes")
    script = venv / "bin" / "board"
    script.write_text(
        f"#!{python}\nimport sys\nfrom board.cli import main\n"
        "if __name__ == '__main__':\n    sys.exit(main())\n"
    )
    script.chmod(0o755)
    run([str(python), "-m", "compileall", "-q", str(site / "board")])
    # the dependencies from this venv, after the temp venv's own site-packages (its board wins)
    (site / "zz_bench_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return venv / "bin"


def make_filled_board(where: Path, cards: int) -> Path:
    """The tests' board (tests/support/boards.py) made in `where`, filled by `fill_cards`;
    returns its root."""
    from tests.support.boards import make_board

    where.mkdir()
    board = make_board(where)
    fill_cards(board.store, cards)
    board.close()
    return board.root


def fill_cards(store: Any, cards: int) -> None:
    """`cards` cards, in one transaction: one in 17 blocked, one in 10 with a dependency."""
    from board.core.model import Blocked, CardDraft
    from board.core.store import Expect

    with store.transaction() as tx:
        for i in range(cards):
            card = tx.create(
                CardDraft(
                    title=f"card {i}: a title of a typical length for a unit of work",
                    spec="do it\nand check it",
                    priority=i % 5,
                    labels=[f"area-{i % 7}"],
                    surface=[f"src/mod{i % 13}/**"],
                    deps=[f"c-{i}"] if i % 10 == 9 else [],
                    lane="backlog" if i % 3 else "ready",
                ),
                "c",
                "bench",
            )
            if i % 17 == 0:
                tx.update(card.id, Expect(), {"blocked": Blocked("held", f"reason {i}")}, "bench")


def timed(argv: list[str], cwd: Path) -> tuple[float, float, str]:
    """Wall-clock and CPU seconds of one child, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = run(argv, cwd)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out


def fmt(seconds: float) -> str:
    return f"{seconds * 1000:7.1f} ms"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--no-deps", action="store_true", help="install board alone (no index)")
    ap.add_argument("--venv", type=Path, help="a venv with board installed: skip the install")
    ap.add_argument("--keep", action="store_true", help="keep the temp directory (say where)")
    opts = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="board-bench-cli-"))
    # the board's caches (core/cachedir.py) in the temp directory, not the user's; the first
    # rounds keep board.toml's reading there, as an operator's first verb does
    os.environ["BOARD_CACHE_DIR"] = str(tmp / "cache")
    try:
        t = time.perf_counter()
        bin_dir = opts.venv / "bin" if opts.venv else install(tmp, opts.no_deps)
        board, python = bin_dir / "board", bin_dir / "python"
        where = run([str(python), "-c", "import board; print(board.__file__)"], cwd=tmp)
        if str(REPO) in where:
            raise SystemExit(f"the temp venv imports board from the working tree: {where}")
        print(f"installed {where.strip()} in {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        empty = make_filled_board(tmp / "empty", 0)
        full = make_filled_board(tmp / "full", opts.cards)
        print(
            f"made an empty board and one of {opts.cards} cards in {time.perf_counter() - t:.1f} s"
        )

        db = full / ".board" / "board.db"
        from board.core.store.cardrow import _CARD_COLS

        query = f"SELECT {_CARD_COLS} FROM cards ORDER BY seq"
        sqlite_cli = shutil.which("sqlite3")
        if sqlite_cli:
            baseline = [sqlite_cli, "-json", "-readonly", str(db), query]
            base_name = "sqlite3 -json (the sqlite3 program)"
        else:
            code = (
                "import json, sqlite3, sys\n"
                "c = sqlite3.connect(sys.argv[1])\n"
                "cur = c.execute(sys.argv[2])\n"
                "names = [d[0] for d in cur.description]\n"
                "print(json.dumps([dict(zip(names, r)) for r in cur]))\n"
            )
            baseline = [str(python), "-c", code, str(db), query]
            base_name = "python sqlite3 + json (no sqlite3 program here)"
        floor_json = (
            "import json, sqlite3, sys\n"
            "c = sqlite3.connect(sys.argv[1])\n"
            "cur = c.execute(sys.argv[2])\n"
            "names = [d[0] for d in cur.description]\n"
            "print(json.dumps([dict(zip(names, r)) for r in cur], ensure_ascii=False))\n"
        )
        commands = {
            "pass": ([str(python), "-c", "pass"], empty),
            "list": ([str(board), "card", "list"], empty),
            "floor_list": ([str(python), "-c", "import sqlite3, tomllib, argparse"], empty),
            "sqlite": (baseline, full),
            "json": ([str(board), "card", "list", "--json"], full),
            "floor_json": ([str(python), "-c", floor_json, str(db), query], full),
        }
        # a warm-up round, which also checks both print the same cards
        got = {name: timed(argv, cwd)[2] for name, (argv, cwd) in commands.items()}
        ours, theirs = json.loads(got["json"]), json.loads(got["sqlite"])
        assert got["list"] == "", f"the empty board listed {got['list']!r}"
        assert len(ours) == opts.cards, f"board listed {len(ours)} cards"
        assert [c["id"] for c in ours] == [r["id"] for r in theirs], "not the same rows"

        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(opts.rounds):
            for name, (argv, cwd) in commands.items():
                wall, cpu, _out = timed(argv, cwd)
                walls[name].append(wall)
                cpus[name].append(cpu)
        med = {n: statistics.median(v) for n, v in walls.items()}
        cpu = {n: statistics.median(v) for n, v in cpus.items()}

        oks = []
        print(f"\n{opts.rounds} rounds, medians (wall clock, and the child's CPU time)")
        for title, ours_name, base_name_, label, floor_name, floor_label in (
            (
                "1. an empty board",
                "list",
                "pass",
                "python -c pass",
                "floor_list",
                "floor: python -c 'import sqlite3, tomllib, argparse'",
            ),
            (
                f"2. {opts.cards} cards as JSON",
                "json",
                "sqlite",
                base_name,
                "floor_json",
                "floor: python sqlite3 rows + json C encoder",
            ),
        ):
            ratio = med[ours_name] / med[base_name_]
            ok = ratio <= TARGET
            oks.append(ok)
            floor = med[floor_name] / med[base_name_]
            argv_shown = "board card list" + (" --json" if ours_name == "json" else "")
            print(f"{title}")
            for name, shown in (
                (ours_name, argv_shown),
                (base_name_, label),
                (floor_name, floor_label),
            ):
                print(f"  {shown:<52} {fmt(med[name])}   cpu {fmt(cpu[name])}")
            cpu_ratio = cpu[ours_name] / cpu[base_name_]
            print(
                f"  ratio {ratio:.2f}x (cpu {cpu_ratio:.2f}x), target <= {TARGET}x: "
                f"{'met' if ok else 'not met'}"
            )
            print(
                f"  the floor is {floor:.2f}x (cpu {cpu[floor_name] / cpu[base_name_]:.2f}x)"
                + (": the target is below it" if floor > TARGET else "")
            )
            if ours_name == "json":  # issue 45: within 1.1x of the floor
                to_floor = med[ours_name] / med[floor_name]
                ok = to_floor <= FLOOR_TARGET
                oks.append(ok)
                print(
                    f"  {to_floor:.2f}x the floor (cpu {cpu[ours_name] / cpu[floor_name]:.2f}x),"
                    f" target <= {FLOOR_TARGET}x: {'met' if ok else 'not met'}"
                )
    finally:
        if opts.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0 if all(oks) else 1


if __name__ == "__main__":
    raise SystemExit(main())

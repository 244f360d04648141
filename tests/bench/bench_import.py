"""Benchmark: a 1,000-line JSON Lines `board card import` against 1,000 `board card add` calls
(issue 44), each as an operator runs it: the real `board` command line in a child process,
on a board as `board init` leaves it (tests/support/boards.py: git, board.toml, the SQLite
store).

1. `board card import backlog.jsonl`: one call, N lines (title, spec, labels, priority, and
   every tenth line a dep on the line before). It must be one transaction: every card it
   made carries the one time stamp a store transaction takes (SqlTx.now), which the script
   checks.
2. `board card add TITLE --spec … --label … --priority …`, once per card, on a fresh board.
   1,000 child processes take minutes on a shared machine, so by default ADDS of them run
   and their time is scaled to N (the calls are alike: each opens the store and writes one
   card); `--adds 1000` runs them all. The script says which it did.

Target: the import takes at most a tenth of the adds' time (printed as met or not).
Figures are wall clock, with the children's CPU time beside them.

    .venv/bin/python tests/bench/bench_import.py [--lines 1000] [--adds 200]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.support.boards import make_board  # noqa: E402 - after the path above

TARGET = 10.0


def board(cwd: Path, *args: str, stdin_text: str | None = None) -> tuple[float, float]:
    """One `board` call as an operator makes it: (wall seconds, children's CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "board.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=stdin_text,
        stdin=None if stdin_text is not None else subprocess.DEVNULL,
        timeout=600,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        sys.exit(f"board {' '.join(args[:3])} failed: {res.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def lines(n: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i in range(n):
        row: dict[str, object] = {
            "key": f"k{i}",
            "title": f"card {i} of the backlog",
            "spec": f"build part {i}: the words a tracker holds, a paragraph long. " * 3,
            "labels": ["imported", f"area-{i % 7}"],
            "priority": i % 5,
        }
        if i % 10 == 9:
            row["deps"] = [f"k{i - 1}"]
        out.append(row)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=1000)
    ap.add_argument("--adds", type=int, default=200, help="card add calls run (scaled to N)")
    args = ap.parse_args()
    n, adds = args.lines, min(args.adds, args.lines)
    rows = lines(n)
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        (Path(tmp) / "import").mkdir()
        (Path(tmp) / "add").mkdir()
        one = make_board(Path(tmp) / "import")
        one.close()
        path = one.root / "backlog.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        imp_wall, imp_cpu = board(one.root, "card", "import", str(path))
        shown = subprocess.run(
            [sys.executable, "-m", "board.cli", "card", "list", "--json"],
            cwd=one.root, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
        )  # fmt: skip
        cards = json.loads(shown.stdout)
        stamps = {c["created_at"] for c in cards}
        assert len(cards) == n, f"the import made {len(cards)} cards, not {n}"
        one_tx = len(stamps) == 1

        other = make_board(Path(tmp) / "add")
        other.close()
        add_wall = add_cpu = 0.0
        for row in rows[:adds]:
            argv = ["card", "add", str(row["title"]), "--spec", str(row["spec"])]
            argv += [x for label in row["labels"] for x in ("--label", label)]  # type: ignore[attr-defined]
            argv += ["--priority", str(row["priority"])]
            wall, cpu = board(other.root, *argv)
            add_wall += wall
            add_cpu += cpu
    scale = n / adds
    ratio = add_wall * scale / imp_wall
    print(f"import of {n} JSON lines, one `board card import`: {imp_wall:.2f}s wall, "
          f"{imp_cpu:.2f}s CPU; {'one transaction' if one_tx else 'NOT one transaction'} "
          f"({len(stamps)} time stamp{'s' * (len(stamps) != 1)} on {n} cards)")  # fmt: skip
    said = "" if adds == n else f" (ran {adds}, scaled x{scale:g})"
    print(f"{n} `board card add` calls{said}: {add_wall * scale:.2f}s wall, "
          f"{add_cpu * scale:.2f}s CPU; {add_wall / adds * 1000:.0f} ms a call")  # fmt: skip
    met = "met" if ratio >= TARGET and one_tx else "NOT met"
    print(f"ratio: the adds take {ratio:.1f}x the import's time "
          f"(target at least {TARGET:g}x, the import at most a tenth): {met}")  # fmt: skip


if __name__ == "__main__":
    main()

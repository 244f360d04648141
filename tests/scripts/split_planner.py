#!/usr/bin/env python3
"""A planner for the split tests: splits the card it is given with the real `board split`.

argv: CARD [split|fail|held]. It runs where the board dispatched it (the repository root),
says so, then either splits CARD into two slices, gives up with exit 1, or (held) has the
operator hold its own task while it runs and exits without splitting.
"""

import os
import subprocess
import sys

card, mode = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "split")
print(f"planning the split of {card} in {os.getcwd()}", flush=True)
if mode == "held":
    hold = [sys.executable, "-m", "board.cli", "hold", os.environ["BOARD_TASK"]]
    hold += ["--reason", "operator: wait for the design review"]
    sys.exit(subprocess.run(hold, stdin=subprocess.DEVNULL, check=False).returncode)
if mode == "fail":
    print("cannot decide", flush=True)
    sys.exit(1)
argv = [sys.executable, "-m", "board.cli", "split", card]
argv += ["--into", f"{card} part one", "--into", f"{card} part two"]
sys.exit(subprocess.run(argv, stdin=subprocess.DEVNULL, check=False).returncode)

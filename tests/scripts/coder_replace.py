#!/usr/bin/env python3
"""A coder that rewrites app.py whole (so two cards conflict on it), after an optional pause.

argv: WORKTREE CARD. The pause is SLOW_<CARD> seconds (dashes as underscores), so one card
of a board can be kept busy while a test moves the run branch under it. The brief's path
is appended to BRIEFS (if set), so a test can read what each build was told.
"""

import os
import sys
import time
from pathlib import Path

tree, card = Path(sys.argv[1]), sys.argv[2]
time.sleep(float(os.environ.get("SLOW_" + card.replace("-", "_").upper(), "0")))
briefs = os.environ.get("BRIEFS")
brief = tree / ".board-scratch" / "brief.md"
if briefs and brief.exists():
    with open(briefs, "a", encoding="utf-8") as fh:
        fh.write(f"=== {card}\n{brief.read_text(encoding='utf-8')}\n")
(tree / "app.py").write_text(f"print('from {card}')\n")
print(f"rewrote app.py for {card}", flush=True)

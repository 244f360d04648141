#!/usr/bin/env python3
"""A coder for the split tests, run by the real drive in a card's worktree.

argv: MODE. BOARD_CARD names the card.
  print-then-hang  prints (it reached its model), then sleeps past any test timeout
  silent-hang      prints nothing and sleeps: it never reached its model (infra)
  edit             writes split_work.txt and exits 0: a build that gets through
  edit-then-hang   first round writes split_work.txt and exits 0; in a fix round (the
                   file is already in the kept worktree) it prints, then sleeps
"""

import os
import sys
import time
from pathlib import Path

mode = sys.argv[1]
card = os.environ.get("BOARD_CARD", "?")
work = Path("split_work.txt")
if mode == "edit-then-hang" and not work.exists():
    mode = "edit"
elif mode == "edit-then-hang":
    mode = "print-then-hang"
if mode == "edit":
    work.write_text(f"built {card}\n")
    print(f"edited split_work.txt for {card}", flush=True)
    sys.exit(0)
if mode == "print-then-hang":
    print(f"thinking about {card} ...", flush=True)
time.sleep(60)

#!/usr/bin/env python3
"""A hostile coder: prints lines a backtracking failure rule like `(a|aa)+$` takes ages on
(60 a's and a '!'), every 0.2 s, for SECONDS (argv[1]; 0: once), then exits 1."""

import sys
import time

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0
end = time.monotonic() + seconds
while True:
    print("a" * 60 + "!", flush=True)
    if time.monotonic() >= end:
        break
    time.sleep(0.2)
sys.exit(1)

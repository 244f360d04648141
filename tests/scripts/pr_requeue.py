#!/usr/bin/env python3
"""A stand-in PR service during which someone else requeues the card (a real `board requeue`).

Only the PR service is stubbed; the requeue is the real command line, in another process.
Usage: pr_requeue.py REPO CARD  (then prints a URL as if the PR had been opened)
"""

import subprocess
import sys

repo, card = sys.argv[1], sys.argv[2]
res = subprocess.run(
    [sys.executable, "-m", "board.cli", "-C", repo, "requeue", card, "--reason", "not yet"],
    stdin=subprocess.DEVNULL,
    capture_output=True,
    text=True,
    timeout=60,
)
print(res.stdout, res.stderr, file=sys.stderr)
print("https://prs.example.test/pull/99")

#!/usr/bin/env python3
"""git, except that `git diff --patch` writes its first GIT_PAUSE_AFTER bytes, then stops
for GIT_PAUSE_S seconds, then writes the rest: a diff caught mid-stream, so a test can see
what the diff view shows while git is still writing. Everything else is git as it is."""

import os
import subprocess
import sys
import time

real = os.environ["REAL_GIT"]
args = sys.argv[1:]
if "--patch" not in args:
    os.execv(real, [real, *args])
after = int(os.environ.get("GIT_PAUSE_AFTER", "65536"))
pause = float(os.environ.get("GIT_PAUSE_S", "2"))
child = subprocess.Popen([real, *args], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
assert child.stdout is not None
out = sys.stdout.buffer
written = 0
while written < after:
    chunk = child.stdout.read(min(65536, after - written))
    if not chunk:
        break
    out.write(chunk)
    written += len(chunk)
out.flush()
time.sleep(pause)
while chunk := child.stdout.read(65536):
    out.write(chunk)
out.flush()
sys.exit(child.wait())

#!/usr/bin/env python3
"""A `[notify] argv` command: appends the arguments it was given after RECORD as one JSON
line to RECORD, and whether it had a stdin to read (it must not: the loop gives none).
Usage: notify_record.py RECORD [ARG]...  With the file RECORD.fail present it exits 1
after recording, and removes that file (a send that fails once, then works)."""

import json
import os
import sys

record = sys.argv[1]
try:
    stdin = sys.stdin.read() if sys.stdin is not None else None
except OSError:
    stdin = None
with open(record, "a", encoding="utf-8") as fh:
    fh.write(json.dumps({"argv": sys.argv[2:], "stdin": stdin}) + "\n")
if os.path.exists(record + ".fail"):
    os.remove(record + ".fail")
    print("notify_record: told to fail once", file=sys.stderr)
    sys.exit(1)

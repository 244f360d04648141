#!/usr/bin/env python3
"""A stand-in for the PR service (`gh pr create`): records how it was called, prints a URL.

Only the PR service is stubbed in the tests; git, the remote and the board are real.
Usage: pr_ok.py RECORD_FILE [ARG]...  (each call appends one JSON line to RECORD_FILE)
"""

import json
import os
import sys

record, args = sys.argv[1], sys.argv[2:]
body = ""
if "--body-file" in args:
    with open(args[args.index("--body-file") + 1], encoding="utf-8") as fh:
        body = fh.read()
with open(record, "a", encoding="utf-8") as fh:
    entry = {"argv": args, "body": body, "draft_env": os.environ.get("BOARD_DRAFT", "")}
    fh.write(json.dumps(entry) + "\n")
branch = args[args.index("--head") + 1] if "--head" in args else "branch"
print("Creating pull request for", branch)
print(f"https://prs.example.test/pull/{len(open(record).readlines())}")

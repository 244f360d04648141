#!/usr/bin/env python3
"""A coder that plays a script of calls, as a real agent CLI fails overnight.

argv: WORKTREE CARD SCRIPT_JSON STATE_DIR [TIER]
SCRIPT_JSON is a list; call n (counted across every card, in STATE_DIR/calls, under a
lock) plays entry n, or the last entry once the list runs out. An entry is
{"print": "...", "exit": N} (print the message on stderr, like the CLIs, then exit N;
no edit), or "edit" (edit work/<card>.txt and exit 0). A key "card" in an entry makes
it apply only to that card (other cards' calls edit). Each call is logged to
STATE_DIR/log as "n card tier action".
"""

import fcntl
import json
import os
import sys
import time

wt, card, script_path, state = sys.argv[1:5]
tier = sys.argv[5] if len(sys.argv) > 5 else ""
script = json.loads(open(script_path).read())
os.makedirs(state, exist_ok=True)
with open(os.path.join(state, "lock"), "w") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    path = os.path.join(state, "calls")
    n = int(open(path).read()) + 1 if os.path.exists(path) else 1
    open(path, "w").write(str(n))
    with open(os.path.join(state, "times"), "a") as times:
        times.write(f"{time.time()}\n")
step = script[min(n, len(script)) - 1]
if isinstance(step, dict) and step.get("card") not in (None, card):
    step = "edit"
action = "edit" if step == "edit" else f"exit {step['exit']}"
with open(os.path.join(state, "log"), "a") as log:
    log.write(f"{n} {card} {tier} {action}\n")
print(f"call {n} for {card}", flush=True)
if step == "edit":
    os.makedirs(os.path.join(wt, "work"), exist_ok=True)
    with open(os.path.join(wt, "work", f"{card}.txt"), "a") as fh:
        fh.write(f"work of {card}\n")
    print(f"edited work/{card}.txt")
    sys.exit(0)
# partial work before the failure: the back-off must keep it
os.makedirs(os.path.join(wt, "work"), exist_ok=True)
with open(os.path.join(wt, "work", f"{card}.partial"), "a") as fh:
    fh.write(f"half-done by call {n}\n")
print(step["print"], file=sys.stderr, flush=True)
sys.exit(step["exit"])

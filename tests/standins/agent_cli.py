#!/usr/bin/env python3
"""A STAND-IN for an agent CLI (claude, codex, aider, gemini), not the real program.

Installed under the real program's name on PATH by tests/test_presets.py, because the
real CLIs need accounts and a network this machine does not have. It records how the
board called it (argv, what stdin is, whether the brief it was pointed at exists) to
$STANDIN_DIR/calls.jsonl, then answers as the real CLI does: the first call fails the
way that CLI reports a usage limit (its message, its exit code; aider exits 0), the next
edits a file in its working directory and exits 0.
"""

import json
import os
import re
import sys

name = os.path.basename(sys.argv[0])
state = os.environ["STANDIN_DIR"]
argv = sys.argv[1:]
try:
    stdin = os.readlink("/proc/self/fd/0")
except OSError:
    stdin = "closed"
brief = ""
if "--message-file" in argv:
    brief = argv[argv.index("--message-file") + 1]
else:
    m = re.search(r"Read the task in (\S+) and", " ".join(argv))
    brief = m.group(1) if m else ""
calls_path = os.path.join(state, "calls.jsonl")
n = 1 + (sum(1 for _ in open(calls_path)) if os.path.exists(calls_path) else 0)
with open(calls_path, "a") as fh:
    record = {
        "name": name,
        "argv": argv,
        "stdin": stdin,
        "brief": brief,
        "brief_exists": bool(brief) and os.path.isfile(brief),
        "cwd": os.getcwd(),
    }
    fh.write(json.dumps(record) + "\n")

# each CLI's own words for a spent limit, as printed in the reports cited in test_failures.py
LIMITS = {
    "claude": ("Claude AI usage limit reached|{epoch}", 1),
    "codex": (
        "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) "
        "or try again in 2 seconds.",
        1,
    ),
    "aider": (
        "litellm.RateLimitError: AnthropicException - rate_limit_error\n"
        "The API provider has rate limited you. Try again later or check your quotas.",
        0,
    ),
    "gemini": (
        "[Backend Error] You have exhausted your capacity on this model. Your quota will "
        "reset after 2s. (HTTP 429)",
        1,
    ),
}
# the flags the real program offers (its --help, read by tests/test_presets.py from the real
# CLI): a flag it does not offer is refused as its parser would, so the stand-in never takes
# an argv the real program refuses
flags_dir = os.environ.get("STANDIN_FLAGS_DIR")
if flags_dir:
    with open(os.path.join(flags_dir, f"{name}.flags")) as fh:
        offered = set(fh.read().split())
    for arg in argv:
        flag = arg.split("=", 1)[0]
        if re.fullmatch(r"--?[A-Za-z0-9][\w-]*", flag) and flag not in offered:
            print(f"error: unexpected argument '{flag}' found", file=sys.stderr)
            print(f"\nUsage: {name} [OPTIONS] [PROMPT]", file=sys.stderr)
            sys.exit(2)
mode = os.environ.get("STANDIN_MODE", "limit-then-edit")
if mode == "auth" and name == "gemini":
    # its source's FatalAuthenticationError, exit code 41; no words the default rules know
    print("FatalAuthenticationError", file=sys.stderr)
    sys.exit(41)
if n == 1 and mode == "limit-then-edit":
    import time

    text, code = LIMITS[name]
    print(text.format(epoch=int(time.time()) + 2), file=sys.stderr)
    sys.exit(code)
os.makedirs("work", exist_ok=True)
with open(os.path.join("work", f"{name}.txt"), "a") as fh:
    fh.write(f"{name} did the task\n")
print(f"{name}: edited work/{name}.txt")
sys.exit(0)

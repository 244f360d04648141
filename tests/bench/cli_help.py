"""Print every `board` help text and usage refusal, to diff before and after a parser change.

The parser is built from many modules; a change to how it is built (what is imported
when) must not change a word the operator reads. Run it on both trees and diff:

    .venv/bin/python tests/bench/cli_help.py > /tmp/before.txt   # on the old tree
    .venv/bin/python tests/bench/cli_help.py > /tmp/after.txt    # on the new tree
    diff /tmp/before.txt /tmp/after.txt

Each text comes from a real `python -m board.cli` child, with a fixed width, so what is
compared is what a terminal shows. Exits 0; the diff is the verdict.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

# verbs that do something when given no argument (init, the loop, the demo's sandbox): only
# their help is asked for
ACTS_BARE = ("init", "run", "status", "tui", "demo")


def _run(argv: list[str], cwd: str) -> str:
    env = {**os.environ, "COLUMNS": "100", "LINES": "40", "NO_COLOR": "1"}
    res = subprocess.run(
        [sys.executable, "-m", "board.cli", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        timeout=60,
        env=env,
    )
    text = f"{res.stdout}{res.stderr}".replace(cwd, "TMP")
    return f"$ board {' '.join(argv)}\n[exit {res.returncode}]\n{text}\n"


def _verbs(help_text: str) -> list[str]:
    """The verbs a help text lists under its positional VERB (read from the text itself,
    so the script needs no parser internals and works on any tree)."""
    verbs: list[str] = []
    inside = False
    for line in help_text.splitlines():
        if line.startswith("positional arguments:"):
            inside = True
            continue
        if inside and not line.strip():
            break
        if inside and line.startswith("    ") and not line.startswith("     "):
            verbs.append(line.split()[0])
        elif inside and line.startswith("  {"):
            verbs.extend(line.strip().split()[0].strip("{}").split(","))
    return [v for v in dict.fromkeys(verbs) if v.isidentifier() or v.replace("-", "").isalnum()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="board-help-") as cwd:
        top = _run(["--help"], cwd)
        out = [top]
        for verb in _verbs(top):
            text = _run([verb, "--help"], cwd)
            out.append(text)
            for sub in _verbs(text):
                out.append(_run([verb, sub, "--help"], cwd))
            if verb not in ACTS_BARE:
                out.append(_run([verb], cwd))  # a verb without its arguments: the refusal
        for argv in ([], ["nope"], ["card", "nope"], ["split", "c-1", "--surface", "x"]):
            out.append(_run(argv, cwd))
    sys.stdout.write("".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The demo's coder: a real executable that edits files with realistic pauses and output.

What it does is chosen by a `demo: <behaviour> [file]` line in the card's spec, so the
demo board shows every path of the drive: a clean build, a climb, a red gate, a hang
that means "too wide", a coder that dies leaving work behind, one that never starts, and a
slow one that writes its file a piece at a time (something to watch with `d`, or stop).

Only a marker at the start of a line counts (`behaviour_of`): a slice cut from a too-wide
card quotes its parent's spec, indented, for context, and a slice that took the parent's
`demo: wide` for its own timed out in turn, was parked too-wide and split again, for ever.
A card with no marker of its own builds cleanly, into a file named after its tree.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import time
from pathlib import Path

PACE_S = float(os.environ.get("BOARD_DEMO_PACE", "0.5"))

_FUNCS = {
    "mul": "def mul(a, b):\n    return a * b\n",
    "div": (
        "def div(a, b):\n    if b == 0:\n        raise ZeroDivisionError('divide by zero')\n"
        "    return a / b\n"
    ),
    "power": "def power(a, b):\n    return a**b\n",
    "mod": "def mod(a, b):\n    return a % b\n",
    "neg": "def neg(a):\n    return -a\n",
}

_MARKER = re.compile(r"^demo:[ \t]*(\w+)(?:[ \t]+(\S+))?", re.MULTILINE)


def behaviour_of(brief: str, worktree: Path) -> tuple[str, str]:
    """(behaviour, target file) from the card's own `demo:` line, at the start of a line;
    with none, a clean build into `calc/<tree>.py` (so two such cards never collide)."""
    m = _MARKER.search(brief)
    default = f"calc/{re.sub(r'[^a-z0-9]+', '_', worktree.name.lower()).strip('_')}.py"
    if m is None:
        return "ok", default
    return m.group(1), m.group(2) or default


def say(text: str, pause: float = 1.0) -> None:
    print(text, flush=True)
    time.sleep(PACE_S * pause)


def think(topic: str, lines: int) -> None:
    for i in range(lines):
        say(f"  thinking about {topic} ({i + 1}/{lines})", 0.6)


def write(worktree: Path, rel: str, text: str) -> None:
    path = worktree / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    say(f"edit {rel} (+{text.count(chr(10))} lines)")
    path.write_text(text)


# what a build "spends" per tier, said in aider's words so the demo's tiers read it with
# `usage = "aider"` and the board shows costs: (tokens sent, received, dollars)
SPEND = {"quick": (2100, 350, 0.0116), "careful": (8400, 1200, 0.0432)}


def spent(tier: str) -> None:
    sent, received, usd = SPEND.get(tier, SPEND["quick"])
    say(f"Tokens: {sent / 1000:.1f}k sent, {received} received. "
        f"Cost: ${usd:.4f} message, ${usd:.4f} session.", 0.2)  # fmt: skip


def module_for(rel: str) -> str:
    stem = Path(rel).stem
    body = _FUNCS.get(stem, f"def {stem}():\n    return {stem!r}\n")
    return f'"""{stem}: added by the demo coder."""\n\n\n' + body


def test_for(rel: str) -> tuple[str, str]:
    stem = Path(rel).stem
    checks = {
        "mul": "self.assertEqual(mul(3, 4), 12)",
        "div": "self.assertEqual(div(6, 3), 2)",
        "power": "self.assertEqual(power(2, 5), 32)",
        "mod": "self.assertEqual(mod(7, 3), 1)",
        "neg": "self.assertEqual(neg(2), -2)",
    }
    check = checks.get(stem, f"self.assertEqual({stem}(), {stem!r})")
    text = (
        "import unittest\n\n"
        f"from calc.{stem} import {stem}\n\n\n"
        f"class Test{stem.title()}(unittest.TestCase):\n"
        f"    def test_{stem}(self):\n        {check}\n"
    )
    return f"tests/test_{stem}.py", text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="demo-coder")
    parser.add_argument("--brief", required=True)
    parser.add_argument("--worktree", required=True)
    parser.add_argument("--tier", default="quick")
    args = parser.parse_args(argv)
    brief = Path(args.brief).read_text(encoding="utf-8", errors="replace")
    worktree = Path(args.worktree)
    behaviour, target = behaviour_of(brief, worktree)
    if behaviour == "silent":
        time.sleep(3600)  # never prints: the board calls this an infra failure
        return 0
    say(f"demo coder ({args.tier}) reading {Path(args.brief).name}")
    say(f"Model: demo-{args.tier} with whole edit format", 0.2)  # aider's words: usage's model
    say(f"plan: {behaviour} → {target}")
    think("the spec", 3)
    if behaviour == "wide":
        say("this touches every module; mapping the whole code base…")
        i = 0
        while True:  # reaches the model, then never finishes: too wide for one build
            i += 1
            say(f"  still reading module {i} of ~400", 1.5)
    if behaviour == "slow":  # a piece at a time: the live diff grows while it works
        body = module_for(target).splitlines(keepends=True)
        for i in range(1, len(body)):
            write(worktree, target, "".join(body[:i]))
    if behaviour == "flaky" and args.tier == "quick":
        write(worktree, target, "# half-done\n")
        say("error: the quick tier gave up on the zero-division case", 0.5)
        spent(args.tier)
        return 1
    if behaviour == "die":
        write(worktree, target, module_for(target))
        rel, text = test_for(target)
        write(worktree, rel, text)
        say("coder process lost its connection; dying with work on disk", 0.5)
        os.kill(os.getpid(), signal.SIGKILL)
    write(worktree, target, module_for(target))
    rel, text = test_for(target)
    if behaviour == "red":
        text = text.replace("assertEqual(", "assertEqual(1 + ", 1)
    write(worktree, rel, text)
    think("edge cases", 2)
    say("done: files edited; the board will gate, commit and publish")
    spent(args.tier)
    return 0


if __name__ == "__main__":
    sys.exit(main())

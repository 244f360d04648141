#!/usr/bin/env python3
"""A coder that replays one real commit: it applies that commit's patch to its worktree.

argv: BRIEF WORKTREE. The card's spec (quoted in the brief) holds a line
`apply-commit: <sha> <source repository>`; the patch is the commit against its first
parent, applied with `git apply` (binary-safe). The coder edits only: the board commits.
Exits 3, saying why, when the patch does not apply (e.g. a dependency's code is missing).
"""

import re
import subprocess
import sys
from pathlib import Path

brief, tree = Path(sys.argv[1]), Path(sys.argv[2])
m = re.search(r"^apply-commit: ([0-9a-f]{7,40}) (.+)$", brief.read_text(encoding="utf-8"), re.M)
if not m:
    print("coder: no apply-commit line in the brief")
    sys.exit(2)
sha, source = m.group(1), m.group(2).strip()


def run(*args: str, cwd: Path, data: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        args,
        cwd=cwd,
        input=data,
        stdin=None if data is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        start_new_session=False,
    )


patch = run(
    "git", "diff", "--binary", "--no-color", "--no-ext-diff", f"{sha}^1", sha, cwd=Path(source)
)
if patch.returncode != 0:
    print(f"coder: cannot read commit {sha}: {patch.stderr.decode(errors='replace')}")
    sys.exit(2)
if not patch.stdout.strip():
    print(f"coder: commit {sha} changes nothing")
    sys.exit(0)
applied = run("git", "apply", "--whitespace=nowarn", "-", cwd=tree, data=patch.stdout)
if applied.returncode != 0:
    print(f"coder: the patch of {sha} does not apply here:")
    print(applied.stderr.decode(errors="replace"))
    sys.exit(3)
print(f"applied {sha} ({len(patch.stdout)} bytes of patch)")

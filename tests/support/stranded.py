"""Stranded branches in bulk: real save commits, written straight into the object store."""

from __future__ import annotations

from pathlib import Path

from board.core import proc
from board.core.git import saves, snapshot

from tests.support.repos import git


def make_branches(root: Path, count: int) -> None:
    """`count` stranded branches on main, each one real save commit with its trailers, made in
    one `git fast-import` (for the listing at scale: the test and the benchmarks)."""
    base = git(root, "rev-parse", "main")
    lines: list[str] = []
    for i in range(count):
        tree_dir = f"feat-c-{i}"
        stats = snapshot.Stats(files=1 + i % 7, insertions=i % 50, deletions=i % 13)
        msg = saves._message(tree_dir, f"c-{i}", "1 uncommitted change", stats, "bench")
        body = msg.encode()
        content = f"saved work {i}\n".encode()
        stamp = f"20250101T{i // 3600 % 24:02d}{i // 60 % 60:02d}{i % 60:02d}.000Z"
        lines.append(f"commit refs/heads/stranded/{tree_dir}/{stamp}")
        lines.append(f"committer board <board@localhost> {1735689600 + i} +0000")
        lines.append(f"data {len(body)}")
        lines.append(body.decode())
        lines.append(f"from {base}")
        lines.append(f"M 100644 inline work/{i}.txt")
        lines.append(f"data {len(content)}")
        lines.append(content.decode())
    data = ("\n".join(lines) + "\n").encode()
    res = proc.run(("git", "fast-import", "--quiet"), cwd=root, timeout=300, input_bytes=data)
    assert res.returncode == 0, res.stderr

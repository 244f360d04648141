"""Replay pairs of a real project's commits that touch different files, built at once.

    python tests/bench/replay_pairs.py SOURCE_REPO [--pairs 3] [--within 40]
        [--gate "python -m unittest -q"]

`replay_history` chains its cards (each depends on the one before), so every fold there
finds the run branch at its tree's start and fast-forwards. Here two real commits A and B
(first-parent, no merges, among the last `--within`) whose patches touch different files
and both apply to A's parent become two cards with those files as their surfaces, built at
once from the same start: the second fold finds the run branch moved by the first, which
is the fold's replay (core/git/quickfold.py) or its rebase. The project's suite is the
gate. For each pair it prints how the second fold went (read from GIT_TRACE) and whether
the run branch's tree equals both patches applied by `git apply` to the start.

The source is any local clone (e.g. one brought in with the search tool's `fetch`); nothing
of it is committed here. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from replay_history import ENV, board, run, write_config  # noqa: E402


def _patch(source: Path, sha: str) -> bytes:
    return subprocess.run(
        ["git", "diff", "--binary", f"{sha}^", sha],
        cwd=source, capture_output=True, stdin=subprocess.DEVNULL, timeout=120, check=True,
    ).stdout  # fmt: skip


def _applies(source: Path, base: str, patches: list[bytes]) -> str | None:
    """The tree of `patches` applied in turn to `base` by git, or None when one does not."""
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "w"
        run("git", "worktree", "add", "-q", "--detach", str(where), base, cwd=source)
        try:
            for patch in patches:
                res = subprocess.run(
                    ["git", "apply", "--index", "-"],
                    cwd=where, input=patch, capture_output=True, timeout=120,
                )  # fmt: skip
                if res.returncode != 0:
                    return None
            return run("git", "write-tree", cwd=where)
        finally:
            run("git", "worktree", "remove", "--force", str(where), cwd=source)


def pairs(source: Path, within: int, want: int) -> list[tuple[str, str, list[str], list[str]]]:
    """(A, B, A's files, B's files): B newer, files apart, both applying to A's parent."""
    shas = run(
        "git", "rev-list", "--first-parent", "--no-merges", f"--max-count={within}", "HEAD",
        cwd=source,
    ).split()  # fmt: skip
    files = {
        s: run("git", "diff-tree", "--no-commit-id", "--name-only", "-r", f"{s}^", s,
               cwd=source).split()
        for s in shas
    }  # fmt: skip
    found: list[tuple[str, str, list[str], list[str]]] = []
    used: set[str] = set()
    for i, b in enumerate(shas):
        for a in shas[i + 1 : i + 8]:
            if {a, b} & used or not files[a] or not files[b] or set(files[a]) & set(files[b]):
                continue
            if _applies(source, f"{a}^", [_patch(source, a), _patch(source, b)]) is None:
                continue
            found.append((a, b, files[a], files[b]))
            used |= {a, b}
            break
        if len(found) == want:
            break
    return found


def replay_pair(
    source: Path, a: str, b: str, fa: list[str], fb: list[str], gate: list[str]
) -> bool:
    work = Path(tempfile.mkdtemp(prefix="replay-pair-"))
    clone = work / "clone"
    run("git", "clone", "-q", str(source), str(clone), cwd=work)
    run("git", "checkout", "-q", "-B", "main", f"{a}^", cwd=clone)
    run("git", "remote", "remove", "origin", cwd=clone)  # the base is this main, at A's parent
    init = board("init", cwd=clone)
    if init.returncode != 0:
        raise SystemExit(init.stderr)
    write_config(clone, gate, max_concurrent=2)
    for sha, surface in ((a, fa), (b, fb)):
        subject = run("git", "log", "-1", "--format=%s", sha, cwd=source)
        flags = [x for path in surface for x in ("--surface", path)]
        spec = f"apply-commit: {sha} {source}"
        added = board("card", "add", subject[:200], "--ready", *flags, "--spec", spec, cwd=clone)
        if added.returncode != 0:
            raise SystemExit(added.stderr)
    trace = work / "git-trace.txt"
    started = time.monotonic()
    res = subprocess.run(
        [sys.executable, "-m", "board.cli", "run", "--until-idle", "--quiet"],
        cwd=clone, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=7200,
        env={**ENV, "GIT_TRACE": str(trace)},
    )  # fmt: skip
    wall = time.monotonic() - started
    said = trace.read_text(errors="replace")
    replays = said.count("git merge-tree --write-tree --no-messages")
    rebases = said.count("git rebase --no-autosquash")
    want = _applies(source, f"{a}^", [_patch(source, a), _patch(source, b)])
    got = run("git", "rev-parse", "board/run^{tree}", cwd=clone)
    lanes = run("git", "log", "--format=%s", f"{a}^..board/run", cwd=clone).splitlines()
    same = want == got
    print(
        f"{a[:10]} ({len(fa)} files) + {b[:10]} ({len(fb)} files): board run exit "
        f"{res.returncode} in {wall:.1f} s, {len(lanes)} commits folded; the second fold: "
        f"{replays} replay(s), {rebases} rebase(s); run branch "
        f"{'EQUALS' if same else 'DIFFERS FROM'} both patches by git ({got[:10]})"
    )
    return same and res.returncode == 0 and len(lanes) == 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", type=Path)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--within", type=int, default=40)
    ap.add_argument("--gate", default="python -m unittest -q", help="split like argv, no shell")
    args = ap.parse_args()
    source = args.source.resolve()
    gate = [sys.executable if x == "python" else x for x in shlex.split(args.gate)]
    found = pairs(source, args.within, args.pairs)
    if not found:
        raise SystemExit("no pair of commits apart that both apply to the older one's parent")
    ok = [replay_pair(source, a, b, fa, fb, gate) for a, b, fa, fb in found]
    print(f"{sum(ok)} of {len(ok)} pairs: the run branch equals both patches")
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())

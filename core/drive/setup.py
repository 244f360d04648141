"""A fresh tree made ready to build in: the ignored files it needs, then `[tree] setup`.

A fresh worktree holds what git holds and nothing else: no `node_modules`, no virtual
environment, no `.env`. A gate run there fails on an import, or (worse) imports the
operator's checkout through an editable install and tests the wrong code. So before the
coder starts, every fresh tree (a resumed one too) gets the copies `core/git/treefiles.py`
plans, then each `[tree] setup` command in order: an argv, never a shell string, with no
stdin, its own process group and `setup_timeout_s`, its output in the drive log under its
own heading.

A setup that fails is the project's problem, not the card's: the card is blocked
`setup-failed` (no rung climbed) and the loop stops claiming after two in a row. A setup
that leaves something git would commit (a lockfile it rewrote, an environment in a folder
no ignore rule covers) fails too: that would be folded as the card's work.

`BOARD_SLOT` is a small number unique among the drives this process runs at once (the
lowest free, from 1), so a setup, a coder or a gate can pick ports that do not collide.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from board.core import proc
from board.core.config import Config, TreeSection
from board.core.git import gitutil
from board.core.records import Record, field

TAIL_LINES = 12

_slots: set[int] = set()
_slots_mu = threading.Lock()


def take_slot() -> int:
    """The lowest slot no running drive of this process holds; give it back with give_slot."""
    with _slots_mu:
        n = 1
        while n in _slots:
            n += 1
        _slots.add(n)
        return n


def give_slot(n: int) -> None:
    with _slots_mu:
        _slots.discard(n)


def tree_env(cfg: Config, tree: Path, card: str, slot: int) -> dict[str, str]:
    """What setup, the coder and the gate find in their environment about their tree."""
    return {
        "BOARD_CARD": card,
        "BOARD_WORKTREE": str(tree),
        "BOARD_ROOT": str(cfg.root),
        "BOARD_SLOT": str(slot),
    }


class SetupEnd(Record):
    """How setup ended: `ok`, or the one line of why not and the failing command's tail."""

    ok: bool
    reason: str = ""
    tail: str = ""
    seconds: float = 0.0
    killed: bool = False  # a command was killed by a signal the setup did not send
    steps: list[tuple[str, float]] = field(default_factory=list)  # (command, seconds)


def _status(tree: Path) -> set[str]:
    """`git status` entries of the tree: what git would commit (ignored files are not)."""
    text = gitutil.out(
        tree, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"
    )
    return {p for p in text.split("\0") if p}


def run_setup(
    tree_cfg: TreeSection,
    tree: Path,
    env: dict[str, str],
    on_line: Callable[[str], None],
    on_start: Callable[[int], None] | None = None,
    stopping: Callable[[], bool] = lambda: False,
) -> SetupEnd:
    """Run each `[tree] setup` command in `tree`, in order, until one fails."""
    began = time.monotonic()
    end = SetupEnd(True)
    if not tree_cfg.setup:
        return end
    before = _status(tree)
    total = len(tree_cfg.setup)
    for n, cmd in enumerate(tree_cfg.setup, start=1):
        if stopping():
            end.ok, end.reason = False, f"stopped before setup command {n} of {total}"
            break
        argv = gitutil.argv_with(cmd, worktree=str(tree), card=env.get("BOARD_CARD", ""))
        on_line(f"board: setup {n} of {total}: {argv}")
        t0 = time.monotonic()
        res = proc.stream(
            argv,
            cwd=tree,
            timeout=tree_cfg.setup_timeout_s,
            on_line=on_line,
            env=env,
            on_start=on_start,
        )
        took = time.monotonic() - t0
        end.steps.append((" ".join(argv), took))
        what = _describe(res, tree_cfg.setup_timeout_s)
        on_line(f"board: setup {n} of {total} ended: {what} ({took:.1f}s)")
        if res.killed_by_signal is not None and stopping():
            end.ok, end.reason = False, f"stopped during setup command {n} of {total}"
            break
        end.killed = res.killed_by_signal is not None and not res.timed_out
        if not res.ok:
            end.ok = False
            end.reason = f"setup command {n} of {total} {argv!r} {what}"
            end.tail = res.tail_text(TAIL_LINES)
            break
    else:
        made = sorted(_status(tree) - before)
        if made:
            shown = ", ".join(p[3:] for p in made[:5]) + (" …" if len(made) > 5 else "")
            end.ok = False
            end.reason = (
                f"setup left {len(made)} change(s) git would commit as the card's work "
                f"({shown}): make setup leave the tree clean, or ignore what it makes "
                "(.gitignore or .git/info/exclude)"
            )
    end.seconds = time.monotonic() - began
    return end


def _describe(res: proc.Result, timeout: float) -> str:
    if res.missing:
        return "could not be started (not installed or not on PATH)"
    if res.timed_out:
        return f"ran past tree.setup_timeout_s ({timeout:g}s); its process group was killed"
    sig = res.killed_by_signal
    if sig is not None:
        return f"was killed by signal {sig}"
    return f"exited {res.returncode}"

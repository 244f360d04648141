"""The gate: the repository's own check, run where the tree stands.

No stdin, its own process group, a timeout (invariant 3). A gate killed by a signal
reached no verdict: calling it red would climb the ladder over an OOM kill.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from board.core import proc
from board.core.config import GateSection
from board.core.git import gitutil
from board.core.records import Record

# ---------------------------------------------------------------------------------------------
# gates


class GateVerdict(Record):
    """`passed`, `red`, or `no-verdict` (killed by a signal), with a line of why and the tail."""

    status: str
    reason: str
    tail: str = ""
    exit_code: int | None = None

    @property
    def red(self) -> bool:
        return self.status == "red"


def run_gate(
    gate: GateSection,
    tree: Path,
    on_line: Callable[[str], None],
    on_start: Callable[[int], None] | None = None,
    env: dict[str, str] | None = None,
    card: str = "",
    brief: str = "",
) -> GateVerdict:
    """Run `gate.argv` where the tree stands; a signal kill is no verdict, not red.

    `{worktree}`, `{card}` and `{brief}` are substituted as in the coder's argv, and the
    gate's environment has BOARD_CARD, BOARD_BRIEF and BOARD_WORKTREE: a gate can check
    the card it gates (e.g. run only that card's acceptance tests)."""
    argv = gitutil.argv_with(gate.argv, worktree=str(tree), card=card, brief=brief)
    full_env = {"BOARD_CARD": card, "BOARD_BRIEF": brief, "BOARD_WORKTREE": str(tree)}
    full_env.update(env or {})
    res = proc.stream(
        argv,
        cwd=tree,
        timeout=gate.timeout_s,
        on_line=on_line,
        on_start=on_start,
        env=full_env,
    )
    tail = res.tail_text(60)
    if res.missing:
        return GateVerdict("red", f"the gate {argv[0]!r} could not be started", tail)
    if res.timed_out:
        return GateVerdict("red", f"the gate ran past gate.timeout_s ({gate.timeout_s:g}s)", tail)
    sig = res.killed_by_signal
    if sig is not None:
        return GateVerdict("no-verdict", f"the gate was killed by signal {sig}: no verdict", tail)
    if res.returncode != 0:
        return GateVerdict("red", f"the gate exited {res.returncode}", tail, res.returncode)
    return GateVerdict("passed", "the gate passed", tail)

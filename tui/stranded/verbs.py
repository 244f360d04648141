"""What the browser's keys give back, in words; no Textual here.

`y` gives the shell commands that reach the work by hand (`recovery_commands`); a verb
gives one status line, and the details for the result panel (`Outcome`): what a pick
did to its target or why it left it alone, what salvage published and the gate's verdict.
"""

from __future__ import annotations

import shlex

from board.core import ops
from board.core.config import Config
from board.core.git import runbranch, saves
from board.core.records import Record, field

from .strandrows import StrandedRow


def recovery_commands(cfg: Config, row: StrandedRow) -> list[str]:
    """Shell commands an operator can paste to look at or recover the work by hand."""
    q = shlex.quote
    if row.is_husk:
        rescue = f"rescued-{row.name}"
        return [
            "# a husk: the tree's bytes, moved aside intact (its git admin entry was gone)",
            f"ls -la {q(row.path)}",
            f"cp -a {q(row.path)} {q(rescue)}",
        ]
    commands = saves.recovery_commands(
        row.name,
        saves.named_start(
            cfg, row.commit, saves.start_of(cfg, row.commit) or "", runbranch.start_ref(cfg)
        ),
        runbranch.pick_target(cfg),
        row.tree,
    )
    return [f"# {row.name}: {row.stat_text()}", *(command for _, command, _ in commands)]


class Outcome(Record):
    """A verb's result: one status line, optional detail lines, and whether it was refused."""

    line: str
    details: list[str] = field(default_factory=list)
    error: bool = False


def pick_outcome(result: ops.PickResult) -> Outcome:
    """The new commits on the target, or the conflicting paths with the target unchanged."""
    target = result.target
    if result.conflicts:
        return Outcome(
            f"{result.branch} does not apply onto {target}: conflicts in "
            f"{', '.join(result.conflicts)}; {target} was left as it was",
            [f"conflict: {p}" for p in result.conflicts]
            + [f"{target} is still at {result.old[:12]}"],
            error=True,
        )
    if result.failed_on:
        return Outcome(
            f"{result.branch} could not be picked onto {target} ({result.failed_on}); "
            f"{target} was left as it was",
            error=True,
        )
    if not result.picked:
        return Outcome(f"{target} already holds everything in {result.branch}: nothing changed")
    n = len(result.picked)
    details = [f"{target}: {result.old[:12]} → {result.new[:12]} ({n} new commit{'s' * (n != 1)})"]
    details += [f"picked {c[:12]}" for c in result.picked]
    details += [f"skipped {c[:12]} (nothing new in it)" for c in result.skipped]
    return Outcome(
        f"picked {n} commit{'s' * (n != 1)} of {result.branch} onto {target}: "
        f"{result.old[:12]} → {result.new[:12]}",
        details,
    )


def salvage_outcome(result: ops.SalvageResult) -> Outcome:
    """Published or not, and the gate's verdict with its tail."""
    gate = f"gate {result.gate}" + (f": {result.gate_reason}" if result.gate_reason else "")
    if result.published:
        where = result.pr_url or (result.commit[:12] if result.commit else "")
        line = f"salvaged {result.target}: {result.outcome}, {gate}" + (
            f" ({where})" if where else ""
        )
    else:
        line = f"salvage of {result.target} published nothing: {result.outcome}, {gate}"
    details = list(result.lines)
    if result.gate_tail.strip():
        details += ["gate tail:", *("    " + x for x in result.gate_tail.splitlines())]
    return Outcome(line, details, error=not result.published)

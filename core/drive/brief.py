"""The coder's brief: what one attempt is told, written into the tree's scratch directory.

It never asks the coder to publish: the board commits and publishes (docs/lifecycle.md: a
brief that said both "edit only" and "push if you can" contradicted the contract). It
quotes what the attempt must know and cannot see in the tree: the operator's note from a
requeue, the gate's output on a retry, the last fold's conflict, the branches holding
earlier failed attempts, and that the tree already holds an interrupted build's work.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from board.core.config import BoardSection, GateSection
from board.core.git import gitutil, treestate
from board.core.model import FOLD_CONFLICT_EVENT, REQUEUE_EVENT, REQUEUED, Card
from board.core.records import Frozen
from board.core.store import Store

BRIEF_NAME = "brief.md"


# ---------------------------------------------------------------------------------------------
# the brief


class KeptAttempt(Frozen):
    """A failed attempt of this drive whose work was saved before it climbed a rung."""

    attempt: int
    tier: str
    why: str
    branch: str


def latest_requeue_reason(store: Store, card_id: str) -> str:
    """The operator's reason from the card's most recent requeue, if it gave one."""
    for event in reversed(store.timeline(card_id)):
        if event.kind == REQUEUE_EVENT and event.text.strip():
            text = event.text.strip()
            return "" if text == REQUEUED else text
    return ""


def last_fold_conflict(store: Store, card_id: str) -> str:
    """What the card's last build's fold conflicted on ('' when it did not), for the brief."""
    for event in treestate.since_last_build(store, card_id):
        if event.kind == FOLD_CONFLICT_EVENT:
            return event.text.strip()
    return ""


def brief_text(
    gate_cfg: GateSection,
    card: Card,
    *,
    tree: Path,
    branch: str,
    tier: str,
    attempt: int,
    gate_output: str = "",
    gate_round: int = 0,
    requeue_reason: str = "",
    fold_conflict: str = "",
    resumed_from: str = "",
    attempts: Sequence[KeptAttempt] = (),
    candidate: tuple[int, int] | None = None,
) -> str:
    """The coder's brief. It never asks the coder to publish: the board commits and publishes.

    `attempts`: this drive's earlier failed attempts whose work was saved; the brief names
    their branches, so a rung can start from what the last one got right. `candidate`:
    (k, N) when this is candidate k of a best-of-N race (issue 42), said so the coder knows
    it is one of several and which (`BOARD_CANDIDATE` in its environment says the same).
    """
    lines = [f"# {card.id}: {card.title}", ""]
    lines += [
        f"You are working in the git worktree {tree} (branch {branch}).",
        f"This is attempt {attempt}, coder tier {tier}.",
        "",
    ]
    if candidate is not None:
        k, n = candidate
        lines += [
            "## Best of N",
            "",
            f"You are candidate {k} of {n} (BOARD_CANDIDATE={k}): {n} coders build this card "
            "at once, each in a worktree of its own. The gate judges, and the green change "
            "with the fewest changed lines is kept: keep the change small.",
            "",
        ]
    lines += [
        "## Spec",
        "",
        card.spec.strip() or "(no spec)",
        "",
    ]
    if card.acceptance.strip():
        lines += ["## Acceptance", "", card.acceptance.strip(), ""]
    lines += ["## Surface", ""]
    if card.surface:
        lines.append("Edit only files matching these globs; changes outside them are not kept:")
        lines += [f"- `{g}`" for g in card.surface]
    else:
        lines.append("No surface is declared: edit what the spec needs, and nothing else.")
    lines.append("")
    if requeue_reason:
        lines += ["## The operator's note (why this card was sent back)", "", requeue_reason, ""]
    if fold_conflict:
        lines += ["## The last fold conflicted", "", fold_conflict, ""]
    if resumed_from:
        lines += [
            "## Continue where the last build stopped",
            "",
            f"The last build of this card was interrupted. Its work (saved on `{resumed_from}`)"
            " is already in this worktree as uncommitted changes: continue from it, do not "
            "start over.",
            "",
        ]
    if attempts:
        lines += [
            "## Earlier attempts",
            "",
            "Earlier attempts at this card failed. Their work was saved to branches and this "
            "worktree starts without it; look at it with `git diff HEAD...<branch>` and take "
            "what helps:",
            "",
        ]
        lines += [
            f"- attempt {a.attempt} (tier {a.tier}) failed: {a.why}; its work is on `{a.branch}`"
            for a in attempts
        ]
        lines.append("")
    if gate_output:
        lines += [
            f"## The last gate run failed (retry {gate_round} of {gate_cfg.retries})",
            "",
            "Fix what it reports. Its output:",
            "",
            "```",
            gate_output.rstrip(),
            "```",
            "",
        ]
    lines += [
        "## Rules",
        "",
        "- Edit files only. Do NOT commit, do NOT push, and do NOT open a pull request:",
        "  the board commits what you leave in the worktree and publishes it itself.",
        "- Do not touch the scratch directory this brief lives in.",
    ]
    if gate_cfg.argv:
        gate = gitutil.argv_with(gate_cfg.argv, worktree=str(tree), card=card.id)
        lines.append(
            f"- When you exit, the board runs the gate `{' '.join(gate)}` in the "
            "worktree; a red gate sends you its output."
        )
    return "\n".join(lines) + "\n"


def write_brief(board: BoardSection, tree: Path, text: str) -> Path:
    """Write the brief into the tree's scratch directory (never committed, never work)."""
    folder = Path(tree) / board.scratch[0]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / BRIEF_NAME
    path.write_text(text, encoding="utf-8")
    return path

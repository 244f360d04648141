"""`board resolve ID [--continue]`: a fold conflict resolved by hand, in the card's own tree.

A fold conflict keeps the card's tree and branch. Tried on a real conflicting merge, none
of the ways out the block named worked: a requeue rebuilt into the same conflict, a
salvage failed on it again, and a hand rebase followed by `unblock` was saved to a
stranded branch and rebuilt from scratch. `resolve` is the hand way out that works:

- `board resolve ID` starts `git rebase <run tip>` in the card's tree (made from its
  branch when the tree is gone) and leaves it stopped at the conflict, printing the
  paths, the run branch's commits on the other side, and the commands to finish. The
  card stays blocked `fold-conflict`, its reason saying where the resolution stands, so
  the loop leaves it alone.
- `board resolve ID --continue` finishes the rebase (refusing, in one line, while a
  path is still unmerged), then publishes the tree the way a salvage does: the gate
  where the tree stands, then the fold; the card moves on.
- An operator who unblocks instead of `--continue` loses nothing: the drive takes a
  tree resolved onto the run tip as its build, and never touches one mid-rebase
  (see treestate).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from board.core.config import Config, PublishSection
from board.core.drive.drive import tree_changes
from board.core.errors import Conflict, NotFound, Refused
from board.core.git import gitutil, runbranch, treestate
from board.core.model import Blocked, Card
from board.core.ops.live import card_lock, fold_source, tree_on
from board.core.ops.salvage import SalvageResult, salvage, stranded_of
from board.core.publish import publish
from board.core.records import Record, field
from board.core.store import Expect, Store

WHO = "operator"
_REBASE_ENV = {
    "GIT_EDITOR": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    **{k: v for k, v in gitutil.BOARD_IDENTITY.items() if "COMMITTER" in k},
}


class ResolveResult(Record):
    """Where a resolution stands: `conflict` (paths to resolve), `clean` (rebased, ready
    for --continue), or the salvage's outcome after --continue."""

    card: Card
    tree: Path
    outcome: str
    conflicts: list[str] = field(default_factory=list)
    other_side: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    salvage: SalvageResult | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "card": self.card.to_json(),
            "tree": str(self.tree),
            "outcome": self.outcome,
            "conflicts": self.conflicts,
            "other_side": self.other_side,
            "lines": self.lines,
            "salvage": self.salvage.to_json() if self.salvage is not None else None,
        }


def _check_card(store: Store, publish_cfg: PublishSection, card_id: str) -> Card:
    if not runbranch.folds(publish_cfg):
        raise Refused(
            "board resolve is for fold conflicts (publish.mode = fold); with push, rebase the "
            "card branch by hand and push it"
        )
    card = store.get(card_id)
    if card.lane == "working" or card.drive:
        raise Refused(f"{card.id}: drive {card.drive or '?'} owns it; `board stop {card.id}` first")
    if card.blocked is None or card.blocked.cls != "fold-conflict":
        found = f"blocked {card.blocked.cls}" if card.blocked else f"{card.lane}, not blocked"
        raise Refused(f"{card.id}: is {found}; resolve is for a card blocked fold-conflict")
    return card


def _tree(cfg: Config, card: Card) -> Path:
    """The card's kept tree, or a tree made on its kept branch; refused when neither is left."""
    tree = treestate.card_tree(cfg, card)
    if tree is not None:
        return tree
    if card.branch and gitutil.rev(cfg.root, f"refs/heads/{card.branch}") is not None:
        return tree_on(cfg, card, fold_source(cfg, card))
    saved = stranded_of(cfg, card.id)
    hint = f"; its work is saved on {', '.join(saved[:3])}" if saved else ""
    raise NotFound(
        f"{card.id}: has neither a tree nor a branch to resolve{hint}: "
        f"`board requeue {card.id}` rebuilds it on {cfg.board.run_branch}"
    )


def _say_where(store: Store, card: Card, reason: str) -> Card:
    """The block's reason says where the resolution stands (the loop leaves it alone)."""
    if card.blocked is not None and card.blocked.reason == reason:
        return card
    return store.update(
        card.id,
        Expect(version=card.version),
        {"blocked": Blocked("fold-conflict", reason)},
        WHO,
    )


def _finish_lines(cfg: Config, card: Card, tree: Path, conflicts: list[str]) -> list[str]:
    where = cfg.rel(tree)
    lines = ["to finish:", f"  cd {where}"]
    if conflicts:
        lines += [
            "  # edit the conflicting files, then mark them resolved:",
            f"  git add -- {' '.join(conflicts)}",
        ]
    lines += [
        f"  board resolve {card.id} --continue   # finishes the rebase, runs the gate, folds",
        f"to give up: git -C {where} rebase --abort, then `board requeue {card.id}`",
    ]
    return lines


def resolve(store: Store, cfg: Config, card_id: str) -> ResolveResult:
    """Leave the card's tree stopped at its conflict with the run tip (see the docstring)."""
    card = _check_card(store, cfg.publish, card_id)
    with card_lock(cfg, card.id, f"a resolve of {card.id}"):
        card = _check_card(store, cfg.publish, card_id)
        tree = _tree(cfg, card)
        where = cfg.rel(tree)
        tip = runbranch.ensure(cfg)
        branch_tip = gitutil.rev(cfg.root, f"refs/heads/{card.branch}") if card.branch else None
        if not treestate.rebase_in_progress(tree):
            if not gitutil.out(tree, "branch", "--show-current", check=False):
                raise Refused(f"{where} is on no branch (a detached HEAD): check out its branch")
            changed = [p for _, p in tree_changes(cfg.board, tree)]
            if changed:
                raise Refused(
                    f"{where} has uncommitted changes ({', '.join(changed[:5])}): commit or "
                    "stash them there first, so the rebase cannot lose them"
                )
            if not gitutil.ok(tree, "merge-base", "--is-ancestor", tip, "HEAD"):
                gitutil.git(
                    tree,
                    *gitutil.NO_HOOKS,
                    "-c",
                    "rebase.autoStash=false",
                    "-c",
                    "rebase.updateRefs=false",
                    "rebase",
                    "--no-autosquash",
                    tip,
                    env=_REBASE_ENV,
                    check=False,
                    timeout=cfg.publish.timeout_s or gitutil.GIT_TIMEOUT_S,
                )
        conflicts = treestate.unmerged_paths(tree)
        mine = branch_tip or gitutil.rev(tree, "HEAD") or tip  # mid-rebase, HEAD is theirs
        theirs = publish.other_side(tree, mine, tip, conflicts) if conflicts else []
        if treestate.rebase_in_progress(tree):
            reason = (
                f"being resolved by hand in {tree}: a rebase onto {cfg.board.run_branch} "
                f"({tip[:10]}) stopped at a conflict in {', '.join(conflicts) or 'its tree'}; "
                f"resolve it there, then `board resolve {card.id} --continue`"
            )
            outcome = "conflict"
            lines = [
                f"{card.id}: rebasing {card.branch or 'its branch'} onto {cfg.board.run_branch} "
                f"({tip[:10]}) in {where}: conflicts in {', '.join(conflicts) or '(none listed)'}"
            ]
            if theirs:
                lines.append(f"the other side ({cfg.board.run_branch}): " + "; ".join(theirs))
            lines += _finish_lines(cfg, card, tree, conflicts)
        else:
            reason = (
                f"resolved onto {cfg.board.run_branch} ({tip[:10]}) in {tree}: "
                f"`board resolve {card.id} --continue` runs the gate and folds it"
            )
            outcome = "clean"
            lines = [
                f"{card.id}: {where} holds {cfg.board.run_branch}'s tip with no conflict left",
                f"next: board resolve {card.id} --continue   # runs the gate, folds",
            ]
        card = _say_where(store, card, reason)
        return ResolveResult(card, tree, outcome, conflicts, theirs, lines)


def resolve_continue(store: Store, cfg: Config, card_id: str) -> ResolveResult:
    """Finish the rebase in the card's tree, then gate and fold it like a salvage."""
    card = _check_card(store, cfg.publish, card_id)
    with card_lock(cfg, card.id, f"a resolve of {card.id}"):
        card = _check_card(store, cfg.publish, card_id)
        tree = treestate.card_tree(cfg, card)
        if tree is None:
            raise NotFound(f"{card.id}: has no tree being resolved: `board resolve {card.id}`")
        where = cfg.rel(tree)
        for _ in range(1000):  # one round per commit the rebase still has to replay
            if not treestate.rebase_in_progress(tree):
                break
            unmerged = treestate.unmerged_paths(tree)
            if unmerged:
                raise Conflict(
                    f"{card.id}: still unmerged in {where}: {', '.join(unmerged)}; resolve "
                    f"them, `git add` them, then `board resolve {card.id} --continue` again"
                )
            gitutil.git(
                tree,
                *gitutil.NO_HOOKS,
                "rebase",
                "--continue",
                env=_REBASE_ENV,
                check=False,
                timeout=cfg.publish.timeout_s or gitutil.GIT_TIMEOUT_S,
            )
        tip = gitutil.rev(cfg.root, f"refs/heads/{cfg.board.run_branch}")
        if tip is None or not gitutil.ok(tree, "merge-base", "--is-ancestor", tip, "HEAD"):
            raise Conflict(
                f"{card.id}: {where} does not hold {cfg.board.run_branch}'s tip (it moved on "
                f"meanwhile): run `board resolve {card.id}` again"
            )
    result = salvage(store, cfg, card.id)
    after = store.get(card.id)
    return ResolveResult(after, tree, result.outcome, lines=result.lines, salvage=result)

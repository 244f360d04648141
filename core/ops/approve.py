"""`board approve ID [--candidate K]`: publish a card waiting in `review`, the configured way.

It owns the card only at the version it read (and, from the TUI, the version the
operator saw), so a requeue by someone else — before or during the publish — is never
overridden.

`--candidate K` (best of N, issue 42) lets the operator choose among a race's candidates:
the race sent its rule's choice to review and saved every other candidate's tree to a
`candidate` branch. K the one in review is the plain approve. Another green candidate K of
the latest race is published instead: the review tree is first saved as a `candidate`
branch (nothing lost), then K's save is put back in a tree on `feat/<id>-<K>` at the
save's parent with its content as uncommitted changes, so the drive's own commit (the
surface harvest) makes the commit, which is published the configured way; K's save is
deleted only once its content is verified published, as a salvage's is. A candidate the
gate did not pass (red, failed, stopped) is refused: the gate judged it, and
`board stranded salvage BRANCH --force` is the way to publish over that judgment, said
as such. Every refusal is made before anything changes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from board.core.cards import candidates
from board.core.config import Config
from board.core.drive.harvest import harvest
from board.core.errors import BoardError, Conflict, Refused
from board.core.git import gitutil, naming, runbranch, saves, treestate, worktrees
from board.core.git.savestats import StrandedBranch
from board.core.model import Card, Drive
from board.core.ops.live import WHO, after_fold, branch_to_push, card_lock, fold_source, tree_on
from board.core.ops.salvage import drop_published, replay_conflicts
from board.core.publish import publish, push
from board.core.publish.owner import Owner, StoodAside, edge_update
from board.core.records import Record, field
from board.core.store import Expect, Store

RACE_ROWS = 500  # the card's drive rows read to find its latest race (16 candidates at most)


class ApproveResult(Record):
    """What `board approve` did: `done` (folded), `review` (pushed, PR open) or `blocked`."""

    card: Card
    outcome: str
    pr_url: str = ""
    commit: str = ""
    lines: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "card": self.card.to_json(),
            "outcome": self.outcome,
            "pr_url": self.pr_url,
            "commit": self.commit,
            "lines": self.lines,
        }


def _check_approvable(card: Card, expect_version: int | None) -> None:
    if card.lane != "review":
        raise Refused(f"{card.id}: expects review, got {card.lane}: there is nothing to approve")
    if expect_version is not None and card.version != expect_version:
        raise Conflict(
            f"{card.id}: changed since you looked (version {card.version}, you saw "
            f"{expect_version}); look again before approving"
        )
    if card.blocked is not None and card.blocked.cls == "held":
        raise Refused(f"{card.id}: is held ({card.blocked.reason}); unblock it first")
    if card.drive:
        raise Refused(f"{card.id}: drive {card.drive} owns it")
    if card.pr_url and card.blocked is None:
        raise Refused(
            f"{card.id}: already has its PR {card.pr_url}; `board done {card.id}` when it merges"
        )


def approve(
    store: Store,
    cfg: Config,
    card_id: str,
    reason: str | None = None,
    expect_version: int | None = None,
    who: str = WHO,
    candidate: int | None = None,
) -> ApproveResult:
    """`board approve ID [--candidate K]`: publish a card waiting in review, the configured way.

    `expect_version` is the version the operator saw (the TUI passes it): a card changed
    since — requeued, rebuilt, held — is refused. During the publish the card is owned at
    the version this approve wrote, so a requeue landing meanwhile stops the publish
    before it lands (fold) or before the PR is opened and the card written (push).
    `candidate` chooses another candidate of the card's latest race (module docstring).
    """
    with card_lock(cfg, card_id, f"an approve of {card_id}"):
        card = store.get(card_id)
        _check_approvable(card, expect_version)
        if candidate is not None:
            other = _other_candidate(store, cfg, card, candidate)
            if other is not None:
                return _Choice(store, cfg, card, other, reason, who).run()
        pushing = cfg.publish.mode == "push"
        source = branch_to_push(cfg, card) if pushing else fold_source(cfg, card)
        note = "approved" + (f": {' '.join(reason.split())}" if reason and reason.strip() else "")
        card = store.update(
            card.id, Expect(lane="review", version=card.version), {"blocked": None}, who, note
        )
        owner = Owner("review", "", card.version)
        if pushing:
            assert isinstance(source, str)
            out = push.publish(cfg, store, card, source, owner)
            if out.stood_aside:
                raise Conflict(f"{card.id}: {'; '.join(out.lines)}")
            now = store.get(card.id)
            outcome = "blocked" if out.blocked else "review"
            return ApproveResult(now, outcome, pr_url=out.pr_url, lines=out.lines)
        tree = tree_on(cfg, card, source)
        res = publish.publish(cfg, store, card, tree, "", owner=owner, approved=True)
        if res.outcome == "stood-aside":
            raise Conflict(f"{card.id}: {res.reason}; nothing was published")
        if res.outcome == "done":
            after_fold(cfg, store, card.id, tree, f"{card.id} was approved and folded")
            line = f"folded onto {cfg.board.run_branch} at {res.commit[:10]}"
            return ApproveResult(store.get(card.id), "done", commit=res.commit, lines=[line])
        return ApproveResult(store.get(card.id), res.outcome, lines=[res.reason])


class _Other(Record):
    """Another candidate to publish than the one in review, as checked before any change."""

    k: int
    n: int
    row: Drive
    save: StrandedBranch
    review_k: int
    review_tree: Path | None  # the review tree, or None when only its branch is left
    review_branch: str


def _other_candidate(store: Store, cfg: Config, card: Card, k: int) -> _Other | None:
    """Candidate k checked, changing nothing: None when it is the one in review (the plain
    approve); refused in one line when the card never raced, k is not a candidate of its
    latest race, the gate did not pass it, or its work was not kept."""
    race = candidates.latest_race(store.list_drives(card.id, limit=RACE_ROWS))
    if not race:
        raise Refused(
            f"{card.id}: never raced (one drive built it): there is no candidate {k}; "
            f"`board approve {card.id}` publishes what waits in review"
        )
    row = next((d for d in race if d.candidate == k), None)
    if row is None:
        raise Refused(
            f"{card.id}: its latest race had candidates 1 to {len(race)}; there is no candidate {k}"
        )
    review_tree = treestate.card_tree(cfg, card)
    review_branch = card.branch
    if review_tree is not None:
        review_branch = gitutil.out(review_tree, "branch", "--show-current", check=False)
    review_k = next(
        (
            d.candidate
            for d in race
            if review_branch == naming.branch_for(card.id, str(d.candidate))
        ),
        None,
    )
    if review_k is None:
        raise Refused(
            f"{card.id}: what waits in review ({review_branch or 'no branch'}) is not a candidate "
            "of its latest race; `board approve` it, or requeue the card"
        )
    if review_k == k:
        return None
    said = candidates.state(row)
    if said != candidates.GREEN:
        judged = {
            candidates.RED: "its gate stayed red: the gate judged it",
            candidates.RUNNING: "it is still running",
            candidates.STOPPED: "it was stopped before its gate judged it",
        }.get(said, "it failed before its gate passed it")
        raise Refused(
            f"{card.id}: candidate {k} is {said} ({judged}); only a green candidate is approved. "
            f"`board stranded salvage BRANCH --force` publishes its saved work over its gate"
        )
    save = candidates.saves_of(cfg, card.id, [row]).get(k)
    if save is None:
        raise Refused(
            f"{card.id}: candidate {k}'s work was not kept (no candidate save of "
            f"{naming.tree_name(card.id, str(k))} since its race): there is nothing to publish"
        )
    path = cfg.worktrees_dir / naming.tree_name(card.id, str(k))
    if os.path.lexists(path):
        raise Refused(f"{card.id}: {path} is in the way; candidate {k}'s tree is made there")
    if review_tree is None and (
        not review_branch or gitutil.rev(cfg.root, f"refs/heads/{review_branch}") is None
    ):
        raise Refused(f"{card.id}: neither the tree nor the branch of candidate {review_k} is left")
    if runbranch.folds(cfg.publish):
        _, paths, theirs = replay_conflicts(cfg, save.commit)
        if paths:
            other = f" ({'; '.join(theirs)})" if theirs else ""
            raise Conflict(
                f"{card.id}: candidate {k}'s work ({save.branch}) conflicts with "
                f"{cfg.board.run_branch} in {', '.join(paths)}{other}; nothing was changed"
            )
    return _Other(
        k=k,
        n=len(race),
        row=row,
        save=save,
        review_k=review_k,
        review_tree=review_tree,
        review_branch=review_branch,
    )


class _Choice:
    """Publishing candidate K instead of the one in review, from the card's update on."""

    def __init__(
        self, store: Store, cfg: Config, card: Card, o: _Other, reason: str | None, who: str
    ) -> None:
        self.store, self.cfg, self.card, self.o, self.who = store, cfg, card, o, who
        self.reason = " ".join(reason.split()) if reason and reason.strip() else ""
        self.lines: list[str] = []

    def run(self) -> ApproveResult:
        o, card = self.o, self.card
        branch = naming.branch_for(card.id, str(o.k))
        note = f"approved candidate {o.k} of {o.n} over candidate {o.review_k} (the race's choice)"
        note += f": {self.reason}" if self.reason else ""
        card = self.store.update(
            card.id,
            Expect(lane="review", version=card.version),
            {"blocked": None, "branch": branch},
            self.who,
            note,
        )
        owner = Owner("review", "", card.version)
        try:
            self._save_review()
        except BoardError:  # nothing else was changed: the card waits as it did
            try:
                edge_update(
                    self.store, card.id, owner, {"branch": o.review_branch}, "approve",
                    f"candidate {o.k} was not approved: the review tree could not be saved",
                    self.who,
                )  # fmt: skip
            except StoodAside:
                pass
            raise
        tree, start = self._tree_of_k(card)
        card = self.store.get(card.id)
        if self.cfg.publish.mode == "push":
            return self._push(card, owner, tree)
        res = publish.publish(
            self.cfg, self.store, card, tree, "", owner=owner, approved=True, start=start
        )
        if res.outcome == "stood-aside":
            raise Conflict(f"{card.id}: {res.reason}; nothing was published")
        if res.outcome != "done":
            return ApproveResult(
                self.store.get(card.id), res.outcome, lines=[*self.lines, res.reason]
            )
        run_ref = f"refs/heads/{self.cfg.board.run_branch}"
        self.lines.append(
            f"candidate {o.k} folded onto {self.cfg.board.run_branch} at {res.commit[:10]}"
        )
        self.lines += drop_published(
            self.cfg, self.store, o.save.branch, o.save.commit, run_ref, "approved"
        )
        after_fold(
            self.cfg,
            self.store,
            card.id,
            tree,
            f"{card.id}'s candidate {o.k} was approved and folded",
        )
        return ApproveResult(self.store.get(card.id), "done", commit=res.commit, lines=self.lines)

    def _save_review(self) -> None:
        """The rule's choice goes to a `candidate` branch, then its tree and branch go."""
        o = self.o
        tree = o.review_tree
        if tree is None:  # only its branch is left: a tree on it, for the one save path
            tree = self.cfg.worktrees_dir / naming.tree_name(self.card.id, str(o.review_k))
            if os.path.lexists(tree):
                raise Refused(
                    f"{self.card.id}: {tree} is in the way and is not on {o.review_branch}"
                )
            self.cfg.worktrees_dir.mkdir(parents=True, exist_ok=True)
            gitutil.git(
                self.cfg.root,
                *gitutil.NO_HOOKS,
                "worktree",
                "add",
                "-q",
                str(tree),
                o.review_branch,
            )
        res = worktrees.discard_worktree(
            self.cfg,
            tree,
            store=self.store,
            card_id=self.card.id,
            why=f"candidate {o.k} was approved over it",
            kind=naming.KIND_CANDIDATE,
        )
        if res.existed and not res.removed:
            raise Refused(f"{self.card.id}: the review tree {tree} was kept ({res.kept or 'kept'})")
        if res.saved is not None:
            self.lines.append(
                f"candidate {o.review_k} (the race's choice) was saved to {res.saved.branch}"
            )

    def _tree_of_k(self, card: Card) -> tuple[Path, str]:
        """Candidate K's save back in a tree on `feat/<id>-<K>`: at the save's parent, its
        content as uncommitted changes, then the drive's own commit (the surface harvest)."""
        o = self.o
        parent = gitutil.out(self.cfg.root, "rev-parse", f"{o.save.commit}^")
        start = saves.start_of(self.cfg, o.save.commit) or parent
        tree = Path(
            worktrees.create_worktree(self.cfg, card.id, str(o.k), store=self.store, start=parent)
        )
        gitutil.git(tree, "restore", f"--source={o.save.commit}", "--worktree", "--", ".")
        subject = " ".join((card.title.splitlines() or [""])[0].split())
        message = (
            f"{card.id}: {subject}\n\n{publish.drive_marker(o.row.id)}attempt {o.row.attempt}, "
            f"tier {o.row.tier}), candidate {o.k} of {o.n}, approved by the operator over "
            f"candidate {o.review_k}."
        )
        made = harvest(self.cfg, tree, card, start, message)
        if not made.commit:
            raise Refused(
                f"{card.id}: candidate {o.k}'s work holds nothing inside the card's surface; "
                f"it stays on {o.save.branch} and in {tree}"
            )
        self.lines.append(f"candidate {o.k}'s work from {o.save.branch}: {made.summary()}")
        return tree, start

    def _push(self, card: Card, owner: Owner, tree: Path) -> ApproveResult:
        o = self.o
        branch = gitutil.out(tree, "branch", "--show-current")
        out = push.publish(self.cfg, self.store, card, branch, owner)
        if out.stood_aside:
            raise Conflict(f"{card.id}: {'; '.join(out.lines)}")
        lines = [*self.lines, *out.lines]
        if out.pushed:
            remote = f"refs/remotes/{self.cfg.publish.remote}/{branch}"
            lines += drop_published(
                self.cfg, self.store, o.save.branch, o.save.commit, remote, "approved"
            )
        outcome = "blocked" if out.blocked else "review"
        return ApproveResult(self.store.get(card.id), outcome, pr_url=out.pr_url, lines=lines)


__all__ = ["ApproveResult", "approve"]

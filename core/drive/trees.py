"""Where a build's tree comes from, and where it goes: the drive's tree steps.

A fresh build first saves every old tree the card owns (invariant 1), then starts its tree
at the start point (the run branch's tip in `fold` mode). Three things come before a
blank start, so that nothing an operator or a coder made is thrown away: a kept tree
that a human resolved onto the run tip is this build (no coder); a tree still mid-rebase
is never touched; and the work of an interrupted build (stopped, shut down, crashed, or
a tree a hold kept) is merged into the fresh tree, unless the card was requeued. A
failed attempt is saved (kind `attempt`) before its tree goes, and every removal goes
through the one save-then-remove.

These are methods of `Drive` (a mixin), kept here so the drive's own module stays the
path of one build.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from board.core.cards import budget
from board.core.drive import setup
from board.core.drive.brief import KeptAttempt
from board.core.drive.steps import DriveSteps
from board.core.errors import BoardError, StrandedWorkError
from board.core.git import naming, treefiles, treestate, worktrees
from board.core.model import OVER_BUDGET


class TreeSteps(DriveSteps):
    """The tree steps of a `Drive`: the attributes and methods they use are the drive's."""

    tree: Path | None
    start: str
    branch_deleted: str
    resumed_from: str
    kept_attempts: list[KeptAttempt]
    setup: str

    if TYPE_CHECKING:  # the drive's own, declared here so the steps are checked against them

        def _line(self, text: str) -> None: ...
        def _env(self) -> dict[str, str]: ...
        def _on_start(self, pid: int) -> None: ...
        def _child_ended(self) -> None: ...
        def _check_stop(self) -> None: ...
        def _settle(self) -> None: ...
        @property
        def stopping(self) -> bool: ...

    def _fresh_build(self) -> bool:
        """Save every old tree the card owns, then create a fresh one (invariant 1) at the start
        point; True instead when the card's kept tree was resolved by hand and is taken as
        this build (see treestate)."""

        self._edge_check("fresh build")
        if self._adopt_kept_tree():
            return True
        resume = treestate.resume_branch(self.store, self.cfg, self.card_id)
        try:
            kept = worktrees.fresh_build_prepare(self.cfg, self.card_id, store=self.store)
            if not resume and not treestate.requeued_since_last_build(self.store, self.card_id):
                # a tree kept by a hold (or a fold conflict) was saved just now: continue from it
                saved = [r.saved.branch for r in kept if r.saved is not None]
                resume = treestate.own_branch(self.card_id, saved)
            self.tree, self.start = worktrees.fresh_tree(self.cfg, self.card_id, store=self.store)
        except StrandedWorkError as exc:
            self.tree = None  # the old tree stays exactly as it is; no coder is dispatched
            cls = "secret-leak" if isinstance(exc, treefiles.SecretLeak) else "stranded-work"
            self._block(cls, exc.line(), remove_tree=False)
        self._say(f"fresh worktree {self.tree} at {self.start[:10]}")
        self.resumed_from = ""
        if resume:
            self._resume(resume)
        self._ready_tree()
        return False

    def _ready_tree(self) -> None:
        """The fresh tree gets the ignored files it needs, then `[tree] setup`; a failure
        blocks `setup-failed` (not the card's fault: no rung is climbed), the tree kept."""

        assert self.tree is not None
        try:
            plan = treefiles.copy_into(self.cfg, self.tree, self.start)
        except (BoardError, OSError) as exc:
            why = exc.line() if isinstance(exc, BoardError) else f"{type(exc).__name__}: {exc}"
            self.setup = "failed"
            self._block(
                "setup-failed",
                f"the files [tree] copy names could not be copied into {self.tree}: {why}",
                remove_tree=False,
            )
        for line in plan.lines():
            self._say(line)
        if not self.cfg.tree.setup:
            return
        self._say(f"== setup: {len(self.cfg.tree.setup)} command(s) from [tree] setup ==")
        end = setup.run_setup(
            self.cfg.tree,
            self.tree,
            self._env(),
            self._line,
            on_start=self._on_start,
            stopping=lambda: self.stopping,
        )
        self._child_ended()
        self._check_stop()
        if end.killed:  # a kill we did not send: a `board stop` may be moving the card
            self._settle()
            self._edge_check("setup")
        self.setup = "ok" if end.ok else "failed"
        if not end.ok:
            self._block(
                "setup-failed",
                f"{end.reason}. Not the card's fault: no rung was climbed. Its tree is kept at "
                f"{self.tree}; fix [tree] setup (or what it installs), then unblock",
                end.tail,
                remove_tree=False,
            )
        self._say(f"== setup ended: ok ({end.seconds:.1f}s) ==")

    def _resume(self, branch: str) -> None:
        """Start this build from the work its interrupted build left (saved on `branch`
        when it was stopped, shut down or crashed), applied onto the fresh tree; a fresh
        build, said on the card, when it does not apply."""
        assert self.tree is not None
        try:
            conflicts = treestate.apply_saved(self.cfg, self.tree, branch)
        except BoardError as exc:
            conflicts = [exc.line()]
        if conflicts:
            note = (
                f"attempt {self.attempt} starts fresh: the interrupted build's work on {branch} "
                f"does not apply onto {self.start[:10]} ({', '.join(conflicts)}); the branch "
                "is kept"
            )
        else:
            self.resumed_from = branch
            note = (
                f"attempt {self.attempt} continues from the interrupted build's work on "
                f"{branch}: it is in the tree as uncommitted changes"
            )
        self._say(note)
        self._comment(note)

    def _adopt_kept_tree(self) -> bool:
        """A kept tree mid-rebase blocks the card (never touched); one resolved onto the run
        tip is this build's tree: no coder, straight to the gate and the fold. A requeue
        since the last build means "rebuild", so nothing is adopted then."""
        card = self.store.get(self.card_id)
        tree = treestate.card_tree(self.cfg, card)
        if tree is None:
            return False
        if treestate.rebase_in_progress(tree):
            self._block(
                "fold-conflict",
                f"a rebase is in progress in {tree}: finish it there and run `board resolve "
                f"{card.id} --continue`, or give it up (`git -C {tree} rebase --abort`, then "
                f"`board requeue {card.id}`); its tree is kept as it is",
                remove_tree=False,
            )
        if treestate.requeued_since_last_build(self.store, self.card_id):
            return False
        tip = treestate.resolved_onto_run(self.cfg, tree)
        if tip is None:
            return False
        self.tree, self.start = tree, tip
        self._say(
            f"{tree} holds {self.cfg.board.run_branch}'s tip {tip[:10]} and work of its own "
            "(resolved by hand): it is this build, with no coder"
        )
        self._comment(
            f"attempt {self.attempt}: took the kept tree {tree}, resolved onto "
            f"{self.cfg.board.run_branch} by hand, as the build: the gate and the fold run on it"
        )
        return True

    def _within_budget(self) -> None:
        """A card whose attempts together spent `[budget] card_usd` starts no other (a gate
        retry's included): it is blocked `over-budget`, the operator's class the sweep never
        retries, its tree saved first so that its next build, once the operator raises the
        budget and unblocks it, continues from that work (core/cards/budget.py)."""
        why = budget.card_over(self.cfg.budget, self.store, self.card_id)
        if not why:
            return
        self._edge_check("budget")  # not ours any more: stand aside, the tree as it is
        if self.tree is not None:
            saved = self._remove_tree("blocked over-budget")
            treestate.note_resumable(self.store, self.cfg, self.card_id, saved)
        self._block(OVER_BUDGET, f"before attempt {self.attempt}: {why}", remove_tree=False)

    def _keep_own_attempt(self, why: str, nxt: str) -> None:
        """Save the drive's own failed tree as an `attempt`, then remove it — re-read right before.

        A tree that cannot be saved stays where it is; the next rung's fresh build tries
        again and blocks the card `stranded-work` if it still cannot.
        """

        self._edge_check("save of its failed attempt")
        tree = self.tree
        if tree is None:
            return
        try:
            res = worktrees.discard_worktree(
                self.cfg,
                tree,
                store=self.store,
                card_id=self.card_id,
                why=f"climbing from attempt {self.attempt} (tier {self.tier}) to tier {nxt}",
                kind=naming.KIND_ATTEMPT,
            )
        except BoardError as exc:  # StrandedWorkError included: the tree is kept as it is
            self._comment(f"its failed attempt was kept at {tree}: {exc.line()}")
        else:
            if res.saved is not None:
                self.kept_attempts.append(
                    KeptAttempt(self.attempt, self.tier, why, res.saved.branch)
                )
                self._say(f"the failed attempt was saved to {res.saved.branch}")
        self.tree = None if not tree.exists() else tree

    def _remove_tree(self, why: str, replayed: tuple[str, str] | None = None) -> list[str]:
        """The one save-then-remove; a tree that cannot be saved stays, and the card says so.
        Returns the stranded branches it made. `replayed`: the card's commit and the one
        the fold made of it on the run branch (quickclean.clean_and_held)."""

        tree = self.tree
        if tree is None:
            return []
        saved: list[str] = []
        try:
            res = worktrees.discard_worktree(
                self.cfg, tree, store=self.store, card_id=self.card_id, why=why, replayed=replayed
            )
        except StrandedWorkError as exc:
            self._comment(f"its tree was kept: {exc.line()}")
        except BoardError as exc:
            self._comment(f"its tree was kept: {exc.line()}")
        else:
            if res.ignored:  # a save's comment names them; with no save, the log does
                self._say(f"removing the tree deleted {res.ignored.text()} (ignored: not work)")
            saved = [s.branch for s in ([res.saved] if res.saved else []) + res.branch_saves]
            self.branch_deleted = res.branch_deleted
        self.tree = None if not tree.exists() else tree
        return saved

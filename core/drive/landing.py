"""The end of a build that got through: the board's commit, then the publish.

The harvest commits what the coder left inside the card's surface (core/drive/harvest.py);
from then on no command of the project runs in the tree, so the drive gives back its slot of
`max_concurrent` and its `BOARD_SLOT` while it waits its turn at the serial fold, and the
loop claims the next card meanwhile (docs/lifecycle.md, "The fold"). A done card's tree is
removed at its own commit, the removal told of the commit the fold replayed it as.

These are methods of `Drive` (a mixin), kept here so the drive's own module stays the
path of one build.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from board.core.cards import split, waits
from board.core.drive import setup
from board.core.drive.harvest import Harvest, harvest
from board.core.drive.steps import DriveSteps
from board.core.errors import BoardError, StrandedWorkError
from board.core.publish import publish as publishing
from board.core.store import Expect, Store

if TYPE_CHECKING:
    from board.core.drive.drive import DriveEnd


class LandSteps(DriveSteps):
    """The commit and publish steps of a `Drive`: the attributes and methods they use are
    the drive's."""

    tree: Path | None
    start: str
    slot: int
    built: bool
    on_built: Callable[[], None] | None
    branch_deleted: str

    if TYPE_CHECKING:  # the drive's own, declared here so the steps are checked against them

        def _climb(self, why: str, top_cls: str, tail: str) -> None: ...
        def _end(
            self,
            outcome: str,
            reason: str,
            cls: str = "",
            commit: str = "",
            h: Harvest | None = None,
        ) -> DriveEnd: ...

    def _commit_and_publish(self) -> DriveEnd | None:
        assert self.tree is not None
        card = self._edge_check("commit")
        subject = (card.title.splitlines() or [""])[0].strip()
        message = (
            f"{card.id}: {subject}\n\n{publishing.drive_marker(self.token)}"
            f"attempt {self.attempt}, tier {self.tier})."
        )
        try:
            result = harvest(self.cfg, self.tree, card, self.start, message)
        except StrandedWorkError as exc:  # nothing was dropped; the tree stays as it is
            self._block("stranded-work", exc.line(), remove_tree=False)
        if not result.commit:
            outside = result.discarded + result.untracked_outside
            why = "the coder changed nothing inside the card's surface" + (
                f" (only outside it: {', '.join(outside)})" if outside else ""
            )
            self._climb(why, "terminal", "")
            return None
        self._say(f"commit: {result.summary()}")
        if result.discarded or result.untracked_outside or result.coder_commits:
            self._comment(f"the board's commit: {result.summary()}")
        self._built()
        self._edge_check("publish")
        published = publishing.publish(
            self.cfg,
            self.store,
            card,
            self.tree,
            self.token,
            start=self.start,
            head=result.commit,
            leave_tree=True,  # a done card's tree is removed below, told of the replay
        )
        if published.outcome == "stood-aside":
            self._stand_aside("publish", published.reason)
        if published.outcome in ("done", "review"):
            clear_count(self.store, self.card_id)
        if published.outcome == "done":
            self._say(f"folded onto {self.cfg.board.run_branch} at {published.commit[:10]}")
            self._end_row(
                "passed", f"folded onto {self.cfg.board.run_branch} at {published.commit[:10]}"
            )
            branch = result.branch  # the fold moves the tree's branch, never to another
            self.branch_deleted = ""
            self._remove_tree(
                f"{self.card_id} was published", replayed=(result.commit, published.commit)
            )
            if self.branch_deleted != f"refs/heads/{branch}":  # the removal left it
                publishing.drop_folded_branch(self.cfg, branch)
            return self._end(
                "done", published.reason or "folded", commit=published.commit, h=result
            )
        if published.outcome == "review":
            self._end_row("passed", published.reason)
            return self._end("review", published.reason, commit=result.commit, h=result)
        # blocked (a fold conflict): the card branch and its tree are kept as they are, so the
        # operator can rebase by hand there (or salvage it); nothing is removed
        self._end_row("blocked", published.reason)
        self._say(f"blocked {published.cls}: {published.reason}")
        return self._end("blocked", published.reason, cls=published.cls, h=result)

    def _built(self) -> None:
        """The work is committed: no command of the project runs in the tree again (the
        publish is the board's own git), so the drive gives back its BOARD_SLOT and its slot
        of max_concurrent, and the next card's coder starts while this one waits its turn
        at the serial fold (a wave of coders ending together queues there)."""
        setup.give_slot(self.slot)
        self.slot = 0
        self.built = True
        self._say(waits.PUBLISH_WAIT)
        if self.on_built is not None:
            self.on_built()


def clear_count(store: Store, card_id: str) -> None:
    """The build got through: the timeout count, the tries and the rung start over."""
    try:
        card = store.get(card_id)
        if waits.cleared(card):
            store.update(card_id, Expect(version=card.version), waits.cleared(card))
    except BoardError:
        pass
    try:
        split.clear_count(store, card_id)
    except BoardError:
        pass

"""`board approve ID`: publish a card waiting in `review`, the configured way.

It owns the card only at the version it read (and, from the TUI, the version the
operator saw), so a requeue by someone else — before or during the publish — is never
overridden.
"""

from __future__ import annotations

from typing import Any

from board.core.config import Config
from board.core.errors import Conflict, Refused
from board.core.model import Card
from board.core.ops.live import WHO, after_fold, branch_to_push, card_lock, fold_source, tree_on
from board.core.publish import publish, push
from board.core.publish.owner import Owner
from board.core.records import Record, field
from board.core.store import Expect, Store


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
) -> ApproveResult:
    """`board approve ID`: publish a card waiting in review, the configured way.

    `expect_version` is the version the operator saw (the TUI passes it): a card changed
    since — requeued, rebuilt, held — is refused. During the publish the card is owned at
    the version this approve wrote, so a requeue landing meanwhile stops the publish
    before it lands (fold) or before the PR is opened and the card written (push).
    """
    with card_lock(cfg, card_id, f"an approve of {card_id}"):
        card = store.get(card_id)
        _check_approvable(card, expect_version)
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


__all__ = ["ApproveResult", "approve"]

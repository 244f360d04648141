"""The loop's claims: what the ready queue offers, started while drives are free.

Methods of `Loop` (a mixin), kept here so core/loop.py stays the path of a tick. A claim
waits while the run branch cannot take in a moved base (fold mode), and says why a ready
card waits in the words the TUI shows (core/cards/waits.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from board.core.cards import actions, candidates, split, waits
from board.core.config import Config
from board.core.drive import drive
from board.core.errors import BoardError
from board.core.git import runbranch
from board.core.model import Card, Pause
from board.core.store import Store

if TYPE_CHECKING:
    from board.core.ops.notify import LoopNotices
    from board.core.poller import ForgePoller

WAITING_SAID = 10  # a "wait" line names the queue's first ten cards and counts the rest


class ClaimSteps:
    """The claim steps of a `Loop`: the attributes and methods they use are the loop's."""

    cfg: Config
    store: Store
    running: dict[str, Any]
    stopping: threading.Event
    touched: set[str]
    base_problem: str
    poller: ForgePoller
    notices: LoopNotices
    _last_skip: dict[str, str]
    _signalled: str

    if TYPE_CHECKING:  # the loop's own, declared here so the steps are checked against them
        log: Callable[..., None]

        def in_use(self) -> int: ...
        def _start(
            self,
            card_id: str,
            token: str,
            planner: bool,
            best_of: int = 1,
            tiers: Sequence[str] = (),
        ) -> None: ...

    def _skip(self, card: Card, reason: str) -> None:
        """Log a skip, once per (card, reason) until the reason changes."""
        if self._last_skip.get(card.id) == reason:
            return
        self._last_skip[card.id] = reason
        self.log("skip", card=card.id, reason=reason)

    def claims(self, cards: list[Card] | None = None, fresh: bool = True) -> list[str]:
        """Claim what the ready queue offers while drives are free. `cards`, when given, is
        the whole board as read this tick: as it stands now when `fresh`, else good only for
        saying what waits while no drive is free (it is read again when one is)."""
        claimed: list[str] = []
        if cards is None or (not fresh and self.in_use() < self.cfg.board.max_concurrent):
            cards = self.store.list_cards()
        queue = actions.ready_queue(self.store, cards)
        if queue and self.in_use() < self.cfg.board.max_concurrent:
            self.poller.fetch_base()
            if self._base_conflicts():
                return claimed
        view = waits.claim_view(
            self.store,
            cards=cards,
            pauses=self._pauses(),
            in_use=self.in_use(),
            limit=self.cfg.board.max_concurrent,
        )
        seen = set()
        for i, card in enumerate(queue):
            seen.add(card.id)
            if self.stopping.is_set() or self._signalled:
                break
            if self.in_use() >= self.cfg.board.max_concurrent:
                # the queue's head, and how many more: 200 ids a line, written again as
                # each claim shifts the queue, was a loop log of megabytes at 100 drives
                waiting = [c.id for c in queue[i : i + WAITING_SAID]]
                more = len(queue) - i - len(waiting)
                reason = waits.all_busy(self.in_use(), self.cfg.board.max_concurrent)
                key = f"{reason}: {','.join(waiting)} +{more}"
                if self._last_skip.get("*") != key:
                    self._last_skip["*"] = key
                    self.log("wait", reason=reason, waiting=waiting, more=more)
                break
            if card.id in self.running:
                self._skip(card, "its previous drive is still ending")
                continue
            why = waits.why_waits(self.cfg, card, view)  # the TUI shows the same words
            if why:
                self._skip(card, why)
                continue
            planner = split.for_planner(self.cfg.planner, card)
            token = drive.claim(self.cfg, self.store, card, tier="planner" if planner else None)
            if token is None:
                self._skip(card, "it changed while being claimed")
                continue
            self._last_skip.pop(card.id, None)
            self.log(
                "claim", card=card.id, drive=token, planner=planner, surface=list(card.surface)
            )
            n = candidates.candidates_for(self.cfg.coder, card)
            self._start(card.id, token, planner, n, card.race)
            self.touched.add(card.id)
            claimed.append(card.id)
            view.in_use = self.in_use()
            if not planner:
                view.working.append((card.id, card.surface))
        for key in [k for k in self._last_skip if k != "*" and k not in seen]:
            del self._last_skip[key]
        return claimed

    def _pauses(self) -> list[Pause]:
        """The tier pauses that still hold; a lapsed one is lifted (and logged) here, so
        claims resume by themselves."""
        held = []
        at = waits.now()
        for pause in self.store.pauses():
            if waits.active_pause([pause], pause.tier, at) is not None:
                held.append(pause)
            elif self.store.resume_tier(pause.tier, pause.cls):
                self.log("resume", tier=pause.tier, cls=pause.cls, until=pause.until)
        self.notices.held(held)
        return held

    def _base_conflicts(self) -> bool:
        """In `fold` mode the run branch takes in a base that moved on before new trees start
        from it; while that conflicts, nothing is claimed, and the operator is told once."""
        if not runbranch.folds(self.cfg.publish):
            return False
        try:
            # asked without the run lock first, as a fresh tree's start is: with the base
            # held (the usual case) there is nothing to take in, and a claim that queued
            # behind every fold waiting for the lock started its cards that much later
            held = None
            if not runbranch.on_remote(self.cfg.publish):
                held = runbranch.tip_holding_base(self.cfg)
            if held is not None:
                took = runbranch.TakeIn(held)
            else:
                with runbranch.run_lock(self.cfg):
                    took = runbranch.take_in_base(self.cfg)
        except BoardError as exc:
            line = f"the run branch could not take in the base: {exc.line()}"
        else:
            line = took.line
            if took.merged:
                self.log("take-in", base=took.base, commit=took.merged)
        self.base_problem = line
        if not line:
            self._last_skip.pop("base", None)
            return False
        if self._last_skip.get("base") != line:
            self._last_skip["base"] = line
            self.log("wait", reason=line)
        return True

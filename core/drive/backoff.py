"""Failures that are not the card's fault, for the drive: back off instead of climbing.

A failed step's output is matched against the failure rules (core/failures.py); a rate
limit or a blip sends the card back to `ready` on the same rung with a not-before time
(a rate limit also pauses the tier board-wide), a dead login blocks `auth` and pauses the
tier until the operator acts, and spent tries block with the class. The tree is saved
first, as for any failed attempt, and the next build continues from it. See
docs/lifecycle.md, "Failures that are not the card's fault".

These are methods of `Drive` (a mixin), kept here so the drive's own module stays the
path of one build.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

from board.core import failures, proc
from board.core.cards import waits
from board.core.drive.steps import DriveSteps
from board.core.git import treestate
from board.core.model import Pause
from board.core.publish.owner import Owner, StoodAside, edge_update

TAIL_LINES = 20
# a CLI that refuses its command line does so before it does anything: a usage error read
# in the output of a coder that ran longer was printed by something it ran, not by the CLI
USAGE_WINDOW_S = 60.0


class BackOffSteps(DriveSteps):
    """The back-off steps of a `Drive`: the attributes and methods they use are the drive's."""

    coder_seconds: float  # how long the last coder ran
    untold: list[str]  # slow-rule notes said in the log, not yet commented on the card

    if TYPE_CHECKING:  # the drive's own, declared here so the steps are checked against them

        @property
        def owner(self) -> Owner: ...
        def _backed_off(self, note: str, cls: str) -> NoReturn: ...

    def _not_its_fault(
        self,
        step: str,
        res: proc.Result | None,
        output: str = "",
        exit_code: int | None = None,
    ) -> None:
        """A failure the rules call a rate limit, a blip or a dead login is not the card's:
        back off instead of climbing (ends the drive). Unmatched: returns, and it climbs."""
        if res is not None:
            output = res.tail_text(200)
            exit_code = res.returncode
        failure = failures.classify(self.cfg.failures.rules, step, output, exit_code)
        self._tell_slow_rules()
        if failure is None:
            return
        if failure.cls == "dispatch-infra" and self.coder_seconds > USAGE_WINDOW_S:
            return  # a CLI refuses its arguments at once; a coder that ran on did not
        self._back_off(step, failure, output)

    def _tell_slow_rules(self, comment: bool = True) -> None:
        """A rule that ran past its time limit is skipped from now on: said once, naming it.
        Met on a coder's line (`comment=False`: the thread that reads every coder's output,
        core/pipepump.py), it is said in the log at once and commented on the card from the
        drive's own thread later: a store that is away would hold every coder's reading for
        up to `reconnect_s` in that write."""
        for rule in failures.slow_rules():
            note = (
                f"failure rule {rule.pattern[:80]!r} ({rule.cls}) took over "
                f"{failures.RULE_TIMEOUT_S:g}s on a coder's output and is skipped from now on: "
                "fix its pattern in [[failures.rules]] (nested quantifiers backtrack without end)"
            )
            self._say(note)
            self.untold.append(note)
        while comment and self.untold:
            self._comment(self.untold.pop(0))

    def _back_off(
        self, step: str, failure: failures.Failure, output: str, tier: str = ""
    ) -> NoReturn:
        """Back to `ready` on the same rung with a not-before time (a rate limit pauses the
        tier board-wide until then); a dead login blocks `auth` and pauses the tier until
        the operator acts; tries spent block with the class. The tree is saved first, and
        the next build continues from it (a limit is no verdict on the work)."""
        card = self._edge_check("back-off")
        # `tier`: the tier that hit it (a race's candidate's), paused; the card stays on its rung
        cls, rule, tier = failure.cls, failure.rule, tier or self.tier
        at = waits.now()
        what = (
            f"the coder (tier {tier}) refused its command line: {failure.line}"
            if cls == "dispatch-infra"
            else f"the {step} (tier {tier}) hit {cls}: {failure.line}"
        )
        tail = output.rstrip().splitlines()[-TAIL_LINES:]
        self._say(what)
        n = waits.tries(card, cls) + 1
        if cls in failures.OPERATOR_CLASSES or n > rule.max_attempts:
            if cls in failures.OPERATOR_CLASSES:
                self.store.pause_tier(Pause(tier, cls, what, "", failures.stamp(at), self.card_id))
                fix = (
                    f"fix [coder.tiers.{tier}] argv in board.toml (`board doctor` checks each "
                    "tier's flags against its program)"
                    if cls == "dispatch-infra"
                    else "log in again"
                )
                reason = (
                    f"{what}; tier {tier} is paused for every card: {fix}, then "
                    f"`board unblock {self.card_id}` (or `board resume {tier}`)"
                )
            else:
                reason = (
                    f"{what}; that was {cls} {n - 1} time(s), its max_attempts "
                    f"({rule.max_attempts}) are spent: it waits for the operator"
                )
            self._save_for_resume(f"{cls} during attempt {self.attempt}")
            try:
                edge_update(
                    self.store,
                    self.card_id,
                    self.owner,
                    {"rung": waits.rung_field(self.cfg.coder, self.tier)},
                    "back-off",
                )
            except StoodAside as exc:
                self._stand_aside("back-off", exc.found)
            self._block(cls, reason, "\n".join(tail), remove_tree=False)
        until = failures.wait_until(rule, output, n, at, self.cfg.failures.max_backoff_s)
        when = failures.stamp(until)
        if cls == "rate-limit":
            self.store.pause_tier(Pause(tier, cls, what, when, failures.stamp(at), self.card_id))
        self._save_for_resume(f"{cls} during attempt {self.attempt}")
        counts = {
            "tries": waits.with_tries(card, cls, n),
            "rung": waits.rung_field(self.cfg.coder, self.tier),
        }
        paused = f"; tier {tier} is paused until then" if cls == "rate-limit" else ""
        note = (
            f"{what}; back in ready, not before {when} on the same rung ({cls} {n} of "
            f"{rule.max_attempts}){paused}"
        )
        try:
            edge_update(
                self.store,
                self.card_id,
                self.owner,
                {"lane": "ready", "drive": "", "not_before": when, **counts},
                "back-off",
                note=note,
            )
        except StoodAside as exc:
            self._stand_aside("back-off", exc.found)
        if tail:
            self._comment(f"attempt {self.attempt} (tier {tier}) log tail", "\n".join(tail))
        self._end_row("failed", f"{cls}: {failure.line}")
        self._backed_off(note, cls)

    def _save_for_resume(self, why: str) -> None:
        """Save the tree (the one save-then-remove) and note it for the next build."""
        saved = self._remove_tree(why)
        treestate.note_resumable(self.store, self.cfg, self.card_id, saved)

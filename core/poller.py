"""The loop's forge poller: pull requests in review follow the forge, off the claim path.

Every card in `review` with a `pr_url` is asked about at most every `publish.poll_s`
(core/publish/forge.py takes the edge: merged → done, closed → blocked `pr-closed`,
changes requested → requeue, green → merge with `auto_merge`). It runs in its own thread,
one forge call at a time, each with a timeout and its own process group, so a slow or hung
forge never delays a claim. A forge call that fails goes through the failure rules: a rate
limit or a blip backs polling off, a dead login pauses it (`board resume forge`), and no
card is ever blocked for it. In push mode the base is fetched before fresh trees start, at
most every poll_s and always after a merge was seen, so a dependent builds on its
dependency's merged code.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from board.core import failures
from board.core.cards import waits
from board.core.config import Config
from board.core.errors import BoardError
from board.core.model import FORGE_PAUSE, Pause
from board.core.publish import forge
from board.core.store import Store

FORGE_TIER = FORGE_PAUSE


class ForgePoller:
    """Polls PRs and fetches the base for a `Loop`; `log` is the loop's JSON log."""

    def __init__(
        self,
        cfg: Config,
        store: Store,
        log: Callable[..., None],
        wake: threading.Event,
    ) -> None:
        self.cfg = cfg
        self.store = store
        self.log = log
        self.wake = wake
        self.wait_until: datetime | None = None  # no forge call before then (a back-off)
        self.tries = 0
        self.fetched = float("-inf")  # monotonic time of the last base fetch
        self.fetch_due = False

    def start(self) -> threading.Event:
        """Poll from a thread of its own until the returned event is set."""
        done = threading.Event()
        if not self.cfg.publish.pr_state_argv:
            return done

        def run() -> None:
            while not done.wait(min(self.cfg.publish.poll_s, 1.0)):
                try:
                    self.poll_prs()
                except BoardError:
                    pass
                except Exception as exc:  # never die silently: say it, and poll again
                    self.log("poll-error", error=f"{type(exc).__name__}: {exc}"[:500])

        threading.Thread(target=run, name="forge-poll", daemon=True).start()
        return done

    def poll_prs(self) -> list[forge.Poll]:
        """One round over the cards in review that are due."""
        at = waits.now()
        if self.wait_until is not None and at < self.wait_until:
            return []
        if waits.active_pause(self.store.pauses(), FORGE_TIER, at) is not None:
            return []
        done = []
        for card in self.store.list_cards("review"):
            if not card.pr_url or card.blocked is not None:
                continue
            last = failures.parse_stamp(card.pr_polled_at)
            if last is not None and (at - last).total_seconds() < self.cfg.publish.poll_s:
                continue
            result = forge.poll(self.cfg, self.store, card)
            done.append(result)
            self.log("poll", card=card.id, outcome=result.outcome, reason=result.line)
            if result.merged:
                self.fetch_due = True  # a dependent must start from the merged base
                self.wake.set()
            if result.outcome == "failed":
                self._failed(result)
                break
            self.tries = 0
        return done

    def _failed(self, result: forge.Poll) -> None:
        """Back off on a rate limit or a blip; pause polling on a dead login, said once;
        any other failure is logged and polled again at the next poll_s."""
        found = result.failure
        if found is None:
            return
        at = waits.now()
        if found.cls == "auth":
            self.store.pause_tier(
                Pause(FORGE_TIER, "auth", result.line, "", failures.stamp(at), result.card)
            )
            self.log("forge-paused", reason=result.line, resume=f"board resume {FORGE_TIER}")
            return
        self.tries += 1
        self.wait_until = failures.wait_until(
            found.rule, result.line, self.tries, at, self.cfg.failures.max_backoff_s
        )
        self.log(
            "forge-backoff",
            cls=found.cls,
            until=failures.stamp(self.wait_until),
            reason=result.line,
        )

    def fetch_base(self) -> None:
        """`git fetch <remote> <base>` in push mode, when due; a failure is logged with the
        class the failure rules give it, and trees start from what is there."""
        if self.cfg.publish.mode != "push" or not self.cfg.publish.remote:
            return
        now = time.monotonic()
        if not self.fetch_due and now - self.fetched < self.cfg.publish.poll_s:
            return
        self.fetched, self.fetch_due = now, False
        res = forge.fetch_base(self.cfg)
        if res.ok:
            self.log("fetch", remote=self.cfg.publish.remote, base=self.cfg.board.base)
            return
        tail = (res.stdout + res.stderr).strip()
        found = failures.classify(self.cfg.failures.rules, "push", tail, res.returncode)
        fields: dict[str, Any] = {
            "remote": self.cfg.publish.remote,
            "cls": found.cls if found else "",
        }
        self.log("fetch-failed", reason=tail.splitlines()[-1] if tail else "no output", **fields)

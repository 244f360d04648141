"""Waiting out a store whose server went away: a restart, a failover, a network blip.

A `pg_ctl restart` takes the server away for a second, and a loop that failed its next call
ended an unattended night there. So a store that talks to a server keeps one `Outage`: the
first call that finds the server unreachable starts its clock (and tells, once), every call
meanwhile tries again after a back-off step (50 ms, doubling up to 2 s), the call that gets
through stops the clock (telling how long it was), and only once the patience the store was
given (`Store.keep_trying`, `[store] reconnect_s` for `board run`) has passed does a call
fail, telling once that it gave up. With no patience (a verb, the TUI) the first failure is
raised as it is. Its callers hold the store's lock, so it needs none of its own; a close of
the store ends a wait at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from board.core.errors import StoreUnavailable

FIRST_STEP_S = 0.05
MAX_STEP_S = 2.0

Tell = Callable[[str, str], None]


class Outage:
    """How long the store's server has been unreachable, shared by every call of the store."""

    def __init__(self, closing: threading.Event) -> None:
        self.closing = closing
        self.since: float | None = None  # monotonic time the server was first missed
        self.step = FIRST_STEP_S
        self.gave_up = False

    def lost(self, exc: StoreUnavailable, patience: float, tell: Tell | None) -> None:
        """A call found the server unreachable: wait one back-off step, after which the
        caller tries again; past `patience` seconds since the server was first missed (or at
        once, with none, or when the store is being closed), raise instead."""
        now = time.monotonic()
        if self.since is None:
            self.since, self.step, self.gave_up = now, FIRST_STEP_S, False
            if patience > 0 and tell is not None:
                tell("lost", exc.line())
        waited = now - self.since
        left = patience - waited
        if patience <= 0:
            raise exc
        if left <= 0 or self.closing.is_set():
            line = f"{exc.line()}; still, after {waited:.0f}s ([store] reconnect_s = {patience:g})"
            if not self.gave_up:
                self.gave_up = True
                if tell is not None:
                    tell("gave-up", line)
            raise StoreUnavailable(line)
        self.closing.wait(min(self.step, left))
        self.step = min(self.step * 2, MAX_STEP_S)

    def back(self, patience: float, tell: Tell | None) -> None:
        """A call reached the server: the outage, if there was one, is over."""
        if self.since is None:
            return
        waited = time.monotonic() - self.since
        self.since = None
        if patience > 0 and tell is not None:
            tell("back", f"{waited:.1f}s")

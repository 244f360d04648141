"""What the loop does about the money budgets at each tick (core/cards/budget.py says what
they are and when each is passed): pause the claims when the day's spend reaches
`[budget] day_usd`, and with `[budget] hard` stop a running drive whose budget is passed.

Why at the tick: the loop already looks at its live drives there, and the store's recorded
usage is the only measure of spend there is. A drive running when a budget is passed
finishes by default, since killing it wastes what it has spent; `hard` stops it instead,
saved as `board stop` saves (core/ops/stop.py), so no work is lost either way.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from board.core.cards import budget
from board.core.config import BudgetSection, Config
from board.core.drive.drive import Drive
from board.core.errors import BoardError
from board.core.model import OVER_BUDGET
from board.core.ops.live import WHO
from board.core.ops.stop import stop
from board.core.store import Store

Log = Callable[..., None]  # the loop's log: an event name and its fields


def pause_claims(limits: BudgetSection, store: Store, at: datetime, log: Log) -> bool:
    """Pause the claims (a `budget` pause until the next UTC midnight) when the day's spend
    reached `[budget] day_usd` and today has no budget row yet, so it is said once: a
    loop-log line here, `board status` and the TUI's header from the pause. True if paused."""
    pause = budget.day_pause(limits, store, at)
    if pause is None:
        return False
    store.pause_tier(pause)
    log(
        "budget-paused",
        spent=store.spend_since(budget.day_start(at)),
        day_usd=limits.day_usd,
        until=pause.until,
        reason=pause.reason,
        resume="board resume budget",
    )
    return True


def stop_if_over(cfg: Config, store: Store, drive: Drive, at: datetime, log: Log) -> bool:
    """`[budget] hard`: stop the running `drive` if its card passed `[budget] card_usd`
    (the card blocked `over-budget`, its tree saved, as `board stop` does), or while the
    day's spend pauses the claims (the drive interrupted: its tree saved and the card back
    in ready, to go on from that work when the claims resume). True if it was stopped."""
    why = budget.card_over(cfg.budget, store, drive.card_id)
    fields: dict[str, Any] = {"card": drive.card_id, "drive": drive.token}
    if why:
        try:
            res = stop(store, cfg, drive.card_id, why, WHO, cls=OVER_BUDGET)
        except BoardError as exc:  # it ended meanwhile: nothing to stop
            log("budget-stop", **fields, error=exc.line())
            return True
        log("budget-stop", **fields, reason=why, saved=res.saved)
        return True
    day = budget.held_pause(store.pauses(), at)
    if day is None:
        return False
    drive.interrupt(f"stopped: {day.reason}")
    log("budget-stop", **fields, reason=day.reason)
    return True

"""The money budgets (`[budget]` in board.toml): what a card may spend over all its
attempts, and what the board may spend in a UTC day, judged from the usage the store
recorded of each drive (`Store.card_usage`, `Store.spend_since`).

Why: an unattended night can burn money on retries of one card, or on a fleet of them,
and the agents' own reports of cost are the only figures there are. A card past its
budget is blocked `over-budget` (an operator's class: the sweep never retries it) before
its next attempt; a day past its budget stops the claims until the next UTC midnight or
`board resume budget`. A drive already running finishes (killing it wastes what it has
spent), unless `[budget] hard` says to stop it, its work saved.

These are money budgets; the timeout budget (`too-wide`, the count of a card's timeouts)
is another thing, and the words on screen keep them apart: "budget" alone on a screen is
always money.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from board.core.config import BudgetSection
from board.core.failures import parse_stamp, stamp
from board.core.model import BUDGET_PAUSE, BUDGET_RESUMED, OVER_BUDGET, Pause, UsageSum
from board.core.store import Store


def money(usd: float) -> str:
    """An amount as the operator reads it: `$0.06`, `$0.125`, `$12.35` (cents at least,
    a tenth of a cent shown below a dollar, since one drive often costs less than a cent)."""
    if usd >= 1:
        return f"${usd:,.2f}"
    text = f"{usd:.4f}".rstrip("0")
    if len(text.partition(".")[2]) < 2:
        text = f"{usd:.2f}"
    return f"${text}"


def cost_text(total: UsageSum) -> str:
    """What a group of drives cost, never a made-up zero: `$0.09`, `$0.09 + 1 unpriced`
    (a drive said tokens but no cost), `—` when no cost is known at all."""
    if total.cost_usd is None:
        return "—"
    extra = f" + {total.unpriced} unpriced" if total.unpriced else ""
    return money(total.cost_usd) + extra


def day_start(at: datetime) -> str:
    """The UTC midnight that began `at`'s day, as the store writes times."""
    return stamp(at.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0))


def next_day(at: datetime) -> str:
    """The next UTC midnight after `at`: when a day budget's pause lapses."""
    start = parse_stamp(day_start(at))
    assert start is not None
    return stamp(start + timedelta(days=1))


def reached(spent: float, limit: float) -> bool:
    """Whether `spent` is at or past `limit`, to a millionth of a cent: the store sums
    binary floats, and costs of 0.1 and 0.7 add up to 0.7999999999999999, which must reach
    a budget of 0.8 as their sum in dollars does."""
    return spent >= limit or round(spent, 8) >= round(limit, 8)


def card_over(budget: BudgetSection, store: Store, card_id: str) -> str:
    """Why the card may not start another attempt ('' while it may): its attempts together
    spent its `[budget] card_usd`, failed ones included. An unpriced drive adds nothing
    (its cost is not known), so only known money blocks."""
    if budget.card_usd <= 0:
        return ""
    total = store.card_usage(card_id)
    if not reached(total.spent, budget.card_usd):
        return ""
    return (
        f"its {total.drives} attempt(s) spent {cost_text(total)}, at or past its budget of "
        f"{money(budget.card_usd)} ([budget] card_usd); raise it and unblock the card to go on"
    )


def held_pause(pauses: Sequence[Pause], at: datetime) -> Pause | None:
    """The day budget's pause on the claims if it holds at `at` (not the operator's
    resume of the day, not a lapsed one)."""
    for pause in pauses:
        if pause.tier != BUDGET_PAUSE or pause.cls != OVER_BUDGET:
            continue
        until = parse_stamp(pause.until)
        if not pause.until or (until is not None and until > at):
            return pause
    return None


def day_row(pauses: Sequence[Pause], at: datetime) -> Pause | None:
    """Today's budget row, a pause or the operator's resume, while it holds."""
    for pause in pauses:
        until = parse_stamp(pause.until)
        if pause.tier == BUDGET_PAUSE and until is not None and until > at:
            return pause
    return None


def day_pause(budget: BudgetSection, store: Store, at: datetime) -> Pause | None:
    """The pause the day's spend calls for at `at` (None: the day budget is off, not yet
    reached, or today already has its row: paused, or resumed by the operator)."""
    if budget.day_usd <= 0 or day_row(store.pauses(), at) is not None:
        return None
    spent = store.spend_since(day_start(at))
    if not reached(spent, budget.day_usd):
        return None
    reason = (
        f"today's spend {money(spent)} reached the day budget of {money(budget.day_usd)} "
        f"([budget] day_usd); claims resume at {next_day(at)[:16]}Z or with board resume budget"
    )
    return Pause(BUDGET_PAUSE, OVER_BUDGET, reason, next_day(at), stamp(at))


def resume_day(store: Store, at: datetime) -> bool:
    """`board resume budget`: today's claims go on past the day budget (until the next
    UTC midnight, when the budget counts again). False when the claims were not paused."""
    held = held_pause(store.pauses(), at)
    if held is None:
        return False
    store.pause_tier(
        Pause(
            BUDGET_PAUSE,
            BUDGET_RESUMED,
            f"resumed by the operator past the day budget ({held.reason})",
            held.until or next_day(at),
            stamp(at),
        )
    )
    return True


def status(budget: BudgetSection, store: Store, at: datetime) -> dict[str, object]:
    """`board status`'s budget: the limits, today's spend, and whether claims are paused."""
    pauses = store.pauses()
    held = held_pause(pauses, at)
    row = day_row(pauses, at)
    return {
        "day_usd": budget.day_usd or None,
        "card_usd": budget.card_usd or None,
        "hard": budget.hard,
        "paused": held is not None,
        "until": held.until if held is not None else None,
        "reason": held.reason if held is not None else "",
        "resumed": row is not None and row.cls == BUDGET_RESUMED,
    }

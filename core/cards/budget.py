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
from typing import Any

from board.core.config import BudgetSection
from board.core.failures import parse_stamp, stamp
from board.core.model import BUDGET_PAUSE, BUDGET_RESUMED, OVER_BUDGET, Drive, Pause, UsageSum
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


def card_over(budget: BudgetSection, store: Store, card_id: str) -> str:
    """Why the card may not start another attempt ('' while it may): its attempts together
    spent its `[budget] card_usd`, failed ones included. An unpriced drive adds nothing
    (its cost is not known), so only known money blocks."""
    if budget.card_usd <= 0:
        return ""
    total = store.card_usage(card_id)
    if total.spent < budget.card_usd:
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
    if spent < budget.day_usd:
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


# what a card spent, as `board card show` prints it ----------------------------------------


def tokens_text(inp: int | None, out: int | None, cached: int | None) -> str:
    """`1,200 in / 340 out / 5,000 cached` (the counts the agent said; `?` for one it did
    not say, '' when it said none)."""
    if inp is None and out is None and cached is None:
        return ""

    def n(v: int | None) -> str:
        return "?" if v is None else f"{v:,}"

    return f"{n(inp)} in / {n(out)} out / {n(cached)} cached"


def drive_usage_json(drive: Drive) -> dict[str, object]:
    """One attempt's usage for `board card show --json`: None where the agent did not say."""
    return {
        "attempt": drive.attempt,
        "drive": drive.id,
        "tier": drive.tier,
        "status": drive.status,
        "cost_usd": drive.cost_usd,
        "input_tokens": drive.input_tokens,
        "output_tokens": drive.output_tokens,
        "cached_tokens": drive.cached_tokens,
        "model": drive.model,
        "turns": drive.turns,
    }


def card_spend(store: Store, card_id: str) -> tuple[UsageSum, list[Drive]]:
    """The card's total over every attempt (the store's sum) and its attempts in order."""
    total = store.card_usage(card_id)
    drives = sorted(store.list_drives(card_id, limit=max(total.drives, 1)), key=lambda d: d.attempt)
    return total, drives


def usage_json(total: UsageSum, drives: list[Drive]) -> dict[str, object]:
    """`board card show --json`'s `usage`: the card's total (cost None when none is known,
    `unpriced` the drives that said tokens but no cost) and each attempt's."""
    return {
        "cost_usd": total.cost_usd,
        "input_tokens": total.input_tokens,
        "output_tokens": total.output_tokens,
        "cached_tokens": total.cached_tokens,
        "drives": total.drives,
        "unpriced": total.unpriced,
        "attempts": [drive_usage_json(d) for d in drives],
    }


def usage_lines(total: UsageSum, drives: list[Drive]) -> list[str]:
    """`board card show`'s usage: the total, then a line per attempt."""
    if not total.drives:
        return ["usage: no attempts yet"]
    tokens = tokens_text(total.input_tokens, total.output_tokens, total.cached_tokens)
    out = [
        f"usage: {total.drives} attempt(s), {cost_text(total)}" + (f", {tokens}" if tokens else "")
    ]
    for d in drives:
        cost = money(d.cost_usd) if d.cost_usd is not None else "—"
        said = tokens_text(d.input_tokens, d.output_tokens, d.cached_tokens) or "no usage said"
        more = ", ".join(
            x for x in (d.model, f"{d.turns} turns" if d.turns is not None else "") if x
        )
        out.append(
            f"  attempt {d.attempt:<3} {d.tier:<10} {d.status:<11} {cost:>9}  {said}"
            + (f"  ({more})" if more else "")
        )
    return out


# `board usage` --------------------------------------------------------------------------------


def total_of(sums: Sequence[UsageSum]) -> UsageSum:
    """The groups of `usage_sums` added up (a few rows: per card, tier or day), unknowns
    kept unknown as the store's own sums keep them."""

    def add(values: list[Any]) -> Any:
        known = [v for v in values if v is not None]
        return sum(known) if known else None

    return UsageSum(
        "",
        sum(s.drives for s in sums),
        add([s.input_tokens for s in sums]),
        add([s.output_tokens for s in sums]),
        add([s.cached_tokens for s in sums]),
        add([s.cost_usd for s in sums]),
        sum(s.unpriced for s in sums),
    )


def usage_table(by: str, sums: Sequence[UsageSum], total: UsageSum) -> list[str]:
    """`board usage`'s table: a row per group, then the total; `—` for what no drive said."""
    if not sums:
        return ["no drives in that time"]

    def n(v: int | None) -> str:
        return "—" if v is None else f"{v:,}"

    rows = [(s.key, s) for s in sums] + [("total", total)]
    width = max(len(by), *(len(k) for k, _ in rows))
    out = [
        f"{by:<{width}}  {'drives':>6}  {'cost':>20}  {'input':>12}  {'output':>12}  {'cached':>12}"
    ]
    for key, s in rows:
        out.append(
            f"{key:<{width}}  {s.drives:>6}  {cost_text(s):>20}  {n(s.input_tokens):>12}  "
            f"{n(s.output_tokens):>12}  {n(s.cached_tokens):>12}"
        )
    return out

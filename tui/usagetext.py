"""What the agents spent, in the words every screen uses: money, tokens, and the day.

One module so the card screen, a board row, the header and the flow screen never say a
cost differently: a known cost is `$0.12`; drives that said tokens but no cost (no price
for their model) make it partial, `$0.12 + 2 unpriced`, never a zero; nothing known is
`—`. These are money words; the timeout budget (`too-wide`, a card's `timeouts N`) is
another thing and none of them says it. No Textual here: the board's worker and the
header's words use it.
"""

from __future__ import annotations

from board.core.cards.budget import day_start, money
from board.core.cards.spend import count, tokens_text
from board.core.model import Drive, UsageSum

UNKNOWN = "—"  # no cost known (never "$0.00")


def cost_text(cost: float | None, unpriced: int = 0) -> str:
    """A cost as known: `$0.12`, `$0.12 + 2 unpriced`, `— (2 unpriced)`, or `—`."""
    more = f" + {unpriced} unpriced" if unpriced else ""
    if cost is None:
        return f"{UNKNOWN} ({unpriced} unpriced)" if unpriced else UNKNOWN
    return money(cost) + more


def sum_cost(total: UsageSum) -> str:
    """What a group of drives cost (`cost_text` of its known sum and its unpriced drives)."""
    return cost_text(total.cost_usd, total.unpriced)


def known(total: UsageSum | None) -> bool:
    """Whether any drive of the group said anything it spent (tokens or money): a group
    that said nothing (an agent with no reader, a drive still running) shows nothing."""
    if total is None:
        return False
    counts = (total.input_tokens, total.output_tokens, total.cached_tokens, total.cost_usd)
    return any(v is not None for v in counts) or total.unpriced > 0


def drive_cost(drive: Drive) -> str:
    """One attempt's cost: its own; `unpriced` when it said tokens but no cost (no price
    for its model); `—` when it said nothing."""
    if drive.cost_usd is not None:
        return money(drive.cost_usd)
    said = (drive.input_tokens, drive.output_tokens, drive.cached_tokens)
    return "unpriced" if any(v is not None for v in said) else UNKNOWN


__all__ = [
    "UNKNOWN",
    "cost_text",
    "count",
    "day_start",
    "drive_cost",
    "known",
    "money",
    "sum_cost",
    "tokens_text",
]

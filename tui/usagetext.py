"""What the agents spent, in the words every screen uses: money, tokens, and the day.

One module so the card screen, a board row, the header and the flow screen never say a
cost differently: a known cost is `$0.12`; drives that said tokens but no cost (no price
for their model) make it partial, `$0.12 + 2 unpriced`, never a zero; nothing known is
`—`. These are money words; the timeout budget (`too-wide`, a card's `timeouts N`) is
another thing and none of them says it. No Textual here: the board's worker and the
header's words use it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from board.core.failures import stamp
from board.core.model import Drive, UsageSum

UNKNOWN = "—"  # no cost known (never "$0.00")


def money(usd: float) -> str:
    """`$0.06`, `$0.125`, `$12.35`: cents at least, and below a dollar down to a tenth of a
    cent, since one drive often costs less than a cent."""
    if usd >= 1:
        return f"${usd:,.2f}"
    text = f"{usd:.4f}".rstrip("0")
    if len(text.partition(".")[2]) < 2:
        text = f"{usd:.2f}"
    return f"${text}"


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


def count(n: int | None) -> str:
    """A token count with its thousands marked, `—` when not said."""
    return UNKNOWN if n is None else f"{n:,}"


def tokens_text(inp: int | None, out: int | None, cached: int | None) -> str:
    """`12,345 in · 2,100 out · 80,000 cached`; a count not said is `—`."""
    return f"{count(inp)} in · {count(out)} out · {count(cached)} cached"


def drive_cost(drive: Drive) -> str:
    """One attempt's cost: its own; `unpriced` when it said tokens but no cost (no price
    for its model); `—` when it said nothing."""
    if drive.cost_usd is not None:
        return money(drive.cost_usd)
    said = (drive.input_tokens, drive.output_tokens, drive.cached_tokens)
    return "unpriced" if any(v is not None for v in said) else UNKNOWN


def day_start(at: datetime) -> str:
    """The UTC midnight that began `at`'s day, as the store writes times: where today's
    spend is counted from."""
    return stamp(at.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0))


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

"""What the drives spent, as the command line shows it: a card's total over every attempt
and each attempt's own (`board card show`), and the sums per card, tier or day (`board
usage`). The figures are the store's (`Store.card_usage`, `Store.usage_sums`); what no
agent said stays unknown here too: `—`, `?`, null, never a zero.

Not a verb (it changes nothing), so not behind the door (core/ops): `board card show`
loads it and nothing of the verbs' modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from board.core.cards.budget import cost_text, money
from board.core.model import Drive, UsageSum
from board.core.store import Store

# what a card spent, as `board card show` prints it ----------------------------------------


def count(n: int | None) -> str:
    """A token count with its thousands marked, `—` when the agent did not say it."""
    return "—" if n is None else f"{n:,}"


def tokens_text(inp: int | None, out: int | None, cached: int | None) -> str:
    """`12,345 in · 2,100 out · 80,000 cached` (a count not said is `—`; '' when none was
    said): the words the command line and the control room both use."""
    if inp is None and out is None and cached is None:
        return ""
    return f"{count(inp)} in · {count(out)} out · {count(cached)} cached"


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

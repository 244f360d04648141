"""`board status`, `board resume TIER` and `board usage`: the loop's health, the tiers it
paused, and what the drives spent."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from board.cli.show import visible

if TYPE_CHECKING:
    from board.cli.commands import Context, Subparsers


def register(sub: Subparsers) -> None:
    """Add `board status` and `board resume` to the CLI's subparsers."""
    p = sub.add_parser(
        "status",
        help="is a loop running; its drives, paused tiers, the count of each lane, today's spend",
        description=(
            "The loop (pid, host, started, last heartbeat; stale when it stopped beating), "
            "the drives running, the tiers paused by a rate limit or a dead login, the "
            "cards per lane and per block class, and today's spend against the money "
            "budgets. Read from the store: no loop needed."
        ),
    )
    p.add_argument("--json", action="store_true", help="print it as JSON (see docs/operator.md)")
    p.set_defaults(func=cmd_status)
    p = sub.add_parser(
        "resume",
        help="lift a tier's pause (a rate limit or a dead login) so its cards are claimed",
        description=(
            "A tier paused by `auth` stays paused until you log in again and unblock one of "
            "its cards, or run this; a rate-limit pause lifts by itself at its time. "
            "`board resume setup` lets the loop claim again after two cards in a row failed "
            "[tree] setup; `board resume forge` restarts PR polling after a dead forge login; "
            "`board resume budget` lets the loop claim again for the rest of the UTC day "
            "after the day's spend reached [budget] day_usd."
        ),
    )
    p.add_argument("tier", metavar="TIER|setup|forge|budget")
    p.set_defaults(func=cmd_resume)
    p = sub.add_parser(
        "usage",
        help="what the drives spent: tokens and cost per card, tier or UTC day",
        description=(
            "Every drive's tokens and cost as its agent reported them, summed per card "
            "(every attempt, failed ones included), per tier or per UTC day (a drive counts "
            "on the day it ended). A cost no agent or price gave is shown as — and its "
            "drives counted as unpriced, never as $0."
        ),
    )
    p.add_argument(
        "--since",
        type=since_stamp,
        metavar="DATE",
        help="only drives that ended on or after DATE (YYYY-MM-DD, UTC; or an ISO time)",
    )
    p.add_argument("--by", choices=("card", "tier", "day"), default="card", help="(default card)")
    p.add_argument("--json", action="store_true", help="print it as JSON (see docs/operator.md)")
    p.set_defaults(func=cmd_usage)


def since_stamp(text: str) -> str:
    """`--since`'s DATE as the store's UTC stamp: a day (its UTC midnight) or an ISO time
    (with an offset, or taken as UTC); anything else is refused in argparse's one line."""
    from datetime import UTC, datetime

    try:
        at = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        at = None
    if at is None or not text.strip()[:4].isdigit():
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date (YYYY-MM-DD, UTC, or an ISO time such as 2026-03-01T08:00Z)"
        )
    try:  # an offset can take the first or the last day out of datetime's years
        at = at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
    except OverflowError:
        raise argparse.ArgumentTypeError(f"{text!r} is out of range as a UTC time") from None
    # the year in four digits, as the store's stamps have it (strftime writes 999 as "999")
    return f"{at.year:04d}-" + at.strftime("%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def cmd_status(args: argparse.Namespace, ctx: Context) -> int:
    from board.core import ops  # here: building the parser does not pay for it

    data = ops.board_status(ctx.cfg, ctx.store)
    if args.json:
        ctx.emit_json(data)
    else:
        for line in ops.status_lines(data):
            ctx.out(visible(line))
    return 0


def cmd_resume(args: argparse.Namespace, ctx: Context) -> int:
    from board.core import ops

    if ops.resume(ctx.store, ctx.cfg.coder, args.tier):
        if args.tier == "setup":
            ctx.out("setup resumed: the loop claims cards again")
        elif args.tier == "budget":
            ctx.out(
                "claims resumed past the day budget: the loop claims cards again until the "
                "next UTC midnight, when the budget counts again"
            )
        else:
            ctx.out(f"tier {args.tier} resumed: its cards can be claimed again")
    elif args.tier == "budget":
        ctx.out("the day budget has not paused the claims; nothing changed")
    else:
        ctx.out(f"tier {args.tier} was not paused; nothing changed")
    return 0


def cmd_usage(args: argparse.Namespace, ctx: Context) -> int:
    from board.core.cards import spend

    sums = ctx.store.usage_sums(args.by, args.since)
    total = spend.total_of(sums)
    if args.json:
        ctx.emit_json(
            {
                "by": args.by,
                "since": args.since,
                "rows": [s.to_json() for s in sums],
                "total": {**total.to_json(), "key": "total"},
            }
        )
        return 0
    for line in spend.usage_table(args.by, sums, total):
        ctx.out(visible(line))
    return 0

"""`board status` and `board resume TIER`: the loop's health and the tiers it paused."""

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
        help="is a loop running; its drives, paused tiers and the count of each lane",
        description=(
            "The loop (pid, host, started, last heartbeat; stale when it stopped beating), "
            "the drives running, the tiers paused by a rate limit or a dead login, and the "
            "cards per lane and per block class. Read from the store: no loop needed."
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
            "[tree] setup; `board resume forge` restarts PR polling after a dead forge login."
        ),
    )
    p.add_argument("tier", metavar="TIER|setup|forge")
    p.set_defaults(func=cmd_resume)


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
        else:
            ctx.out(f"tier {args.tier} resumed: its cards can be claimed again")
    else:
        ctx.out(f"tier {args.tier} was not paused; nothing changed")
    return 0

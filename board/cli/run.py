"""`board run [--once]`: the loop on the command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from board.core.errors import Refused

if TYPE_CHECKING:
    from board.cli.commands import Context, Subparsers


def register(sub: Subparsers) -> None:
    """Add `board run` to the CLI's subparsers."""
    p = sub.add_parser(
        "run",
        help="run the loop: claim ready cards and drive them (one loop per board)",
        description=(
            "Claim ready cards in queue order and run their drives: coder, gate, the board's "
            "commit and publish. SIGTERM or Ctrl-C saves every live drive's tree and puts its "
            "card back in ready. A store that stops answering is retried for [store] "
            "reconnect_s while the drives run on. Each decision is a JSON line in "
            ".board/loop.log."
        ),
    )
    p.add_argument(
        "--once", action="store_true", help="one tick, then wait for the drives it started"
    )
    p.add_argument(
        "--until-idle",
        action="store_true",
        help="drain the board and exit: 0 when every card it claimed ended done, else 1, "
        "naming the rest (for scripts and CI)",
    )
    p.add_argument("--quiet", action="store_true", help="do not echo the loop log to stdout")
    p.add_argument(
        "--host",
        metavar="NAME",
        help="the name this machine's drives and heartbeat carry (default: the hostname)",
    )
    p.add_argument(
        "--reshape",
        action="store_true",
        help="make this board.toml's publishing shape (mode, base, run branch, run_on_remote) "
        "the board's, replacing the one recorded, then run",
    )
    p.set_defaults(func=cmd_run)


def _echo(line: str) -> None:
    try:
        record = json.loads(line)
    except ValueError:
        print(line, flush=True)
        return
    event = record.pop("event", "?")
    at = record.pop("at", "")
    card = record.pop("card", "")
    rest = " ".join(f"{k}={v}" for k, v in record.items() if v not in ("", None, [], False))
    text = f"{at} {event:<8} {card:<8} {rest}"
    print(text.translate({i: "?" for i in range(32) if i != 9}), flush=True)


def cmd_run(args: argparse.Namespace, ctx: Context) -> int:
    # imported here, not above: every other verb builds this parser without paying for them
    from board.core import hosts
    from board.core.git import gitutil
    from board.core.loop import Loop

    gitutil.require_git()
    if args.once and args.until_idle:
        raise Refused("give --once or --until-idle, not both")
    if args.host is not None:
        try:
            os.environ[hosts.ENV] = hosts.check_name(args.host)
        except ValueError as exc:
            raise Refused(str(exc)) from None
    loop = Loop(ctx.cfg, ctx.store, echo=None if args.quiet else _echo)
    code = loop.run(once=args.once, until_idle=args.until_idle, reshape=args.reshape)
    if loop.store_lost:
        print(
            f"board: stopped, the store stayed unreachable: {loop.store_lost}; a drive that "
            "could not record its end left its tree as it is, for the next board run to save",
            file=sys.stderr,
        )
        return 1
    if loop.stopping.is_set():
        print("board: stopped; every live drive's tree was saved", file=sys.stderr)
        return code or 1 if args.until_idle else code
    if args.until_idle:
        rest = loop.idle_report()
        said = []
        if rest:
            n = len(loop.touched)
            said.append(f"{len(rest)} of {n} card(s) it ran did not end done: {', '.join(rest)}")
        if loop.base_problem:
            said.append(f"nothing more can start: {loop.base_problem}")
        if said:
            print(f"board: idle; {'; '.join(said)}", file=sys.stderr)
            return 1
    return code

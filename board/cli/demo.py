"""`board demo [DIR]`: the verb's arguments; the sandbox itself is in `board.demo.sandbox`.

Declared here rather than beside the sandbox, so building the parser for any verb does not
import the sandbox's machinery (the store, the card verbs, process control).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from board.cli.commands import Context, Subparsers


def cmd_demo(args: argparse.Namespace, ctx: Context) -> int:
    """Make the sandbox, run its loop and open the TUI: `board.demo.sandbox.cmd_demo`."""
    from board.demo import sandbox

    return sandbox.cmd_demo(args, ctx)


def register(sub: Subparsers) -> None:
    """Add `board demo` to the CLI's subparsers."""
    p = sub.add_parser(
        "demo",
        help="make a sandbox repository with a real loop and coder, and open the TUI on it",
        description="Make (or remake) a demo sandbox in DIR (default ./board-demo), start "
        "`board run` in the background, open `board tui`, and stop the loop when you quit.",
    )
    p.add_argument("dir", nargs="?", metavar="DIR")
    p.add_argument("--theme", default=None, help="TUI theme")
    p.add_argument("--no-tui", action="store_true", help="run the loop only, for --seconds")
    p.add_argument(
        "--seconds", type=float, default=60, help="with --no-tui or --screenshot: how long to run"
    )
    p.add_argument("--screenshot", metavar="SVG", help="run headless, then save the board as SVG")
    p.set_defaults(func=cmd_demo)

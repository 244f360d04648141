"""`board tui [--theme T]`: open the control room.

Textual is imported only when the verb runs, so every other verb starts without paying
for it, and works where Textual is not installed.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from board.core.errors import BoardError

if TYPE_CHECKING:
    from board.cli.commands import Context, Subparsers


def cmd_tui(args: argparse.Namespace, ctx: Context) -> int:
    store = ctx.store  # opened first: a missing store is refused before anything starts
    try:
        # read the board first (a store on a server: in a thread, beside Textual's import)
        from board.tui import boarddata

        preload = boarddata.Preload(store, cfg=ctx.cfg)  # the header's first reading too
        from board.tui import app as tui_app
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("textual", "rich"):
            raise BoardError(
                f"board tui needs Textual ({exc.name} is not installed): "
                "pip install 'textual==8.2.8'"
            ) from None
        raise
    return int(tui_app.run(ctx.cfg, store, theme=args.theme, preload=preload))


def register(sub: Subparsers) -> None:
    """Add `board tui` to the CLI's subparsers."""
    text = "open the control room: the board, live, with the verbs on keys"
    p = sub.add_parser("tui", help=text, description=text)
    p.add_argument("--theme", help="dark (default), light, high-contrast, or a user theme")
    p.set_defaults(func=cmd_tui)

"""`board web [--host 127.0.0.1] [--port 8765] [--public-url URL]`: the control room in a
browser.

The server (board/tui/web.py, on textual-serve and aiohttp) is imported only when the verb
runs, so no other verb pays for it.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from board.core.errors import BoardError

if TYPE_CHECKING:
    from board.cli.commands import Context, Subparsers

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def cmd_web(args: argparse.Namespace, ctx: Context) -> int:
    store = ctx.store  # a missing board is refused before anything listens
    store.close()  # each session's app opens its own; the server reads nothing
    if not 0 < args.port < 65536:
        raise BoardError(f"web: --port must be from 1 to 65535, got {args.port}")
    try:
        from board.tui import web
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("textual_serve", "aiohttp", "textual"):
            raise BoardError(
                f"board web needs textual-serve ({exc.name} is not installed): "
                "pip install 'textual-serve==1.1.3'"
            ) from None
        raise
    public_url = web.check_public_url(args.public_url) if args.public_url else ""
    token = web.make_token()
    if not public_url and args.host in ("0.0.0.0", "::", ""):
        raise BoardError(
            f"web: --host {args.host or repr('')} listens on every address, so the page "
            "cannot know which one its browser reached: give --public-url "
            f"http://NAME:{args.port} too (the address the browser opens)"
        )
    if not web.is_loopback(args.host):
        print(
            f"board web: warning: listening on {args.host}, not loopback: anyone who can "
            "reach it and has the token drives the board (no TLS: use a tunnel or a proxy)",
            file=sys.stderr,
            flush=True,
        )
    web.serve(
        ctx.root,
        host=args.host,
        port=args.port,
        max_sessions=ctx.cfg.web.max_sessions,
        token=token,
        public_url=public_url,
    )
    return 0


def register(sub: Subparsers) -> None:
    """Add `board web` to the CLI's subparsers."""
    text = "serve the control room to a browser (loopback only, token-guarded)"
    p = sub.add_parser("web", help=text, description=text)
    p.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST})"
    )
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument(
        "--public-url",
        metavar="URL",
        help="the address a browser opens, when it is not http://HOST:PORT (a proxy, a "
        "tunnel, another machine's name for this one)",
    )
    p.set_defaults(func=cmd_web)

"""Operator verbs on live work, registered into the `board` command line.

Each verb is registered by its own `_register_<verb>(sub)` so several people can add
verbs here without touching each other's code.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from . import split as split_mod
from .errors import Refused


def register(sub: Any) -> None:
    """Add this module's verbs to the `board` subparsers."""
    _register_split(sub)


# board split --------------------------------------------------------------------------------


class _IntoAction(argparse.Action):
    """`--into TITLE` starts a new slice; the `--surface` options after it belong to it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        slices = list(getattr(namespace, self.dest, None) or [])
        slices.append((str(values), []))
        setattr(namespace, self.dest, slices)


class _SurfaceAction(argparse.Action):
    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        slices = list(getattr(namespace, self.dest, None) or [])
        if not slices:
            parser.error("--surface belongs to a slice: give it after that slice's --into TITLE")
        title, globs = slices[-1]
        slices[-1] = (title, [*globs, str(values)])
        setattr(namespace, self.dest, slices)


_SPLIT_HELP = (
    "split a card that is too wide for one build into slices, in the one safe order: "
    "create the slices in backlog, repoint its dependents onto them, cancel the card, "
    "mark the slices ready. All of it or none of it."
)


def _register_split(sub: Any) -> None:
    p = sub.add_parser("split", help=_SPLIT_HELP, description=_SPLIT_HELP)
    p.add_argument("id", metavar="ID", help="the card to split")
    p.add_argument(
        "--into",
        action=_IntoAction,
        dest="slices",
        metavar="TITLE",
        required=True,
        help="a slice's title (repeat for each slice)",
    )
    p.add_argument(
        "--surface",
        action=_SurfaceAction,
        dest="slices",
        metavar="GLOB",
        help="a file glob for the slice named just before (repeatable); "
        "a slice without one inherits the card's surface",
    )
    p.add_argument("--json", action="store_true", help="print what was done as JSON")
    p.set_defaults(func=_cmd_split)


def _cmd_split(args: argparse.Namespace, ctx: Any) -> int:
    from .cli import visible

    slices: list[tuple[str, list[str]]] = args.slices or []
    if not slices:
        raise Refused(f"split {args.id}: name at least one slice (--into TITLE)")
    titles = [title for title, _ in slices]
    surfaces: list[list[str]] | None = [globs for _, globs in slices]
    if not any(surfaces or []):
        surfaces = None
    result = split_mod.split(ctx.store, ctx.cfg, args.id, titles, surfaces)
    if args.json:
        ctx.emit_json(result.to_json())
    else:
        ctx.out(visible(result.summary()))
    return 0

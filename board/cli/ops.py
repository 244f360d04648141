"""Operator verbs on live work, registered into the `board` command line.

Each verb is registered by its own `_register_<verb>(sub)` so several people can add
verbs here without touching each other's code.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from board.cli.show import visible
from board.core.errors import Refused

if TYPE_CHECKING:
    from board.cli.commands import Context, Subparsers


def register(sub: Subparsers) -> None:
    """Add this module's verbs to the `board` subparsers."""
    _register_split(sub)
    _register_stop(sub)
    _register_approve(sub)
    _register_salvage(sub)
    _register_resolve(sub)


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


def _register_split(sub: Subparsers) -> None:
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


def _cmd_split(args: argparse.Namespace, ctx: Context) -> int:
    from board.core import ops  # here: the parser does not pay for it

    slices: list[tuple[str, list[str]]] = args.slices or []
    if not slices:
        raise Refused(f"split {args.id}: name at least one slice (--into TITLE)")
    titles = [title for title, _ in slices]
    surfaces: list[list[str]] | None = [globs for _, globs in slices]
    if not any(surfaces or []):
        surfaces = None
    result = ops.split(ctx.store, ctx.cfg, args.id, titles, surfaces)
    if args.json:
        ctx.emit_json(result.to_json())
    else:
        ctx.out(visible(result.summary()))
    return 0


# board stop / board approve / board stranded salvage ---------------------------------------------

_STOP_HELP = (
    "stop a card's drive now: its whole process group is killed, its tree saved to a "
    "stranded/… branch, and the card left in ready, held (`stopped: …`); unblock resumes it"
)
_APPROVE_HELP = (
    "publish a card waiting in review (fold or push, as configured); refused if the card "
    "changed since you looked (--expect-version) or someone requeued it"
)
_SALVAGE_HELP = (
    "publish a stranded branch, or a card's kept tree, with no coder: commit what it holds, "
    "run the gate there, publish; a red gate publishes nothing unless --force"
)


def _lines(ctx: Context, lines: Sequence[str]) -> None:
    for line in lines:
        ctx.out(visible(line))


def _register_stop(sub: Subparsers) -> None:
    p = sub.add_parser("stop", help=_STOP_HELP, description=_STOP_HELP)
    p.add_argument("id", metavar="ID")
    p.add_argument("--reason", help="why (shown in the block: `stopped: REASON`)")
    p.add_argument("--json", action="store_true", help="print what was done as JSON")
    p.set_defaults(func=_cmd_stop)


def _cmd_stop(args: argparse.Namespace, ctx: Context) -> int:
    from board.core import ops

    result = ops.stop(ctx.store, ctx.cfg, args.id, args.reason)
    if args.json:
        ctx.emit_json(result.to_json())
        return 0
    ctx.show_card(result.card, False)
    _lines(ctx, result.lines)
    return 0


def _register_approve(sub: Subparsers) -> None:
    p = sub.add_parser("approve", help=_APPROVE_HELP, description=_APPROVE_HELP)
    p.add_argument("id", metavar="ID")
    p.add_argument("--reason", help="a note for the card's timeline")
    p.add_argument(
        "--expect-version",
        type=int,
        metavar="N",
        help="the card version you reviewed (`card show --json`); refused if it changed",
    )
    p.add_argument(
        "--candidate",
        type=int,
        metavar="K",
        help="publish candidate K of the card's latest race (best of N) instead of the one "
        "in review, which is saved to a candidate branch first; a green candidate only",
    )
    p.add_argument("--json", action="store_true", help="print what was done as JSON")
    p.set_defaults(func=_cmd_approve)


def _cmd_approve(args: argparse.Namespace, ctx: Context) -> int:
    from board.core import ops

    result = ops.approve(
        ctx.store,
        ctx.cfg,
        args.id,
        args.reason,
        expect_version=args.expect_version,
        candidate=args.candidate,
    )
    if args.json:
        ctx.emit_json(result.to_json())
    else:
        ctx.show_card(result.card, False)
        _lines(ctx, result.lines)
    return 0 if result.outcome in ("done", "review") else 1


def _stranded_verbs(sub: Subparsers) -> Subparsers | None:
    """The `board stranded` subparsers (registered by board.cli.stranded, which loads first)."""
    parser = getattr(sub, "choices", {}).get("stranded")
    if parser is None:
        return None
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def _register_salvage(sub: Subparsers) -> None:
    verbs = _stranded_verbs(sub)
    if verbs is None:  # no `board stranded` yet: offer the verb at the top level meanwhile
        verbs = sub
    p = verbs.add_parser("salvage", help=_SALVAGE_HELP, description=_SALVAGE_HELP)
    p.add_argument("target", metavar="BRANCH|ID", help="a stranded/… branch, or a card id")
    p.add_argument(
        "--force",
        action="store_true",
        help="publish even over a red gate, marked (a draft PR with push, a note with fold)",
    )
    p.add_argument("--json", action="store_true", help="print what was done as JSON")
    p.set_defaults(func=_cmd_salvage)


def _cmd_salvage(args: argparse.Namespace, ctx: Context) -> int:
    from board.core import ops

    result = ops.salvage(ctx.store, ctx.cfg, args.target, force=args.force)
    if args.json:
        ctx.emit_json(result.to_json())
        return 0 if result.published else 1
    if result.outcome == "blocked":  # the fold lost a race and conflicted: one line
        from board.core.errors import Conflict

        raise Conflict(result.lines[-1] if result.lines else f"{args.target}: not published")
    if result.card is not None:
        ctx.show_card(result.card, False)
    _lines(ctx, result.lines)
    if result.gate == "red" and result.gate_tail:
        ctx.out("gate tail:")
        _lines(ctx, ["    " + x for x in result.gate_tail.splitlines()])
    return 0 if result.published else 1


# board resolve ------------------------------------------------------------------------------

_RESOLVE_HELP = (
    "resolve a card's fold conflict by hand: leaves its tree stopped at the conflict with the "
    "run branch and prints the commands to finish; --continue finishes the rebase, runs the "
    "gate and folds"
)


def _register_resolve(sub: Subparsers) -> None:
    p = sub.add_parser("resolve", help=_RESOLVE_HELP, description=_RESOLVE_HELP)
    p.add_argument("id", metavar="ID")
    p.add_argument(
        "--continue",
        dest="cont",
        action="store_true",
        help="finish the resolution: the rebase, the gate, the fold",
    )
    p.add_argument("--json", action="store_true", help="print what was done as JSON")
    p.set_defaults(func=_cmd_resolve)


def _cmd_resolve(args: argparse.Namespace, ctx: Context) -> int:
    from board.core import ops

    if args.cont:
        result = ops.resolve_continue(ctx.store, ctx.cfg, args.id)
    else:
        result = ops.resolve(ctx.store, ctx.cfg, args.id)
    if args.json:
        ctx.emit_json(result.to_json())
    else:
        ctx.show_card(result.card, False)
        _lines(ctx, result.lines)
    if args.cont and result.salvage is not None and not result.salvage.published:
        return 1
    return 0

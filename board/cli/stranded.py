"""`board stranded list|show|pick|discard|prune`: the operator's verbs over saved work.

Each verb is one call into `core.stranded`; the TUI calls the same functions. Those modules
are imported by the verbs that use them, so building the parser for any verb does not.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from board.core.errors import Conflict, Refused
from board.core.safetext import diffstat, sanitize

if TYPE_CHECKING:
    from board.cli.commands import Context, Subparsers


def _visible(text: str) -> str:
    """Branch names and diffs come from coders: escapes made visible, tabs and line breaks
    kept (a diff printed line by line needs both)."""
    return sanitize(text, keep_newlines=True, keep_tabs=True)


def cmd_list(args: argparse.Namespace, ctx: Context) -> int:
    from board.core.git import stranded

    branches = stranded.list_stranded(ctx.cfg)
    husks = stranded.list_husks(ctx.cfg)
    if args.json:
        ctx.emit_json([b.to_json() for b in branches] + [h.to_json() for h in husks])
        return 0
    if not branches and not husks:
        print("no stranded branches or husks: nothing was left behind")
        return 0
    for b in branches:
        stat = "(no stats)"
        if b.files is not None:
            stat = diffstat(b.files, b.insertions, b.deletions)
        what = "  (a failed attempt)" if b.is_attempt else ""
        if b.is_candidate:
            what = "  (a candidate not chosen)"
        if b.is_foreign:
            what = "  (not made by the board: no save trailer)"
        print(_visible(f"{b.branch}  {b.card or '-':<8} {stat}  {b.commit[:12]}{what}"))
    for h in husks:
        print(_visible(f"husk {h.path}  {h.card or '-':<8} (moved aside, bytes intact)"))
    return 0


def cmd_show(args: argparse.Namespace, ctx: Context) -> int:
    from board.core.git import stranded

    print(_visible(stranded.show(ctx.cfg, args.branch)), end="")
    return 0


def cmd_pick(args: argparse.Namespace, ctx: Context) -> int:
    from board.core import ops

    result = ops.pick(
        ctx.cfg, args.branch, onto=args.onto, title_of=ops.titles_from(lambda: ctx.store)
    )
    if not result.ok:
        if result.conflicts:
            raise Conflict(
                f"{result.branch} does not apply onto {result.target}: conflicts in "
                f"{', '.join(result.conflicts)}; {result.target} was left as it was"
            )
        raise Conflict(
            f"{result.branch} could not be picked onto {result.target} ({result.failed_on}); "
            f"{result.target} was left as it was"
        )
    if getattr(args, "json", False):
        ctx.emit_json(result.to_json())
        return 0
    if not result.picked:
        print(_visible(f"{result.target} already holds everything in {result.branch}"))
    else:
        n = len(result.picked)
        print(
            _visible(
                f"picked {n} commit{'s' if n != 1 else ''} of {result.branch} onto "
                f"{result.target}: {result.old[:12]} -> {result.new[:12]}"
            )
        )
    return 0


def cmd_discard(args: argparse.Namespace, ctx: Context) -> int:
    from board.core import ops

    target = ops.discard_target(ctx.cfg, args.name)
    what = target.describe(ctx.cfg)
    store = ctx.store  # opened first: a store that cannot be opened refuses before a delete
    if target.foreign:  # not the board's: --yes does not answer for someone else's branch
        if not ctx.confirm(f"Delete {what}? This cannot be undone."):
            raise Refused(
                f"not discarded: {what}; answer yes at a terminal to delete it "
                "(--yes answers only for the board's own saves)"
            )
    elif not args.yes and not ctx.confirm(f"Delete {what}? This cannot be undone."):
        raise Refused(f"not discarded: {what} (pass --yes to delete without asking)")
    ops.discard(ctx.cfg, args.name, store)
    print(_visible(f"deleted {what}"))
    return 0


def cmd_prune(args: argparse.Namespace, ctx: Context) -> int:
    from board.core import ops

    older = ops.parse_age(args.older_than) if args.older_than is not None else None
    plan = ops.prune_plan(ctx.cfg, ctx.store, card=args.card, older_than=older)
    if not plan.branches:
        whose = f"{args.card}'s saves" if args.card else "the saves of done or cancelled cards"
        age = f" older than {args.older_than}" if args.older_than else ""
        print(_visible(f"nothing to prune: no stranded branch among {whose}{age}"))
        return 0
    n = len(plan.branches)
    what = f"{n} stranded branch{'es' if n != 1 else ''}"
    print(_visible(f"prune would delete {what}:"))
    for line in plan.lines():
        print(_visible(f"  {line}"))
    if not args.yes and not ctx.confirm(f"Delete these {what}? This cannot be undone."):
        raise Refused(f"not pruned: {what} (pass --yes to delete without asking)")
    for branch in ops.prune(ctx.cfg, ctx.store, plan):
        print(_visible(f"deleted {branch}"))
    return 0


def register(sub: Subparsers) -> None:
    """Add `board stranded …` to the top-level subparsers."""
    top = sub.add_parser(
        "stranded",
        help="saved work: list, show, pick, discard or prune stranded branches and husks",
        description="Work saved from trees before they were removed (stranded/… branches) "
        "and husks moved aside under .worktrees/.stranded/.",
    )
    verbs = top.add_subparsers(dest="stranded_verb", metavar="STRANDED_VERB")
    verbs.required = True

    p = verbs.add_parser("list", help="list stranded branches (and husks)")
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.set_defaults(func=cmd_list)

    p = verbs.add_parser("show", help="show a stranded branch as a diff against the base")
    p.add_argument("branch", metavar="BRANCH")
    p.set_defaults(func=cmd_show)

    p = verbs.add_parser(
        "pick", help="cherry-pick a stranded branch's own commits onto a branch (in a temp tree)"
    )
    p.add_argument("branch", metavar="BRANCH")
    p.add_argument(
        "--onto",
        metavar="REF",
        help="the branch to move (default: the run branch in fold mode, the base in push mode)",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_pick)

    p = verbs.add_parser("discard", help="delete a stranded branch or a husk (asks first)")
    p.add_argument("name", metavar="BRANCH|HUSK")
    p.add_argument(
        "--yes",
        action="store_true",
        help="do not ask (a branch the board did not make is always asked about)",
    )
    p.set_defaults(func=cmd_discard)

    p = verbs.add_parser(
        "prune",
        help="delete the saves of done or cancelled cards (names them, asks first)",
        description="Delete stranded branches whose card is done or cancelled: failed "
        "attempts and saved trees alike. A card that is still open is refused when named "
        "and left alone otherwise. Lists what it deletes and asks first.",
    )
    p.add_argument("--card", metavar="ID", help="only this card's saves")
    p.add_argument(
        "--older-than", metavar="AGE", help="only saves older than AGE (90s, 30m, 12h, 14d, 2w)"
    )
    p.add_argument("--yes", action="store_true", help="do not ask")
    p.set_defaults(func=cmd_prune)

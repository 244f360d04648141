"""`board card deps ID [--json]`: what a card waits on and what waits on it, as trees.

The trees are the core's (`core/cards/deptree.py`, the TUI's `D` draws the same), read
from one read of the store. A title is printed as every verb prints one: made visible
(`show.visible`), and on one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from board.cli.show import visible

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator
    from typing import Any

    from board.cli.commands import Context
    from board.core.cards.deptree import CardDeps, DepNode

# what a cut node says in place of its children
CUT_WORDS = {
    "cycle": "(a cycle back to it above: the store holds what card add refuses)",
    "above": "(shown above)",
    "deep": "(deeper levels not shown)",
}


def register_card(csub: Any) -> None:
    """`card deps`, among `card`'s own verbs."""
    p = csub.add_parser(
        "deps",
        help="what a card waits on and what waits on it, as trees",
        description="What the card waits on (its deps, theirs, …) and what waits on it, "
        "each card with its lane, its block's class and whether it is met (done or "
        "cancelled: the loop waits on it no more).",
    )
    p.add_argument("id", metavar="ID")
    p.add_argument("--json", action="store_true", help="print the two trees as JSON")
    p.set_defaults(func=cmd_card_deps)


def node_line(node: DepNode) -> str:
    """`c-3  working [held] ✓  its title  (shown above)`: one line, the title made visible."""
    badge = f" [{node.blocked}]" if node.blocked else ""
    met = " ✓" if node.met else ""
    title = visible(node.title).replace("\n", " ⏎ ") if node.lane != "missing" else "(no such card)"
    cut = f"  {CUT_WORDS[node.cut]}" if node.cut else ""
    return f"{node.id}  {node.lane}{badge}{met}  {title}{cut}"


def tree_lines(nodes: tuple[DepNode, ...], indent: str = "  ") -> Iterator[str]:
    """The nodes drawn as a tree with ├─ and └─, children below their card."""
    for i, node in enumerate(nodes):
        last = i == len(nodes) - 1
        yield f"{indent}{'└─' if last else '├─'} {node_line(node)}"
        yield from tree_lines(node.children, indent + ("   " if last else "│  "))


def cmd_card_deps(args: argparse.Namespace, ctx: Context) -> int:
    from board.core.cards import deptree
    from board.core.errors import CorruptCard, StoreError
    from board.core.store import unreadable_line

    unreadable: list[CorruptCard] = []
    graph = deptree.read_graph(ctx.store, unreadable)  # one read: every card and its deps
    deps = deptree.card_deps(graph, args.id)
    if args.json:
        ctx.emit_json(deps.to_json())
    else:
        _print(ctx, deps)
    if unreadable:  # the trees above are without them; the one line says which
        raise StoreError(unreadable_line(unreadable))
    return 0


def _print(ctx: Context, deps: CardDeps) -> None:
    from board.cli.commands import card_line

    ctx.out(card_line(deps.card))
    for heading, nodes in (("waits on", deps.waits_on), ("waited on by", deps.waited_on_by)):
        if not nodes:
            ctx.out(f"{heading}: nothing")
            continue
        ctx.out(f"{heading}:")
        for line in tree_lines(nodes):
            ctx.out(line)


__all__ = ["cmd_card_deps", "node_line", "register_card", "tree_lines"]

"""What waits on what: a card's dependencies as two trees, and the board's chains as one.

A board of fifty cards with deps could only be read one card at a time; `board card deps`
and the TUI's dependency screen (`D`) draw it instead, from the functions here, so the two
never disagree.

- **One read.** `read_graph` takes every card, deps included, in one read transaction
  (`Store.list_cards`) and the walks run over that in memory: never a query per node, so
  a tree over 10,000 cards costs one read.
- **Met is the claim's rule.** A dep done or cancelled no longer holds its card back
  (core/drive/claim.py claims past both), so `met` is that, not "done" alone.
- **No walk loops, none explodes.** `card add` and `card edit` refuse a cycle, but a
  corrupt store may hold one. Each walk shows a card's own children once per tree: met
  again on the path to itself it is cut as a `cycle`, met again elsewhere (a fan-in, a
  diamond) it is cut as `above` (shown above, its children there). So a tree has at most
  one expanded node per card, and a chain of diamonds does not double at each level. A
  tree deeper than `MAX_DEPTH` is cut as `deep`, so printing and JSON stay bounded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from board.core.errors import NotFound
from board.core.model import TERMINAL, Card
from board.core.records import Frozen

if TYPE_CHECKING:
    from typing import Any

    from board.core.errors import CorruptCard
    from board.core.store import Store

MAX_DEPTH = 100  # levels below a tree's top; deeper nodes are cut ("deep")
MISSING = "missing"  # the lane shown for a dep naming no card (a corrupt store)

CUT_CYCLE = "cycle"  # the card is its own ancestor here: a cycle a corrupt store holds
CUT_ABOVE = "above"  # shown earlier in this tree, with its children there
CUT_DEEP = "deep"  # past MAX_DEPTH


class DepNode(Frozen, slots=True):
    """One card in a dependency tree; `cut` says why its children are not listed (None:
    they are, all of them)."""

    id: str
    title: str
    lane: str
    blocked: str | None  # the block's class; None when not blocked
    met: bool  # done or cancelled: whoever waits on it waits no more
    children: tuple[DepNode, ...] = ()
    cut: str | None = None  # CUT_CYCLE | CUT_ABOVE | CUT_DEEP

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "lane": self.lane,
            "blocked": self.blocked,
            "met": self.met,
            "cut": self.cut,
            "children": [child.to_json() for child in self.children],
        }


class DepGraph(Frozen):
    """Every card of the board by id, and who waits on each (ids in board id order)."""

    cards: dict[str, Card]
    dependents: dict[str, tuple[str, ...]]

    def node(
        self, card_id: str, children: tuple[DepNode, ...] = (), cut: str | None = None
    ) -> DepNode:
        card = self.cards.get(card_id)
        if card is None:
            return DepNode(card_id, "", MISSING, None, False, children, cut)
        cls = card.blocked.cls if card.blocked else None
        return DepNode(card.id, card.title, card.lane, cls, card.lane in TERMINAL, children, cut)

    def is_open(self, card_id: str) -> bool:
        card = self.cards.get(card_id)
        return card is not None and card.lane not in TERMINAL


class CardDeps(Frozen):
    """`board card deps ID`: the card, what it waits on and what waits on it."""

    card: Card
    waits_on: tuple[DepNode, ...]
    waited_on_by: tuple[DepNode, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "card": self.card.id,
            "waits_on": [node.to_json() for node in self.waits_on],
            "waited_on_by": [node.to_json() for node in self.waited_on_by],
        }


def id_key(card_id: str) -> tuple[str, int, str]:
    """`c-2` before `c-10`: ids sort by prefix, then number."""
    prefix, _, number = card_id.rpartition("-")
    return (prefix, int(number), "") if number.isdigit() else (card_id, -1, card_id)


def graph_of(cards: Iterable[Card]) -> DepGraph:
    """The graph over these cards (one pass: each card's deps give its deps' dependents)."""
    by_id = {card.id: card for card in cards}
    waiting: dict[str, list[str]] = {}
    for card in by_id.values():
        for dep in card.deps:
            waiting.setdefault(dep, []).append(card.id)
    dependents = {dep: tuple(sorted(ids, key=id_key)) for dep, ids in waiting.items()}
    return DepGraph(by_id, dependents)


def read_graph(store: Store, unreadable: list[CorruptCard] | None = None) -> DepGraph:
    """The whole board's graph from one read of the store (every card and its deps)."""
    return graph_of(store.list_cards(unreadable=unreadable))


def _tree(
    graph: DepGraph,
    top: str,
    edges: Mapping[str, Iterable[str]],
    shown: set[str],
    allowed: set[str] | None = None,
) -> tuple[DepNode, ...]:
    """The children of `top` along `edges` (deps, or dependents), depth first, each card's
    own children listed once in the tree (`shown`, shared by the caller's other trees);
    `allowed` limits which cards are listed at all (the board's open cards)."""

    def kids(card_id: str, path: tuple[str, ...]) -> tuple[DepNode, ...]:
        out = []
        for child in edges.get(card_id, ()):
            if allowed is not None and child not in allowed:
                continue
            if child in path:
                out.append(graph.node(child, cut=CUT_CYCLE))
            elif child in shown or len(path) > MAX_DEPTH:
                # a card with nothing below it is whole here: only a cut subtree is marked
                more = any(allowed is None or c in allowed for c in edges.get(child, ()))
                cut = (CUT_ABOVE if child in shown else CUT_DEEP) if more else None
                out.append(graph.node(child, cut=cut))
            else:
                shown.add(child)
                out.append(graph.node(child, kids(child, (*path, child))))
        return tuple(out)

    shown.add(top)
    return kids(top, (top,))


def card_deps(graph: DepGraph, card_id: str) -> CardDeps:
    """What `card_id` waits on (its deps, theirs, …) and what waits on it, as trees.
    NotFound, in one line, for an id no card has."""
    card = graph.cards.get(card_id)
    if card is None:
        raise NotFound(f"no card {card_id}")
    deps = {cid: sorted(c.deps, key=id_key) for cid, c in graph.cards.items()}
    return CardDeps(
        card,
        _tree(graph, card_id, deps, set()),
        _tree(graph, card_id, graph.dependents, set()),
    )


def heads(graph: DepGraph) -> list[str]:
    """The open cards that wait on no open card and that some open card waits on: the
    front of every chain, what must move first for the rest to. Blocked ones first (the
    operator's to act on), then the ones with the most open cards behind them, then by id."""
    found = [
        cid
        for cid, card in graph.cards.items()
        if card.lane not in TERMINAL
        and not any(graph.is_open(dep) for dep in card.deps)
        and any(graph.is_open(d) for d in graph.dependents.get(cid, ()))
    ]
    behind = {cid: count_behind(graph, cid) for cid in found}
    return sorted(
        found,
        key=lambda cid: (graph.cards[cid].blocked is None, -behind[cid], id_key(cid)),
    )


def count_behind(graph: DepGraph, card_id: str) -> int:
    """How many open cards wait on `card_id`, directly or through others (each once)."""
    seen: set[str] = set()
    todo = [card_id]
    while todo:
        for dep in graph.dependents.get(todo.pop(), ()):
            if dep not in seen and dep != card_id and graph.is_open(dep):
                seen.add(dep)
                todo.append(dep)
    return len(seen)


def board_chains(graph: DepGraph) -> tuple[DepNode, ...]:
    """Every chain of the board's open cards, as a forest: each head (`heads`) with what
    waits on it below. Done and cancelled cards are left out (their chains are over). A
    card two heads hold back is listed under both, its own dependents under the first
    (`above` under the next). Open cards on a cycle (a corrupt store) have no head; each is
    then a root of its own, the repeat cut `cycle`, so every chain is shown and none loops."""
    open_ids = {cid for cid in graph.cards if graph.is_open(cid)}
    shown: set[str] = set()
    roots: list[DepNode] = []
    for head in heads(graph):
        roots.append(graph.node(head, _tree(graph, head, graph.dependents, shown, open_ids)))
    chained = [
        cid
        for cid in sorted(open_ids, key=id_key)
        if any(graph.is_open(d) for d in graph.cards[cid].deps)
    ]
    for cid in chained:  # left over: held back only by a cycle
        if cid not in shown:
            roots.append(graph.node(cid, _tree(graph, cid, graph.dependents, shown, open_ids)))
    return tuple(roots)


def node_count(nodes: Iterable[DepNode]) -> int:
    """The nodes in these trees, every level (what a screen will draw)."""
    total = 0
    todo = list(nodes)
    while todo:
        node = todo.pop()
        total += 1
        todo.extend(node.children)
    return total


__all__ = [
    "CUT_ABOVE",
    "CUT_CYCLE",
    "CUT_DEEP",
    "MAX_DEPTH",
    "MISSING",
    "CardDeps",
    "DepGraph",
    "DepNode",
    "board_chains",
    "card_deps",
    "count_behind",
    "graph_of",
    "heads",
    "node_count",
    "read_graph",
]

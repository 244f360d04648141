"""The dependency screen (`D`): what a card waits on and what waits on it, or every chain of
the board, as trees (k9s's xray, for cards).

A board of fifty cards with deps could only be read one card at a time. Here a card's two
trees (`core.cards.deptree.card_deps`, the ones `board card deps` prints) or the whole
board's chains (`board_chains`: each head, the open card the others wait behind, with what
waits on it below) are drawn with Textual's Tree, each card with its lane and its block.
A blocked card that others wait on is marked with how many wait behind it: that is what
the operator must act on first, and the board's blocked heads are listed first.

Read in a worker (one read of the store, the trees built there too); a store change reads
again, the cursor kept on its card. Titles are shown literally (invariant 5): a label is a
`Text`, never markup, its title made one visible line.
"""

from __future__ import annotations

from typing import ClassVar

from board.core.cards.deptree import (
    CUT_ABOVE,
    CUT_CYCLE,
    CUT_DEEP,
    MISSING,
    CardDeps,
    DepGraph,
    DepNode,
    board_chains,
    card_deps,
    count_behind,
    read_graph,
)
from board.core.errors import BoardError
from board.core.records import Frozen
from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static, Tree
from textual.widgets.tree import NodeID, TreeNode

from .footer import KeysFooter
from .movement import EDGES, movement_bindings
from .painttext import one_line
from .screenbase import BoardAppScreen

LabelStyles = tuple[Style, Style, Style]  # the badge, a met card, the id

# cards drawn unfolded at once: past it a card's children are drawn as it is unfolded. 400
# nodes take some 20 ms to add; all of a 10,000-card board took 0.5 s on the UI thread
DRAW_AT_ONCE = 400

CUT_WORDS = {
    CUT_CYCLE: "a cycle back to it above",
    CUT_ABOVE: "shown above",
    CUT_DEEP: "deeper not shown",
}


class DepsRead(Frozen):
    """What the worker read: one card's trees, or the board's chains; and, for each
    blocked card others wait on, how many open cards wait behind it."""

    card: CardDeps | None
    chains: tuple[DepNode, ...]
    behind: dict[str, int]


def blocked_behind(graph: DepGraph, trees: tuple[DepNode, ...]) -> dict[str, int]:
    """For every blocked card in these trees that an open card waits on, how many open
    cards wait behind it (directly or through others)."""
    found: dict[str, int] = {}
    todo = list(trees)
    while todo:
        node = todo.pop()
        todo.extend(node.children)
        if node.blocked and not node.met and node.id not in found:
            behind = count_behind(graph, node.id)
            if behind:
                found[node.id] = behind
    return found


# Tree's own actions for the six movements (its page and end actions move the cursor too)
TREE_MOVES = {
    "down": "cursor_down",
    "up": "cursor_up",
    "page_down": "page_down",
    "page_up": "page_up",
    "first": "scroll_home",
    "last": "scroll_end",
}


class DepTree(Tree[str]):
    """The trees, each node's data its card id (None for a heading)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "open", tooltip="that card's screen", id="deps.open"),
        # z, as vim folds: space pages the pages one reads (tui/movement.py), so no list
        # takes it for a verb of its own
        Binding("z", "toggle_node", "fold", show=False, tooltip="fold or unfold", id="deps.fold"),
        *movement_bindings("deps", TREE_MOVES, ids=EDGES, said=EDGES),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {"deps--badge", "deps--met", "deps--id"}


class DepsScreen(BoardAppScreen):
    """One card's dependency trees, both ways, or (`a`) every chain of the board."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "back", tooltip="back where you were", id="deps.back"),
        Binding(
            "a",
            "toggle_board",
            "card/board",
            tooltip="this card's trees, or every chain of the board (blocked heads first)",
            id="deps.board",
        ),
    ]

    def __init__(self, card_id: str | None) -> None:
        super().__init__()
        self.card_id = card_id
        self.board_wide = card_id is None
        self.read: DepsRead | None = None  # the latest reading shown
        self._pending: dict[NodeID, DepNode] = {}  # folded cards whose children wait
        self._budget = DRAW_AT_ONCE
        self._styles: LabelStyles = (Style(), Style(), Style())

    def compose(self) -> ComposeResult:
        yield Static(Text("reading the dependencies…"), id="deps-title")
        tree = DepTree(Text(""), id="deps-tree")
        tree.show_root = False
        tree.auto_expand = False
        yield tree
        yield KeysFooter()

    def on_mount(self) -> None:
        self.watch_store()
        self.reload()

    def reload(self) -> None:
        self._read(self.card_id, self.board_wide)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_toggle_board(self) -> None:
        if self.board_wide and self.card_id is None:
            self.board_app.say("deps: opened on no card; only the board's chains", error=True)
            return
        self.board_wide = not self.board_wide
        self.reload()

    @work(thread=True, exclusive=True, group="deps-read", exit_on_error=False)
    def _read(self, card_id: str | None, board_wide: bool) -> None:
        app = self.board_app
        try:
            graph = read_graph(app.store)
            if board_wide or card_id is None:
                chains = board_chains(graph)
                read = DepsRead(None, chains, blocked_behind(graph, chains))
            else:
                deps = card_deps(graph, card_id)
                trees = deps.waits_on + deps.waited_on_by
                behind = blocked_behind(graph, (*trees, graph.node(card_id)))
                read = DepsRead(deps, (), behind)
        except BoardError as exc:  # a card gone, a store error: a line, not a crash
            app.call_from_thread(app.say, f"deps: {exc.line()}", True)
            return
        app.call_from_thread(self.show, read)

    # drawing ---------------------------------------------------------------------------------

    def label(self, node: DepNode, read: DepsRead, styles: LabelStyles) -> Text:
        """`c-3 working  held  ✓ its title  ◀ 4 wait behind it`: the title literal, one line."""
        badge, met, bold = styles
        text = Text()
        text.append(node.id, bold)
        text.append(f" {node.lane}", met if node.met else Style())
        if node.blocked:
            text.append(" ")
            text.append(f" {node.blocked} ", badge)
        if node.met:
            text.append(" ✓", met)
        title = "(no such card)" if node.lane == MISSING else one_line(node.title)
        text.append(f"  {title}")
        behind = read.behind.get(node.id)
        if behind:
            text.append(f"  ◀ {behind} wait behind it", badge)
        if node.cut:
            text.append(f"  ({CUT_WORDS[node.cut]})", met)
        return text

    def _add(self, parent: TreeNode[str], nodes: tuple[DepNode, ...]) -> None:
        """Draw `nodes` under `parent`, unfolded while the budget lasts; past it a card's
        children wait (`_pending`) until it is unfolded, so a board of 10,000 cards
        does not hold the screen while every one of them becomes a node."""
        assert self.read is not None
        for node in nodes:
            label = self.label(node, self.read, self._styles)
            self._budget -= 1
            if not node.children:
                parent.add_leaf(label, data=node.id)
                continue
            unfold = self._budget > 0
            branch = parent.add(label, data=node.id, expand=unfold)
            if unfold:
                self._add(branch, node.children)
            else:
                self._pending[branch.id] = node

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[str]) -> None:
        """A folded card unfolded: its children drawn now, with a budget of their own."""
        waiting = self._pending.pop(event.node.id, None)
        if waiting is not None:
            self._budget = DRAW_AT_ONCE
            self._add(event.node, waiting.children)

    def show(self, read: DepsRead) -> None:
        self.read = read
        tree = self.query_one(DepTree)
        was = tree.cursor_node.data if tree.cursor_node is not None else None
        tree.clear()
        self._pending.clear()
        self._budget = DRAW_AT_ONCE
        self._styles = (
            tree.get_component_rich_style("deps--badge", partial=True),
            tree.get_component_rich_style("deps--met", partial=True),
            tree.get_component_rich_style("deps--id", partial=True),
        )
        if read.card is not None:
            card = read.card.card
            block = [f"blocked {card.blocked.cls}"] if card.blocked else []
            if read.behind.get(card.id):
                block.append(f"{read.behind[card.id]} wait behind it")
            self.query_one("#deps-title", Static).update(
                Text(" · ".join((card.id, card.lane, *block, one_line(card.title))))
            )
            for heading, nodes in (
                ("waits on", read.card.waits_on),
                ("waited on by", read.card.waited_on_by),
            ):
                section = tree.root.add(Text(heading, style="bold"), expand=True)
                if nodes:
                    self._add(section, nodes)
                else:
                    section.add_leaf(Text("nothing"))
        else:
            blocked = sum(1 for root in read.chains if root.blocked)
            words = f"every chain of the board: {len(read.chains)} heads, {blocked} blocked"
            if not read.chains:
                words = "every chain of the board: none (no open card waits on another)"
            self._add(tree.root, read.chains)
            if self._pending:
                words += f" · the first {DRAW_AT_ONCE} unfolded, z unfolds the rest"
            self.query_one("#deps-title", Static).update(Text(words))
        tree.root.expand()
        # a node knows its line once the tree has laid its lines out: after the refresh
        self.call_after_refresh(self._put_cursor, tree, was)
        tree.focus()

    def _put_cursor(self, tree: DepTree, card_id: str | None) -> None:
        """Back on the card the cursor was on (a reload), else on the first card."""
        first: TreeNode[str] | None = None
        todo = list(reversed(tree.root.children))
        while todo:  # depth first, top to bottom
            node = todo.pop()
            if node.data is not None:
                if node.data == card_id:
                    tree.move_cursor(node)
                    return
                first = first or node
            todo.extend(reversed(node.children))
        if first is not None:
            tree.move_cursor(first)

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        """enter: that card's screen (a heading opens nothing)."""
        event.stop()
        card_id = event.node.data
        if card_id is None:
            return
        read = self.read
        if read is not None and self._missing(card_id, read):
            self.board_app.say(f"deps: no card {card_id}", error=True)
            return
        from .card import CardScreen  # loaded when first opened, as the board does

        self.app.push_screen(CardScreen(card_id))

    @staticmethod
    def _missing(card_id: str, read: DepsRead) -> bool:
        trees = read.chains
        if read.card is not None:
            trees = read.card.waits_on + read.card.waited_on_by
        todo = list(trees)
        while todo:
            node = todo.pop()
            if node.id == card_id:
                return node.lane == MISSING
            todo.extend(node.children)
        return False


__all__ = ["DepTree", "DepsRead", "DepsScreen", "blocked_behind"]

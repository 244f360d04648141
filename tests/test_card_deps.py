"""`board card deps ID [--json]`: what a card waits on and what waits on it, on the real
SQLite store through the real command line (a second process). A chain and a fan-in are
drawn both ways with lane, block and met; the JSON has its stable shape; an unknown id is
one line and non-zero; a cycle planted in the store's file past every check ends, marked;
a chain of diamonds does not double at every level; the trees come from one read."""

from __future__ import annotations

import json

import pytest
from board.core.cards import deptree
from board.core.model import Card

from tests.support.deps import HOSTILE_TITLE, deps_board, plant_dep
from tests.support.tui import cli


@pytest.fixture
def board(tmp_path):
    board = deps_board(tmp_path)
    yield board
    board.close()


def deps_of(board, card_id: str) -> dict:
    res = cli(board, "card", "deps", card_id, "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def shape(nodes: list[dict]) -> list:
    """The trees as (id, [children…]) pairs, for comparing their form at a glance."""
    return [(n["id"], shape(n["children"])) for n in nodes]


def test_a_chain_and_a_fan_in_are_drawn_both_ways_with_lane_block_and_met(board) -> None:
    res = cli(board, "card", "deps", "c-4")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [
        "c-4      backlog   p2  Import from GitHub",
        "waits on:",
        "  ├─ c-3  backlog  Store the cards",
        "  │  └─ c-2  ready [held]  Write the migrations",
        "  │     └─ c-1  done ✓  Design the schema",
        "  └─ c-5  working  Read the gh JSON",
        "     └─ c-1  done ✓  Design the schema",
        "waited on by:",
        "  └─ c-6  backlog  [bold red]x[/] [@click=app.quit]q[/] ␛[2Jwipe",
    ]
    res = cli(board, "card", "deps", "c-1")
    assert res.stdout.splitlines()[1:] == [
        "waits on: nothing",
        "waited on by:",
        "  ├─ c-2  ready [held]  Write the migrations",
        "  │  └─ c-3  backlog  Store the cards",
        "  │     └─ c-4  backlog  Import from GitHub",
        "  │        └─ c-6  backlog  [bold red]x[/] [@click=app.quit]q[/] ␛[2Jwipe",
        "  └─ c-5  working  Read the gh JSON",
        "     ├─ c-4  backlog  Import from GitHub  (shown above)",
        "     └─ c-8  backlog  Docs for the import",
    ]
    assert "\x1b" not in res.stdout, "a title's escape reached the terminal"


def test_the_json_has_its_stable_shape(board) -> None:
    data = deps_of(board, "c-4")
    assert list(data) == ["card", "waits_on", "waited_on_by"]
    assert data["card"] == "c-4"
    assert shape(data["waits_on"]) == [("c-3", [("c-2", [("c-1", [])])]), ("c-5", [("c-1", [])])]
    assert shape(data["waited_on_by"]) == [("c-6", [])]
    c3 = data["waits_on"][0]
    assert list(c3) == ["id", "title", "lane", "blocked", "met", "cut", "children"]
    c2 = c3["children"][0]
    assert (c2["lane"], c2["blocked"], c2["met"]) == ("ready", "held", False)
    c1 = c2["children"][0]
    assert (c1["title"], c1["lane"], c1["blocked"], c1["met"]) == (
        "Design the schema",
        "done",
        None,
        True,
    )
    assert data["waited_on_by"][0]["title"] == HOSTILE_TITLE, "JSON carries the title as stored"
    assert deps_of(board, "c-7") == {"card": "c-7", "waits_on": [], "waited_on_by": []}
    fan = deps_of(board, "c-5")["waited_on_by"]
    assert shape(fan) == [("c-4", [("c-6", [])]), ("c-8", [])]


def test_an_unknown_id_is_one_line_and_non_zero(board) -> None:
    for args in (("c-99",), ("c-99", "--json"), ("\x1b[2J",)):
        res = cli(board, "card", "deps", *args)
        assert res.returncode != 0
        assert res.stdout == ""
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("board: no card"), res.stderr
        assert "\x1b" not in res.stderr


def test_a_cycle_planted_in_the_store_ends_marked(board) -> None:
    """card add and edit refuse a cycle; a corrupt store may still hold one (written here
    into the file). The walk ends (the command has 20 s) and marks where it came round."""
    plant_dep(board, "c-1", "c-6")  # c-6 → c-4 → c-3 → c-2 → c-1 → c-6
    res = cli(board, "card", "deps", "c-4", timeout=20)
    assert res.returncode == 0, res.stderr
    assert "  │        └─ c-6  backlog" in res.stdout
    assert "c-4  backlog  Import from GitHub  (a cycle back to it above" in res.stdout
    data = deps_of(board, "c-4")
    cut = data["waits_on"][0]["children"][0]["children"][0]["children"][0]["children"][0]
    assert (cut["id"], cut["cut"], cut["children"]) == ("c-4", "cycle", [])
    # the board-wide chains: a cycle has no head, and is still shown, and ends
    chains = deptree.board_chains(deptree.read_graph(board.store))
    ids = {n.id for n in chains}
    assert ids == {"c-2", "c-5"}, "c-1 is done: its planted dep holds nobody back"
    assert deptree.node_count(chains) < 20


def test_a_chain_of_diamonds_does_not_double_at_each_level() -> None:
    """Each card's children are listed once in a tree (`above` after): 30 diamonds would
    be 2**30 paths drawn in full."""
    cards = [Card(id="c-0", title="top")]
    for i in range(1, 31):
        a, b, c = f"c-{3 * i - 2}", f"c-{3 * i - 1}", f"c-{3 * i}"
        below = cards[-1].id
        cards += [
            Card(id=a, title=a, deps=(below,)),
            Card(id=b, title=b, deps=(below,)),
            Card(id=c, title=c, deps=(a, b)),
        ]
    graph = deptree.graph_of(cards)
    deps = deptree.card_deps(graph, cards[-1].id)
    assert (
        deptree.node_count(deps.waits_on) <= 4 * 31
    )  # each card once, and one `above` per diamond
    up = deptree.card_deps(graph, "c-0")
    assert (
        deptree.node_count(up.waited_on_by) <= 4 * 31
    )  # each card once, and one `above` per diamond


def test_a_chain_deeper_than_the_cap_is_cut_not_overflowed() -> None:
    n = deptree.MAX_DEPTH + 50
    cards = [Card(id="c-1", title="first")]
    cards += [Card(id=f"c-{i}", title=str(i), deps=(f"c-{i - 1}",)) for i in range(2, n + 1)]
    deps = deptree.card_deps(deptree.graph_of(cards), f"c-{n}")
    node, depth = deps.waits_on[0], 1
    while node.children:
        node, depth = node.children[0], depth + 1
    assert node.cut == deptree.CUT_DEEP and depth == deptree.MAX_DEPTH + 1
    assert json.dumps(deps.to_json())  # no RecursionError in the JSON either


def test_the_heads_are_the_fronts_of_the_chains_blocked_first(board) -> None:
    graph = deptree.read_graph(board.store)
    assert deptree.heads(graph) == ["c-2", "c-5"]
    chains = deptree.board_chains(graph)
    assert [(n.id, n.blocked) for n in chains] == [("c-2", "held"), ("c-5", None)]
    assert shape([n.to_json() for n in chains]) == [
        ("c-2", [("c-3", [("c-4", [("c-6", [])])])]),
        ("c-5", [("c-4", []), ("c-8", [])]),
    ]
    assert chains[1].children[0].cut == deptree.CUT_ABOVE
    assert deptree.count_behind(graph, "c-2") == 3 and deptree.count_behind(graph, "c-5") == 3


def test_the_trees_come_from_one_read_of_the_store(board, monkeypatch) -> None:
    """Every card's deps in one read, not a query per node."""
    store = board.store
    calls: list[str] = []
    for name in ("get", "list_cards", "dependents", "timeline", "lane_heads"):
        real = getattr(store, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(store, name, counted)
    deptree.card_deps(deptree.read_graph(store), "c-4")
    deptree.board_chains(deptree.read_graph(store))
    assert calls == ["list_cards", "list_cards"]

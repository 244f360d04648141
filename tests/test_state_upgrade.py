"""The board's own state is data, not words (issue 40): its counts of a card live in the
store's card_state table and its lane moves in lane_moves, never in the operator's labels
nor only in the words of a timeline line.

A board made by the code of commit c258853 (the last before, its source taken with `git
archive` and run in a child process: tests/support/old_board.py) opens with this code on
both stores with nothing lost: the operator's labels stay (and any label not of exactly
the forms that code wrote), the counts move to their new home with the same values, the
cards and timelines are as they were, and the flow screen's figures are the ones that code
gave on the same store at the same clock.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from board.core.cards import split, waits
from board.core.errors import CorruptCard, Refused
from board.core.failures import stamp
from board.core.flowstats import read_flow
from board.core.model import Blocked, CardDraft
from board.core.store import Expect, SQLiteStore, Store
from board.core.store.postgres import PostgresStore

from tests.support import old_code as old_code_
from tests.support.repos import run_cli

pytestmark = pytest.mark.backends()

OLD = "c258853"  # the last commit whose board kept its counts in labels
OLD_BOARD = Path(__file__).with_name("support") / "old_board.py"
END = datetime(2026, 1, 2, 0, 0, tzinfo=UTC)  # as old_board.py's
FIGURES = (
    "done_per_hour", "lane_seconds", "lane_cards", "durations", "longest_per_hour", "failures",
    "peak_working",
)  # fmt: skip


@pytest.fixture(scope="module")
def old_code(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The source of commit OLD laid out as the import package `board`."""
    return old_code_.package_of(OLD, tmp_path_factory.mktemp("old-code"))


def made_by_old_code(old_code: Path, tmp_path: Path, where: str) -> dict:
    """Run old_board.py under the old code; what it wrote of its board."""
    out = tmp_path / "old.json"
    old_code_.run_script(OLD_BOARD, old_code, tmp_path, where, str(out))
    return json.loads(out.read_text(encoding="utf-8"))


def open_new(where: str) -> Store:
    return PostgresStore(where) if where.startswith("postgresql://") else SQLiteStore(where)


def figures(store: Store) -> dict:
    flow = read_flow(store, END, max_concurrent=3)
    # as JSON has them (old_board.py wrote them so): float keys and lists alike
    return json.loads(json.dumps({name: getattr(flow, name) for name in FIGURES}))


def test_a_board_made_by_the_old_code_opens_with_its_counts_as_data_and_loses_nothing(
    old_code: Path, tmp_path: Path, store_url: str
) -> None:
    where = store_url or str(tmp_path / "board.db")
    old = made_by_old_code(old_code, tmp_path, where)
    assert Path(old["code"]).is_relative_to(old_code), f"not the old code: {old['code']}"
    by_title = {card["title"]: card for card in old["cards"]}
    # premise: the old code wrote its counts among the labels, and its flow saw a real day
    assert by_title["retried twice"]["labels"] == [
        "ui", "rung=smart", "tries:rate-limit=2", "tries:transient=1",
    ]  # fmt: skip
    assert by_title["told once"]["labels"] == ["keep", "told=gate-red:0123456789"]
    assert by_title["too wide"]["labels"] == [
        "x",
        "tries:garbled=many",
        "rung=",
        "budget:timeout=2",
    ]
    assert by_title["done in a day"]["labels"] == ["docs", "rungs=3", "told-you", "reviews-seen=1"]
    flow = old["flow"]
    assert sum(flow["done_per_hour"]) == 1 and flow["failures"] and max(flow["peak_working"]) >= 1

    store = open_new(where)
    try:
        want = {  # title: (the operator's labels, tries, rung, told, timeouts, reviews_seen)
            "retried twice": (("ui",), (("rate-limit", 2), ("transient", 1)), "smart", "", 0, 0),
            "told once": (("keep",), (), "", "gate-red:0123456789", 0, 0),
            "too wide": (("x", "tries:garbled=many", "rung="), (), "", "", 2, 0),
            "done in a day": (("docs", "rungs=3", "told-you"), (), "", "", 0, 1),
            "made and left": ((), (), "", "", 0, 0),
        }
        for before in old["cards"]:
            card = store.get(before["id"])
            got = (card.labels, card.tries, card.rung, card.told, card.timeouts, card.reviews_seen)
            assert got == want[card.title], card
            now = card.to_json()
            for key, value in before.items():  # every other field as it was, version too
                if key not in ("labels", "timeline"):
                    assert now[key] == value, (card.id, key)
            assert [e.to_json() for e in store.timeline(card.id)] == before["timeline"]
        retried = store.get(by_title["retried twice"]["id"])
        assert waits.tries(retried, "rate-limit") == 2 and waits.wait_class(retried) == "rate-limit"
        assert split.timeout_count(store.get(by_title["too wide"]["id"])) == 2
        moves = store.lane_moves_since("")
        assert len(moves) == 17, moves  # every lane change the timelines record, once
        assert figures(store) == flow
    finally:
        store.close()
    again = open_new(where)  # the second open finds it current: nothing moved twice
    try:
        assert len(again.lane_moves_since("")) == 17
        assert figures(again) == flow
    finally:
        again.close()


def test_a_block_reason_that_quotes_a_lane_move_is_not_counted_as_one(st: Store) -> None:
    """The flow counts the lane moves the store recorded, not the words of a timeline line:
    a reason that reads `lane backlog → done` moves nothing."""

    def now(hours: float) -> None:
        st.clock = lambda: stamp(END - timedelta(hours=hours))  # type: ignore[method-assign]

    now(3)
    card = st.create(CardDraft(title="quoted", spec="s"), "c", "op")
    now(2)
    st.update(card.id, Expect(), {"lane": "ready"}, who="op")
    now(1)
    reason = "the log said; lane backlog → done"
    st.update(card.id, Expect(), {"blocked": Blocked("held", reason)}, who="op")
    lines = [e.text for e in st.timeline(card.id)]
    assert f"blocked held: {reason}" in lines, lines  # premise: the words are in the timeline
    flow = read_flow(st, END, max_concurrent=3)
    assert flow.done_per_hour == [0] * 24, "a block reason was counted as a card done"
    assert flow.lane_seconds["ready"] == 2 * 3600 and flow.lane_seconds["backlog"] == 3600
    assert [(m.old, m.new, m.who) for m in st.lane_moves_since("")] == [("backlog", "ready", "op")]


def test_the_boards_counts_are_written_beside_the_card_not_among_its_labels(st: Store) -> None:
    """A count set, then cleared: the labels never change, and a card whose counts are at
    rest keeps no card_state row."""
    card = st.create(CardDraft(title="counted", spec="s", labels=["mine"]), "c", "op")
    counted = st.update(
        card.id,
        Expect(version=card.version),
        {
            "tries": (("transient", 1),),
            "rung": "smart",
            "told": "held:abc",
            "timeouts": 1,
            "reviews_seen": 2,
        },
    )
    assert counted.labels == ("mine",)
    assert (counted.tries, counted.rung, counted.told, counted.timeouts) == (
        (("transient", 1),), "smart", "held:abc", 1,
    )  # fmt: skip
    assert counted.reviews_seen == 2
    assert st.list_cards() == [counted] and st.lane_heads(5).cards["backlog"] == [counted]
    assert json.loads(st.list_cards_json()) == [counted.to_json()]
    assert counted.counts() == (
        "tries transient=1; rung smart; timeouts 1; reviews seen 2; told held:abc"
    )
    rest = {"tries": (), "rung": "", "told": "", "timeouts": 0, "reviews_seen": 0}
    cleared = st.update(card.id, Expect(), rest)
    assert cleared.labels == ("mine",) and cleared.counts() == ""
    assert by_hand(st, "SELECT COUNT(*) FROM card_state") == [(0,)]


def by_hand(st: Store, sql: str) -> list[tuple]:
    """A statement run beside the store, as a hand edit would be."""
    if isinstance(st, SQLiteStore):
        with st.conn:
            return st.conn.execute(sql).fetchall()
    assert isinstance(st, PostgresStore)
    with psycopg.connect(st.url) as pg:
        cur = pg.execute(sql)
        return cur.fetchall() if cur.description else []


def test_a_bad_count_is_refused_and_a_spoilt_row_named(st: Store) -> None:
    card = st.create(CardDraft(title="counted", spec="s"), "c", "op")
    for bad in ({"tries": (("transient", -1),)}, {"tries": "lots"}, {"timeouts": "2"}):
        with pytest.raises(Refused):
            st.update(card.id, Expect(), bad)
    assert st.get(card.id) == card and len(st.timeline(card.id)) == 1, "a refusal wrote"
    st.update(card.id, Expect(), {"tries": (("transient", 1),)})
    by_hand(st, "UPDATE card_state SET tries = 'not json'")
    with pytest.raises(CorruptCard) as exc:
        st.get(card.id)
    assert "tries" in exc.value.line(), exc.value.line()
    unreadable: list[CorruptCard] = []
    assert st.list_cards(unreadable=unreadable) == [] and len(unreadable) == 1


def test_card_show_prints_the_counts_beside_the_labels_not_among_them(
    repo: Path, store: Store
) -> None:
    card = store.create(CardDraft(title="counted", spec="s", labels=["mine"]), "c", "op")
    store.update(card.id, Expect(), {"tries": (("rate-limit", 1),), "rung": "high"})
    res = run_cli(repo, "card", "show", card.id)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "labels: mine" in lines and "counts: tries rate-limit=1; rung high" in lines, lines
    shown = json.loads(run_cli(repo, "card", "show", card.id, "--json").stdout)
    assert (shown["labels"], shown["tries"], shown["rung"]) == (["mine"], {"rate-limit": 1}, "high")

"""core/store/cardcache.py, a store's cards of its last whole listing given back for rows
that did not change, held equal to making every card afresh (`sqltx.read_cards`)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from board.core.errors import CorruptCard
from board.core.model import Blocked, Card, CardDraft
from board.core.store import Expect, SQLiteStore
from board.core.store.sqltx import read_cards


def _afresh(store: SQLiteStore, unreadable: list[CorruptCard] | None = None) -> list[Card]:
    return store._in_read_tx(lambda conn: read_cards(conn, store.PARAM, None, unreadable))


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    s = SQLiteStore(tmp_path / "board.db", create=True)
    for i in range(30):
        s.create(CardDraft(title=f"card {i}", spec="spec " * i, labels=["x"] if i % 2 else []))
    return s


def _edit(store: SQLiteStore, rng: random.Random) -> str:
    cards = store.list_cards()
    card = rng.choice(cards)
    what = rng.randrange(9)
    if what == 0:
        store.update(card.id, Expect(), {"priority": rng.randrange(-3, 4)})
    elif what == 1:
        store.update(card.id, Expect(), {"title": f"{card.title}!"})
    elif what == 2:
        store.update(card.id, Expect(), {"labels": rng.sample(["a", "b", "c", 'q"uote'], 2)})
    elif what == 3:
        others = [c.id for c in cards if c.id != card.id and card.id not in c.deps]
        store.update(card.id, Expect(), {"deps": rng.sample(others, rng.randrange(3))})
    elif what == 4:
        store.update(card.id, Expect(), {"blocked": Blocked("held", "by a test")})
    elif what == 5:
        store.update(card.id, Expect(), {"blocked": None})
    elif what == 6:
        store.update(card.id, Expect(), {"surface": [f"work/{rng.randrange(5)}.py"]})
    elif what == 7:  # a count: the card_state row alone changes
        n = dict(card.tries).get("gate-red", 0) + 1
        store.update(card.id, Expect(), {"tries": (("gate-red", n),), "rung": rng.choice("ab")})
    else:
        store.create(CardDraft(title=f"added {rng.random()}"))
    return f"{what} on {card.id}"


def test_a_listing_after_any_edit_equals_one_made_afresh(store: SQLiteStore) -> None:
    rng = random.Random(45)
    for _ in range(300):
        did = _edit(store, rng)
        assert store.list_cards() == _afresh(store), did


def test_a_card_whose_row_did_not_change_is_given_back_and_an_edited_one_is_not(
    store: SQLiteStore,
) -> None:
    """The trick itself (red without it: every card is made again)."""
    first = {c.id: c for c in store.list_cards()}
    store.update("c-3", Expect(), {"title": "changed"})
    second = {c.id: c for c in store.list_cards()}
    assert second["c-3"] is not first["c-3"] and second["c-3"].title == "changed"
    assert all(second[cid] is first[cid] for cid in first if cid != "c-3")


def test_a_change_to_a_cards_deps_or_counts_alone_is_seen(store: SQLiteStore) -> None:
    store.list_cards()
    with sqlite3.connect(store.path) as conn:  # no version bump: only the other tables move
        conn.execute("INSERT INTO deps (card, dep) VALUES ('c-5', 'c-1')")
        conn.execute(
            "INSERT INTO card_state (card, tries, rung, told, timeouts, reviews_seen) "
            "VALUES ('c-6', '{\"gate-red\": 2}', '', '', 0, 0)"
        )
    listed = {c.id: c for c in store.list_cards()}
    assert listed["c-5"].deps == ("c-1",)
    assert listed["c-6"].tries == (("gate-red", 2),)
    assert store.list_cards() == _afresh(store)


def test_a_corrupt_row_is_never_kept_and_always_named(store: SQLiteStore) -> None:
    store.list_cards()
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE cards SET priority = 'high' WHERE id = 'c-2'")
    for _ in range(2):
        with pytest.raises(CorruptCard, match="c-2"):
            store.list_cards()
        unreadable: list[CorruptCard] = []
        listed = store.list_cards(unreadable=unreadable)
        assert [e.card for e in unreadable] == ["c-2"]
        assert listed == _afresh(store, [])
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE cards SET priority = 1 WHERE id = 'c-2'")
    assert store.get("c-2") in store.list_cards()

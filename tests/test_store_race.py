"""A card's own race of tiers (`card add|edit --race a,b`, issue 42) as the store keeps it, on
the SQLite file and on PostgreSQL (the `backends` mark): `cards.race` (schema 8), a JSON list
of tier names in the order the candidates run them, '[]' for none; and a board made before
schema 8 opening with its cards and drives as that code read them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from board.core.model import CardDraft
from board.core.store import SCHEMA_VERSION, Expect, SQLiteStore, Store
from board.core.store.postgres import PostgresStore

from tests.support import old_code

pytestmark = pytest.mark.backends()

# the last commit whose cards had no race (schema 7)
OLD = "d64c5eeec477a9f8088606459e70b467ac5c78a1"
V7_BOARD = Path(__file__).with_name("support") / "v7_board.py"


def test_a_card_keeps_its_race_in_order_and_none_is_an_empty_list(
    new_store: Callable[..., Store],
) -> None:
    store = new_store()
    raced = store.create(CardDraft(title="raced", spec="s", race=["b", "a", "b"]))
    plain = store.create(CardDraft(title="plain", spec="s"))
    assert (raced.race, plain.race) == (("b", "a", "b"), ())
    assert store._read("SELECT id, race FROM cards ORDER BY seq") == [  # type: ignore[attr-defined]
        (raced.id, '["b", "a", "b"]'),
        (plain.id, "[]"),
    ]
    with store.transaction() as tx:
        tx.update(raced.id, Expect(version=raced.version), {"race": ("a",), "best_of": 0}, "op")
    assert store.get(raced.id).race == ("a",)
    assert "race b,a,b → a" in store.timeline(raced.id)[-1].text
    with store.transaction() as tx:
        tx.update(plain.id, Expect(version=plain.version), {"race": ("x", "y")}, "op")
    assert "race ∅ → x,y" in store.timeline(plain.id)[-1].text
    # `card list --json` writes plain rows from their columns: the text json.dumps writes
    cards = store.list_cards()
    assert [c.to_json()["race"] for c in cards] == [["a"], ["x", "y"]]
    want = json.dumps([c.to_json() for c in cards], indent=2, ensure_ascii=False)
    assert store.list_cards_json() == want
    with store.transaction() as tx:
        tx.update(plain.id, Expect(version=plain.version + 1), {"race": ()}, "op")
    assert store.get(plain.id).race == ()
    assert "race x,y → ∅" in store.timeline(plain.id)[-1].text


def test_a_board_made_before_races_opens_with_its_cards_and_drives_intact(
    tmp_path: Path, store_url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The code of commit OLD makes a schema-7 board (a card of its own best of 3 that
    raced); this code opens it: schema 8, every card and drive as that code read them, no
    card with a race, and a race written afterwards."""
    where = store_url or str(tmp_path / "board.db")
    pkg = old_code.package_of(OLD, tmp_path_factory.mktemp("v7-code"))
    out = tmp_path / "old.json"
    old_code.run_script(V7_BOARD, pkg, tmp_path, where, str(out))
    old = json.loads(out.read_text(encoding="utf-8"))
    assert Path(old["code"]).is_relative_to(pkg) and old["schema"] == "7"
    assert "race" not in old["cards"][0] and old["cards"][0]["best_of"] == 3

    store = PostgresStore(where) if store_url else SQLiteStore(where)
    try:
        assert store._read("SELECT value FROM meta WHERE key = 'schema'") == [
            (str(SCHEMA_VERSION),)
        ]
        assert SCHEMA_VERSION >= 8  # what later versions add is theirs to check
        assert [d.to_json() for d in store.list_drives()] == old["drives"], "a drive changed"
        cards = store.list_cards()
        assert [c.to_json() for c in cards] == [
            {**before, "race": [], **old_code.NO_SOURCE} for before in old["cards"]
        ], "a card changed in the upgrade"
        assert json.loads(store.list_cards_json()) == [c.to_json() for c in cards]
        with store.transaction() as tx:
            tx.update("c-2", Expect(version=cards[1].version), {"race": ("cheap", "smart")}, "op")
        assert store.get("c-2").race == ("cheap", "smart")
        assert store.get("c-1").best_of == 3 and store.get("c-1").race == ()
    finally:
        store.close()

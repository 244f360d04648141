"""A card's own best of N and a race's candidates, as the store keeps them (issue 42), on the
SQLite file and on PostgreSQL (the `backends` mark): `cards.best_of` (NULL: the board's
`[coder] best_of`) and a drive row's `candidate`, `gate` and `lines_changed` (schema 7), a
bad value refused with nothing written, and a board made before schema 7 opening with its
cards and drives as that code read them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from board.core.errors import Refused
from board.core.model import CardDraft, Usage
from board.core.store import SCHEMA_VERSION, Expect, SQLiteStore, Store
from board.core.store.postgres import PostgresStore

from tests.support import old_code

pytestmark = pytest.mark.backends()

# the last commit whose cards had no best_of and whose drives no candidate (schema 6)
OLD = "bc32040cb346eb39791ada7eed7a7febbe46fc24"
V6_BOARD = Path(__file__).with_name("support") / "v6_board.py"


def test_a_card_keeps_its_own_best_of_and_zero_is_the_board_s(
    new_store: Callable[..., Store],
) -> None:
    store = new_store()
    own = store.create(CardDraft(title="raced", spec="s", best_of=3))
    plain = store.create(CardDraft(title="plain", spec="s"))
    assert (own.best_of, plain.best_of) == (3, 0)
    assert store._read("SELECT id, best_of FROM cards ORDER BY seq") == [  # type: ignore[attr-defined]
        (own.id, 3),
        (plain.id, None),
    ], "the board's (0) is not kept as NULL"
    with store.transaction() as tx:
        tx.update(own.id, Expect(version=own.version), {"best_of": 16}, "op")
    assert store.get(own.id).best_of == 16
    assert "best_of 3 → 16" in store.timeline(own.id)[-1].text
    with store.transaction() as tx:
        tx.update(own.id, Expect(version=own.version + 1), {"best_of": 0}, "op")
    assert store.get(own.id).best_of == 0
    # `card list --json` writes plain rows from their columns: the text json.dumps writes
    with store.transaction() as tx:
        tx.update(plain.id, Expect(version=plain.version), {"best_of": 2}, "op")
    cards = store.list_cards()
    assert [c.to_json()["best_of"] for c in cards] == [None, 2]
    want = json.dumps([c.to_json() for c in cards], indent=2, ensure_ascii=False)
    assert store.list_cards_json() == want


def test_a_drive_row_records_the_candidate_it_was_and_refuses_what_is_not_one(
    new_store: Callable[..., Store],
) -> None:
    store = new_store()
    card = store.create(CardDraft(title="t", spec="s")).id
    single = store.start_drive(card, "cheap", 1, "", 4242)
    assert (single.candidate, single.gate, single.lines_changed) == (None, "", None)
    two = store.start_drive(card, "cheap", 2, "", 4242, candidate=2)
    assert store.get_drive(two.id).candidate == 2
    store.update_drive(two.id, status="passed", gate="green", lines_changed=7)
    got = store.get_drive(two.id)
    assert (got.candidate, got.gate, got.lines_changed, got.status) == (2, "green", 7, "passed")
    assert got.to_json()["candidate"] == 2 and got.to_json()["gate"] == "green"

    before = [d.to_json() for d in store.list_drives(card)]
    for bad in ({"candidate": 0}, {"candidate": True}, {"candidate": "2"}):
        with pytest.raises(Refused, match="drive candidate must be a whole number from 1"):
            store.update_drive(two.id, **bad)  # type: ignore[arg-type]
    for bad in ({"lines_changed": -1}, {"lines_changed": 1.5}):
        with pytest.raises(Refused, match="drive lines_changed must be a whole number from 0"):
            store.update_drive(two.id, **bad)  # type: ignore[arg-type]
    with pytest.raises(Refused, match="drive gate must be 'green', 'red' or '', not 'maybe'"):
        store.update_drive(two.id, gate="maybe", status="failed")
    with pytest.raises(Refused, match="drive candidate must be a whole number from 1"):
        store.start_drive(card, "cheap", 3, "", 4242, candidate=0)
    assert [d.to_json() for d in store.list_drives(card)] == before, "a refused write changed"


def test_race_drives_reads_the_working_cards_candidate_and_live_rows_only(
    new_store: Callable[..., Store],
) -> None:
    """`Store.race_drives` (the board row's `2/5 green`): of the cards in `working`, every
    candidate row and every live row; nothing of a card in another lane, and no ended
    single drive."""
    store = new_store()
    racing = store.create(CardDraft(title="racing", spec="s", best_of=2)).id
    other = store.create(CardDraft(title="ready one", spec="s")).id
    own = store.start_drive(racing, "cheap", 1, "", 4242)
    old = store.start_drive(racing, "cheap", 2, "", 4242)
    store.update_drive(old.id, status="failed")
    one = store.start_drive(racing, "cheap", 3, "", 4242, candidate=1)
    store.update_drive(one.id, status="passed", gate="green", lines_changed=3)
    two = store.start_drive(racing, "cheap", 4, "", 4242, candidate=2)
    elsewhere = store.start_drive(other, "cheap", 1, "", 4242, candidate=1)
    with store.transaction() as tx:
        card = tx.get(racing)
        tx.update(racing, Expect(version=card.version), {"lane": "working", "drive": own.id}, "t")
    got = sorted((d.card, d.id) for d in store.race_drives())
    assert got == sorted((racing, d.id) for d in (own, one, two)), got
    assert elsewhere.id not in {d.id for d in store.race_drives()}


def test_a_board_made_before_best_of_opens_with_its_cards_and_drives_intact(
    tmp_path: Path, store_url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The code of commit OLD makes a schema-6 board; this code opens it: schema 7 and on
    (what 8 adds is tests/test_store_race.py's), every card and drive as that code read
    them, no card with its own best_of and no drive a candidate, and both written after."""
    where = store_url or str(tmp_path / "board.db")
    pkg = old_code.package_of(OLD, tmp_path_factory.mktemp("v6-code"))
    out = tmp_path / "old.json"
    old_code.run_script(V6_BOARD, pkg, tmp_path, where, str(out))
    old = json.loads(out.read_text(encoding="utf-8"))
    assert Path(old["code"]).is_relative_to(pkg) and old["schema"] == "6"
    assert len(old["drives"]) == 3 and "candidate" not in old["drives"][0]
    assert "best_of" not in old["cards"][0]

    store = PostgresStore(where) if store_url else SQLiteStore(where)
    try:
        assert store._read("SELECT value FROM meta WHERE key = 'schema'") == [
            (str(SCHEMA_VERSION),)
        ]
        drives = store.list_drives()
        assert [d.to_json() for d in drives] == [
            {**before, "candidate": None, "gate": "", "lines_changed": None}
            for before in old["drives"]
        ], "a drive changed in the upgrade"
        cards = store.list_cards()
        assert [c.to_json() for c in cards] == [
            {**before, "best_of": None, "race": [], **old_code.NO_SOURCE} for before in old["cards"]
        ], "a card changed in the upgrade"
        assert json.loads(store.list_cards_json()) == [c.to_json() for c in cards]
        assert store.card_usage("c-1").cost_usd == 0.02
        with store.transaction() as tx:
            tx.update("c-2", Expect(version=cards[1].version), {"best_of": 4}, "op")
        assert store.get("c-2").best_of == 4
        row = store.start_drive("c-1", "cheap", 3, "", 4242, candidate=1)
        store.update_drive(row.id, status="failed", gate="red", lines_changed=3)
        store.record_usage(row.id, Usage(1, 2, None, 0.5, "m", 1))
        got = store.get_drive(row.id)
        assert (got.candidate, got.gate, got.lines_changed, got.cost_usd) == (1, "red", 3, 0.5)
    finally:
        store.close()

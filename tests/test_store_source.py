"""Where a card came from (`board card import`, issue 44) as the store keeps it, on the
SQLite file and on PostgreSQL (the `backends` mark): `cards.source` and `cards.source_url`
(schema 10), '' for a card typed in, one card per source; and a board made before schema 10
opening with its cards and drives as that code read them.
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

# the last commit whose cards had no source (schema 8)
OLD = "a46b9cc82775bb35e95f903dcdb1d46cfbbb29ed"
OLD_BOARD = Path(__file__).with_name("support") / "v7_board.py"  # it runs on schema 8 too
URL = "https://github.com/o/r/issues/12"


def test_a_card_keeps_its_source_and_a_second_card_of_one_source_is_refused(
    new_store: Callable[..., Store],
) -> None:
    store = new_store()
    issue = store.create(CardDraft(title="from gh", source="gh#12", source_url=URL))
    plain = store.create(CardDraft(title="typed in"))
    assert (issue.source, issue.source_url, issue.issue_number) == ("gh#12", URL, 12)
    assert (plain.source, plain.source_url, plain.issue_number) == ("", "", None)
    assert store._read("SELECT id, source, source_url FROM cards ORDER BY seq") == [  # type: ignore[attr-defined]
        (issue.id, "gh#12", URL),
        (plain.id, "", ""),
    ]
    cards = store.list_cards()
    assert [(c.to_json()["source"], c.to_json()["source_url"]) for c in cards] == [
        ("gh#12", URL),
        (None, None),
    ]
    want = json.dumps([c.to_json() for c in cards], indent=2, ensure_ascii=False)
    assert store.list_cards_json() == want
    with pytest.raises(Exception):  # noqa: B017 - the driver's own unique-index error
        store.create(CardDraft(title="twice", source="gh#12"))
    assert [c.id for c in store.list_cards()] == [issue.id, plain.id], "a duplicate was added"
    store.create(CardDraft(title="another typed in"))  # '' is no source: any number of them
    with store.transaction() as tx:
        tx.update(plain.id, Expect(version=plain.version), {"source": "file:x#k"}, "op")
    assert store.get(plain.id).source == "file:x#k"
    assert "source ∅ → file:x#k" in store.timeline(plain.id)[-1].text


def test_a_board_made_before_sources_opens_with_its_cards_and_drives_intact(
    tmp_path: Path, store_url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The code of commit OLD makes a schema-8 board; this code opens it: every card and
    drive as that code read them, no card with a source, and a source written afterwards."""
    where = store_url or str(tmp_path / "board.db")
    pkg = old_code.package_of(OLD, tmp_path_factory.mktemp("v8-code"))
    out = tmp_path / "old.json"
    old_code.run_script(OLD_BOARD, pkg, tmp_path, where, str(out))
    old = json.loads(out.read_text(encoding="utf-8"))
    assert Path(old["code"]).is_relative_to(pkg) and old["schema"] == "8"
    assert "source" not in old["cards"][0]

    store = PostgresStore(where) if store_url else SQLiteStore(where)
    try:
        assert store._read("SELECT value FROM meta WHERE key = 'schema'") == [
            (str(SCHEMA_VERSION),)
        ]
        assert [d.to_json() for d in store.list_drives()] == old["drives"], "a drive changed"
        cards = store.list_cards()
        assert [c.to_json() for c in cards] == [
            {**before, **old_code.NO_SOURCE} for before in old["cards"]
        ], "a card changed in the upgrade"
        assert json.loads(store.list_cards_json()) == [c.to_json() for c in cards]
        with store.transaction() as tx:
            tx.update("c-2", Expect(version=cards[1].version), {"source": "gh#3"}, "op")
        assert store.get("c-2").issue_number == 3
        with pytest.raises(Exception):  # noqa: B017 - the unique index came with the upgrade
            store.create(CardDraft(title="twice", source="gh#3"))
    finally:
        store.close()

"""A board at schema 7, made by the code of the last commit before a card had its own race
of tiers (tests/test_store_race.py runs this file with that commit's source on PYTHONPATH,
never this tree's): a card with its own best of 3 and a race's candidate rows (one green,
one red), a card with labels, surface and a dep, and what that code read of them.

Usage: python v7_board.py WHERE OUT, WHERE a SQLite file to make or a PostgreSQL URL;
writes OUT as JSON: the schema version, each drive (to_json) and each card (to_json).
It imports nothing of tests/.
"""

from __future__ import annotations

import json
import sys

import board.core
from board.core.model import CardDraft
from board.core.store import SQLiteStore, Store


def main(where: str, out: str) -> None:
    store: Store
    if where.startswith("postgresql://"):
        from board.core.store.postgres import PostgresStore

        store = PostgresStore(where, create=True)
    else:
        store = SQLiteStore(where, create=True)
    stamps = iter(f"2026-01-01T00:{m:02d}:00.000Z" for m in range(60))
    store.clock = lambda: next(stamps)  # type: ignore[method-assign]
    raced = store.create(CardDraft(title="raced", spec="s", best_of=3), "c", "op").id
    draft = CardDraft(title="plain", spec="s", labels=["ui"], surface=["src/**"], deps=[raced])
    store.create(draft, "c", "op")
    own = store.start_drive(raced, "cheap", 1, ".board/logs/c-1/1.log", 4242)
    green = store.start_drive(raced, "cheap", 2, ".board/logs/c-1/2.log", 4242, candidate=1)
    store.update_drive(green.id, status="passed", gate="green", lines_changed=4)
    red = store.start_drive(raced, "cheap", 3, ".board/logs/c-1/3.log", 4242, candidate=2)
    store.update_drive(red.id, status="failed", gate="red", lines_changed=9)
    store.update_drive(own.id, status="passed", result="folded")
    rows = store._read("SELECT value FROM meta WHERE key = 'schema'")  # type: ignore[attr-defined]
    data = {
        "code": board.core.__file__,
        "schema": rows[0][0],
        "drives": [d.to_json() for d in store.list_drives()],
        "cards": [c.to_json() for c in store.list_cards()],
    }
    store.close()
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

"""A board at schema 6, made by the code of the last commit before a card had its own best
of N and a drive row its candidate (tests/test_store_best_of.py runs this file with that
commit's source on PYTHONPATH, never this tree's): two cards (one with labels, surface and
a dep), a failed drive that recorded usage, a passed one and one still running, and what
that code read of them.

Usage: python v6_board.py WHERE OUT, WHERE a SQLite file to make or a PostgreSQL URL;
writes OUT as JSON: the schema version, each drive (to_json) and each card (to_json).
It imports nothing of tests/.
"""

from __future__ import annotations

import json
import sys

import board.core
from board.core.model import CardDraft, Usage
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
    card = store.create(CardDraft(title="built twice", spec="s"), "c", "op").id
    draft = CardDraft(title="running", spec="s", labels=["ui"], surface=["src/**"], deps=[card])
    other = store.create(draft, "c", "op").id
    first = store.start_drive(card, "cheap", 1, ".board/logs/c-1/1.log", 4242)
    store.update_drive(first.id, status="failed", result="gate-red: 2 tests fail")
    store.record_usage(first.id, Usage(1200, 300, None, 0.02, "m-1", 4))
    second = store.start_drive(card, "smart", 2, ".board/logs/c-1/2.log", 4242)
    store.update_drive(second.id, status="passed", result="folded", pgid=0)
    store.start_drive(other, "cheap", 1, ".board/logs/c-2/1.log", 4243)
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

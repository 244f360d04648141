"""A board whose cards wait on each other, for `board card deps` and the TUI's `D`.

On the fixed clock, in the real SQLite store (tests/support/boards.py), ids c-1 … c-8:

    c-1 done                      (met)
     ├─ c-2 ready, blocked held   ← c-3 ← c-4 ← c-6 (a hostile title)
     └─ c-5 working               ← c-4 (a fan-in: c-4 waits on c-3 and c-5), ← c-8
    c-7 ready, waits on nothing and nothing waits on it

So the board's heads are c-2 (blocked: three open cards wait behind it, the operator's to
act on first) and c-5 (working, three behind it too); c-4 is under both.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from board.core.model import Blocked
from board.core.store import Expect

from tests.support.boards import Board, make_board
from tests.support.tui import CLEAR, MARKUP_TITLE, add

HOSTILE_TITLE = f"{MARKUP_TITLE} {CLEAR}wipe"


def deps_board(tmp_path: Path) -> Board:
    board = make_board(tmp_path)
    store = board.store
    add(store, "Design the schema", "done")
    add(
        store,
        "Write the migrations",
        "ready",
        deps=["c-1"],
        blocked=Blocked("held", "waiting for the DBA"),
    )
    add(store, "Store the cards", "backlog", deps=["c-2"])
    add(store, "Import from GitHub", "backlog", deps=["c-3"])
    add(store, "Read the gh JSON", "working", deps=["c-1"])
    store.update("c-4", Expect(), {"deps": ("c-3", "c-5")}, who="fixture")
    add(store, "Hostile", "backlog", deps=["c-4"])
    store.update("c-6", Expect(), {"title": HOSTILE_TITLE}, who="fixture")
    add(store, "Unrelated", "ready")
    add(store, "Docs for the import", "backlog", deps=["c-5"])
    return board


def plant_dep(board: Board, card: str, dep: str) -> None:
    """Write a dep straight into the store's file, past every check (a corrupt store: the
    card verbs refuse a cycle, this does not)."""
    conn = sqlite3.connect(board.root / ".board" / "board.db")
    with conn:
        conn.execute("INSERT INTO deps (card, dep) VALUES (?, ?)", (card, dep))
    conn.close()

"""Two OS processes writing the same cards at once: no update is lost, every refusal explained.

On both stores (the `backends` mark): the SQLite file, and one PostgreSQL database that both
processes connect to.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from board.core.cards import actions
from board.core.model import CardDraft
from board.core.store import SQLiteStore, Store

from tests.support.race import WORKER

pytestmark = pytest.mark.backends()


def test_two_processes_500_transitions_each_lose_no_update(
    st: Store, store_url: str, tmp_path: Path
) -> None:
    where = str(st.path) if isinstance(st, SQLiteStore) else store_url
    for _ in range(20):
        actions.add_card(st, CardDraft(title="t", spec="s", lane="ready"))
    gate = tmp_path / "gate"
    gate.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, where, name, "500", str(gate)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        for name in ("loop", "tui")
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    total_refused = sum(len(r["refused"]) for r in results)
    for r in results:
        assert sum(r["accepted"].values()) + len(r["refused"]) == 500
        for line in r["refused"]:
            assert "expects version" in line and "got" in line, f"unexplained refusal: {line}"
    for card in st.list_cards():
        accepted = sum(r["accepted"].get(card.id, 0) for r in results)
        events = [e for e in st.timeline(card.id) if e.who in ("loop", "tui")]
        assert len(events) == accepted, (
            f"{card.id}: {accepted} accepted writes but {len(events)} timeline events: "
            "an update was lost"
        )
        assert card.version == 1 + accepted, f"{card.id}: version does not count every write"
        counted = int(card.labels[0].split("=")[1]) if card.labels else 0
        assert counted == accepted, f"{card.id}: {accepted} increments accepted, {counted} kept"
    # both writers really raced: the store had to refuse some stale writes
    assert total_refused > 0

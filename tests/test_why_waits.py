"""Why a ready card waits: one function (`waits.why_waits`) answers for the loop's claim,
the TUI's rows and card screen. This walks each case and checks that the claim decides
what the function says: the card is skipped with those very words in the loop log, and
claimed once the reason is gone."""

from __future__ import annotations

import json
from pathlib import Path

from board.core.cards import waits
from board.core.loop import Loop
from board.core.model import Pause
from board.core.store import Expect

from tests.support.boards import make_board
from tests.support.loop import add_card


def _skips(cfg, card_id: str) -> list[str]:
    log = Path(cfg.board_dir) / "loop.log"
    lines = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    return [x["reason"] for x in lines if x.get("event") == "skip" and x.get("card") == card_id]


def _claims_with_the_words(cfg, store, card_id: str, expect: str) -> None:
    """The function's answer contains `expect`, and the loop skips the card saying exactly it."""
    said = waits.why_waits(cfg, store.get(card_id), waits.claim_view(store))
    assert expect in said, said
    loop = Loop(cfg, store)
    assert card_id not in loop.claims(), f"{card_id} was claimed although: {said}"
    assert said in _skips(cfg, card_id), "the loop skipped it for other words than the TUI's"


def _park_working(store, card_id: str) -> None:
    card = store.get(card_id)
    store.update(card_id, Expect(version=card.version), {"lane": "working"})


def test_each_reason_is_what_the_claim_decides(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True, board={"max_concurrent": 4})
    # a dependency still open
    dep = add_card(store, "the dependency", surface=["a/**"])
    _park_working(store, dep.id)
    child = add_card(store, "the dependent", surface=["b/**"], deps=[dep.id])
    said = waits.why_waits(cfg, store.get(child.id), waits.claim_view(store))
    assert said == f"waits on {dep.id} (working)"
    assert child.id not in [
        c.id for c in __import__("board.core.cards.actions", fromlist=["x"]).ready_queue(store)
    ]
    # a surface overlap, naming the card
    overlap = add_card(store, "overlaps", surface=["a/x.py"])
    _claims_with_the_words(cfg, store, overlap.id, f"surface overlaps working {dep.id}'s")
    # no surface: it runs alone
    alone = add_card(store, "no surface")
    _claims_with_the_words(cfg, store, alone.id, f"it has no surface, so it runs alone: {dep.id}")
    # a retry, not before a time
    later = add_card(store, "backed off", surface=["c/**"])
    now = store.get(later.id)
    store.update(later.id, Expect(version=now.version), {"not_before": "2999-01-01T00:00:00.000Z"})
    _claims_with_the_words(cfg, store, later.id, "a retry, not before 2999-01-01")
    # its tier paused until a time
    paused = add_card(store, "paused tier", surface=["d/**"])
    store.pause_tier(Pause("default", "rate-limit", "429", "2999-01-01T00:00:00.000Z", "x", ""))
    _claims_with_the_words(cfg, store, paused.id, "tier default is paused (rate-limit) until 2999")
    store.resume_tier("default")
    # a planner task with no planner configured
    task = add_card(store, "Split c-9: too wide", kind="task", assignee=cfg.planner.name)
    _claims_with_the_words(cfg, store, task.id, "no planner command is configured")
    # no loop running: what the TUI says when nothing else holds a card back
    free = add_card(store, "free", surface=["e/**"])
    view = waits.claim_view(store, no_loop="no loop is running (board run)")
    assert waits.why_waits(cfg, store.get(free.id), view) == "no loop is running (board run)"
    # and with nothing in the way, the claim takes it
    assert waits.why_waits(cfg, store.get(free.id), waits.claim_view(store)) == ""
    loop = Loop(cfg, store)
    assert free.id in loop.claims()
    loop.wait()
    store.close()

"""A coder that rejects its arguments, or waits for a login, is not the card's fault.

Agent CLIs rename and drop flags every few weeks, and one with no key may wait minutes for a
login in a browser. Both are the board's configuration, not the card: the card must not
climb the ladder, spend its attempts or count a timeout toward too-wide, and every other
card of that tier must not burn the same way. Real scripts (tests/scripts/) print what the
real CLIs print; tests/test_agents_real.py runs the real programs.
"""

from __future__ import annotations

import time
from pathlib import Path

from board.core.cards import actions, waits

from tests.support.boards import make_board
from tests.support.loop import add_card, drive_one, edit_tier
from tests.support.paths import script


def test_a_coder_that_rejects_its_arguments_blocks_dispatch_infra_and_pauses_its_tier(
    tmp_path: Path,
) -> None:
    cfg, store = make_board(
        tmp_path, origin=True, tiers={"codex": [script("coder_usage.sh")], "next": edit_tier()}
    )
    card = add_card(store, surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "blocked" and end.cls == "dispatch-infra", f"{end.cls}: {end.reason}"
    reason = store.get(card.id).blocked.reason
    assert "unexpected argument '--full-auto' found" in reason, reason
    assert "[coder.tiers.codex] argv" in reason, reason
    assert {d.tier for d in store.list_drives() if d.card == card.id} == {"codex"}, "it climbed"
    pause = waits.active_pause(store.pauses(), "codex")
    assert pause is not None and pause.cls == "dispatch-infra" and not pause.until
    other = add_card(store, "another", surface=["other/**"])
    why = waits.why_waits(cfg, other, waits.claim_view(store))
    assert why.startswith("tier codex is paused (dispatch-infra)"), why
    actions.unblock(store, card.id)
    assert waits.active_pause(store.pauses(), "codex") is None, "unblock left the tier paused"
    store.close()


def test_a_coder_waiting_for_a_login_is_stopped_at_once_and_blocks_auth(tmp_path: Path) -> None:
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"aider": [script("coder_login_wait.sh")], "next": edit_tier()},
        coder={"timeout_s": 60, "timeout_split_after": 1},
    )
    card = add_card(store, surface=["work/**"])
    began = time.monotonic()
    end = drive_one(cfg, store, card)
    took = time.monotonic() - began
    assert end.outcome == "blocked" and end.cls == "auth", f"{end.cls}: {end.reason}"
    assert took < 15, f"the coder waiting for a browser ran {took:.0f}s, not stopped at once"
    assert "no api keys were provided" in store.get(card.id).blocked.reason.lower()
    pause = waits.active_pause(store.pauses(), "aider")
    assert pause is not None and pause.cls == "auth"
    assert {d.tier for d in store.list_drives() if d.card == card.id} == {"aider"}, "it climbed"
    assert not [x for x in store.get(card.id).labels if x.startswith("budget:")]
    store.close()

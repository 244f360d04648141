"""The money budgets (issue 41) with the real loop: a bare origin and a clone, real coder
and gate scripts, `board run --until-idle` in its own process, the real SQLite file.

A test records what earlier attempts spent with the store's own API, as a coder's end does
(core/drive/drive.py), before the loop runs, or from a gate script
(tests/scripts/gate_spends.py) that records it on the running drive.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from board.core.cards import budget
from board.core.loop import Loop
from board.core.model import BUDGET_PAUSE, OVER_BUDGET, RESUME_EVENT, Usage
from board.core.store import Expect, SQLiteStore

from tests.support.boards import make_board
from tests.support.loop import (
    add_card,
    comments,
    edit_tier,
    loop_log,
    read_pids,
    show,
    skip_reasons,
    stranded_branches,
    write_config,
)
from tests.support.paths import script
from tests.support.repos import run_cli


def spent_before(store: SQLiteStore, card: str, cost: float, tier: str = "default") -> str:
    """An earlier attempt of `card` that failed after spending `cost`, as the board records
    a drive's usage when it ends."""
    row = store.start_drive(card, tier, store.next_attempt(card), "", 4242)
    store.update_drive(row.id, status="failed", result="gate-red: earlier attempt")
    store.record_usage(row.id, Usage(2000, 500, None, cost, "stand-in-model", 3))
    return row.id


def test_a_card_whose_earlier_attempts_spent_its_budget_is_blocked_before_the_next(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "coder.pids"
    cfg, store = make_board(
        tmp_path, origin=True, tiers={"default": edit_tier(pids)}, budget={"card_usd": 0.05}
    )
    card = add_card(store, "spent", surface=["work/**"])
    spent_before(store, card.id, 0.04)
    spent_before(store, card.id, 0.02)  # together 0.06, past 0.05
    cheap = add_card(store, "cheap", surface=["work/**"])
    spent_before(store, cheap.id, 0.01)

    res = run_cli(cfg.root, "run", "--until-idle", timeout=120)
    assert res.returncode == 1, res.stdout + res.stderr  # one card it ran did not end done

    got = store.get(card.id)
    assert got.lane == "ready" and got.blocked is not None, got
    assert got.blocked.cls == OVER_BUDGET
    assert "spent $0.06" in got.blocked.reason and "budget of $0.05" in got.blocked.reason
    assert "[budget] card_usd" in got.blocked.reason
    assert len(read_pids(pids)) == 1, "a coder ran for the card past its budget (one: cheap's)"
    assert store.get(cheap.id).lane == "done", "the card within its budget was not built"
    drives = store.list_drives(card.id)
    assert [d.status for d in sorted(drives, key=lambda d: d.attempt)] == [
        "failed", "failed", "blocked",
    ]  # fmt: skip
    # an operator's class: the sweep never retries it, another run leaves it blocked
    again = run_cli(cfg.root, "run", "--until-idle", timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert store.get(card.id).blocked == got.blocked and len(store.list_drives(card.id)) == 3
    told = [x for x in loop_log(cfg) if x.get("event") == "blocked" and x.get("card") == card.id]
    assert len(told) == 1, told  # told once
    store.close()


def test_a_gate_retry_past_the_budget_is_not_run_and_its_work_is_saved(tmp_path: Path) -> None:
    """The first attempt's gate is red and its drive spent $0.06 (recorded by the gate
    script); the gate retry would be the next attempt: the card is blocked `over-budget`
    instead, its coder's edit saved to a stranded branch, and its unblock goes on from it."""
    pids = tmp_path / "coder.pids"
    cfg, store = make_board(tmp_path, origin=True)
    gate = [sys.executable, script("gate_spends.py"), str(cfg.db_path), "0.06"]
    cfg = write_config(cfg.root, tiers={"default": edit_tier(pids)}, gate=gate,
                       gate_opts={"retries": 2}, budget={"card_usd": 0.05})  # fmt: skip
    card = add_card(store, "red twice", surface=["work/**"])

    res = run_cli(cfg.root, "run", "--until-idle", timeout=120)
    assert res.returncode == 1, res.stdout + res.stderr
    got = store.get(card.id)
    assert got.blocked is not None and got.blocked.cls == OVER_BUDGET, got.blocked
    assert "before attempt 2" in got.blocked.reason and "spent $0.06" in got.blocked.reason
    assert len(read_pids(pids)) == 1, "the gate retry's coder ran past the budget"
    saved = stranded_branches(cfg)
    assert len(saved) == 1, saved
    assert show(cfg, saved[0], f"work/{card.id}.txt") == f"work of {card.id}"
    assert store.card_usage(card.id).cost_usd == 0.06
    resume = [e.text for e in store.timeline(card.id) if e.kind == RESUME_EVENT]
    assert resume == [saved[0]], "its next build would not continue from the saved work"
    retries = [c for c in comments(store, card.id) if "retry 1 of 2" in c]
    assert retries, "premise: the gate was red and a retry was due"
    store.close()


def test_the_days_spend_stops_the_claims_until_board_resume_budget(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True, budget={"day_usd": 0.5})
    done_today = add_card(store, "earlier today", surface=["a/**"])
    store.update(done_today.id, Expect(), {"lane": "backlog"}, who="op")  # not to be claimed
    spent_before(store, done_today.id, 0.3)
    spent_before(store, done_today.id, 0.25)  # today: 0.55, past 0.5
    waiting = add_card(store, "waits for tomorrow", surface=["work/**"])

    res = run_cli(cfg.root, "run", "--until-idle", timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert store.get(waiting.id).lane == "ready", "a card was claimed past the day budget"
    assert store.list_drives(waiting.id) == []
    paused = [x for x in loop_log(cfg) if x["event"] == "budget-paused"]
    assert len(paused) == 1 and paused[0]["resume"] == "board resume budget", paused
    reasons = skip_reasons(cfg, waiting.id)
    assert reasons and reasons[0].startswith("claims are paused (board resume budget): "), reasons
    assert "today's spend $0.55 reached the day budget of $0.50" in reasons[0]
    pause = next(p for p in store.pauses() if p.tier == BUDGET_PAUSE)
    tomorrow = budget.next_day(datetime.now(UTC))
    assert (pause.cls, pause.until) == (OVER_BUDGET, tomorrow)

    status = json.loads(run_cli(cfg.root, "status", "--json").stdout)
    assert status["spend_today"] == 0.55
    assert status["budget"]["paused"] is True and status["budget"]["until"] == tomorrow
    assert status["budget"]["day_usd"] == 0.5
    text = run_cli(cfg.root, "status").stdout
    assert "spend today (UTC): $0.55 of $0.50 (day budget); claims PAUSED until" in text, text

    # said once: a second run finds the pause and says nothing more
    assert run_cli(cfg.root, "run", "--until-idle", timeout=120).returncode == 0
    assert len([x for x in loop_log(cfg) if x["event"] == "budget-paused"]) == 1

    res = run_cli(cfg.root, "resume", "budget")
    assert res.returncode == 0 and "claims resumed past the day budget" in res.stdout, res
    status = json.loads(run_cli(cfg.root, "status", "--json").stdout)
    assert status["budget"]["paused"] is False and status["budget"]["resumed"] is True
    assert all(p["tier"] != BUDGET_PAUSE for p in status["paused"]), status["paused"]
    res = run_cli(cfg.root, "run", "--until-idle", timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert store.get(waiting.id).lane == "done", "board resume budget did not lift the pause"
    assert len([x for x in loop_log(cfg) if x["event"] == "budget-paused"]) == 1
    # nothing left to resume
    nothing = run_cli(cfg.root, "resume", "budget")
    assert nothing.returncode == 0 and nothing.stdout == (
        "the day budget has not paused the claims; nothing changed\n"
    ), nothing
    store.close()


def test_hard_stops_a_running_drive_whose_card_passes_its_budget_and_saves_its_work(
    tmp_path: Path,
) -> None:
    """A coder still running when its card's recorded spend passes card_usd: with
    `[budget] hard` the loop's tick stops it as `board stop` does (its process group
    killed, its tree saved, the card blocked over-budget); without, it would finish."""
    pids = tmp_path / "coder.pids"
    sleepy = [script("coder_sleepy.sh"), "{worktree}", "{card}", str(pids)]
    cfg, store = make_board(
        tmp_path, origin=True, tiers={"default": sleepy},
        budget={"card_usd": 0.05, "hard": True},
    )  # fmt: skip
    card = add_card(store, "burns money", surface=["work/**"])
    loop = Loop(cfg, store)
    loop.lock.acquire()
    try:
        assert loop.tick() == [card.id]
        deadline = time.monotonic() + 30
        while not read_pids(pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert read_pids(pids), "the coder never started"
        loop.tick()
        assert store.get(card.id).lane == "working", "stopped before its budget was passed"
        live = store.live_drives()
        store.record_usage(live[0].id, Usage(cost_usd=0.07))  # the spend, as recorded
        loop.tick()
        assert loop.wait(60), "the stopped drive did not end"
    finally:
        loop.lock.release()
    got = store.get(card.id)
    assert got.lane == "ready" and got.blocked is not None and got.blocked.cls == OVER_BUDGET
    assert "spent $0.07" in got.blocked.reason
    saved = stranded_branches(cfg)
    assert len(saved) == 1 and show(cfg, saved[0], f"work/{card.id}.txt"), saved
    stops = [x for x in loop_log(cfg) if x["event"] == "budget-stop"]
    assert [x["card"] for x in stops] == [card.id] and stops[0]["saved"] == saved, stops
    from board.core.proc import pid_alive

    assert not any(pid_alive(p) for p in read_pids(pids)), "the coder was left running"
    store.close()


def test_an_unblocked_card_still_past_its_budget_is_blocked_again(tmp_path: Path) -> None:
    """The budget is the operator's to raise: an unblock alone does not buy an attempt;
    an unblock after raising `[budget] card_usd` does."""
    cfg, store = make_board(tmp_path, origin=True, budget={"card_usd": 0.05})
    card = add_card(store, "spent", surface=["work/**"])
    spent_before(store, card.id, 0.06)
    for _ in range(2):
        assert run_cli(cfg.root, "run", "--until-idle", timeout=120).returncode == 1
        blocked = store.get(card.id).blocked
        assert blocked is not None and blocked.cls == OVER_BUDGET, blocked
        assert run_cli(cfg.root, "unblock", card.id).returncode == 0
    write_config(cfg.root, budget={"card_usd": 0.1})
    res = run_cli(cfg.root, "run", "--until-idle", timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert store.get(card.id).lane == "done", "a raised budget did not let it run"
    store.close()


def test_a_budget_reached_to_the_cent_is_reached_though_floats_sum_short(tmp_path: Path) -> None:
    """$0.10 and $0.70 are $0.80, a card_usd of 0.8 reached; the store's float sum of them
    is 0.7999999999999999, which let the card start a third attempt. The day budget the
    same: the claims pause at a day_usd of 0.8."""
    pids = tmp_path / "coder.pids"
    cfg, store = make_board(
        tmp_path, origin=True, tiers={"default": edit_tier(pids)}, budget={"card_usd": 0.8}
    )
    card = add_card(store, "spent to the cent", surface=["work/**"])
    spent_before(store, card.id, 0.1)
    spent_before(store, card.id, 0.7)
    assert store.card_usage(card.id).spent < 0.8, "premise: the float sum falls short"

    res = run_cli(cfg.root, "run", "--until-idle", timeout=120)
    assert res.returncode == 1, res.stdout + res.stderr
    got = store.get(card.id).blocked
    assert got is not None and got.cls == OVER_BUDGET, got
    assert "spent $0.80, at or past its budget of $0.80" in got.reason, got.reason
    assert read_pids(pids) == [], "a coder ran for a card that had spent its budget"

    day = write_config(cfg.root, budget={"day_usd": 0.8}).budget
    pause = budget.day_pause(day, store, datetime.now(UTC))
    assert pause is not None and "today's spend $0.80 reached" in pause.reason, pause
    store.close()

"""`board status`: is a loop running, what is each drive doing, which tiers are paused.

Read from the store alone (the loop's heartbeat, the drive rows, the pauses, the cards),
so it answers the same from the TUI, a script, or a machine that runs no loop.

A loop is shown stale when `waits.loop_running` says it no longer runs: the one answer
`board status`, the TUI's header and the why-it-waits words give (see it for the rule).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from board.core.cards import budget, waits
from board.core.cards.waits import HEARTBEAT_S, STALE_AFTER_S, heartbeat_age, loop_running
from board.core.config import CoderSection, Config
from board.core.errors import Refused
from board.core.model import BUDGET_PAUSE, BUDGET_RESUMED, FORGE_PAUSE, LANES, SETUP_PAUSE
from board.core.store import Store


def board_status(cfg: Config, store: Store, at: datetime | None = None) -> dict[str, Any]:
    """The JSON `board status --json` prints (docs/operator.md documents every field)."""
    at = at or waits.now()
    loop: dict[str, Any] | None = None
    for beat in store.loops():  # newest first
        loop = {**beat.to_json(), "stale": not loop_running(beat, at)}
        break
    hosts: dict[str, dict[str, Any]] = {}
    for beat in store.loops():
        age = heartbeat_age(beat, at)
        if beat.host in hosts and hosts[beat.host]["heartbeat_at"] >= beat.heartbeat_at:
            continue
        hosts[beat.host] = {
            "host": beat.host,
            "pid": beat.pid,
            "started_at": beat.started_at,
            "heartbeat_at": beat.heartbeat_at,
            "lost": age is None or age > cfg.board.host_lease_s,
            "drives": 0,
        }
    live = store.live_drives()
    for d in live:
        if d.host in hosts:
            hosts[d.host]["drives"] += 1
    drives = [
        {
            "card": d.card,
            "tier": d.tier,
            "attempt": d.attempt,
            "started_at": d.started_at,
            "host": d.host,
            "drive": d.id,
        }
        for d in sorted(live, key=lambda d: d.started_at)
    ]
    paused = [
        p.to_json()
        for p in store.pauses()
        if waits.active_pause([p], p.tier, at) is not None and p.cls != BUDGET_RESUMED
    ]  # the operator's resume of the day budget is no pause: `budget` says it
    cards = store.list_cards()
    lanes = Counter(c.lane for c in cards)
    blocked = Counter(c.blocked.cls for c in cards if c.blocked is not None)
    waiting = [
        {"card": c.id, "not_before": c.not_before}
        for c in cards
        if c.lane == "ready" and waits.not_before(c, at) is not None
    ]
    return {
        "loop": loop,
        "hosts": sorted(hosts.values(), key=lambda h: h["host"]),
        "drives": drives,
        "paused": paused,
        "waiting": waiting,
        "lanes": {lane: lanes.get(lane, 0) for lane in LANES},
        "blocked": dict(sorted(blocked.items())),
        "needs_operator": sum(1 for c in cards if waits.needs_operator(cfg.publish, c)),
        "spend_today": store.spend_since(budget.day_start(at)),
        "budget": budget.status(cfg.budget, store, at),
    }


def status_lines(status: dict[str, Any]) -> list[str]:
    """The same, for a terminal."""
    out = []
    loop = status["loop"]
    if loop is None:
        out.append("loop: not running")
    else:
        state = "NOT RUNNING (its last heartbeat is stale: it died)" if loop["stale"] else "running"
        out.append(
            f"loop: {state} — pid {loop['pid']} on {loop['host']}, since {loop['started_at']}, "
            f"last heartbeat {loop['heartbeat_at']}"
        )
    if len(status["hosts"]) > 1:
        for h in status["hosts"]:
            state = "LOST (past its lease)" if h["lost"] else "alive"
            out.append(
                f"  host {h['host']}: {state}, pid {h['pid']}, last heartbeat "
                f"{h['heartbeat_at']}, {h['drives']} drive(s)"
            )
    out.append(f"drives: {len(status['drives']) or 'none'}")
    for d in status["drives"]:
        out.append(
            f"  {d['card']:<8} tier {d['tier']}, attempt {d['attempt']}, since {d['started_at']}"
        )
    out.append(f"paused tiers: {len(status['paused']) or 'none'}")
    for p in status["paused"]:
        until = p["until"] or "the operator acts (unblock its card or `board resume`)"
        out.append(f"  {p['tier']}: {p['class']} until {until}: {p['reason']}")
    for w in status["waiting"]:
        out.append(f"  {w['card']} waits until {w['not_before']}")
    out.append("lanes: " + ", ".join(f"{k} {v}" for k, v in status["lanes"].items()))
    if status["blocked"]:
        out.append("blocked: " + ", ".join(f"{k} {v}" for k, v in status["blocked"].items()))
    out.append(f"cards that need you: {status['needs_operator'] or 'none'}")
    out.append(spend_line(status))
    return out


def spend_line(status: dict[str, Any]) -> str:
    """Today's spend, and the money budgets when set: `spend today (UTC): $0.42 of $5.00
    (day budget), claims paused until …` (the known cost: an unpriced drive adds none)."""
    b = status["budget"]
    line = f"spend today (UTC): {budget.money(status['spend_today'])}"
    if b["day_usd"]:
        line += f" of {budget.money(b['day_usd'])} (day budget)"
    if b["card_usd"]:
        line += f"; card budget {budget.money(b['card_usd'])}"
    if b["paused"]:
        line += f"; claims PAUSED until {b['until']} (board resume budget): {b['reason']}"
    elif b["resumed"]:
        line += "; past the day budget, resumed by the operator for the rest of the day"
    if b["hard"] and (b["day_usd"] or b["card_usd"]):
        line += "; hard: a drive running past a budget is stopped"
    return line


def resume(store: Store, coder: CoderSection, tier: str) -> bool:
    """`board resume TIER`: lift the tier's pause, whatever its class (`forge`: PR polling,
    `setup`: the claims two failed setups in a row stopped, `budget`: the claims the day's
    spend stopped, for the rest of that UTC day). False if none."""

    if tier == BUDGET_PAUSE:
        return budget.resume_day(store, waits.now())
    if tier not in coder.tiers and tier not in (FORGE_PAUSE, SETUP_PAUSE):
        known = ", ".join(sorted(coder.tiers)) or "none"
        raise Refused(f"no tier {tier!r} in board.toml (tiers: {known})")
    return store.resume_tier(tier)


__all__ = [
    "HEARTBEAT_S",
    "STALE_AFTER_S",
    "board_status",
    "heartbeat_age",
    "loop_running",
    "resume",
    "status_lines",
]

"""`board status`: is a loop running, what is each drive doing, which tiers are paused.

Read from the store alone (the loop's heartbeat, the drive rows, the pauses, the cards),
so it answers the same from the TUI, a script, or a machine that runs no loop.

Whether a loop still runs (`loop_running`), the one answer `board status` and the TUI's
header give: a loop that stops cleanly takes its heartbeat row with it, but one that is
killed (SIGKILL, a crash, a power cut) leaves the row behind, going stale. So:

- on this host the row's pid says so at once: a dead pid is a dead loop, whatever the
  heartbeat's age. The TUI polls twice a second, so it says "loop not running" well
  within 2 s of the death, and no threshold could: the loop beats every 2 s, so any
  age limit under about 2 s would call a live loop dead between two beats;
- on another host (a shared store) no pid can be asked, so the heartbeat's age decides:
  stale after STALE_AFTER_S, three beats. Not two: a beat is a store write, and one
  that waited a few seconds on another writer's lock would flicker a live loop dead.
  A pid reused by another process on this host is caught by the same limit.
"""

from __future__ import annotations

import socket
from collections import Counter
from datetime import datetime
from typing import Any

from board.core.cards import waits
from board.core.config import Config
from board.core.failures import parse_stamp
from board.core.model import FORGE_PAUSE, LANES, LoopBeat
from board.core.proc import pid_alive
from board.core.store import Store

HEARTBEAT_S = 2.0  # how often a running loop writes its heartbeat (core/loop.py)
STALE_AFTER_S = 3 * HEARTBEAT_S  # another host's loop with no beat for this long is gone


def heartbeat_age(beat: LoopBeat, at: datetime) -> float | None:
    """Seconds since the loop's last heartbeat (None: its stamp cannot be read)."""
    heard = parse_stamp(beat.heartbeat_at)
    return (at - heard).total_seconds() if heard is not None else None


def loop_running(beat: LoopBeat, at: datetime | None = None, here: str | None = None) -> bool:
    """Whether the loop behind a heartbeat row still runs (see the module's docstring):
    on this host (`here`, default this machine's name) its pid decides at once; anywhere,
    a heartbeat older than STALE_AFTER_S is a loop gone."""
    age = heartbeat_age(beat, at or waits.now())
    if age is None or age > STALE_AFTER_S:
        return False
    if beat.host == (socket.gethostname() if here is None else here):
        return pid_alive(beat.pid)
    return True


def board_status(cfg: Config, store: Store, at: datetime | None = None) -> dict[str, Any]:
    """The JSON `board status --json` prints (the README documents every field)."""
    at = at or waits.now()
    loop: dict[str, Any] | None = None
    for beat in store.loops():  # newest first
        loop = {**beat.to_json(), "stale": not loop_running(beat, at)}
        break
    drives = [
        {
            "card": d.card,
            "tier": d.tier,
            "attempt": d.attempt,
            "started_at": d.started_at,
            "host": d.host,
            "drive": d.id,
        }
        for d in sorted(store.live_drives(), key=lambda d: d.started_at)
    ]
    paused = [
        p.to_json() for p in store.pauses() if waits.active_pause([p], p.tier, at) is not None
    ]
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
        "drives": drives,
        "paused": paused,
        "waiting": waiting,
        "lanes": {lane: lanes.get(lane, 0) for lane in LANES},
        "blocked": dict(sorted(blocked.items())),
        "needs_operator": sum(1 for c in cards if waits.needs_operator(cfg, c)),
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
    return out


def resume(store: Store, cfg: Config, tier: str) -> bool:
    """`board resume TIER`: lift the tier's pause, whatever its class. False if none."""
    from board.core.errors import Refused

    if tier not in cfg.tiers and tier != FORGE_PAUSE:
        known = ", ".join(sorted(cfg.tiers)) or "none"
        raise Refused(f"no tier {tier!r} in board.toml (tiers: {known})")
    return store.resume_tier(tier)

"""A card's latest race as `board card show` says it (best of N, issue 42): one entry per
candidate, read from the drive rows the race wrote (each candidate's row records its k, its
gate's word, its changed lines and what its coder spent), never from the running loop, so
any process on any host shows the same. Not a verb (it changes nothing): `board card show`
loads it as it loads core/cards/spend.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from board.core.cards.budget import money
from board.core.config import CoderSection
from board.core.failures import parse_stamp
from board.core.model import Card, Drive

# a candidate's state, from its row's status (and its gate's word for a red one)
RUNNING, GREEN, RED, FAILED, STOPPED = "running", "green", "red", "failed", "stopped"
STATES = (RUNNING, GREEN, RED, FAILED, STOPPED)
_BY_STATUS = {"running": RUNNING, "passed": GREEN, "stopped": STOPPED, "stood-aside": STOPPED}


def latest_race(drives: Sequence[Drive]) -> list[Drive]:
    """The rows of the card's latest race's candidates, by k: a race starts its candidates
    1 to N in order, each on the next attempt, so the latest race is the candidate rows from
    the last candidate 1 on. [] when the card never raced."""
    rows = sorted((d for d in drives if d.candidate is not None), key=lambda d: d.attempt)
    starts = [i for i, d in enumerate(rows) if d.candidate == 1]
    if not starts:
        return []
    return sorted(rows[starts[-1] :], key=lambda d: (d.candidate or 0, d.attempt))


def running_greens(drives: Sequence[Drive]) -> dict[str, int]:
    """Card id -> the green candidates so far of the race it runs now, for the board's rows
    (`Store.race_drives`: any cards' candidate and live rows). A race runs while the race's
    own row (no candidate; its candidates take the attempts after it) is live and its
    latest race's candidate 1 took the attempt next to that row's: a card back on single
    drives after a race, or between a climb and its next race's first candidate, has none."""
    mine: dict[str, list[Drive]] = {}
    for drive in drives:
        mine.setdefault(drive.card, []).append(drive)
    out: dict[str, int] = {}
    for card_id, rows in mine.items():
        race = latest_race(rows)
        own = [d for d in rows if d.candidate is None and d.live]
        if race and any(d.attempt + 1 == race[0].attempt for d in own):
            out[card_id] = sum(state(d) == GREEN for d in race)
    return out


def state(drive: Drive) -> str:
    """running, green, red (its gate stayed red), stopped (a stop, a shutdown, the card
    moved under it) or failed (anything else: its coder failed, a timeout, a crash)."""
    if drive.status == "failed" and drive.gate == "red":
        return RED
    return _BY_STATUS.get(drive.status, FAILED)


def seconds(drive: Drive, now: datetime | None = None) -> float | None:
    """How long it ran: to its end, or to `now` while it runs; None for an unreadable stamp."""
    began = parse_stamp(drive.started_at)
    ended = parse_stamp(drive.ended_at) if drive.ended_at else (now or datetime.now(UTC))
    if began is None or ended is None:
        return None
    return max(0.0, round((ended - began).total_seconds(), 3))


def _tree(card_id: str, k: int | None) -> str:
    """Candidate k's tree, `feat-<id>-<k>`. Imported here, from a card that raced: the
    naming module brings git's, which `board card show` of any other card never loads."""
    from board.core.git.naming import tree_name  # only a card that raced: it brings git

    return tree_name(card_id, str(k or 0))


def candidate_json(card_id: str, drive: Drive, now: datetime | None = None) -> dict[str, Any]:
    """One candidate for `board card show --json`'s `candidates` (null where not known)."""
    k = drive.candidate or 0
    return {
        "index": k,
        "drive": drive.id,
        "attempt": drive.attempt,
        "tier": drive.tier,
        "tree": _tree(card_id, k),
        "state": state(drive),
        "gate": drive.gate or None,
        "result": drive.result,
        "lines_changed": drive.lines_changed,
        "seconds": seconds(drive, now),
        "cost_usd": drive.cost_usd,
    }


def candidates_json(card_id: str, drives: Sequence[Drive]) -> list[dict[str, Any]]:
    """`board card show --json`'s `candidates`: the latest race's, by k; [] for none."""
    now = datetime.now(UTC)
    return [candidate_json(card_id, d, now) for d in latest_race(drives)]


def candidate_lines(card_id: str, drives: Sequence[Drive]) -> list[str]:
    """`board card show`'s candidates: a heading, then a line per candidate of the latest
    race (state, gate, changed lines, time, cost, tree); [] when the card never raced."""
    race = latest_race(drives)
    if not race:
        return []
    now = datetime.now(UTC)
    out = [f"candidates (the latest race, {len(race)}):"]
    for d in race:
        took = seconds(d, now)
        lines = "—" if d.lines_changed is None else f"{d.lines_changed}"
        cost = "—" if d.cost_usd is None else money(d.cost_usd)
        out.append(
            f"  {d.candidate:<2} {state(d):<8} gate {d.gate or '—':<6} {lines:>6} line(s)  "
            f"{'—' if took is None else f'{took:.1f}s':>8}  {cost:>9}  {d.tier:<10} "
            f"{_tree(card_id, d.candidate)}"
        )
    return out


__all__ = [
    "STATES",
    "candidate_json",
    "candidate_lines",
    "candidates_json",
    "latest_race",
    "running_greens",
    "state",
]


def candidates_for(coder: CoderSection, card: Card) -> int:
    """How many candidates build the card at once (1: one drive): one per tier of its race
    (`--race a,b`), else its own `--best-of N`, else the board's `[coder] best_of`. The
    card's wins, 1 included: an operator who asks one card for one drive on a racing board,
    or for a race on a board of single drives, means that card. One rule for the race that
    runs them and the row that counts them."""
    return len(card.race) or card.best_of or coder.best_of

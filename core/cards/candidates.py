"""A card's latest race as `board card show` says it (best of N, issue 42): one entry per
candidate, read from the drive rows the race wrote (each candidate's row records its k, its
gate's word, its changed lines and what its coder spent), never from the running loop, so
any process on any host shows the same. Not a verb (it changes nothing): `board card show`
loads it as it loads core/cards/spend.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from board.core.cards.budget import money
from board.core.config import CoderSection, Config
from board.core.failures import parse_stamp
from board.core.model import Card, Drive

if TYPE_CHECKING:
    from board.core.git.savestats import StrandedBranch

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


def chosen(card: Card, race: Sequence[Drive]) -> int | None:
    """The candidate the card's branch is on (`feat/<id>-<k>`): with `publish.review =
    "operator"`, the one that waits in review, and once approved the one published. The
    review edge writes the tree's branch onto the card, so this reads no git. None: no
    candidate of the latest race is the card's (a race that folded at once leaves the
    card's branch at `feat/<id>`)."""
    if not card.branch:
        return None
    for drive in race:
        if drive.candidate and card.branch == _branch(card.id, drive.candidate):
            return drive.candidate
    return None


def _branch(card_id: str, k: int) -> str:
    from board.core.git.naming import branch_for  # only a card that raced: it brings git

    return branch_for(card_id, str(k))


def saves_of(cfg: Config, card_id: str, race: Sequence[Drive]) -> dict[int, StrandedBranch]:
    """k -> the `candidate` save of that candidate's tree made by its race (the newest
    `stranded/feat-<id>-<k>/…` of kind candidate stamped at or after its row started), for
    the candidates whose work was kept. An earlier race's save of the same tree name is
    older than the row, so it is never taken for this race's. Runs git (one listing)."""
    from board.core.git import naming, stranded  # git: only for a card that raced

    out: dict[int, StrandedBranch] = {}
    listed = [b for b in stranded.list_stranded(cfg) if b.card == card_id and b.is_candidate]
    for drive in race:
        k = drive.candidate
        began = parse_stamp(drive.started_at)
        if not k or began is None:
            continue
        since = began.strftime("%Y%m%dT%H%M%S") + f".{began.microsecond // 1000:03d}Z"
        tree = naming.tree_name(card_id, str(k))
        mine = [b for b in listed if b.tree == tree and b.stamp[: len(since)] >= since]
        if mine:
            out[k] = max(mine, key=lambda b: b.stamp)
    return out


def candidate_json(
    card_id: str, drive: Drive, now: datetime | None = None, chosen_k: int | None = None
) -> dict[str, Any]:
    """One candidate for `board card show --json`'s `candidates` (null where not known);
    `chosen` is true for the one on the card's branch (`chosen`)."""
    k = drive.candidate or 0
    return {
        "index": k,
        "chosen": chosen_k is not None and k == chosen_k,
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


def candidates_json(card: Card | str, drives: Sequence[Drive]) -> list[dict[str, Any]]:
    """`board card show --json`'s `candidates`: the latest race's, by k; [] for none. Given
    the card (not only its id), the one on its branch is marked `chosen`."""
    now = datetime.now(UTC)
    race = latest_race(drives)
    card_id = card if isinstance(card, str) else card.id
    k = None if isinstance(card, str) or not race else chosen(card, race)
    return [candidate_json(card_id, d, now, k) for d in race]


def candidate_lines(card: Card | str, drives: Sequence[Drive]) -> list[str]:
    """`board card show`'s candidates: a heading, then a line per candidate of the latest
    race (state, gate, changed lines, time, cost, tree, and `chosen` on the one on the
    card's branch, given the card); [] when the card never raced."""
    race = latest_race(drives)
    if not race:
        return []
    card_id = card if isinstance(card, str) else card.id
    k = None if isinstance(card, str) else chosen(card, race)
    now = datetime.now(UTC)
    out = [f"candidates (the latest race, {len(race)}):"]
    for d in race:
        took = seconds(d, now)
        lines = "—" if d.lines_changed is None else f"{d.lines_changed}"
        cost = "—" if d.cost_usd is None else money(d.cost_usd)
        out.append(
            f"  {d.candidate:<2} {state(d):<8} gate {d.gate or '—':<6} {lines:>6} line(s)  "
            f"{'—' if took is None else f'{took:.1f}s':>8}  {cost:>9}  {d.tier:<10} "
            f"{_tree(card_id, d.candidate)}" + ("  chosen" if d.candidate == k else "")
        )
    return out


__all__ = [
    "STATES",
    "candidate_json",
    "candidate_lines",
    "candidates_json",
    "chosen",
    "latest_race",
    "running_greens",
    "saves_of",
    "state",
]


def candidates_for(coder: CoderSection, card: Card) -> int:
    """How many candidates build the card at once (1: one drive): one per tier of its race
    (`--race a,b`), else its own `--best-of N`, else the board's `[coder] best_of`. The
    card's wins, 1 included: an operator who asks one card for one drive on a racing board,
    or for a race on a board of single drives, means that card. One rule for the race that
    runs them and the row that counts them."""
    return len(card.race) or card.best_of or coder.best_of

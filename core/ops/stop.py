"""`board stop ID`: end a runaway drive without losing its card or its work.

The card moves first (to `ready`, held `stopped: …`) and the drive's row is ended, so
the drive, when it notices its coder died, finds the card no longer its own and stands
aside: nothing is blocked, retried, counted as a timeout (too-wide) or published.
Only then is the drive's whole process group killed and its tree saved to a
`stranded/…` branch through the one save-then-remove. `unblock` resumes the card: its
next build starts from that saved work (treestate.resume_branch). The loop stops a drive
the same way when a money budget is passed and `[budget] hard` is on. The system we
re-create had no such verb: its operators killed processes by hand and lost trees to
the next re-dispatch.
"""

from __future__ import annotations

from typing import Any

from board.core.cards.enddrives import end_drives
from board.core.config import Config
from board.core.errors import Refused
from board.core.git import treestate
from board.core.model import Blocked, Card
from board.core.ops.live import WHO, save_trees
from board.core.records import Record, field
from board.core.store import Expect, Store


class StopResult(Record):
    """What `board stop` did: the card as left, the drives ended, where the work went."""

    card: Card
    drives: list[str] = field(default_factory=list)
    killed: list[int] = field(default_factory=list)  # process groups killed
    saved: list[str] = field(default_factory=list)  # stranded/… branches
    kept: list[str] = field(default_factory=list)  # trees that stay, with why
    lines: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "card": self.card.to_json(),
            "drives": self.drives,
            "killed": self.killed,
            "saved": self.saved,
            "kept": self.kept,
            "lines": self.lines,
        }


def stop_reason(reason: str | None) -> str:
    text = " ".join(str(reason or "").split())
    return f"stopped: {text or 'by the operator'}"


def stop(
    store: Store,
    cfg: Config,
    card_id: str,
    reason: str | None = None,
    who: str = WHO,
    cls: str = "held",
) -> StopResult:
    """`board stop ID`: end the card's drive, save its tree, leave the card held in `ready`
    (blocked `cls`: the loop's stop of a card past its money budget says `over-budget`).

    Refused, changing nothing, unless the card is `working`. Nothing is counted against
    the card's timeout count: the drive finds its card moved and counts nothing.
    """
    why = stop_reason(reason)
    with store.transaction() as tx:
        card = tx.get(card_id)
        if card.lane != "working":
            raise Refused(f"{card.id}: is {card.lane}, not working: there is no drive to stop")
        token = card.drive or "?"
        tx.update(
            card.id,
            Expect(version=card.version),
            {"lane": "ready", "blocked": Blocked(cls, why), "drive": ""},
            who,
            note=f"drive {token} stopped; `board unblock {card.id}` resumes it",
        )
    ended = end_drives(store, card_id, why)
    result = StopResult(store.get(card_id), ended.drives, ended.killed, lines=ended.lines)
    for line in result.lines:
        store.add_event(card_id, line, who)
    result.saved, result.kept = save_trees(cfg, store, card_id, why)
    if result.saved:
        result.lines.append(f"its work is on {', '.join(result.saved)}")
        if treestate.note_resumable(store, cfg, card_id, result.saved):
            result.lines.append(f"`board unblock {card_id}` continues from it")
    for kept in result.kept:
        result.lines.append(f"kept {kept}")
    result.card = store.get(card_id)
    return result


__all__ = ["StopResult", "stop", "stop_reason"]

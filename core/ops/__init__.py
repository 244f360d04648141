"""The operator's verbs on live and saved work: `stop` a drive, `approve` a card in review,
`salvage` saved work with no coder, `resolve` a fold conflict by hand, and `pick`,
`discard` and `prune` stranded branches (`pick`); and the host leases the loop keeps
(`leases`). The lane verbs (add, edit, ready, hold, requeue, cancel, done) are in
core/cards/actions.py, below the drive, because the loop and publishing apply them too.

Each keeps the board's two promises: never lose work, never act on a card someone else
moved. Each is one core function the command line and the TUI share; they are named
here so a caller can say `ops.stop(...)`, `ops.salvage(...)`.

Above the drive and publishing (a salvage gates and folds like a drive); below the loop.
"""

from board.core.ops.approve import ApproveResult, approve
from board.core.ops.live import card_lock
from board.core.ops.salvage import SalvageResult, salvage
from board.core.ops.stop import StopResult, stop, stop_reason

__all__ = [
    "ApproveResult",
    "SalvageResult",
    "StopResult",
    "approve",
    "card_lock",
    "salvage",
    "stop",
    "stop_reason",
]

"""The one door to the operator's verbs: the command line, the TUI and the demo reach every
verb, and the few helpers they use with one, as `ops.<name>` after `from board.core import
ops`, and never from the module the verb lives in (tests/test_layers.py holds them to it).

The verbs live where their layer puts them. The lane verbs (`add_card`, `edit_card`,
`ready`, `hold`, `unblock`, `block`, `requeue`, `set_deps`, `cancel`, `comment`)
stay in core/cards/actions.py, `done` (which runs `[import] on_done_argv` after it) and the
imports in core/cards/importing.py, and `split` in core/cards/split.py: publishing
(core/publish/forge.py) and the split, both below this package, apply them too, as the
loop does. The verbs on live and saved work are this package's modules: `stop`, `approve`,
`salvage`, `resolve`, `pick` (with `discard` and `prune`) and `status` (`board status`,
`board resume`). Its other modules, the host leases the loop keeps (`leases`) and the
doctor's checks (`doctor`, `probe`), are not verbs and are not served here. Each verb keeps
the board's two promises: never lose work, never act on a card someone else moved.

The door loads nothing until a name is asked for (PEP 562: the module's `__getattr__`
looks the name up in `_HOMES`, imports its home module and keeps the value in this
module's globals, so the next look-up is a plain one). Importing every home at once would
cost a verb's start what it has no use for. Measured on top of what every verb loads (the
command line, board.toml's reading, the store; perf_counter around the import, median of
30 fresh interpreters, bytecode cached): the old eager package, 40 ms, most of it the git,
drive and publishing modules behind a salvage; the lane verbs' module alone, 11.5 ms; this
door, 0.2 ms. So `board hold` loads core/cards/actions.py and no more (the modules it
loads are the ones it loaded before the door, and the door), `board status` no longer
loads a salvage's, and the TUI loads a verb when it runs. The `if TYPE_CHECKING:` block
imports the same names from the same homes for the type checker, and `__all__` lists them
(tests/test_ops_door.py holds the three equal).

A verb named as its module is (`pick`, `stop`, `approve`, `salvage`, `resolve`) is the
verb here, even when its module was imported first: the import system would name the
module in this package's namespace, and `_Door` turns that away. So `from board.core.ops
import pick` is the function; a module's other names are `from board.core.ops.pick import …`.

Above the drive and publishing (a salvage gates and folds like a drive); below the loop.
"""

from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from board.core.cards.actions import (
        EDITABLE_LANES,
        RACE_AND_BEST_OF,
        CardEdit,
        add_card,
        block,
        cancel,
        check_best_of,
        check_one_line,
        comment,
        edit_card,
        hold,
        ready,
        requeue,
        set_deps,
        unblock,
        validate_draft,
    )
    from board.core.cards.importing import Imported, done, import_gh, import_lines
    from board.core.cards.split import SplitResult, split
    from board.core.ops.approve import ApproveResult, approve
    from board.core.ops.live import card_lock
    from board.core.ops.pick import (
        DiscardTarget,
        PickResult,
        PrunePlan,
        default_target,
        discard,
        discard_target,
        parse_age,
        pick,
        prune,
        prune_plan,
        titles_from,
    )
    from board.core.ops.resolve import ResolveResult, resolve, resolve_continue
    from board.core.ops.salvage import SalvageResult, salvage
    from board.core.ops.status import board_status, resume, status_lines
    from board.core.ops.stop import StopResult, stop, stop_reason

# each home module and the names the door serves from it (the block above, for mypy)
_HOMES: dict[str, tuple[str, ...]] = {
    "board.core.cards.actions": (
        "EDITABLE_LANES",
        "RACE_AND_BEST_OF",
        "CardEdit",
        "add_card",
        "block",
        "cancel",
        "check_best_of",
        "check_one_line",
        "comment",
        "edit_card",
        "hold",
        "ready",
        "requeue",
        "set_deps",
        "unblock",
        "validate_draft",
    ),
    "board.core.cards.importing": ("Imported", "done", "import_gh", "import_lines"),
    "board.core.cards.split": ("SplitResult", "split"),
    "board.core.ops.approve": ("ApproveResult", "approve"),
    "board.core.ops.live": ("card_lock",),
    "board.core.ops.pick": (
        "DiscardTarget",
        "PickResult",
        "PrunePlan",
        "default_target",
        "discard",
        "discard_target",
        "parse_age",
        "pick",
        "prune",
        "prune_plan",
        "titles_from",
    ),
    "board.core.ops.resolve": ("ResolveResult", "resolve", "resolve_continue"),
    "board.core.ops.salvage": ("SalvageResult", "salvage"),
    "board.core.ops.status": ("board_status", "resume", "status_lines"),
    "board.core.ops.stop": ("StopResult", "stop", "stop_reason"),
}
_HOME_OF = {name: home for home, names in _HOMES.items() for name in names}

__all__ = [  # the names served: the block above's imports are this module's public names
    "ApproveResult",
    "CardEdit",
    "DiscardTarget",
    "EDITABLE_LANES",
    "Imported",
    "PickResult",
    "PrunePlan",
    "RACE_AND_BEST_OF",
    "ResolveResult",
    "SalvageResult",
    "SplitResult",
    "StopResult",
    "add_card",
    "approve",
    "block",
    "board_status",
    "cancel",
    "card_lock",
    "check_best_of",
    "check_one_line",
    "comment",
    "default_target",
    "discard",
    "discard_target",
    "done",
    "edit_card",
    "hold",
    "import_gh",
    "import_lines",
    "parse_age",
    "pick",
    "prune",
    "prune_plan",
    "ready",
    "requeue",
    "resolve",
    "resolve_continue",
    "resume",
    "salvage",
    "set_deps",
    "split",
    "status_lines",
    "stop",
    "stop_reason",
    "titles_from",
    "unblock",
    "validate_draft",
]


def __getattr__(name: str) -> object:
    """A served name, imported from its home on first use and kept."""
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The served names too, before any is first asked for (`dir`, `help`, completion)."""
    return sorted({*globals(), *_HOME_OF})


class _Door(ModuleType):
    """This package's module, keeping a verb's name for the verb: the import system names a
    submodule in its package once it is first imported (`ops.pick` would become the module
    board.core.ops.pick when a salvage imported it before anyone asked for `ops.pick`)."""

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, ModuleType) and _HOME_OF.get(name) == value.__name__:
            return  # the verb keeps the name; the module is in sys.modules under its own
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Door

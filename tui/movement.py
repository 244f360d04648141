"""The keys that move through a list or a page, written once for every view.

An operator's hands learn one set: vim's `j`/`k`, `g`/`G` and `ctrl+d`/`ctrl+u` beside the
arrows and page keys, on the board's lanes, the stranded list, the logs, a diff, a card and
the help alike. A page one reads (a log, a diff, a card, the help) also pages with less's
`space`/`b`; a list leaves those two free for verbs. A view says only which of its actions
each movement runs and the ids `[tui.keys]` rebinds them by.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textual.binding import Binding

# movement → its keys, in the order the help and the footer show them
MOVE_KEYS: dict[str, str] = {
    "down": "down,j",
    "up": "up,k",
    "page_down": "pagedown,ctrl+d",
    "page_up": "pageup,ctrl+u",
    "first": "home,g",
    "last": "end,G",
}

# a page's movements (a card, the help): scroll a line, a page, to an end
PAGE_MOVES = {
    "down": "scroll(1)",
    "up": "scroll(-1)",
    "page_down": "page(1)",
    "page_up": "page(-1)",
    "first": "edge(0)",
    "last": "edge(1)",
}
EDGES = {"first": "top", "last": "bottom"}  # a page's ends, as their ids have named them

# what a page one reads adds: less's keys
READER_KEYS: dict[str, str] = {"page_down": "space", "page_up": "b"}

SAID: dict[str, str] = {
    "down": "down",
    "up": "up",
    "page_down": "page down",
    "page_up": "page up",
    "first": "first",
    "last": "last",
}


def movement_bindings(
    scope: str,
    actions: Mapping[str, str],
    *,
    ids: Mapping[str, str] | None = None,
    said: Mapping[str, str] | None = None,
    more: Mapping[str, Mapping[str, Any]] | None = None,
    reader: bool = False,
) -> list[Binding]:
    """One hidden binding a movement, each on `MOVE_KEYS`' keys: `actions` names the view's
    action for each; its id is `scope.<ids[move] or move>` (the ids operators' keymaps
    already name); `said` words a description, `more` adds Binding arguments (a shown key);
    a `reader` (a page one reads) takes `READER_KEYS` too."""
    missing = set(MOVE_KEYS) - set(actions)
    if missing:
        raise ValueError(f"{scope}: no action for {sorted(missing)}")
    ids, said, more = ids or {}, said or {}, more or {}
    found = []
    for move, keys in MOVE_KEYS.items():
        if reader and move in READER_KEYS:
            keys = f"{keys},{READER_KEYS[move]}"
        extra: dict[str, Any] = {"show": False, **more.get(move, {})}
        name = ids.get(move, move)
        found.append(
            Binding(keys, actions[move], said.get(move, SAID[move]), id=f"{scope}.{name}", **extra)
        )
    return found

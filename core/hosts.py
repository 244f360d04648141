"""Which machine this is, as the board names it: `board run --host NAME`, else the hostname.

Drive rows, loop heartbeats and the run lock's holder all carry it, so that on a board
shared by several machines each one recovers, kills and removes only what is its own
(docs/lifecycle.md, "Many hosts"). `--host` sets BOARD_HOST for the process, so every
part of it (and every child) agrees on the name.
"""

from __future__ import annotations

import os
import re

ENV = "BOARD_HOST"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")


def this_host() -> str:
    # socket is imported here: every verb that opens the store imports this module, and only
    # those that write a drive or a heartbeat ask the name
    import socket  # only what writes a drive asks the name

    return os.environ.get(ENV) or socket.gethostname()


def check_name(name: str) -> str:
    """A host name the board can print and compare: letters, digits, `.`, `_`, `-`."""
    if not _NAME.match(name):
        raise ValueError(
            f"host name {name!r} must be 1-63 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name

"""Host leases: on a board shared by machines, a host that stopped beating gives its cards
back, and gets its trees saved when it boots again.

A host whose newest heartbeat is older than `board.host_lease_s` (a dead machine, a cut
network) has lost its lease: every other loop's sweep marks its live drives crashed and
puts their cards back in ready, with a note naming it. Its trees are on that machine and
stay untouched (no host removes a tree it does not own) until it boots again: then the
trees of the cards given away meanwhile are saved and removed, the normal save-then-remove.
Apart from the loop (core/loop.py), which calls these at its sweep and its boot.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from board.core import failures
from board.core.cards import waits
from board.core.config import BoardSection, Config
from board.core.errors import BoardError
from board.core.git import naming, worktrees
from board.core.publish.owner import release_working
from board.core.store import Store

WHO = "board"
LEASE_LOST = "its host lost its lease"  # a drive row's result when another host gave it up
TREES_SAVED = "its trees were saved when the host booted again"

Log = Callable[..., None]  # the loop's log: an event name, then its fields


def lost_hosts(board: BoardSection, store: Store, host: str) -> dict[str, str]:
    """Every host but `host` whose newest heartbeat is older than host_lease_s, with it."""
    at = waits.now()
    newest: dict[str, str] = {}
    for beat in store.loops():
        if beat.heartbeat_at > newest.get(beat.host, ""):
            newest[beat.host] = beat.heartbeat_at
    lost = {}
    for other, heard in newest.items():
        when = failures.parse_stamp(heard)
        if other != host and (when is None or (at - when).total_seconds() > board.host_lease_s):
            lost[other] = heard
    return lost


def give_back(board_cfg: BoardSection, store: Store, host: str, log: Log) -> dict[str, str]:
    """The live drives of every host that lost its lease end crashed, their cards back in
    ready with a note naming the host. Returns the lost hosts (`lost_hosts`), which the
    loop's notices tell of."""
    lost = lost_hosts(board_cfg, store, host)
    if not lost:
        return lost
    for row in store.live_drives():
        if row.host not in lost:
            continue
        why = (
            f"{LEASE_LOST} (host {row.host}, last heartbeat {lost[row.host]}, "
            f"board.host_lease_s {board_cfg.host_lease_s:g})"
        )
        store.update_drive(row.id, status="crashed", pgid=0, result=why)
        note = (
            f"host {row.host} stopped beating at {lost[row.host]}: drive {row.id} is "
            f"given up and the card is back in ready; its tree stays on {row.host} until "
            "that host boots again and saves it"
        )
        changes: dict[str, Any] = {"lane": "ready", "drive": ""}
        with contextlib.suppress(BoardError):
            if release_working(store, row.card, row.id, changes, note, WHO):
                log("lost-host", card=row.card, drive=row.id, host=row.host)
    return lost


def save_given_up_trees(cfg: Config, store: Store, host: str, log: Log) -> None:
    """Booting after `host` lost its lease: the trees of cards given to other hosts
    meanwhile are saved (stranded branches) and removed, the normal save-then-remove."""

    for row in store.list_drives(limit=500):
        if row.host != host or not row.result.startswith(LEASE_LOST):
            continue
        if TREES_SAVED in row.result or store.find(row.card) is None:
            continue
        for tree in naming.card_trees(cfg, row.card):
            try:
                worktrees.discard_worktree(
                    cfg,
                    tree,
                    store=store,
                    card_id=row.card,
                    why=f"host {host} lost its lease during drive {row.id}",
                )
            except BoardError as exc:
                log("kept", card=row.card, tree=str(tree), reason=exc.line())
        store.update_drive(row.id, result=f"{row.result}; {TREES_SAVED}")

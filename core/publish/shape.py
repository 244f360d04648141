"""One board, one shape: the publishing settings every host of a board must agree on.

Each host reads its own clone's board.toml, so two hosts whose files say different things
about where the board's work goes (the publish mode, the base, the run branch, whether the
run branch lives on the remote) each publish their own way, and nothing says so. Two hosts on
one PostgreSQL board without `publish.run_on_remote` each folded onto a run branch of their
own, in their own clone: the board's work ended up split between machines.

So the store records the shape the first `board run` ran with (`Store.record_shape`), and
every later `board run` compares its board.toml with it and refuses, in one line naming the
difference, when they differ. A board that folds onto a local run branch (no run_on_remote)
belongs to the one host that recorded it: on a store several machines open, another host
refuses and is told to set run_on_remote. `board run --reshape` records board.toml's shape
over the old one, on purpose (a board moving to the remote run branch, or to another base).
"""

from __future__ import annotations

import json

from board.core import failures
from board.core.cards import waits
from board.core.config import CONFIG_NAME, Config
from board.core.errors import Refused
from board.core.model import BoardShape
from board.core.store import Store

RESHAPE = "board run --reshape"


def of_config(cfg: Config, host: str) -> BoardShape:
    """The shape this clone's board.toml gives, as `host` would record it."""
    return BoardShape(
        cfg.publish.mode, cfg.board.run_branch, cfg.board.base, cfg.publish.run_on_remote, host
    )


def local_run(shape: BoardShape) -> bool:
    """Whether the shape folds onto a run branch in one clone only (not on the remote)."""
    return shape.mode == "fold" and not shape.run_on_remote


def differences(here: BoardShape, there: BoardShape) -> list[str]:
    """What board.toml (`here`) says otherwise than the board (`there`), each as `[section]
    key = value here, value on the board`. The run branch and run_on_remote only count when
    both fold: a push board publishes through pull requests and has no run branch."""
    keys = [("publish", "mode"), ("board", "base")]
    if here.mode == there.mode == "fold":
        keys += [("board", "run_branch"), ("publish", "run_on_remote")]
    out = []
    for section, key in keys:
        mine, theirs = getattr(here, key), getattr(there, key)
        if mine != theirs:
            out.append(
                f"[{section}] {key} = {json.dumps(mine)} here, {json.dumps(theirs)} on the board"
            )
    return out


def live_hosts(store: Store, host: str, lease_s: float) -> list[str]:
    """Every other host whose loop beat within `lease_s`: a `board run` going on there now."""
    at = waits.now()
    live = set()
    for beat in store.loops():
        when = failures.parse_stamp(beat.heartbeat_at)
        if beat.host != host and when is not None and (at - when).total_seconds() <= lease_s:
            live.add(beat.host)
    return sorted(live)


def _second_host(cfg: Config, host: str, other: str, running: bool) -> Refused:
    where = f"host {other} is running this board" if running else f"host {other} runs this board"
    return Refused(
        f"{where} folding onto its own local {cfg.board.run_branch} ([publish] run_on_remote = "
        f"false), so host {host} would fold onto another and split the board's work; set "
        f"[publish] run_on_remote = true in {CONFIG_NAME} on every host (after pushing "
        f"{other}'s {cfg.board.run_branch} to {cfg.publish.remote or 'the remote'}), "
        f"then run `{RESHAPE}` once"
    )


def check(cfg: Config, store: Store, host: str, reshape: bool = False) -> str:
    """Refuse a `board run` whose board.toml disagrees with the board's recorded shape, or
    that would be a second host on a board with a local run branch; record the shape when
    none is (a board's first run, or a board made before shapes were recorded), or over the
    old one with `reshape`. Returns what it did: "agrees", "recorded" or "reshaped".

    A store that lives in one clone (the SQLite file) has one host by construction: there
    the host is not compared, so a machine whose name changes keeps its board."""
    want = of_config(cfg, host)
    spans = store.spans_hosts
    live = live_hosts(store, host, cfg.board.host_lease_s) if spans and local_run(want) else []
    if reshape:
        if live:
            raise Refused(
                f"host {live[0]} is running this board, which would then fold onto a local "
                f"{cfg.board.run_branch} ([publish] run_on_remote = false) on host {host}: stop it "
                "first, or set [publish] run_on_remote = true on every host; nothing changed"
            )
        store.record_shape(want, replace=True)
        return "reshaped"
    done = "agrees"
    there = store.shape()
    if there is None:
        if live:
            raise _second_host(cfg, host, live[0], running=True)
        there = store.record_shape(want)  # another host's, when it recorded first
        done = "recorded"
    diffs = differences(want, there)
    if diffs:
        by = f"host {there.host}" if there.host else "another host"
        raise Refused(
            f"{CONFIG_NAME} disagrees with the board's recorded shape (by {by} at "
            f"{there.recorded_at}): {'; '.join(diffs)}; edit {cfg.root / CONFIG_NAME} to "
            f"match, or run `{RESHAPE}` to make this {CONFIG_NAME}'s shape the board's"
        )
    if spans and local_run(there):
        if there.host != host:
            raise _second_host(cfg, host, there.host, running=there.host in live)
        if live:
            raise _second_host(cfg, host, live[0], running=True)
    return done

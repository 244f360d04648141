"""Saved work shared through the remote, for a board on several hosts.

Each host saves trees in its own clone, so a stranded branch made on one machine is, by
itself, visible on that machine only; when that machine dies, so does the operator's view
of the work. With the run branch on the remote (`publish.run_on_remote`) every stranded
branch is pushed there too (the loop retries until it lands and says so on the card), and
each host fetches the others' into its own `stranded/` branches, so the browser on any
host lists, diffs and picks work saved anywhere.

A discard, prune or salvage deletes the save where it ran, records a tombstone in the store
(the branch and the save's commit), then deletes the remote copy (at the commit it saw). A
deletion on the remote alone did not stick: another host still held its fetched copy, saw
it missing from the remote and pushed it back, and every host fetched it again. So each
sweep reads the tombstones after its fetch: a buried save is neither pushed nor fetched,
the host deletes its own copy, and a copy someone pushed back is deleted from the remote.
A tombstone names a commit: a new save at the same branch name with another commit is not
buried.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from board.core import hosts
from board.core.config import Config, PublishSection
from board.core.errors import BoardError
from board.core.git import gitutil, runbranch
from board.core.git.naming import STRANDED as STRANDED_PREFIX
from board.core.records import Frozen
from board.core.store import Store

_ZERO = "0" * 40
Buried = set[tuple[str, str]]  # (branch, commit) of every save deleted on purpose


class Pushed(Frozen):
    branch: str
    ok: bool
    why: str = ""


def _tracking(publish: PublishSection, branch: str) -> str:
    return f"refs/remotes/{publish.remote}/{branch}"


def _refs(cfg: Config, pattern: str) -> dict[str, str]:
    out = gitutil.out(cfg.root, "for-each-ref", "--format=%(objectname) %(refname)", pattern)
    found = {}
    for line in gitutil.lines(out):
        oid, _, name = line.partition(" ")
        found[name] = oid
    return found


def unpushed(cfg: Config, buried: Buried | None = None) -> list[str]:
    """Local stranded branches the remote does not hold (as this clone last saw it), but
    for a buried save (it is deleted at this sweep, never pushed back)."""
    local = _refs(cfg, f"refs/heads/{STRANDED_PREFIX}")
    remote = _refs(cfg, f"refs/remotes/{cfg.publish.remote}/{STRANDED_PREFIX}")
    out = []
    for ref, oid in sorted(local.items()):
        branch = ref.removeprefix("refs/heads/")
        if remote.get(_tracking(cfg.publish, branch)) != oid and (branch, oid) not in (
            buried or ()
        ):
            out.append(branch)
    return out


def push_stranded(cfg: Config, branches: list[str]) -> list[Pushed]:
    """Push these stranded branches in one `git push`; each one's outcome."""
    if not branches:
        return []
    specs = [f"refs/heads/{b}:refs/heads/{b}" for b in branches]
    res = gitutil.git(
        cfg.root,
        *gitutil.NO_HOOKS,
        "push",
        "--porcelain",
        cfg.publish.remote,
        *specs,
        check=False,
        timeout=cfg.publish.timeout_s,
    )
    said = {}
    for line in gitutil.lines(res.stdout):
        parts = line.split("\t")
        if len(parts) >= 3 and parts[0] in ("*", "=", "+", " ", "!", "-"):
            ref = parts[1].split(":", 1)[0].removeprefix("refs/heads/")
            said[ref] = (parts[0] != "!", parts[2])
    out = []
    for branch in branches:
        ok, why = said.get(branch, (False, res.stderr.strip() or f"exit {res.returncode}"))
        out.append(Pushed(branch, ok, why))
    return out


def fetch_stranded(cfg: Config) -> bool:
    """Fetch the remote's stranded branches into this clone's tracking refs, pruning the ones
    deleted there; False when the fetch failed (the remote is out of reach: next sweep)."""
    prefix = STRANDED_PREFIX
    res = gitutil.git(
        cfg.root,
        "fetch",
        "--quiet",
        "--prune",
        cfg.publish.remote,
        f"+refs/heads/{prefix}*:refs/remotes/{cfg.publish.remote}/{prefix}*",
        check=False,
        timeout=cfg.publish.timeout_s,
    )
    return res.returncode == 0


def adopt_fetched(cfg: Config, buried: Buried | None = None) -> list[str]:
    """Make a local branch for each fetched stranded branch this clone lacks, but for a
    buried save; returns the branches it made."""
    prefix = STRANDED_PREFIX
    local = _refs(cfg, f"refs/heads/{prefix}")
    made = []
    for ref, oid in sorted(_refs(cfg, f"refs/remotes/{cfg.publish.remote}/{prefix}").items()):
        branch = ref.removeprefix(f"refs/remotes/{cfg.publish.remote}/")
        if f"refs/heads/{branch}" in local or (branch, oid) in (buried or ()):
            continue
        made_ok = gitutil.git(
            cfg.root,
            *gitutil.NO_HOOKS,
            "update-ref",
            "-m",
            f"board: saved work from {cfg.publish.remote}",
            f"refs/heads/{branch}",
            oid,
            _ZERO,
            check=False,
        )
        if made_ok.returncode == 0:
            made.append(branch)
    return made


class Dropped(Frozen):
    """The copies of buried saves a sweep deleted: this clone's, and the remote's."""

    here: list[str]
    remote: list[str]


def drop_buried(cfg: Config, buried: Buried) -> Dropped:
    """Delete this clone's copy of every buried save (at the buried commit, compare-and-swap;
    a branch checked out somewhere is left alone), and the remote's copy of any still there
    as this clone last fetched it (someone pushed it back before they knew)."""
    here = []
    for ref, oid in sorted(_refs(cfg, f"refs/heads/{STRANDED_PREFIX}").items()):
        branch = ref.removeprefix("refs/heads/")
        if (branch, oid) not in buried or runbranch.checked_out_at(cfg, branch):
            continue
        if gitutil.ok(
            cfg.root, *gitutil.NO_HOOKS, "update-ref", "-m", "board: buried save", "-d", ref, oid
        ):
            here.append(branch)
    remote = []
    if cfg.publish.remote:
        tracking = _refs(cfg, f"refs/remotes/{cfg.publish.remote}/{STRANDED_PREFIX}")
        for ref, oid in sorted(tracking.items()):
            branch = ref.removeprefix(f"refs/remotes/{cfg.publish.remote}/")
            if (branch, oid) in buried and delete_remote(cfg, branch, oid):
                remote.append(branch)
    return Dropped(here, remote)


def bury(cfg: Config, store: Store, saves: list[tuple[str, str]]) -> None:
    """Record saves just deleted here (branch, commit) as tombstones; called after the local
    delete and before the remote one, so a host that fetches after the remote delete reads
    the tombstone too. A store that fails leaves the save deleted here only, and says so:
    another host may bring it back, nothing is lost, the discard can be done again."""
    try:
        store.bury(saves, hosts.this_host())
    except BoardError as exc:
        names = ", ".join(b for b, _ in saves)
        raise BoardError(
            f"deleted {names} here, but the store did not record it ({exc.line()}): another "
            "host may bring it back; delete it again once the store answers"
        ) from exc


def delete_remote(cfg: Config, branch: str, commit: str) -> bool:
    """Delete the remote copy of a discarded stranded branch, if it is still at `commit`."""
    res = gitutil.git(
        cfg.root,
        *gitutil.NO_HOOKS,
        "push",
        "--porcelain",
        f"--force-with-lease=refs/heads/{branch}:{commit}",
        cfg.publish.remote,
        f":refs/heads/{branch}",
        check=False,
        timeout=cfg.publish.timeout_s,
    )
    return res.returncode == 0


def sweep(cfg: Config, store: Store, log: Callable[..., Any]) -> list[Pushed]:
    """One sweep of the saves shared through the remote: fetch the others', read the
    tombstones (after the fetch: a save is buried before its remote copy is deleted, so a
    fetch that no longer sees it sees its tombstone), delete the copies of buried saves,
    adopt the others' saves, push this host's. Each step is logged with `log(event,
    **fields)`; returns the pushes that landed."""
    fetched = fetch_stranded(cfg)
    buried = store.tombstones()
    dropped = drop_buried(cfg, buried)
    for branch in dropped.here:
        log("dropped-save", branch=branch, reason="buried in the store")
    for branch in dropped.remote:
        log("dropped-save", branch=branch, where=cfg.publish.remote)
    for made in adopt_fetched(cfg, buried) if fetched else []:
        log("fetched-save", branch=made)
    landed = []
    for res in push_stranded(cfg, unpushed(cfg, buried)):
        if res.ok:
            landed.append(res)
        else:
            log("push-save-failed", branch=res.branch, reason=res.why)
    return landed

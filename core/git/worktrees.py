"""Worktree lifecycle: no tree holding work that exists nowhere else goes before it is saved.

Peers lost their users' work exactly here: a crash wiped uncommitted trees, a re-dispatch
force-removed the tree the next build reused, a cancel raced the save. So every removal in
board goes through one function, `discard_worktree`, which takes a per-path lock across
processes, saves whatever the tree holds to `stranded/<tree dir>/<UTC ms stamp>` (verified by
reading the branch back), and only then moves the tree out of its path. When the save fails the
tree stays exactly as it is and the caller gets a `StrandedWorkError` saying why.

The parts live below this module: what things are called (`naming`), what a tree holds
(`snapshot`), the save (`saves`), the removal's steps with the kill of what still runs in the
tree (`removal`), and the test-only fault hooks (`faults`). Here are `discard_worktree`, which
runs them in order, the edges that call it (the reap, the orphan sweep, a fresh build's first
step, `create_worktree`) and the comment each leaves on the card.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from board.core.config import Config
from board.core.errors import BoardError, GitError, Refused, StrandedWorkError
from board.core.git import naming, quickclean, runbranch, saves
from board.core.git.gitutil import git, is_commit_id
from board.core.git.naming import (
    KIND_ATTEMPT,
    KIND_CANDIDATE,
    KIND_SAVED,
    KINDS,
    _branch_of_tree_name,
    branch_for,
    card_id_of,
    card_trees,
    tree_name,
)
from board.core.git.removal import (
    Dropped,
    _admin_for,
    _classify,
    _delete_branch,
    _husk_branch,
    _move_husk,
    _move_out,
    cleanup,
    ignored_files,
    stop_what_runs_in,
    tree_lock,
)
from board.core.git.saves import SaveResult, _preserve, _save_branch, _why
from board.core.git.snapshot import _short
from board.core.records import Record, field

log = logging.getLogger("board.worktrees")


class CommentSink(Protocol):
    """What a save needs from the store: a way to leave a comment on the card."""

    def add_comment(self, card_id: str, text: str, who: str = "board") -> None: ...


class RemoveResult(Record):
    """What one save-then-remove did, told truthfully: was it saved, did the tree really go."""

    tree: Path
    card: str | None = None
    why: str = ""
    existed: bool = True
    removed: bool = False  # the tree left its path
    saved: SaveResult | None = None
    husk_to: Path | None = None  # where a husk was moved aside
    branch_saves: list[SaveResult] = field(default_factory=list)
    kept: str = ""  # why the tree is still at its path
    error: str = ""  # a failed save's full message
    ignored: Dropped | None = None  # ignored files the removal deleted (never saved)
    branch_deleted: str = ""  # the tree's own branch (a ref) the removal deleted, if it did

    def to_json(self) -> dict[str, Any]:
        return {
            "tree": str(self.tree),
            "card": self.card,
            "removed": self.removed,
            "saved": self.saved.to_json() if self.saved else None,
            "husk_to": str(self.husk_to) if self.husk_to else None,
            "branch_saves": [s.to_json() for s in self.branch_saves],
            "kept": self.kept,
            "error": self.error,
            "ignored": self.ignored.to_json() if self.ignored else None,
        }


# the save-then-remove ------------------------------------------------------------------


def discard_worktree(
    cfg: Config,
    tree: Path,
    store: CommentSink | None = None,
    card_id: str | None = None,
    why: str = "",
    kind: str = KIND_SAVED,
    replayed: tuple[str, str] | None = None,
) -> RemoveResult:
    """THE one save-then-remove: every edge that removes a tree calls this.

    Locked per tree path across processes, so two edges reaching one tree make one save and one
    removal. A tree the operator locked is kept. A husk is moved aside to .stranded/, bytes
    intact, after its branch's unique commits are saved. Otherwise the tree's work is saved to
    a verified branch and only then the tree leaves its path (read-only files included). When
    the save fails, StrandedWorkError is raised and the tree is exactly as it was. `kind`
    (`attempt` for a drive's own failed attempt) is recorded with the save. `replayed`:
    the card's commit and the one its fold just made of it (quickclean.clean_and_held).
    """
    if kind not in KINDS:
        raise Refused(f"not a kind of save: {kind!r} (one of {', '.join(KINDS)})")
    tree = Path(os.path.abspath(tree))
    card = card_id or card_id_of(tree.name, cfg.board.prefix)
    result = RemoveResult(tree=tree, card=card, why=why)
    with tree_lock(cfg, tree):
        cleanup(cfg)
        if not os.path.lexists(tree):
            result.existed = False
            return result
        state, admin = _classify(cfg, tree)
        if state == "locked":
            result.kept = "the operator locked it (git worktree lock); it is never deleted"
            log.info("kept %s: %s", tree, result.kept)
            return result
        running = stop_what_runs_in(tree)
        if running:
            raise StrandedWorkError(
                str(tree),
                "unknown: processes still write in it",
                f"processes {', '.join(map(str, running))} started there could not be stopped",
                cfg.board.base,
            )
        if state == "husk":
            branch = _husk_branch(cfg, tree, admin)
            if branch:
                try:
                    saved = _save_branch(
                        cfg, branch, tree.name, card, why or "moving its husk aside"
                    )
                except (GitError, OSError) as exc:
                    raise StrandedWorkError(
                        str(tree),
                        f"a husk whose branch {_short(branch)} holds unpushed commits",
                        _why(exc),
                        cfg.board.base,
                    ) from exc
                if saved:
                    result.branch_saves.append(saved)
            result.husk_to = _move_husk(cfg, tree, admin)
            result.removed = True
            if branch and result.branch_saves:
                _delete_branch(
                    cfg,
                    branch,
                    git(
                        cfg.root, "rev-parse", "--verify", "-q", branch, check=False
                    ).stdout.strip(),
                )
            _comment(store, result, cfg)
            return result
        work = quickclean.clean_and_held(cfg.board, tree, replayed)
        if work is None:
            result.saved, work = _preserve(cfg, tree, why, kind)
        try:
            ignored = ignored_files(cfg.board, tree)
        except (GitError, OSError) as exc:  # naming them must never stop a saved tree going
            log.warning("could not list the ignored files of %s: %s", tree, exc)
            ignored = None
        not_gone = _move_out(cfg, tree, admin)
        result.removed = not not_gone and not os.path.lexists(tree)
        result.kept = not_gone
        if result.removed and ignored:
            result.ignored = ignored
            if result.saved is None:
                log.info("removed %s (nothing to save) with %s", tree, ignored.text())
        own = f"refs/heads/{_branch_of_tree_name(tree.name)}"
        if result.removed and not work.detached and work.branch == own:
            if _delete_branch(cfg, work.branch, work.branch_tip):
                result.branch_deleted = work.branch
        if result.saved is not None or not result.removed:
            _comment(store, result, cfg)
        return result


# what the card is told ---------------------------------------------------------------------


def _comment(store: CommentSink | None, result: RemoveResult, cfg: Config) -> None:
    if store is None or not result.card:
        return
    try:
        store.add_comment(result.card, save_comment(cfg, result), "board")
    except BoardError as exc:  # the card may be gone; the save itself stands
        log.warning("could not comment on %s: %s", result.card, exc.line())


def _rel(cfg: Config, path: Path) -> str:
    try:
        return str(Path(path).relative_to(cfg.root))
    except ValueError:
        return str(path)


def _save_lines(cfg: Config, save: SaveResult) -> list[str]:
    b = save.branch
    again = " (an earlier save of exactly this state, verified)" if save.reused else ""
    what = {KIND_ATTEMPT: " (a failed attempt)", KIND_CANDIDATE: " (a candidate not chosen)"}.get(
        save.kind, ""
    )
    lines = [f"Saved to {b}{what}{again}: {save.stats.text()} ({save.holds})."]
    commands = saves.recovery_commands(
        b,
        saves.named_start(cfg, save.commit, save.start, save.base_ref),
        runbranch.pick_target(cfg),
        save.tree_dir,
        delete=True,
    )
    for label, command, by_git in commands:
        lines.append(f"  {label + ':':<13}{command}" + (f"   (or: {by_git})" if by_git else ""))
    return lines


def save_comment(cfg: Config, result: RemoveResult) -> str:
    """The card comment for one save-then-remove: the branch, its diffstat, and how to act on it."""
    where = _rel(cfg, result.tree)
    because = f" ({result.why})" if result.why else ""
    lines: list[str] = []
    if result.husk_to is not None:
        lines.append(
            f"{where} was a husk (no git admin entry){because}; moved aside, bytes intact, "
            f"to {_rel(cfg, result.husk_to)}."
        )
        for s in result.branch_saves:
            lines.extend(_save_lines(cfg, s))
        name = result.husk_to.name
        lines.append(f"  delete the husk: board stranded discard {name}")
        return "\n".join(lines)
    if result.saved is not None:
        lines.append(f"{where} held work that existed nowhere else{because}.")
        lines.extend(_save_lines(cfg, result.saved))
    elif result.error:
        lines.append(f"{where} could not be saved{because}: {result.error}")
    if result.removed:
        lines.append(f"The tree left its path: {where} is gone.")
        if result.ignored:
            lines.append(
                f"Deleted with it, not saved (ignored by git, so not work): "
                f"{result.ignored.text()}."
            )
    else:
        lines.append(f"The tree is still at {where}: {result.kept or result.error or 'kept'}.")
    return "\n".join(lines)


# the edges -------------------------------------------------------------------------------

_logged: set[str] = set()
_logged_lock = threading.Lock()


def _log_once(key: str, message: str, *args: object) -> None:
    with _logged_lock:
        if key in _logged:
            return
        _logged.add(key)
    log.warning(message, *args)


def reap_card(
    cfg: Config, card_id: str, store: CommentSink | None = None, why: str = "reap"
) -> list[RemoveResult]:
    """Save then remove every tree of the card (cancel, done, the by-id reap).

    A tree that cannot be saved stays where it is; the reap goes on, says so on the card and
    in the log (once), and reports it with `error` set.
    """
    results = []
    for tree in card_trees(cfg, card_id):
        try:
            results.append(discard_worktree(cfg, tree, store=store, card_id=card_id, why=why))
        except (StrandedWorkError, Refused) as exc:
            res = RemoveResult(
                tree=tree,
                card=card_id,
                why=why,
                kept="its work could not be saved",
                error=exc.line(),
            )
            results.append(res)
            _log_once(f"reap:{tree}:{exc.line()}", "kept %s: %s", tree, exc.line())
            _comment(store, res, cfg)
    return results


def at_work(lane: str | None) -> bool:
    """A tree whose card is in this lane is never an orphan: the card is known (a lane) and
    neither done nor cancelled. The sweep keeps such a tree without a look at its path."""
    return lane is not None and lane not in ("done", "cancelled")


def sweep_orphans(
    cfg: Config,
    lane_of: Callable[[str], str | None],
    live_trees: set[Path],
    store: CommentSink | None = None,
    names: list[str] | None = None,
) -> list[RemoveResult]:
    """Save then remove trees whose card is done, cancelled or unknown; never a live one.

    `lane_of(card_id)` returns the card's lane, or None when the store does not know it. A name
    whose card id cannot be read (a test-rung tree, a hand-made dir) is kept and logged once.
    `names`: the worktrees directory as the caller just read it (`naming.tree_names`).
    """
    root = cfg.worktrees_dir
    # A done card's tree is live while its drive removes it: found by its path as given,
    # without a syscall. Only a tree not found so is compared resolved (symlinks and all):
    # resolving the 100 live trees each tick that a card went done cost 35,000 lstat calls
    # in a wave of 100 drives, 4 s of the loop's ticks. Both sets are made only when a
    # tree whose card is not at work is found: most ticks find none.
    given: set[str] | None = None
    live: set[Path] | None = None
    results = []
    for name in naming.tree_names(root) if names is None else names:
        card = card_id_of(name, cfg.board.prefix)
        lane = lane_of(card) if card is not None else None
        if at_work(lane):
            continue  # kept whether live or not: no path is made for it (100 a tick)
        entry = root / name
        if given is None:
            given = {os.path.abspath(p) for p in live_trees}
        path = os.path.abspath(entry)
        if path in given:
            continue
        if live is None:
            live = {Path(p).resolve() for p in given}
        if Path(path).resolve() in live:
            continue
        if card is None:
            _log_once(
                f"unparsed:{entry}",
                "kept %s: no card id in its name; remove it by hand if it is not needed",
                entry,
            )
            continue
        why = f"the orphan sweep (card {card} is {lane or 'unknown'})"
        try:
            results.append(discard_worktree(cfg, entry, store=store, card_id=card, why=why))
        except (StrandedWorkError, Refused) as exc:
            _log_once(f"sweep:{entry}:{exc.line()}", "kept %s: %s", entry, exc.line())
            results.append(
                RemoveResult(
                    tree=entry,
                    card=card,
                    why=why,
                    kept="its work could not be saved",
                    error=exc.line(),
                )
            )
    return results


def fresh_build_prepare(
    cfg: Config, card_id: str, store: CommentSink | None = None
) -> list[RemoveResult]:
    """A fresh build's first edge: save then remove every tree the card owns.

    Raises StrandedWorkError (after trying every tree) when one could not be saved, so the drive
    blocks the card `stranded-work` and dispatches no coder.
    """
    results = []
    first: StrandedWorkError | None = None
    for tree in card_trees(cfg, card_id):
        try:
            results.append(
                discard_worktree(cfg, tree, store=store, card_id=card_id, why="a fresh build")
            )
        except StrandedWorkError as exc:
            first = first or exc
    if first is not None:
        raise first
    return results


def create_worktree(
    cfg: Config,
    card_id: str,
    slug: str = "",
    store: CommentSink | None = None,
    start: str | None = None,
) -> Path:
    """A fresh tree for the card on `feat/<id>[-<slug>]`, at `start` (default: the start
    point, `runbranch.start_point`: the run branch's tip in `fold` mode, the base in `push`).

    Whatever is at the path is saved and removed first (through `discard_worktree`); when that
    save fails, StrandedWorkError is raised before anything moves.
    """
    return fresh_tree(cfg, card_id, slug, store, start)[0]


def fresh_tree(
    cfg: Config,
    card_id: str,
    slug: str = "",
    store: CommentSink | None = None,
    start: str | None = None,
) -> tuple[Path, str]:
    """`create_worktree`, and the commit the tree's HEAD is at: the start point as a commit
    id (every start_point is one), so the drive does not ask git for the HEAD it just set;
    asked of the tree only when `start` was given as a name."""
    name = tree_name(card_id, slug)
    branch = branch_for(card_id, slug)
    path = cfg.worktrees_dir / name
    start = start or runbranch.start_point(cfg)
    with tree_lock(cfg, path):
        if os.path.lexists(path):
            res = discard_worktree(cfg, path, store=store, card_id=card_id, why="create_worktree")
            if os.path.lexists(path):
                raise Refused(
                    f"{path} is still there ({res.kept or 'kept'}); a new tree cannot be made there"
                )
        cleanup(cfg)
        saved = None
        try:
            saved = _save_branch(cfg, f"refs/heads/{branch}", name, card_id, "create_worktree")
        except (GitError, OSError) as exc:
            raise StrandedWorkError(
                str(path), f"branch {branch} holds unpushed commits", _why(exc), cfg.board.base
            ) from exc
        if saved is not None and store is not None:
            store.add_comment(
                card_id,
                "\n".join(
                    [f"Branch {branch} held commits that existed nowhere else (create_worktree)."]
                    + _save_lines(cfg, saved)
                ),
                "board",
            )
        cfg.worktrees_dir.mkdir(parents=True, exist_ok=True)
        git(
            cfg.root,
            "worktree",
            "add",
            "--no-checkout",
            "--no-track",
            "-B",
            branch,
            str(path),
            start,
        )
        _check_out(cfg, path)
    if is_commit_id(start):
        return path, start
    return path, git(path, "rev-parse", "HEAD").stdout.strip()


def _check_out(cfg: Config, path: Path) -> None:
    """Fill a tree `worktree add --no-checkout` made: its index and files, from its HEAD.

    Apart from the add because the add runs under the repository's admin lock, one tree at
    a time: the checkout was most of it (90-135 ms of 300 files at load; 1.7-4.6 s of
    100,000), and 100 drives' trees queued behind each other's, a median 6.6 s from claim
    to tree in a wave of 100 (bench_fleet's stages). Here each tree fills its own index.
    A tree whose checkout fails holds only what git wrote from its HEAD: it is moved out
    (no save, there is nothing of anyone's in it), and the caller gets git's words."""
    res = git(path, "reset", "-q", "--hard", "HEAD", check=False)
    if res.returncode == 0 and not res.timed_out:
        return
    why = "timed out" if res.timed_out else (res.stderr.strip() or res.stdout.strip())
    kept = _move_out(cfg, path, _admin_for(cfg, path))
    raise GitError(
        f"git checkout of the new tree {path.name}: {why.splitlines()[-1] if why else 'failed'}"
        + (f"; the tree is left at its path: {kept}" if kept else "")
    )

"""The operator's verbs on live work: stop a drive, approve a reviewed card, salvage saved work.

Each is one core function the CLI and the TUI share, and each keeps the board's two
promises: never lose work, never act on a card someone else moved.

- `stop` ends a runaway drive without losing its card or its work. The card moves
  first (to `ready`, held `stopped: …`) and the drive's row is ended, so the drive,
  when it notices its coder died, finds the card no longer its own and stands aside:
  nothing is blocked, retried, counted against the timeout budget or published. Only
  then is the drive's whole process group killed and its tree saved to a `stranded/…`
  branch through the one save-then-remove. `unblock` resumes the card: its next build
  starts from that saved work (treestate.resume_branch).
  The system we re-create had no such verb: its operators killed processes by hand and
  lost trees to the next re-dispatch.
- `approve` publishes a card waiting in `review` (fold or push). It owns the card only
  at the version it read (and, from the TUI, the version the operator saw), so a
  requeue by someone else — before or during the publish — is never overridden.
- `salvage` publishes a stranded branch, or a card's kept tree, with no coder: commit
  what the tree holds, run the gate where the tree stands, publish by the configured
  mode. For its duration the card is `working` under a drive row of its own (tier
  `salvage`), so the loop does not claim it, a second salvage or an approve refuses,
  and `board stop` ends it like any drive. A red gate publishes nothing and puts the
  card back as it was; `--force` publishes anyway and says so (a draft PR with push, a
  note on the card with fold). A salvaged stranded branch is deleted once its content
  is verified published, so it lands exactly once.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from board.core import locks, proc
from board.core.config import Config
from board.core.drive.drive import (
    GateVerdict,
    brief_text,
    git_commit,
    run_gate,
    tree_changes,
    write_brief,
)
from board.core.errors import BoardError, Conflict, NotFound, Refused, StrandedWorkError
from board.core.git import (
    gitutil,
    naming,
    pick,
    runbranch,
    snapshot,
    stranded,
    treestate,
    worktrees,
)
from board.core.logs import LogWriter, log_path
from board.core.model import Blocked, Card, Drive
from board.core.ops import split
from board.core.publish import publish, push
from board.core.publish.publish import Owner, StoodAside, edge_update
from board.core.store import Expect, Store

WHO = "operator"
BOARD = "board"
SALVAGE_TIER = "salvage"
STOP_SETTLE_S = 0.5  # after the kill, how long a child the drive starts late is still caught
GROUP_GONE_S = 3.0  # how long to wait for a killed group to leave /proc
TAIL_LINES = 20


# ---------------------------------------------------------------------------------------------
# small helpers


def _group_running(pgid: int) -> bool:
    """Whether any process of the group still runs (a zombie holds nothing and is not counted).

    Where /proc exists it is read, because an orphaned grandchild's zombie can linger until
    init reaps it; elsewhere the group is probed with signal 0.
    """
    proc_dir = Path("/proc")
    if not (proc_dir / "self" / "stat").exists():
        return proc.group_alive(pgid)
    for entry in proc_dir.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def _here(row: Drive) -> bool:
    return not row.host or row.host == socket.gethostname()


@contextlib.contextmanager
def card_lock(cfg: Config, card_id: str, what: str) -> Iterator[None]:
    """One approve or salvage per card at a time, across processes; a second one refuses.

    Not waited for: the operator is told at once who holds it, and nothing is changed.
    """
    path = publish.lock_path(cfg, f"card-{card_id}")

    def busy(holder: str) -> str:
        return (
            f"{card_id}: {holder or 'another approve or salvage'} is running; "
            f"wait for it to finish (lock {path})"
        )

    with locks.file_lock(path, 0, busy, holder=f"{what} (pid {os.getpid()})"):
        yield


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _rel(cfg: Config, path: Path) -> str:
    try:
        return str(Path(path).relative_to(cfg.root))
    except ValueError:
        return str(path)


def _save_trees(
    cfg: Config, store: Store, card_id: str, why: str, trees: list[Path] | None = None
) -> tuple[list[str], list[str]]:
    """Save-then-remove trees of the card: (stranded branches made, trees kept and why)."""
    saved: list[str] = []
    kept: list[str] = []
    for tree in naming.card_trees(cfg, card_id) if trees is None else trees:
        try:
            res = worktrees.discard_worktree(cfg, tree, store=store, card_id=card_id, why=why)
        except (StrandedWorkError, BoardError) as exc:
            kept.append(f"{_rel(cfg, tree)}: {exc.line()}")
            store.add_comment(card_id, f"its tree was kept: {exc.line()}", BOARD)
            continue
        saved += [s.branch for s in ([res.saved] if res.saved else []) + res.branch_saves]
        if res.existed and not res.removed:
            kept.append(f"{_rel(cfg, tree)}: {res.kept or 'kept'}")
    return saved, kept


# ---------------------------------------------------------------------------------------------
# stop


@dataclass
class StopResult:
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


def end_drives(store: Store, card_id: str, why: str, status: str = "stopped") -> StopResult:
    """End the card's live drives: their rows first (so they stand aside), then their groups.

    A row's group is killed, and for a short while any child the drive starts late (it
    had not yet seen the card move) is killed too, until the drive's owner is gone or the
    window closes. A drive on another host is only told through its row and the card.
    """
    result = StopResult(card=store.get(card_id))
    rows = [d for d in store.list_drives(card_id, limit=50) if d.live]  # type: ignore[attr-defined]
    for row in rows:
        store.update_drive(row.id, status=status, result=why[:500])  # type: ignore[attr-defined]
        result.drives.append(row.id)
    local = [r for r in rows if _here(r)]
    for row in rows:
        if not _here(row):
            result.lines.append(f"drive {row.id} runs on {row.host}; it stands aside there")
    killed: set[int] = set()
    settle_until = time.monotonic() + (
        STOP_SETTLE_S if any(proc.pid_alive(r.owner_pid) for r in local) else 0
    )
    while True:
        for row in local:
            pgid = store.get_drive(row.id).pgid or row.pgid  # type: ignore[attr-defined]
            if pgid and pgid not in killed and pgid != os.getpgrp():
                if proc.kill_group(pgid, signal.SIGKILL):
                    result.lines.append(f"killed drive {row.id}'s process group {pgid}")
                killed.add(pgid)
        if time.monotonic() >= settle_until:
            break
        time.sleep(0.05)
    deadline = time.monotonic() + GROUP_GONE_S
    while any(_group_running(g) for g in killed) and time.monotonic() < deadline:
        time.sleep(0.02)
    for row in local:
        store.update_drive(row.id, pgid=0)  # type: ignore[attr-defined]
    result.killed = sorted(killed)
    return result


def stop(
    store: Store, cfg: Config, card_id: str, reason: str | None = None, who: str = WHO
) -> StopResult:
    """`board stop ID`: end the card's drive, save its tree, leave the card held in `ready`.

    Refused, changing nothing, unless the card is `working`. No budget is spent: the
    drive finds its card moved and counts nothing.
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
            {"lane": "ready", "blocked": Blocked("held", why), "drive": ""},
            who,
            note=f"drive {token} stopped; `board unblock {card.id}` resumes it",
        )
    result = end_drives(store, card_id, why)
    for line in result.lines:
        store.add_event(card_id, line, who)
    result.saved, result.kept = _save_trees(cfg, store, card_id, why)
    if result.saved:
        result.lines.append(f"its work is on {', '.join(result.saved)}")
        if treestate.note_resumable(store, cfg, card_id, result.saved):
            result.lines.append(f"`board unblock {card_id}` continues from it")
    for kept in result.kept:
        result.lines.append(f"kept {kept}")
    result.card = store.get(card_id)
    return result


# ---------------------------------------------------------------------------------------------
# approve


@dataclass
class ApproveResult:
    """What `board approve` did: `done` (folded), `review` (pushed, PR open) or `blocked`."""

    card: Card
    outcome: str
    pr_url: str = ""
    commit: str = ""
    lines: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "card": self.card.to_json(),
            "outcome": self.outcome,
            "pr_url": self.pr_url,
            "commit": self.commit,
            "lines": self.lines,
        }


def _check_approvable(card: Card, expect_version: int | None) -> None:
    if card.lane != "review":
        raise Refused(f"{card.id}: expects review, got {card.lane}: there is nothing to approve")
    if expect_version is not None and card.version != expect_version:
        raise Conflict(
            f"{card.id}: changed since you looked (version {card.version}, you saw "
            f"{expect_version}); look again before approving"
        )
    if card.blocked is not None and card.blocked.cls == "held":
        raise Refused(f"{card.id}: is held ({card.blocked.reason}); unblock it first")
    if card.drive:
        raise Refused(f"{card.id}: drive {card.drive} owns it")
    if card.pr_url and card.blocked is None:
        raise Refused(
            f"{card.id}: already has its PR {card.pr_url}; `board done {card.id}` when it merges"
        )


_is_worktree = treestate.is_worktree
_card_tree = treestate.card_tree


def _fold_source(cfg: Config, card: Card) -> Path | str:
    """The card's tree to fold from, or its branch when no tree is left (refused: neither)."""
    tree = _card_tree(cfg, card)
    if tree is not None:
        return tree
    if not card.branch or gitutil.rev(cfg.root, f"refs/heads/{card.branch}") is None:
        raise Refused(f"{card.id}: has neither a tree nor a branch: nothing to publish")
    path = cfg.worktrees_dir / naming.tree_name(card.id)
    if os.path.lexists(path):
        raise Refused(f"{card.id}: {path} is in the way and is not on {card.branch}")
    return card.branch


def _tree_on(cfg: Config, card: Card, source: Path | str) -> Path:
    """A tree with the card branch checked out: its own, or a new one on the branch."""
    if isinstance(source, Path):
        return source
    path = cfg.worktrees_dir / naming.tree_name(card.id)
    cfg.worktrees_dir.mkdir(parents=True, exist_ok=True)
    gitutil.git(cfg.root, *gitutil.NO_HOOKS, "worktree", "add", "-q", str(path), source)
    return path


def _branch_to_push(cfg: Config, card: Card) -> str:
    tree = _card_tree(cfg, card)
    branch = gitutil.out(tree, "branch", "--show-current", check=False) if tree else ""
    branch = branch or card.branch
    if not branch or gitutil.rev(cfg.root, f"refs/heads/{branch}") is None:
        raise Refused(f"{card.id}: has no branch to push: nothing to publish")
    return branch


def _after_fold(cfg: Config, store: Store, card_id: str, tree: Path, why: str) -> None:
    """A folded card's tree goes through the save (nothing is left to save) and its branch."""
    branch = gitutil.out(tree, "branch", "--show-current", check=False)
    _save_trees(cfg, store, card_id, why, [tree])
    publish.drop_folded_branch(cfg, branch)
    split.clear_count(store, card_id)


def approve(
    store: Store,
    cfg: Config,
    card_id: str,
    reason: str | None = None,
    expect_version: int | None = None,
    who: str = WHO,
) -> ApproveResult:
    """`board approve ID`: publish a card waiting in review, the configured way.

    `expect_version` is the version the operator saw (the TUI passes it): a card changed
    since — requeued, rebuilt, held — is refused. During the publish the card is owned at
    the version this approve wrote, so a requeue landing meanwhile stops the publish
    before it lands (fold) or before the PR is opened and the card written (push).
    """
    with card_lock(cfg, card_id, f"an approve of {card_id}"):
        card = store.get(card_id)
        _check_approvable(card, expect_version)
        pushing = cfg.publish_mode == "push"
        source = _branch_to_push(cfg, card) if pushing else _fold_source(cfg, card)
        note = "approved" + (f": {' '.join(reason.split())}" if reason and reason.strip() else "")
        card = store.update(
            card.id, Expect(lane="review", version=card.version), {"blocked": None}, who, note
        )
        owner = Owner("review", "", card.version)
        if pushing:
            assert isinstance(source, str)
            out = push.publish(cfg, store, card, source, owner)
            if out.stood_aside:
                raise Conflict(f"{card.id}: {'; '.join(out.lines)}")
            now = store.get(card.id)
            outcome = "blocked" if out.blocked else "review"
            return ApproveResult(now, outcome, pr_url=out.pr_url, lines=out.lines)
        tree = _tree_on(cfg, card, source)
        res = publish.publish(cfg, store, card, tree, "", owner=owner, approved=True)
        if res.outcome == "stood-aside":
            raise Conflict(f"{card.id}: {res.reason}; nothing was published")
        if res.outcome == "done":
            _after_fold(cfg, store, card.id, tree, f"{card.id} was approved and folded")
            line = f"folded onto {cfg.run_branch} at {res.commit[:10]}"
            return ApproveResult(store.get(card.id), "done", commit=res.commit, lines=[line])
        return ApproveResult(store.get(card.id), res.outcome, lines=[res.reason])


# ---------------------------------------------------------------------------------------------
# salvage


@dataclass
class SalvageResult:
    """What a salvage did: published (`done` / `review`), or why not, with the gate's tail."""

    target: str
    card: Card | None
    outcome: str  # done | review | red | blocked | stood-aside
    gate: str = "none"  # passed | red | no-verdict | none (no gate configured)
    gate_reason: str = ""
    gate_tail: str = ""
    forced: bool = False
    pr_url: str = ""
    commit: str = ""
    lines: list[str] = field(default_factory=list)

    @property
    def published(self) -> bool:
        return self.outcome in ("done", "review")

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "card": self.card.to_json() if self.card else None,
            "outcome": self.outcome,
            "published": self.published,
            "gate": self.gate,
            "gate_reason": self.gate_reason,
            "gate_tail": self.gate_tail,
            "forced": self.forced,
            "pr_url": self.pr_url,
            "commit": self.commit,
            "lines": self.lines,
        }


@dataclass
class _Target:
    name: str  # what the operator named, as resolved (stranded/… or the card id)
    card: Card
    branch: str = ""  # the stranded branch (short), for a branch salvage
    tip: str = ""
    tree: Path | None = None  # the card's own tree, for a tree salvage


def _resolve(cfg: Config, store: Store, target: str) -> _Target:
    name = target.strip()
    if name.startswith("refs/heads/"):
        name = name[len("refs/heads/") :]
    if name.startswith(naming.STRANDED):
        if (
            ".." in name
            or gitutil.git(
                cfg.root, "check-ref-format", f"refs/heads/{name}", check=False
            ).returncode
        ):
            raise Refused(f"not a branch name: {name!r}")
        tip = gitutil.rev(cfg.root, f"refs/heads/{name}")
        if tip is None:
            raise NotFound(f"no stranded branch {name} (see `board stranded list`)")
        tree_dir = name[len(naming.STRANDED) :].split("/", 1)[0]
        card_id = naming.card_id_of(tree_dir, cfg.prefix)
        card = store.find(card_id) if card_id else None
        if card is None:
            raise Refused(
                f"{name} names no card of this board (tree {tree_dir}): salvage publishes a "
                f"card's work; use `board stranded pick {name}` to apply it to a branch instead"
            )
        return _Target(name=name, card=card, branch=name, tip=tip)
    card = store.find(name)
    if card is None:
        raise NotFound(f"no card or stranded branch {name!r} (see `board stranded list`)")
    tree = _card_tree(cfg, card)
    if tree is None:
        trees = [t for t in naming.card_trees(cfg, card.id) if _is_worktree(t)]
        branches = _stranded_of(cfg, card.id)
        if len(trees) > 1:
            raise Refused(
                f"{card.id} has several trees ({', '.join(t.name for t in trees)}); none is on "
                f"{card.branch or 'its branch'}: remove the extra ones first"
            )
        hint = (
            f"; its saved work is on {', '.join(branches)}: salvage one of those by name"
            if branches
            else ""
        )
        raise Refused(f"{card.id} has no tree to salvage: nothing to publish{hint}")
    return _Target(name=card.id, card=card, tree=tree)


def _stranded_of(cfg: Config, card_id: str) -> list[str]:
    return [b.branch for b in stranded.list_stranded(cfg) if b.card == card_id]


def _publish_target(cfg: Config) -> str:
    """The ref a publish lands on: the run branch (fold) or the base (push)."""
    if cfg.publish_mode == "fold" and gitutil.rev(cfg.root, f"refs/heads/{cfg.run_branch}"):
        return f"refs/heads/{cfg.run_branch}"
    remote = f"refs/remotes/{cfg.remote}/{cfg.base}"
    return remote if gitutil.rev(cfg.root, remote) else f"refs/heads/{cfg.base}"


def _already_on(cfg: Config, tip: str, target_ref: str) -> bool:
    """True when `target_ref` already holds everything `tip` would bring (commits or content)."""
    if gitutil.ok(cfg.root, "merge-base", "--is-ancestor", tip, target_ref):
        return True
    target_tree = gitutil.out(cfg.root, "rev-parse", f"{target_ref}^{{tree}}")
    res = gitutil.git(
        cfg.root, "merge-tree", "--write-tree", "--no-messages", target_ref, tip, check=False
    )
    return res.returncode == 0 and res.stdout.split("\n", 1)[0].strip() == target_tree


def _nothing_to_publish(cfg: Config, t: _Target) -> str:
    """'' when the target holds something to publish, else why not (said before any change)."""
    where = _publish_target(cfg)
    short = where.split("/", 2)[-1]
    if t.tree is not None:
        if tree_changes(cfg, t.tree):
            return ""
        head = gitutil.rev(t.tree, "HEAD")
        if head is None:
            return f"{_rel(cfg, t.tree)} has no commit"
        if _already_on(cfg, head, where):
            return f"everything in {_rel(cfg, t.tree)} is already on {short}"
        if cfg.publish_mode == "push" and t.card.pr_url:
            branch = gitutil.out(t.tree, "branch", "--show-current", check=False)
            remote = (
                gitutil.rev(cfg.root, f"refs/remotes/{cfg.remote}/{branch}") if branch else None
            )
            if remote == head:
                return f"{branch} is pushed as it stands and has its PR {t.card.pr_url}"
        return ""
    if _already_on(cfg, t.tip, where):
        return f"everything in {t.branch} is already on {short}"
    return ""


def _work_commit(cfg: Config, t: _Target) -> str:
    """A commit holding everything the target would publish: the stranded tip, or the
    tree's HEAD plus its uncommitted state (an unreferenced commit; nothing is changed)."""
    if t.tree is None:
        return t.tip
    head = gitutil.out(t.tree, "rev-parse", "HEAD")
    if not tree_changes(cfg, t.tree):
        return head
    work = snapshot.unpublished_work(cfg, t.tree)
    if not work.snapshot:
        return head
    return gitutil.out(
        cfg.root,
        *gitutil.NO_HOOKS,
        "commit-tree",
        work.snapshot,
        "-p",
        head,
        "-m",
        "board: what the tree holds (a salvage's check)",
        env=gitutil.identity_env(),
    )


def replay_conflicts(cfg: Config, commit: str) -> tuple[str, list[str], list[str]]:
    """(run tip, conflicting paths, the run branch's commits touching them) of replaying the
    work in `commit` onto the run branch's current tip; no paths when it replays cleanly."""
    tip = runbranch.ensure(cfg)
    res = gitutil.git(
        cfg.root,
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        tip,
        commit,
        check=False,
    )
    if res.returncode == 0:
        return tip, [], []
    lines = res.stdout.splitlines()
    paths = sorted({p for p in lines[1:] if p}) if res.returncode == 1 else []
    paths = paths or [f"(git: {res.stderr.strip() or 'merge-tree failed'})"]
    return tip, paths, publish.other_side(cfg.root, commit, tip, paths)


def _refuse_conflicts(cfg: Config, t: _Target) -> None:
    """In `fold` mode, refuse before anything changes when the work still conflicts with
    the run branch's tip, in one line naming the paths and the other side."""
    if not runbranch.folds(cfg):
        return
    _, paths, theirs = replay_conflicts(cfg, _work_commit(cfg, t))
    if not paths:
        return
    other = f" ({'; '.join(theirs)})" if theirs else ""
    way = (
        f"`board resolve {t.card.id}` to resolve it by hand"
        if t.tree is not None
        else f"`board requeue {t.card.id}` to rebuild it on {cfg.run_branch}"
    )
    raise Conflict(
        f"{t.name} still conflicts with {cfg.run_branch} in {', '.join(paths)}{other}; "
        f"nothing was changed: {way}"
    )


BEFORE_SALVAGE = "before salvage: "


def before_note(card: Card) -> str:
    """What the card was before a salvage took it, kept in the salvage's drive row while it
    runs: a salvage that dies (kill -9) is recovered by the loop, which puts the card back
    as it was (a held card stays held) instead of in ready, free for the loop to run."""
    blocked = [card.blocked.cls, card.blocked.reason] if card.blocked else None
    return BEFORE_SALVAGE + json.dumps({"lane": card.lane, "blocked": blocked})


def _before_part(result: str) -> str:
    """The before-salvage note a row's result starts with ('' if none)."""
    if not result.startswith(BEFORE_SALVAGE):
        return ""
    try:
        _, end = json.JSONDecoder().raw_decode(result, len(BEFORE_SALVAGE))
    except ValueError:
        return ""
    return result[:end]


def state_before(row: Drive) -> tuple[str, Blocked | None] | None:
    """(lane, block) a salvage's row says its card had before; None if it says nothing."""
    note = _before_part(row.result) if row.tier == SALVAGE_TIER else ""
    if not note:
        return None
    try:
        data = json.loads(note[len(BEFORE_SALVAGE) :])
        lane, blocked = str(data["lane"]), data["blocked"]
        return lane, Blocked(str(blocked[0]), str(blocked[1])) if blocked else None
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def dead_result(row: Drive, why: str) -> str:
    """The result for a dead drive's row: `why`, after the before-salvage note if it had
    one, so a recovery that does not finish (the loop dies mid-way) leaves it for the next."""
    note = _before_part(row.result)
    return f"{note} {why}" if note else why


def _take(store: Store, cfg: Config, card: Card, target: str, who: str) -> tuple[Drive, Card]:
    """The card becomes `working` under a salvage drive row: the loop will not claim it."""
    attempt = store.next_attempt(card.id)  # type: ignore[attr-defined]
    log_rel = _rel(cfg, log_path(cfg, card.id, attempt))
    row = store.start_drive(card.id, SALVAGE_TIER, attempt, log_rel, os.getpid())
    row = store.update_drive(row.id, result=before_note(card))  # type: ignore[attr-defined]
    try:
        with store.transaction() as tx:
            now = tx.get(card.id)
            if now.lane == "working" or now.drive:
                raise Conflict(f"{card.id}: drive {now.drive or '?'} owns it ({now.lane})")
            if now.version != card.version:
                raise Conflict(f"{card.id}: changed meanwhile (it is {now.lane} now); try again")
            taken = tx.update(
                card.id,
                Expect(version=now.version),
                {"lane": "working", "drive": row.id, "blocked": None},
                who,
                note=f"salvage of {target} by drive {row.id} (no coder)",
            )
    except BoardError as exc:
        store.update_drive(
            row.id, status="stood-aside", result=f"salvage not started: {exc.line()}"
        )
        raise
    return row, taken


def _free_slug(cfg: Config, card_id: str) -> str:
    for n in range(1, 100):
        slug = "salvage" if n == 1 else f"salvage-{n}"
        path = cfg.worktrees_dir / naming.tree_name(card_id, slug)
        branch = naming.branch_for(card_id, slug)
        if not os.path.lexists(path) and gitutil.rev(cfg.root, f"refs/heads/{branch}") is None:
            return slug
    raise Refused(f"{card_id}: no free salvage tree name left under {cfg.worktrees_dir}")


def _commit_all(cfg: Config, tree: Path, card: Card) -> str:
    """Commit everything the tree holds (scratch and the board's links excepted); '' if none."""
    snapshot.stage_all(cfg, tree)
    if gitutil.ok(tree, "diff", "--cached", "--quiet"):
        return ""
    subject = " ".join((card.title.splitlines() or [""])[0].split())
    return git_commit(
        tree,
        f"{card.id}: {subject}\n\nWhat {tree.name} held, committed by `board stranded salvage` "
        "(no coder).",
    )


def salvage(
    store: Store, cfg: Config, target: str, force: bool = False, who: str = WHO
) -> SalvageResult:
    """`board stranded salvage BRANCH|ID [--force]`: publish saved work with no coder.

    Refuses, changing nothing, while a drive (or another salvage) owns the card, or when
    there is nothing to publish. See the module docstring for the rest.
    """
    t = _resolve(cfg, store, target)
    card = t.card
    with card_lock(cfg, card.id, f"a salvage of {t.name}"):
        card = store.get(card.id)
        if card.lane == "working" or card.drive:
            raise Refused(
                f"{card.id}: drive {card.drive or '?'} owns it ({card.lane}); "
                f"`board stop {card.id}` first"
            )
        live = [d for d in store.list_drives(card.id, limit=20) if d.live]  # type: ignore[attr-defined]
        if live:
            raise Refused(f"{card.id}: drive {live[0].id} is still running; wait for it to end")
        if t.tree is not None and not gitutil.out(t.tree, "branch", "--show-current", check=False):
            raise Refused(
                f"{_rel(cfg, t.tree)} is on no branch (a detached HEAD): check out a branch "
                "there first"
            )
        nothing = _nothing_to_publish(cfg, t)
        if nothing:
            raise Refused(f"nothing to publish: {nothing}")
        _refuse_conflicts(cfg, t)
        row, taken = _take(store, cfg, card, t.name, who)
        return _Salvage(store, cfg, t, row, card, taken, force).run()


class _Salvage:
    """One salvage, from a taken card to published (or put back as it was)."""

    def __init__(
        self,
        store: Store,
        cfg: Config,
        t: _Target,
        row: Drive,
        before: Card,
        card: Card,
        force: bool,
    ) -> None:
        self.store = store
        self.cfg = cfg
        self.t = t
        self.row = row
        self.before = before
        self.card = card
        self.force = force
        self.owner = Owner("working", row.id)
        self.result = SalvageResult(target=t.name, card=card, outcome="", forced=False)
        self.log: LogWriter | None = None
        self.tree: Path | None = None
        self.made_tree = False
        self.made_head = ""  # the commit this salvage's own tree was made at

    def say(self, text: str) -> None:
        self.result.lines.append(text)
        if self.log is not None:
            self.log.write_line(f"board: {text}")

    def run(self) -> SalvageResult:
        try:
            self.log = LogWriter(log_path(self.cfg, self.card.id, self.row.attempt))
        except OSError:
            self.log = None
        try:
            return self._run()
        except StoodAside as exc:
            return self._stood_aside(exc.found)
        except BaseException as exc:
            why = exc.line() if isinstance(exc, BoardError) else f"{type(exc).__name__}: {exc}"
            self._put_back(f"the salvage failed: {why}", "failed")
            raise
        finally:
            if self.log is not None:
                self.log.close()

    def _run(self) -> SalvageResult:
        self.tree = self._prepare_tree()
        verdict = self._gate()
        if verdict is not None and verdict.red and not self.force:
            self.result.outcome = "red"
            self._put_back(f"{verdict.reason}: nothing was published", "failed", verdict.tail)
            if self.made_tree:
                self._drop_own_tree()
            return self.result
        draft_why = ""
        if verdict is not None and verdict.red:
            self.result.forced = True
            draft_why = f"published with --force over a red gate ({verdict.reason})"
            self.say(draft_why)
        if self.cfg.publish_mode == "push":
            return self._push(draft_why)
        return self._fold(draft_why)

    # -- steps -----------------------------------------------------------------------------

    def _prepare_tree(self) -> Path:
        if self.t.tree is not None:
            self._check()
            made = _commit_all(self.cfg, self.t.tree, self.card)
            if made:
                self.say(f"committed what {self.t.tree.name} held as {made[:10]}")
                self.result.commit = made
            return self.t.tree
        slug = _free_slug(self.cfg, self.card.id)
        path = self.cfg.worktrees_dir / naming.tree_name(self.card.id, slug)
        branch = naming.branch_for(self.card.id, slug)
        self.cfg.worktrees_dir.mkdir(parents=True, exist_ok=True)
        start = self._replay() if runbranch.folds(self.cfg) else self.t.tip
        gitutil.git(
            self.cfg.root,
            *gitutil.NO_HOOKS,
            "worktree",
            "add",
            "-q",
            "-b",
            branch,
            str(path),
            start,
        )
        self.made_tree = True
        self.made_head = start
        self.say(f"{self.t.branch} checked out at {_rel(self.cfg, path)} on {branch}")
        return path

    def _replay(self) -> str:
        """The stranded work as ONE commit on the run branch's current tip, its message
        naming the card and its title (`c-4: Add modulo (salvaged from stranded/…)`), so
        the gate runs on what the fold will publish. Refused, changing nothing, when it
        conflicts (the check before the salvage took the card lost a race)."""
        tip, paths, _ = replay_conflicts(self.cfg, self.t.tip)
        if paths:
            raise Conflict(
                f"{self.t.name} conflicts with {self.cfg.run_branch} in {', '.join(paths)}; "
                "nothing was published"
            )
        tree = gitutil.out(
            self.cfg.root, "merge-tree", "--write-tree", "--no-messages", tip, self.t.tip
        ).split("\n", 1)[0]
        message = pick.picked_message(
            gitutil.out(self.cfg.root, "log", "-1", "--format=%B", self.t.tip),
            self.card.id,
            self.card.title,
            self.t.branch,
            verb="salvaged",
        )
        new = gitutil.out(
            self.cfg.root,
            *gitutil.NO_HOOKS,
            "commit-tree",
            tree,
            "-p",
            tip,
            "-F",
            "-",
            env=gitutil.identity_env(),
            input_bytes=message.encode(),
        )
        self.say(f"{self.t.branch} replayed onto {self.cfg.run_branch} ({tip[:10]}) as {new[:10]}")
        return new

    def _gate(self) -> GateVerdict | None:
        if not self.cfg.gate_argv:
            self.say("no gate is configured (gate.argv is empty): publishing as it stands")
            return None
        assert self.tree is not None
        self._check()
        self.say(f"gate: {list(self.cfg.gate_argv)}")

        def on_line(text: str) -> None:
            if self.log is not None:
                self.log.write_line(text)

        def on_start(pid: int) -> None:
            self.store.update_drive(self.row.id, pgid=pid)  # type: ignore[attr-defined]

        brief = write_brief(
            self.cfg,
            self.tree,
            brief_text(
                self.cfg,
                self.card,
                tree=self.tree,
                branch=gitutil.out(self.tree, "branch", "--show-current", check=False),
                tier=SALVAGE_TIER,
                attempt=self.row.attempt,
            ),
        )
        verdict = run_gate(
            self.cfg,
            self.tree,
            on_line,
            on_start=on_start,
            card=self.card.id,
            brief=str(brief),
            env={"BOARD_DRIVE": self.row.id},
        )
        self.store.update_drive(self.row.id, pgid=0)  # type: ignore[attr-defined]
        self.result.gate = "red" if verdict.red else verdict.status
        self.result.gate_reason = verdict.reason
        self.result.gate_tail = _tail(verdict.tail)
        self.say(f"gate: {verdict.reason}")
        return verdict

    def _fold(self, draft_why: str) -> SalvageResult:
        assert self.tree is not None
        card = self._check()
        res = publish.fold(self.cfg, self.store, card, self.tree, self.row.id, owner=self.owner)
        if res.outcome == "stood-aside":
            return self._stood_aside(res.reason)
        if res.outcome != "done":
            self.result.outcome = res.outcome
            self.say(res.reason)
            self._end_row("blocked", res.reason)
            self.result.card = self.store.get(card.id)
            return self.result
        self.result.outcome = "done"
        self.result.commit = res.commit
        self.say(f"folded onto {self.cfg.run_branch} at {res.commit[:10]}")
        if draft_why:
            self._comment(f"salvage of {self.t.name} {draft_why}", self.result.gate_tail)
        self._end_row("passed", f"salvage folded onto {self.cfg.run_branch}")
        self._drop_stranded(f"refs/heads/{self.cfg.run_branch}")
        _after_fold(self.cfg, self.store, card.id, self.tree, f"salvage of {self.t.name}")
        self.result.card = self.store.get(card.id)
        return self.result

    def _push(self, draft_why: str) -> SalvageResult:
        assert self.tree is not None
        card = self._check()
        branch = gitutil.out(self.tree, "branch", "--show-current")
        note = f"Salvaged by board from {self.t.name} with no coder."
        out = push.publish(
            self.cfg, self.store, card, branch, self.owner, draft_why=draft_why, note=note
        )
        self.result.lines += out.lines
        self.result.pr_url = out.pr_url
        if out.stood_aside:
            return self._stood_aside("; ".join(out.lines))
        if out.blocked:
            self.result.outcome = "blocked"
            self._end_row("blocked", out.blocked)
        else:
            self.result.outcome = "review"
            self._end_row("passed", f"salvage pushed {branch}")
        if out.pushed:
            self._drop_stranded(f"refs/remotes/{self.cfg.remote}/{branch}")
        self.result.card = self.store.get(card.id)
        return self.result

    # -- edges -----------------------------------------------------------------------------

    def _check(self) -> Card:
        """Re-read the card before each step; a stop or cancel meanwhile ends the salvage."""
        card = self.store.get(self.card.id)
        found = self.owner.why_not(card, self.store)
        if found:
            raise StoodAside("salvage", found)
        return card

    def _stood_aside(self, found: str) -> SalvageResult:
        self.result.outcome = "stood-aside"
        self.say(f"stood aside: {found}; nothing more was done")
        self._end_row("stood-aside", found)
        self.result.card = self.store.get(self.card.id)
        return self.result

    def _put_back(self, why: str, status: str, tail: str = "") -> None:
        """The card goes back to the lane and block it had; its kept tree stays as it is."""
        changes: dict[str, Any] = {
            "lane": self.before.lane,
            "blocked": self.before.blocked,
            "drive": "",
        }
        try:
            edge_update(
                self.store, self.card.id, self.owner, changes, "salvage",
                f"salvage of {self.t.name}: {why}", WHO,
            )  # fmt: skip
        except StoodAside:
            pass
        except BoardError:
            pass
        if tail.strip():
            self._comment(f"salvage of {self.t.name}: {why}", tail)
        self.say(why)
        self._end_row(status, why)
        with contextlib.suppress(BoardError):
            self.result.card = self.store.get(self.card.id)

    def _end_row(self, status: str, why: str) -> None:
        with contextlib.suppress(BoardError):
            if self.store.get_drive(self.row.id).live:  # type: ignore[attr-defined]
                self.store.update_drive(self.row.id, status=status, pgid=0, result=why[:500])  # type: ignore[attr-defined]

    def _comment(self, text: str, tail: str = "") -> None:
        if tail.strip():
            text += "\n\ngate tail:\n" + "\n".join(f"    {x}" for x in tail.splitlines())
        body = text
        with contextlib.suppress(BoardError):
            self.store.add_comment(self.card.id, body, BOARD)

    def _drop_own_tree(self) -> None:
        """Remove the tree this salvage made: its commit is the stranded branch's own, unchanged.

        Removed unsaved only while HEAD is still the stranded tip and nothing but the gate's
        leftovers is in it; otherwise it goes through the save like any tree.
        """
        tree = self.tree
        if tree is None:
            return
        branch = gitutil.out(tree, "branch", "--show-current", check=False)
        if (
            gitutil.rev(tree, "HEAD") == (self.made_head or self.t.tip)
            and gitutil.rev(self.cfg.root, f"refs/heads/{self.t.branch}") == self.t.tip
            and not tree_changes(self.cfg, tree)
        ):
            gitutil.git(
                self.cfg.root, "worktree", "remove", "--force", "--force", str(tree), check=False
            )
            if branch and not tree.exists():
                gitutil.git(
                    self.cfg.root, *gitutil.NO_HOOKS, "update-ref", "-d",
                    f"refs/heads/{branch}", self.made_head or self.t.tip, check=False,
                )  # fmt: skip
            return
        _save_trees(self.cfg, self.store, self.card.id, f"salvage of {self.t.name}", [tree])

    def _drop_stranded(self, published_on: str) -> None:
        """A salvaged stranded branch goes once its content is verified on `published_on`."""
        if not self.t.branch:
            return
        if not gitutil.rev(self.cfg.root, published_on) or not _already_on(
            self.cfg, self.t.tip, published_on
        ):
            self.say(
                f"{self.t.branch} is kept: its content could not be verified on {published_on}"
            )
            return
        gone = gitutil.ok(
            self.cfg.root, *gitutil.NO_HOOKS, "update-ref", "-d",
            f"refs/heads/{self.t.branch}", self.t.tip,
        )  # fmt: skip
        if gone:
            self.say(f"{self.t.branch} was salvaged and deleted (its content is published)")


__all__ = [
    "ApproveResult",
    "SalvageResult",
    "StopResult",
    "approve",
    "card_lock",
    "end_drives",
    "salvage",
    "stop",
    "stop_reason",
]

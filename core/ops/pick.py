"""The operator's verbs that change saved work: pick, discard and prune stranded branches.

`pick` works in a temporary worktree and moves the target with a compare-and-swap, so the
operator's checkout and index are never touched and a conflict leaves the target exactly as it
was. `discard` deletes one stranded branch (a compare-and-swap on its commit) or one husk, and
nothing else; `prune` deletes only the saves of finished cards, all in one ref transaction or
none, since a save is the only copy of its work. Reading saved work is in `stranded`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from board.core.config import BoardSection, Config
from board.core.errors import BoardError, Conflict, NotFound, Refused
from board.core.git import gitutil, naming, removal, runbranch, saves, shared, snapshot
from board.core.git.gitutil import BOARD_IDENTITY, NO_HOOKS, git, out
from board.core.git.stranded import _STAMP, StrandedBranch, _branch, husk_dir, list_stranded
from board.core.records import Frozen, Record, field
from board.core.safetext import diffstat
from board.core.store import Store

_REF_RE = re.compile(rf"^stranded/(?P<tree>[^/]+)/(?P<stamp>{_STAMP})(?:-\d+)?$")


class PickResult(Record):
    """What `pick` did: the commits it put on the target, or the paths that conflicted."""

    branch: str
    target: str
    old: str
    new: str
    picked: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # save commits that add nothing
    conflicts: list[str] = field(default_factory=list)
    failed_on: str = ""

    @property
    def ok(self) -> bool:
        return not self.conflicts and not self.failed_on

    def to_json(self) -> dict[str, Any]:
        return {
            "branch": self.branch,
            "target": self.target,
            "old": self.old,
            "new": self.new,
            "picked": self.picked,
            "skipped": self.skipped,
            "conflicts": self.conflicts,
            "ok": self.ok,
        }


# pick --------------------------------------------------------------------------------------


def _target(cfg: Config, onto: str | None) -> tuple[str, str]:
    name = (onto or runbranch.pick_target(cfg)).strip()
    if name.startswith("refs/heads/"):
        name = name[len("refs/heads/") :]
    if not name or git(cfg.root, "check-ref-format", "--branch", name, check=False).returncode:
        raise Refused(f"not a branch name: {name!r}")
    ref = f"refs/heads/{name}"
    commit = git(cfg.root, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False)
    if commit.returncode != 0:
        raise NotFound(f"no local branch {name} to pick onto (create it first, or use --onto)")
    return ref, commit.stdout.strip()


def default_target(cfg: Config) -> tuple[str, str]:
    """(the branch a pick lands on by default, '' or why it is not offered).

    The run branch in `fold` mode, the base in `push` mode (`runbranch.pick_target`); a
    branch checked out somewhere is not offered, since a pick would move it under that
    checkout."""
    name = runbranch.pick_target(cfg)
    where = runbranch.checked_out_at(cfg, name)
    if where:
        return "", f"{name} is checked out at {where}"
    return name, ""


def picked_message(
    message: str, card: str | None, title: str | None, source: str, verb: str = "picked"
) -> str:
    """A picked or salvaged commit's message: it names the card (and, for a save, the
    card's title) and the branch it came from, e.g. `c-4: Add modulo (salvaged from …)`.

    The board's own commits already start `<card>: <title>`; a coder's own commit keeps its
    subject behind the card id; a save commit (`stranded: …`) takes the card's title. The
    save's `Board-Save:` trailer is dropped: the commit is no longer a save, and nothing
    should read it as one.
    """
    lines = message.rstrip("\n").split("\n")
    subject, body = lines[0], lines[1:]
    trailer = f"{naming.SAVE_TRAILER}:"
    is_save = subject.startswith("stranded: ") or any(x.startswith(trailer) for x in body)
    if card and is_save:
        tree = subject.removeprefix("stranded: ").split(" ", 1)[0]
        subject = f"{card}: {' '.join((title or f'work saved from {tree}').split())}"
    elif card and not subject.startswith(f"{card}: "):
        subject = f"{card}: {subject}"
    subject = f"{subject} ({verb} from {source})"
    body = [x for x in body if not x.startswith(trailer)]
    while body and not body[-1].strip():
        body.pop()
    return "\n".join([subject, *body]) + "\n"


def titles_from(store: Store | Callable[[], Store]) -> Callable[[str], str | None]:
    """A card's title from the store (None if unknown), for a picked commit's message.

    `store` may be a callable that opens it: the store is then opened only when a title is
    wanted, and a pick still works (without the title) where it cannot be opened."""

    def lookup(card_id: str) -> str | None:
        try:
            opened = store() if callable(store) else store
            card = opened.find(card_id)
        except BoardError:
            return None
        return card.title if card is not None else None

    return lookup


def card_of_branch(board: BoardSection, short: str) -> str | None:
    m = _REF_RE.match(short)
    return naming.card_id_of(m.group("tree"), board.prefix) if m else None


def _identity_env(cfg: Config) -> dict[str, str]:
    """The operator's committer identity if git has one, else the board's (author kept)."""
    if git(cfg.root, "var", "GIT_COMMITTER_IDENT", check=False).returncode == 0:
        return {}
    return {k: v for k, v in BOARD_IDENTITY.items() if k.startswith("GIT_COMMITTER")}


def own_commits(cfg: Config, tip: str, target: str) -> list[tuple[str, list[str], str]]:
    """The branch's own commits, oldest first: (commit, parents, tree), minus target and base
    and, for a save that records it, what came before the commit its tree started from."""
    base = snapshot.base_ref(cfg)
    began = saves.start_of(cfg, tip)
    res = git(
        cfg.root,
        "rev-list",
        "--reverse",
        "--topo-order",
        "--no-commit-header",
        "--format=%H%x00%P%x00%T",
        tip,
        "--not",
        target,
        base,
        *([began] if began else []),
    )
    commits = []
    for line in gitutil.lines(res.stdout):
        parts = line.split("\0")
        if len(parts) == 3:
            commits.append((parts[0], parts[1].split(), parts[2]))
    return commits


def _already_there(tmp: Path) -> bool:
    """A cherry-pick that stopped because it would make an empty commit (no conflict)."""
    unmerged = git(tmp, "diff", "--name-only", "--diff-filter=U", check=False).stdout.strip()
    status = git(tmp, "status", "--porcelain", "--untracked-files=no", check=False).stdout.strip()
    return not unmerged and not status


def pick(
    cfg: Config,
    branch: str,
    onto: str | None = None,
    title_of: Callable[[str], str | None] | None = None,
) -> PickResult:
    """Cherry-pick a stranded branch's own commits onto `onto` (default: `default_target`).

    The picks happen in a temporary worktree; the target moves only at the end, by a
    compare-and-swap update-ref. The operator's checkout and index are never touched; a target
    checked out anywhere is refused; on conflict the target is left exactly as it was and the
    conflicting paths are named. Each picked commit's message names the card and its title
    (`title_of(card)`, from the store) and the branch it was picked from.
    """
    short, tip = _branch(cfg, branch)
    remote_run = (
        runbranch.on_remote(cfg.publish) and (onto or cfg.board.run_branch) == cfg.board.run_branch
    )
    if remote_run:
        runbranch.ensure(cfg)  # the local run branch at the remote's tip
    target_ref, old = _target(cfg, onto)
    card = card_of_branch(cfg.board, short)
    title = title_of(card) if card and title_of is not None else None
    where = runbranch.checked_out_at(cfg, target_ref[len("refs/heads/") :])
    if where:
        raise Refused(
            f"{target_ref[len('refs/heads/') :]} is checked out at {where}: picking onto it "
            "would move it under that checkout; check out another branch there or use --onto"
        )
    result = PickResult(branch=short, target=target_ref[len("refs/heads/") :], old=old, new=old)
    commits = own_commits(cfg, tip, old)
    parent_trees: dict[str, str] = {}
    firsts = sorted({ps[0] for _, ps, _ in commits if ps})
    if firsts:
        trees = out(cfg.root, "rev-parse", *(f"{p}^{{tree}}" for p in firsts)).split()
        parent_trees = dict(zip(firsts, trees, strict=True))
    todo = []
    for commit, parents, tree in commits:
        if parents and parent_trees.get(parents[0]) == tree:
            result.skipped.append(commit)  # a save commit with nothing uncommitted in it
        else:
            todo.append((commit, parents))
    if not todo:
        return result
    tmp_root = cfg.board_dir / "tmp"
    tmp_root.mkdir(parents=True, exist_ok=True)
    tmp = tmp_root / f"pick-{naming.utc_stamp()}-{os.getpid()}"
    env = _identity_env(cfg)
    git(cfg.root, *NO_HOOKS, "worktree", "add", "--detach", "-q", str(tmp), old)
    try:
        for commit, parents in todo:
            args = ["cherry-pick", "-x", "--allow-empty"]
            if len(parents) > 1:
                args += ["-m", "1"]
            res = git(tmp, *NO_HOOKS, *args, commit, env=env, check=False)
            if res.returncode != 0 and _already_there(tmp):
                git(tmp, *NO_HOOKS, "cherry-pick", "--skip", env=env)
                result.skipped.append(commit)  # the target already holds this change
                continue
            if res.returncode != 0:
                unmerged = git(tmp, "diff", "--name-only", "--diff-filter=U", check=False)
                result.conflicts = [p for p in gitutil.lines(unmerged.stdout) if p]
                result.failed_on = commit
                if not result.conflicts:
                    why = (res.stderr.strip() or res.stdout.strip()).splitlines()
                    result.failed_on = f"{commit}: {why[-1] if why else 'cherry-pick failed'}"
                git(tmp, *NO_HOOKS, "cherry-pick", "--abort", check=False)
                return result
            message = out(tmp, "log", "-1", "--format=%B", "HEAD")
            git(
                tmp,
                *NO_HOOKS,
                "commit",
                "--amend",
                "--allow-empty",
                "--no-verify",
                "-q",
                "-F",
                "-",
                env=env,
                input_bytes=picked_message(message, card, title, short).encode(),
            )
            result.picked.append(commit)
        new = out(tmp, "rev-parse", "HEAD")
        if remote_run:  # the run branch lives on the remote: its compare-and-swap is there
            landed = runbranch.push_run(cfg, new, old)
            moved_ok = landed
        else:
            moved = git(
                cfg.root,
                *NO_HOOKS,
                "update-ref",
                "-m",
                f"board stranded pick {short}",
                target_ref,
                new,
                old,
                check=False,
            )
            moved_ok = moved.returncode == 0
        if not moved_ok:
            raise Conflict(
                f"{result.target} moved while {short} was being picked onto it; "
                "nothing was changed, run the pick again"
            )
        result.new = new
        return result
    finally:
        if git(cfg.root, "worktree", "remove", "--force", str(tmp), check=False).returncode != 0:
            with contextlib.suppress(OSError):
                shutil.rmtree(tmp)
            git(cfg.root, "worktree", "prune", check=False)


# discard -----------------------------------------------------------------------------------


class DiscardTarget(Frozen):
    """A validated thing `discard` may delete: a stranded branch or a husk directory."""

    kind: str  # "branch" | "husk"
    name: str
    commit: str = ""
    path: Path | None = None
    foreign: bool = False  # a branch with no Board-Save trailer: not a save of the board's

    def describe(self, cfg: Config) -> str:
        if self.foreign:
            return (
                f"branch {self.name} (commit {self.commit[:12]}), which the board did not "
                "make: it carries no Board-Save trailer"
            )
        if self.kind == "branch":
            match = next((b for b in list_stranded(cfg) if b.branch == self.name), None)
            stat = (
                ", " + diffstat(match.files, match.insertions, match.deletions)
                if match and match.files is not None
                else ""
            )
            return f"stranded branch {self.name} (commit {self.commit[:12]}{stat})"
        return f"husk {self.path}"


def discard_target(cfg: Config, name: str) -> DiscardTarget:
    """Check what `name` names; only stranded/ branches and .stranded/ husks are allowed."""
    text = name.strip()
    bare = text[len("refs/heads/") :] if text.startswith("refs/heads/") else text
    if bare.startswith(naming.STRANDED):
        short, commit = _branch(cfg, bare)
        foreign = saves.trailer_of(cfg, commit) is None
        return DiscardTarget("branch", short, commit=commit, foreign=foreign)
    root = husk_dir(cfg)
    parts = Path(text).parts
    husk = parts[-1] if parts else ""
    inside = len(parts) <= 1 or parts[-2] == naming.HUSK_DIR
    if not husk or husk.startswith(".") or not inside:
        raise Refused(
            f"{name!r} is neither a stranded/ branch nor a husk under {root}: not discarded"
        )
    path = root / husk
    if not os.path.lexists(path):
        raise NotFound(f"no stranded branch or husk named {name!r} (see `board stranded list`)")
    return DiscardTarget("husk", husk, path=path)


def discard(cfg: Config, name: str, store: Store) -> DiscardTarget:
    """Delete a stranded branch (compare-and-swap on its commit) or a husk directory. A
    branch is buried in the store too (core/git/shared.py), so no host brings it back."""
    target = discard_target(cfg, name)
    if target.kind == "branch":
        res = git(
            cfg.root,
            *NO_HOOKS,
            "update-ref",
            "-m",
            "board stranded discard",
            "-d",
            f"refs/heads/{target.name}",
            target.commit,
            check=False,
        )
        if res.returncode != 0:
            raise Conflict(f"{target.name} changed or vanished meanwhile; nothing was deleted")

        shared.bury(cfg, store, [(target.name, target.commit)])
        if runbranch.on_remote(cfg.publish):  # or the next fetch brings it back
            shared.delete_remote(cfg, target.name, target.commit)
        return target
    assert target.path is not None
    try:
        removal._rmtree_force(target.path)
    except OSError as exc:
        raise BoardError(f"could not delete the husk {target.path}: {exc}") from exc
    return target


# prune -------------------------------------------------------------------------------------

PRUNABLE = ("done", "cancelled")  # a card's saves may be pruned only once it is finished
_AGE_RE = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str) -> float:
    """`90s`, `30m`, `12h`, `14d`, `2w` as seconds; anything else is refused in one line."""
    m = _AGE_RE.match(text.strip().lower())
    if not m:
        raise Refused(f"not an age: {text!r} (a number and a unit: 90s, 30m, 12h, 14d, 2w)")
    return float(m.group(1)) * _AGE_UNITS[m.group(2)]


def stamp_time(stamp: str) -> datetime | None:
    """A save's stamp (`20260102T030405.678Z`) as a UTC datetime, or None."""
    try:
        return datetime.strptime(stamp, "%Y%m%dT%H%M%S.%fZ").replace(tzinfo=UTC)
    except ValueError:
        return None


class PrunePlan(Record):
    """The stranded branches `prune` would delete, each with the commit it must still name,
    and the lanes of their cards as read (re-checked before anything goes)."""

    branches: list[StrandedBranch]
    lanes: dict[str, str]
    left: int = 0  # saves kept: their card is open, gone or unknown, or they are too new

    def lines(self) -> list[str]:
        """One line per branch: what will be deleted, named."""
        out = []
        for b in self.branches:
            stat = (
                ", " + diffstat(b.files, b.insertions, b.deletions) if b.files is not None else ""
            )
            card = f"{b.card} {self.lanes.get(b.card or '', '?')}"
            out.append(f"{b.branch}  ({card}, {b.kind}{stat}, commit {b.commit[:12]})")
        return out


def prune_plan(
    cfg: Config,
    store: Store,
    card: str | None = None,
    older_than: float | None = None,
    now: datetime | None = None,
) -> PrunePlan:
    """What `board stranded prune` would delete: saves of `done` or `cancelled` cards only.

    A save is the only copy of its work, so the operator clears them by hand and only where
    the card is finished; a card still open (working above all) is refused when named, and
    its saves are left alone otherwise. `older_than` (seconds) keeps the newer saves.
    Reads only.
    """
    if card is not None:
        found = store.get(card)  # NotFound: one line
        if found.lane not in PRUNABLE:
            raise Refused(
                f"{card} is {found.lane}: prune deletes only the saves of done or cancelled "
                "cards (an open card's saves may be the only copy of its work)"
            )
    now = now or datetime.now(UTC)
    every = list_stranded(cfg)
    ids = {b.card for b in every if b.card and (card is None or b.card == card)}
    lanes = {}
    for cid in ids:
        named = store.find(cid)
        if named is not None:
            lanes[cid] = named.lane
    chosen = []
    left = 0
    for b in every:
        if card is not None and b.card != card:
            continue
        if b.is_foreign:  # not a save: made by someone, kept for them (discard asks)
            left += 1
            continue
        if not b.card or lanes.get(b.card) not in PRUNABLE:
            left += 1
            continue
        if older_than is not None:
            when = stamp_time(b.stamp)
            if when is None or (now - when).total_seconds() < older_than:
                left += 1
                continue
        chosen.append(b)
    return PrunePlan(
        chosen, {c: lanes.get(c, "?") for c in {b.card for b in chosen if b.card}}, left
    )


def prune(cfg: Config, store: Store, plan: PrunePlan) -> list[str]:
    """Delete exactly the branches `plan` names, at the commits it names, all or none.

    The cards are read again first: one reopened meanwhile stops the prune. The refs go in
    one `update-ref --stdin` transaction with each old value given, so a branch that moved
    or vanished meanwhile fails the whole prune and nothing is deleted.
    """
    for cid, lane in sorted(plan.lanes.items()):
        now = store.get(cid).lane
        if now not in PRUNABLE:
            raise Conflict(f"{cid} is {now} now, not {lane}: nothing was pruned")
    if not plan.branches:
        return []
    script = "".join(f"delete refs/heads/{b.branch} {b.commit}\n" for b in plan.branches)
    res = git(
        cfg.root,
        *NO_HOOKS,
        "update-ref",
        "-m",
        "board stranded prune",
        "--stdin",
        input_bytes=script.encode(),
        check=False,
    )
    if res.returncode != 0:
        why = (res.stderr.strip() or res.stdout.strip()).splitlines()[-1:] or ["failed"]
        raise Conflict(
            f"a stranded branch changed or vanished meanwhile ({why[0]}); nothing was pruned"
        )

    shared.bury(cfg, store, [(b.branch, b.commit) for b in plan.branches])
    if runbranch.on_remote(cfg.publish):
        for b in plan.branches:
            shared.delete_remote(cfg, b.branch, b.commit)
    return [b.branch for b in plan.branches]

"""The run branch: where `fold` publishes, and where a card's fresh tree starts.

In `fold` mode a fresh tree starts from the run branch's current tip, so a card sees the
folded work of every card before it. Tried on a real history (each card one real commit,
each depending on the one before) trees that started from the base never saw their
dependency's code: card 2's patch needed a file card 1 had created, and the replay
stalled at card 2 until the operator fast-forwarded the base by hand after every fold.
In `push` mode a tree starts from the base (`<remote>/<base>`): a dependent waits for its
dependency's merge there.

When the base moves on outside the board (people commit to it), the run branch takes it
in before a tree starts from it: a fast-forward when the run branch holds nothing of its
own, else a merge commit made with `merge-tree` and moved by compare-and-swap under the
run lock, never a rewrite. A take-in that conflicts changes nothing and names the paths;
the loop then starts no new work until the operator merges the base in by hand.

Every stranded diff and "inspect" command compares with the point a tree actually started
from: `start_ref...branch` (the merge-base of the run branch and the saved work is the run
tip the tree started at, because the run branch only ever moves forward).
"""

from __future__ import annotations

import os
import re
from contextlib import AbstractContextManager
from pathlib import Path

from board.core import hosts, locks
from board.core.config import Config, PublishSection
from board.core.errors import NotFound, Refused
from board.core.git import gitutil
from board.core.records import Record, field

# ---------------------------------------------------------------------------------------------
# locks under .board/locks


REMOTE_TRIES = 5  # a lease lost this often in a row is said, not retried forever


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "run"


def lock_path(cfg: Config, name: str) -> Path:
    """`.board/locks/<name>.lock`."""
    folder = Path(cfg.board_dir) / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{_safe(name)}.lock"


def file_lock(path: Path, timeout: float, what: str) -> AbstractContextManager[None]:
    """The board's file lock (`locks.file_lock`), refusing with what is busy."""
    return locks.file_lock(
        path,
        timeout,
        f"{what} is busy: {path} stayed locked for {timeout:g}s",
        holder=f"{os.getpid()} {hosts.this_host()}",
    )


def run_lock(cfg: Config, timeout: float | None = None) -> AbstractContextManager[None]:
    """The per-run write lock: one fold (and its harvest, and a take-in) at a time."""
    wait = cfg.publish.timeout_s if timeout is None else timeout
    return file_lock(
        lock_path(cfg, f"run-{cfg.board.run_branch}"),
        wait,
        f"the run lock of {cfg.board.run_branch}",
    )


# ---------------------------------------------------------------------------------------------
# names


def base_ref(cfg: Config) -> str:
    """The base as git names it: `<remote>/<base>` when that remote-tracking branch exists,
    else the local `<base>`; refused (NotFound) when neither exists. One git call."""
    names = _base_names(cfg)
    found = set(gitutil.lines(gitutil.out(cfg.root, "for-each-ref", "--format=%(refname)", *names)))
    for name in names:
        if name in found:
            return name.removeprefix("refs/heads/").removeprefix("refs/remotes/")
    raise NotFound(
        f"base branch {cfg.board.base!r} not found "
        f"(neither {cfg.publish.remote}/{cfg.board.base} nor local)"
    )


def _base_names(cfg: Config) -> list[str]:
    """The base's full ref names, in the order they are preferred: the remote's, the local."""
    names = [f"refs/remotes/{cfg.publish.remote}/{cfg.board.base}"] if cfg.publish.remote else []
    return [*names, f"refs/heads/{cfg.board.base}"]


def folds(publish: PublishSection) -> bool:
    return publish.mode == "fold"


def start_ref(cfg: Config) -> str:
    """What fresh trees start from and stranded diffs compare with, by name: the run branch
    in `fold` mode (once it exists), else the base."""
    if (
        folds(cfg.publish)
        and gitutil.rev(cfg.root, f"refs/heads/{cfg.board.run_branch}") is not None
    ):
        return cfg.board.run_branch
    return base_ref(cfg)


def pick_target(cfg: Config) -> str:
    """Where a picked or salvaged change lands by default: the run branch (`fold`) or the
    base (`push`). The TUI, the recovery commands and the CLI all ask this one function."""
    return cfg.board.run_branch if folds(cfg.publish) else cfg.board.base


def checked_out_at(cfg: Config, branch: str) -> str | None:
    """The worktree (main checkout included) that has `branch` checked out, if any.

    Asked of `for-each-ref`'s worktreepath, which reads each tree's HEAD as `git worktree
    list` does but is no `git worktree` call, so it does not wait for the repository's
    admin lock (gitutil._admin_lock): at 100 drives every fold and every branch dropped
    after one queued there behind the trees being made and removed. When it fails (a
    tree's admin folder half-written, say), the listing under the lock answers."""
    ref = f"refs/heads/{branch}"
    res = gitutil.git(cfg.root, "for-each-ref", "--format=%(worktreepath)", ref, check=False)
    if res.returncode == 0:
        found = [line for line in gitutil.lines(res.stdout) if line.strip()]
        return found[0] if found else None
    want = f"branch {ref}"
    path = None
    for line in gitutil.lines(gitutil.out(cfg.root, "worktree", "list", "--porcelain")):
        if line.startswith("worktree "):
            path = line[len("worktree ") :]
        elif line.strip() == want:
            return path
    return None


# ---------------------------------------------------------------------------------------------
# the run branch's tip, and taking the base in


def on_remote(publish_cfg: PublishSection) -> bool:
    """Whether the run branch lives on the remote (`publish.run_on_remote`): a board on
    several hosts, each in its own clone, folds onto one branch there."""
    return folds(publish_cfg) and publish_cfg.run_on_remote and bool(publish_cfg.remote)


def sync(cfg: Config) -> str | None:
    """Fetch the remote run branch and move the local one to it; its tip, or None when the
    remote has none yet. The local run branch only follows: every fold pushes first, so a
    local commit the remote lacks means someone moved it by hand, and that is refused."""
    run = cfg.board.run_branch
    tracking = f"refs/remotes/{cfg.publish.remote}/{run}"
    res = gitutil.git(
        cfg.root,
        "fetch",
        "--quiet",
        cfg.publish.remote,
        f"+refs/heads/{run}:{tracking}",
        check=False,
        timeout=cfg.publish.timeout_s,
    )
    if res.returncode != 0:
        if "couldn't find remote ref" in res.stderr:
            return None
        raise Refused(f"cannot fetch {run} from {cfg.publish.remote}: {res.stderr.strip()}")
    tip = gitutil.rev(cfg.root, tracking)
    if tip is None:
        return None
    local = gitutil.rev(cfg.root, f"refs/heads/{run}")
    if local != tip:
        if local is not None and not gitutil.ok(
            cfg.root, "merge-base", "--is-ancestor", local, tip
        ):
            raise Refused(
                f"the local {run} has commits {cfg.publish.remote}/{run} lacks; "
                "the run branch lives on the remote: push them there by hand, "
                f"or reset the local {run}"
            )
        gitutil.git(cfg.root, *gitutil.NO_HOOKS, "update-ref", f"refs/heads/{run}", tip)
    return tip


def push_run(cfg: Config, new: str, expected: str | None) -> bool:
    """Move the remote run branch to `new` if it is still at `expected` (None: it must not
    exist yet): `git push --force-with-lease`, the compare-and-swap on the remote. False
    when another host moved it first (fetch, rebase and try again); the local run branch
    follows a push that landed."""
    run = cfg.board.run_branch
    res = gitutil.git(
        cfg.root,
        *gitutil.NO_HOOKS,
        "push",
        "--porcelain",
        f"--force-with-lease=refs/heads/{run}:{expected or ''}",
        cfg.publish.remote,
        f"{new}:refs/heads/{run}",
        check=False,
        timeout=cfg.publish.timeout_s,
    )
    if res.returncode != 0:
        text = res.stdout + res.stderr
        if "stale info" in text or "rejected" in text or "fetch first" in text:
            return False
        raise Refused(
            f"cannot push {run} to {cfg.publish.remote}: {res.stderr.strip() or text.strip()}"
        )
    gitutil.git(cfg.root, *gitutil.NO_HOOKS, "update-ref", f"refs/heads/{run}", new)
    gitutil.git(
        cfg.root, *gitutil.NO_HOOKS, "update-ref", f"refs/remotes/{cfg.publish.remote}/{run}", new
    )
    return True


def ensure(cfg: Config) -> str:
    """The run branch's tip, creating it from the base when it does not exist yet (on the
    remote too, when the run branch lives there: the first fold creates it)."""
    if on_remote(cfg.publish):
        for _ in range(REMOTE_TRIES):
            tip = sync(cfg)
            if tip is not None:
                return tip
            start = gitutil.rev(cfg.root, base_ref(cfg))
            if start is None:
                raise Refused(
                    f"the base {cfg.board.base} has no commit to start {cfg.board.run_branch} from"
                )
            if push_run(cfg, start, None):
                return start
        raise Refused(
            f"{cfg.publish.remote}/{cfg.board.run_branch} kept changing while it was created"
        )
    tip = gitutil.rev(cfg.root, f"refs/heads/{cfg.board.run_branch}")
    if tip is not None:
        return tip
    start = gitutil.rev(cfg.root, cfg.board.base)
    if start is None:
        raise Refused(
            f"neither the run branch {cfg.board.run_branch} nor the base {cfg.board.base} exists"
        )
    gitutil.git(
        cfg.root, *gitutil.NO_HOOKS, "update-ref", f"refs/heads/{cfg.board.run_branch}", start, ""
    )
    return start


class TakeIn(Record):
    """What a take-in of the base did: `tip` is the run branch's tip afterwards."""

    tip: str
    base: str = ""  # the base's name as taken in ('' when nothing was needed)
    merged: str = ""  # the merge commit or fast-forward target ('' when nothing moved)
    conflicts: list[str] = field(default_factory=list)

    @property
    def line(self) -> str:
        """One line for the operator when the take-in conflicts ('' otherwise)."""
        if not self.conflicts:
            return ""
        return (
            f"the base {self.base} moved on and conflicts with the run branch in "
            f"{', '.join(self.conflicts)}; merge {self.base} into the run branch by hand "
            "(the board starts no new build until the run branch holds it)"
        )


def take_in_base(cfg: Config) -> TakeIn:
    """Bring a base that moved on into the run branch; call under `run_lock`.

    Nothing to do when the run branch already holds the base. A run branch with nothing of
    its own is fast-forwarded; otherwise a merge commit (board identity, no hooks) is made
    from `merge-tree --write-tree` and the run branch moved by compare-and-swap. A conflict
    moves nothing and names the paths.
    """
    tip = ensure(cfg)
    try:
        base = base_ref(cfg)
    except NotFound:
        return TakeIn(tip)
    base_tip = gitutil.rev(cfg.root, base)
    if base_tip is None or gitutil.ok(cfg.root, "merge-base", "--is-ancestor", base_tip, tip):
        return TakeIn(tip)
    run_ref = f"refs/heads/{cfg.board.run_branch}"
    if gitutil.ok(cfg.root, "merge-base", "--is-ancestor", tip, base_tip):
        new = base_tip
    else:
        res = gitutil.git(
            cfg.root,
            "merge-tree",
            "--write-tree",
            "--name-only",
            "--no-messages",
            tip,
            base_tip,
            check=False,
        )
        lines = gitutil.lines(res.stdout)
        if res.returncode != 0:
            paths = sorted({p for p in lines[1:] if p}) if res.returncode == 1 else []
            return TakeIn(tip, base=base, conflicts=paths or [f"(git: {res.stderr.strip()})"])
        message = (
            f"board: take in {base} ({base_tip[:10]}) onto {cfg.board.run_branch}\n\n"
            f"The base moved on outside the board; the run branch takes it in so that new "
            "trees start from both.\n"
        )
        new = gitutil.out(
            cfg.root,
            *gitutil.NO_HOOKS,
            "commit-tree",
            lines[0].strip(),
            "-p",
            tip,
            "-p",
            base_tip,
            "-F",
            "-",
            env=gitutil.identity_env(),
            input_bytes=message.encode(),
        )
    if on_remote(cfg.publish):  # the remote's compare-and-swap; lost: the next call sees it
        if not push_run(cfg, new, tip):
            return TakeIn(tip)
        return TakeIn(new, base=base, merged=new)
    moved = gitutil.git(
        cfg.root,
        *gitutil.NO_HOOKS,
        "update-ref",
        "-m",
        f"board: take in {base}",
        run_ref,
        new,
        tip,
        check=False,
    )
    if moved.returncode != 0:  # moved by someone outside the lock: the next call sees it
        return TakeIn(gitutil.rev(cfg.root, run_ref) or tip)
    return TakeIn(new, base=base, merged=new)


def start_point(cfg: Config) -> str:
    """The commit a card's fresh tree starts from (see the module docstring).

    When the run branch holds the base already (the usual case), its tip is read without
    the run lock: a ref is moved atomically and the run branch only moves forward, so
    this tip is one the locked read could have given a moment earlier. Taking the lock
    for every fresh tree put each of 100 drives' trees behind the folds in its queue
    (a median 9 s from claim to tree at 100 drives). A base that moved on is taken in
    under the lock, as before; so is a run branch on the remote (read by a fetch)."""
    if not folds(cfg.publish):
        return gitutil.out(cfg.root, "rev-parse", "--verify", f"{base_ref(cfg)}^{{commit}}")
    if not on_remote(cfg.publish):
        tip = tip_holding_base(cfg)
        if tip is not None:
            return tip
    with run_lock(cfg):
        return take_in_base(cfg).tip


def tip_holding_base(cfg: Config) -> str | None:
    """The local run branch's tip when it exists and holds the base (what `take_in_base`
    returns then, asked the same way); None when the run lock's path must decide.

    The run branch and the base (`<remote>/<base>` when it exists, else the local one, as
    `base_ref` names it) are read in one `for-each-ref`, and the ancestry asked only when
    they differ: every claim and every fresh tree asks this, in the loop's ticks too, and it
    was four git processes."""
    run = f"refs/heads/{cfg.board.run_branch}"
    bases = _base_names(cfg)
    res = gitutil.git(
        cfg.root, "for-each-ref", "--format=%(refname) %(objectname) %(objecttype)", run, *bases
    )
    commits: dict[str, str | None] = {}
    for line in gitutil.lines(res.stdout):
        name, _, rest = line.partition(" ")
        oid, _, kind = rest.partition(" ")
        commits[name] = oid if kind == "commit" else None
    tip = commits.get(run)
    if tip is None:
        return None  # no run branch yet (or not a commit): the locked path makes it
    base = next((name for name in bases if name in commits), None)
    if base is None:
        return tip  # no base to hold (`base_ref` refuses): the tip as it is
    base_tip = commits[base]
    if base_tip is None or base_tip == tip:
        return tip
    if gitutil.ok(cfg.root, "merge-base", "--is-ancestor", base_tip, tip):
        return tip
    return None


__all__ = [
    "TakeIn",
    "base_ref",
    "checked_out_at",
    "ensure",
    "file_lock",
    "folds",
    "lock_path",
    "on_remote",
    "push_run",
    "sync",
    "pick_target",
    "run_lock",
    "start_point",
    "start_ref",
    "take_in_base",
    "tip_holding_base",
]

"""Publishing a built card, and the ownership check every drive edge goes through.

`fold` is the serial fold-back (docs/lifecycle.md, "The fold"): under one lock per run
branch (shared by every process on this machine), the card branch is rebased onto the run
branch's tip and the run branch is moved with a compare-and-swap `update-ref`.
The run branch is never checked out, and a fold refuses while any worktree has
it checked out, so the operator's own checkout never moves under them.

The last step of a publish moves the run branch and the card in one store
transaction: the card is re-read, checked to still belong to the drive, the ref
is moved, and the card goes `done` before the transaction commits. Another
process's `hold` or `requeue` therefore lands either before (and the fold stands
aside: nothing is published) or after (and finds the card already done) — never
in between (invariant 4).

`publish` dispatches on `publish.review` and `publish.mode`; the operator's `approve` extends it
with `push` and the operator's `approve`.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from board.core.cards import importing
from board.core.config import BoardSection, Config, PublishSection
from board.core.errors import BoardError, Conflict, Refused
from board.core.git import gitutil, quickfold, runbranch
from board.core.git.faults import _fault
from board.core.git.runbranch import run_lock
from board.core.model import FOLD_CONFLICT_EVENT, Card
from board.core.publish import push
from board.core.publish.owner import (
    Owner,
    PublishResult,
    StoodAside,
    block_owned,
    edge_update,
)
from board.core.records import Record, field
from board.core.store import Expect, Store

# a rebase keeps each commit's author; the board is its committer
_COMMITTER = {k: v for k, v in gitutil.BOARD_IDENTITY.items() if "COMMITTER" in k}
FOLD_CAS_TRIES = 3


# ---------------------------------------------------------------------------------------------
# the fold


def run_branch_holders(cfg: Config) -> list[str]:
    """Paths of the worktrees (main checkout included) that have the run branch checked out."""
    where = runbranch.checked_out_at(cfg, cfg.board.run_branch)
    return [where] if where else []


def _conflict_paths(tree: Path) -> list[str]:
    res = gitutil.git(tree, "diff", "--name-only", "--diff-filter=U", "-z", check=False)
    return sorted({p for p in res.stdout.split("\0") if p})


def _rebase(publish: PublishSection, tree: Path, onto: str) -> tuple[bool, list[str], str]:
    """`git rebase <onto>` in the card's tree; on conflict abort it and name the paths.

    Every commit the run branch lacks is replayed (the card's, and any newer base commits
    its tree started from, which its work may rely on); a commit whose patch the run
    branch already holds is dropped by git, so a base commit folded once is not doubled.
    """
    res = gitutil.git(
        tree,
        *gitutil.NO_HOOKS,
        "-c",
        "rebase.autoStash=false",
        "-c",
        "rebase.updateRefs=false",
        "rebase",
        "--no-autosquash",
        onto,
        env=_COMMITTER,
        check=False,
        timeout=publish.timeout_s or gitutil.GIT_TIMEOUT_S,
    )
    if res.returncode == 0 and not res.timed_out:
        return True, [], ""
    paths = _conflict_paths(tree)
    said = (res.stderr.strip() or res.stdout.strip()).splitlines()
    gitutil.git(tree, *gitutil.NO_HOOKS, "rebase", "--abort", check=False)
    return False, paths, said[-1] if said else "rebase failed"


def fold(
    cfg: Config,
    store: Store,
    card: Card,
    tree: str | Path,
    token: str,
    *,
    owner: Owner | None = None,
    start: str | None = None,
    who: str = "board",
    head: str | None = None,
    leave_tree: bool = False,
) -> PublishResult:
    """`_fold`, then, for a card that came from a tracker and is now done, `[import]
    on_done_argv` (once; after the run lock, which no tracker's slowness may hold)."""
    res = _fold(
        cfg, store, card, tree, token, owner=owner, start=start, who=who, head=head,
        leave_tree=leave_tree,
    )  # fmt: skip
    if res.outcome == "done":
        importing.after_done(store, cfg, card.id)
    return res


def _fold(
    cfg: Config,
    store: Store,
    card: Card,
    tree: str | Path,
    token: str,
    *,
    owner: Owner | None = None,
    start: str | None = None,
    who: str = "board",
    head: str | None = None,
    leave_tree: bool = False,
) -> PublishResult:
    """Fold the card branch checked out in `tree` onto the run branch; the card goes `done`.

    `start` is the commit the card's tree started from (the drive records it); a HEAD
    still at `start` has nothing to publish and is refused. Without it, the merge-base
    with the base branch is used. A conflict aborts the rebase, keeps the card branch
    and its tree as they were, and blocks the card `fold-conflict` naming the paths.
    `head`: the commit to fold, when the caller made it (the drive's harvest), else the
    tree's HEAD. `leave_tree`: the caller removes the tree once the card is done, so a
    replayed commit is not caught up in it (the removal is told of the replay instead).
    """
    tree = Path(tree)
    owner = owner or Owner("working", token)
    # Asked before the run lock, not under it: a checkout is made by hand, never under the
    # lock, so holding it guards nothing here; with 100 drives folding, every fold's `git
    # worktree list` (which reads every tree's HEAD) sat in the queue of the next 99.
    holders = run_branch_holders(cfg)
    if holders:
        reason = (
            f"the run branch {cfg.board.run_branch} is checked out at {', '.join(holders)}; "
            "a fold would move it under that checkout. Check out another branch there, "
            f"then unblock {card.id}"
        )
        return _fold_block(store, card, owner, reason, [])
    # The tree's HEAD is read before the lock too: it is the drive's own tree, which only
    # the rebase below moves.
    head = head or gitutil.rev(tree, "HEAD")
    if head is None:
        raise Refused(f"{tree} has no commit to publish")
    if start is None:
        start = gitutil.out(tree, "merge-base", "HEAD", runbranch.start_ref(cfg))
    if head == start:
        raise Refused(f"{card.id}: {tree} holds no commit of its own to publish")
    one = quickfold.read(tree, head, start)
    fold = _Fold(cfg, store, card, tree, owner, who, head, one)
    done = False
    try:
        with run_lock(cfg):
            res = fold.under_lock()
        done = res.outcome == "done"
        return res
    finally:
        # where the rebase would have left the tree; but a tree removed next is left at
        # the card's commit: its catch-up wrote every file the run branch gained since the
        # tree started, to be deleted at once (the removal knows the replay: quickclean)
        if fold.replayed and one is not None and not (leave_tree and done):
            quickfold.catch_up(tree, one, fold.replayed)


def _tree_of(one: quickfold.OneCommit | None, commit: str) -> str:
    """`commit`'s tree when the card's one commit is it ('' when not known without git)."""
    return one.tree if one is not None and commit == one.commit else ""


class _Fold:
    """One fold's steps under the run lock; `replayed` is the commit the replay made for the
    card's (quickfold), which the tree is moved to once the lock is let go."""

    def __init__(
        self,
        cfg: Config,
        store: Store,
        card: Card,
        tree: Path,
        owner: Owner,
        who: str,
        head: str,
        one: quickfold.OneCommit | None,
    ) -> None:
        self.cfg, self.store, self.card, self.tree = cfg, store, card, tree
        self.owner, self.who, self.head, self.one = owner, who, head, one
        self.replayed = ""
        self.known: quickfold.RunLine | None = None

    def _onto(self, tip: str, sure: bool = True) -> str | PublishResult | None:
        """The card's work as a commit on `tip`: the tree's HEAD when it holds `tip`, its one
        commit replayed without the tree, or the tree rebased (a conflict blocks the card).
        None: `tip` is a guess (not `sure`) and the replay could not make the commit, so the
        guess is checked with git before the rebase runs or anything is blocked."""
        head = self.head
        if head == tip:
            return head
        if self.one is not None:
            if tip == self.one.parent:
                return head
            new = quickfold.replay(
                self.cfg.root,
                self.one,
                tip,
                _COMMITTER,
                timeout=self.cfg.publish.timeout_s or gitutil.GIT_TIMEOUT_S,
                known=self.known,
            )
            if new:
                self.replayed = new
                return new
            if not sure:
                return None
            self.one = None  # only the rebase can say: it runs in the tree from here on
            self.replayed = ""
        if gitutil.ok(self.tree, "merge-base", "--is-ancestor", tip, head):
            return head
        ok, paths, said = _rebase(self.cfg.publish, self.tree, tip)
        if not ok:
            note = conflict_note(self.cfg.board, self.card.id, self.tree, tip, paths, said)
            return _fold_block(self.store, self.card, self.owner, note.reason, paths, note.detail)
        rebased = gitutil.rev(self.tree, "HEAD")
        assert rebased is not None
        self.head = rebased
        return rebased

    def under_lock(self) -> PublishResult:
        cfg, store, card, owner, who = self.cfg, self.store, self.card, self.owner, self.who
        run_ref = f"refs/heads/{cfg.board.run_branch}"
        tries = 4 * runbranch.REMOTE_TRIES if runbranch.on_remote(cfg.publish) else FOLD_CAS_TRIES
        known = None if runbranch.on_remote(cfg.publish) else quickfold.line(cfg.root, run_ref)
        self.known = known
        tried = 0
        for _ in range(2 * tries):  # each wrong guess is forgotten (`lost`): one look at most
            if tried >= tries:
                break
            found = owner.why_not(store.get(card.id), store)
            if found:
                return PublishResult("stood-aside", reason=found)
            # the replay's way only: a tip this process set, which the compare-and-swap checks
            guessed = known.guess() if known is not None and self.one is not None else ""
            tip = guessed or runbranch.ensure(cfg)
            tried += not guessed  # a wrong guess costs a look at git, not one of the tries
            if known is not None:
                known.saw(tip)
            new = self._onto(tip, sure=not guessed)
            if new is None:
                assert known is not None
                known.lost()
                continue
            if isinstance(new, PublishResult):
                return new
            if runbranch.on_remote(cfg.publish):
                run = f"{cfg.publish.remote}/{cfg.board.run_branch}"
                found = owner.why_not(store.get(card.id), store)
                if found:
                    return PublishResult("stood-aside", reason=found)
                if not runbranch.push_run(cfg, new, tip):
                    continue  # another host folded first: fetch, rebase and push again
                try:
                    done = edge_update(
                        store,
                        card.id,
                        owner,
                        {"lane": "done", "drive": ""},
                        "publish",
                        note=f"folded onto {run} at {new[:10]}",
                        who=who,
                    )
                except StoodAside as exc:  # the push landed: the work is on the run branch
                    store.add_event(
                        card.id,
                        f"its commit {new[:10]} is on {run} (pushed before {exc.found})",
                        who,
                    )
                    return PublishResult("stood-aside", reason=exc.found)
                return PublishResult("done", card=done, commit=new)
            try:
                with store.transaction() as tx:
                    now = tx.get(card.id)
                    found = owner.why_not(now, store)
                    if found:
                        raise StoodAside("publish", found)
                    res = gitutil.git(
                        cfg.root, *gitutil.NO_HOOKS, "update-ref", run_ref, new, tip, check=False
                    )
                    if res.returncode != 0:
                        raise _RunMoved(res.stderr.strip())
                    _fault("after-fold-ref")  # the run branch moved; the card is not yet done
                    if known is not None:
                        known.made(tip, new, _tree_of(self.one, new))
                    done = tx.update(
                        card.id,
                        Expect(version=now.version),
                        {"lane": "done", "drive": ""},
                        who,
                        note=f"folded onto {cfg.board.run_branch} at {new[:10]}",
                    )
            except StoodAside as exc:
                return PublishResult("stood-aside", reason=exc.found)
            except _RunMoved:
                if known is not None:
                    known.lost()
                continue  # someone outside the lock moved the run branch: rebase again
            return PublishResult("done", card=done, commit=new)
        raise Conflict(
            f"{card.id}: {cfg.board.run_branch} kept moving under the fold ({tries} tries)"
        )


class _RunMoved(Exception):
    pass


def drive_marker(token: str) -> str:
    """What the board's commit message says of the drive that built it (every fold of a
    drive's work carries it: the harvest makes one commit with it, and the fold keeps it)."""
    return f"Built by board drive {token} ("


def landed_commit(cfg: Config, tokens: list[str], tree: Path | None, since: str = "") -> str:
    """The commit on the run branch that the fold of one of the drives `tokens` made (a
    drive, or a race's candidates), '' when there is none.

    A fold moves the run branch, then marks the card done in the store; a `board run`
    killed between the two left the work on the run branch and the card working, and its
    recovery built it again on top of its own work (the coder then changed nothing and the
    card was blocked `terminal`: bench_fleet's kill run, 1 card in 300). Looked for only
    among the run branch's commits its tree lacks (`tree`'s HEAD: the card's branch), or
    else those made since `since` (the drive's start)."""
    tokens = [t for t in tokens if t]
    if not tokens or not runbranch.folds(cfg.publish):
        return ""
    run = cfg.board.run_branch
    refs = [f"refs/heads/{run}"]
    if runbranch.on_remote(cfg.publish):
        refs.append(f"refs/remotes/{cfg.publish.remote}/{run}")
    head = gitutil.rev(tree, "HEAD") if tree is not None and tree.is_dir() else None
    for ref in refs:
        tip = gitutil.rev(cfg.root, ref)
        if tip is None:
            continue
        bound: list[str] = []
        if head is not None:
            base = gitutil.git(cfg.root, "merge-base", head, tip, check=False).stdout.strip()
            if base:
                bound = ["--not", f"{base}^@"]  # the merge-base itself is looked at
        elif since:
            bound = [f"--since={since}"]
        else:
            continue
        found = gitutil.git(
            cfg.root,
            "rev-list",
            "-1",
            "--fixed-strings",
            *(f"--grep={drive_marker(token)}" for token in tokens),
            tip,
            *bound,
            check=False,
        ).stdout.strip()
        if found:
            return found
    return ""


OTHER_SIDE_MAX = 8


class ConflictNote(Record):
    """A fold conflict in words: the block's reason (with every way out that works as
    written) and the detail the next build's brief quotes (paths, the other side)."""

    reason: str
    detail: str
    other_side: list[str] = field(default_factory=list)  # "<short sha> <subject>"


def other_side(cwd: Path, head: str, tip: str, paths: list[str]) -> list[str]:
    """The run branch's commits the card's HEAD lacks that touch `paths` (newest first)."""
    if not paths:
        return []
    res = gitutil.git(
        cwd,
        "log",
        f"--max-count={OTHER_SIDE_MAX}",
        "--format=%h %s",
        f"{head}..{tip}",
        "--",
        *paths,
        check=False,
    )
    return [line for line in gitutil.lines(res.stdout) if line.strip()]


def conflict_note(
    board: BoardSection, card_id: str, tree: Path, tip: str, paths: list[str], said: str = ""
) -> ConflictNote:
    """The reason and brief detail of a fold that conflicted in `tree` onto `tip`."""
    head = gitutil.rev(tree, "HEAD") or tip
    theirs = other_side(tree, head, tip, paths)
    where = ", ".join(paths) if paths else (said or "the rebase")
    branch = gitutil.out(tree, "branch", "--show-current", check=False) or "its branch"
    with_ = f" with {board.run_branch}'s {'; '.join(theirs)}" if theirs else ""
    reason = (
        f"folding onto {board.run_branch} conflicts in {where}{with_}; {branch} and its tree "
        f"{tree} are kept as they were. Ways out: `board requeue {card_id}` rebuilds it on "
        f"{board.run_branch}'s tip (the brief names this conflict); `board resolve {card_id}` "
        f"leaves the conflict in its tree to resolve by hand; `board stranded salvage "
        f"{card_id}` publishes it once {board.run_branch} no longer conflicts"
    )
    lines = [f"The last build's fold onto {board.run_branch} conflicted in: {where}."]
    if theirs:
        lines.append(f"The other side: these commits on {board.run_branch} touch those paths:")
        lines += [f"- {c}" for c in theirs]
    lines.append(
        f"This build starts from {board.run_branch}'s tip, which holds them: build on their "
        "version of those paths, not against it."
    )
    return ConflictNote(reason, "\n".join(lines), theirs)


def _fold_block(
    store: Store,
    card: Card,
    owner: Owner,
    reason: str,
    paths: list[str],
    detail: str = "",
) -> PublishResult:
    try:
        blocked = block_owned(store, card.id, owner, "fold-conflict", reason, edge="fold")
    except StoodAside as exc:
        return PublishResult("stood-aside", reason=exc.found)
    if detail:
        with contextlib.suppress(BoardError):
            store.add_event(card.id, detail, "board", kind=FOLD_CONFLICT_EVENT)
    return PublishResult("blocked", card=blocked, reason=reason, cls="fold-conflict", paths=paths)


def drop_folded_branch(cfg: Config, branch: str) -> bool:
    """Delete a card branch whose tip the run branch already holds (compare-and-swap delete)."""
    if not branch:
        return False
    ref = f"refs/heads/{branch}"
    tip = gitutil.rev(cfg.root, ref)
    if tip is None:
        return False
    if not gitutil.ok(
        cfg.root, "merge-base", "--is-ancestor", tip, f"refs/heads/{cfg.board.run_branch}"
    ):
        return False
    if runbranch.checked_out_at(cfg, branch):
        return False
    return gitutil.ok(cfg.root, *gitutil.NO_HOOKS, "update-ref", "-d", ref, tip)


# ---------------------------------------------------------------------------------------------
# the dispatcher


def to_review(
    cfg: Config,
    store: Store,
    card: Card,
    tree: str | Path,
    token: str,
    *,
    owner: Owner | None = None,
) -> PublishResult:
    """review = operator: the built card waits in `review`, keeping its tree and branch.

    The card's branch becomes the tree's: a best-of-N race sends its chosen candidate's
    tree (`feat/<id>-<k>`), and the card's branch is how `board card show` and
    `board approve --candidate` know which candidate waits (a single drive's is the same)."""
    owner = owner or Owner("working", token)
    branch = gitutil.out(Path(tree), "branch", "--show-current") or card.branch
    stat = gitutil.git(
        Path(tree), "diff", "--shortstat", f"{runbranch.start_ref(cfg)}...HEAD", check=False
    ).stdout.strip()
    note = f"built; waits for the operator's review on {branch}" + (f" ({stat})" if stat else "")
    try:
        changes = {"lane": "review", "drive": "", "branch": branch}
        moved = edge_update(store, card.id, owner, changes, "review", note)
    except StoodAside as exc:
        return PublishResult("stood-aside", reason=exc.found)
    return PublishResult("review", card=moved, reason=note)


def publish(
    cfg: Config,
    store: Store,
    card: Card,
    tree: str | Path,
    token: str,
    *,
    owner: Owner | None = None,
    start: str | None = None,
    approved: bool = False,
    head: str | None = None,
    leave_tree: bool = False,
) -> PublishResult:
    """Publish a built card the configured way.

    With `review = "operator"` and not yet `approved`, the card goes to `review`.
    Otherwise `fold` (local, serial) or `push`. Raises StoodAside never:
    a moved card comes back as outcome `stood-aside`, with nothing published.
    `head` and `leave_tree` are the fold's (`_fold`).
    """
    if cfg.publish.review == "operator" and not approved:
        return to_review(cfg, store, card, tree, token, owner=owner)
    if cfg.publish.mode == "fold":
        return fold(
            cfg, store, card, tree, token, owner=owner, start=start, head=head,
            leave_tree=leave_tree,
        )  # fmt: skip
    if cfg.publish.mode == "push":
        return push.publish_card(cfg, store, card, tree, token, owner=owner)
    raise BoardError(f"unknown publish mode {cfg.publish.mode!r}")


__all__ = [
    "Owner",
    "StoodAside",
    "PublishResult",
    "edge_update",
    "block_owned",
    "run_lock",
    "fold",
    "publish",
    "to_review",
    "drop_folded_branch",
    "run_branch_holders",
    "conflict_note",
]

"""`board stranded salvage BRANCH|ID [--force]`: publish saved work with no coder.

Commit what the tree holds, run the gate where the tree stands, publish by the
configured mode. For its duration the card is `working` under a drive row of its own
(tier `salvage`), so the loop does not claim it, a second salvage or an approve
refuses, and `board stop` ends it like any drive. In `fold` mode a stranded branch is
first replayed onto the run branch's tip as one commit named after its card, and work
that still conflicts with the run branch is refused in one line before anything
changes. A red gate publishes nothing and puts the card back as it was; `--force`
publishes anyway and says so (a draft PR with push, a note on the card with fold). A
salvaged stranded branch is deleted once its content is verified published, so it
lands exactly once.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from board.core.cards.enddrives import SALVAGE_TIER, before_note
from board.core.config import BoardSection, Config
from board.core.drive.brief import brief_text, write_brief
from board.core.drive.gate import GateVerdict, run_gate
from board.core.drive.harvest import git_commit, tree_changes
from board.core.errors import BoardError, Conflict, NotFound, Refused
from board.core.git import (
    gitutil,
    naming,
    runbranch,
    shared,
    snapshot,
    stranded,
    treestate,
)
from board.core.logs import LogWriter, log_path
from board.core.model import Card, Drive
from board.core.ops.live import BOARD, WHO, after_fold, card_lock, save_trees, tail
from board.core.ops.pick import picked_message
from board.core.publish import publish, push
from board.core.publish.owner import Owner, StoodAside, edge_update
from board.core.records import Record, field
from board.core.store import Expect, Store


class SalvageResult(Record):
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


class _Target(Record):
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
        card_id = naming.card_id_of(tree_dir, cfg.board.prefix)
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
    tree = treestate.card_tree(cfg, card)
    if tree is None:
        trees = [t for t in naming.card_trees(cfg, card.id) if treestate.is_worktree(t)]
        branches = stranded_of(cfg, card.id)
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


def stranded_of(cfg: Config, card_id: str) -> list[str]:
    return [b.branch for b in stranded.list_stranded(cfg) if b.card == card_id]


def _publish_target(cfg: Config) -> str:
    """The ref a publish lands on: the run branch (fold) or the base (push)."""
    if cfg.publish.mode == "fold" and gitutil.rev(cfg.root, f"refs/heads/{cfg.board.run_branch}"):
        return f"refs/heads/{cfg.board.run_branch}"
    remote = f"refs/remotes/{cfg.publish.remote}/{cfg.board.base}"
    return remote if gitutil.rev(cfg.root, remote) else f"refs/heads/{cfg.board.base}"


def already_on(cfg: Config, tip: str, target_ref: str) -> bool:
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
        if tree_changes(cfg.board, t.tree):
            return ""
        head = gitutil.rev(t.tree, "HEAD")
        if head is None:
            return f"{cfg.rel(t.tree)} has no commit"
        if already_on(cfg, head, where):
            return f"everything in {cfg.rel(t.tree)} is already on {short}"
        if cfg.publish.mode == "push" and t.card.pr_url:
            branch = gitutil.out(t.tree, "branch", "--show-current", check=False)
            remote = (
                gitutil.rev(cfg.root, f"refs/remotes/{cfg.publish.remote}/{branch}")
                if branch
                else None
            )
            if remote == head:
                return f"{branch} is pushed as it stands and has its PR {t.card.pr_url}"
        return ""
    if already_on(cfg, t.tip, where):
        return f"everything in {t.branch} is already on {short}"
    return ""


def _work_commit(cfg: Config, t: _Target) -> str:
    """A commit holding everything the target would publish: the stranded tip, or the
    tree's HEAD plus its uncommitted state (an unreferenced commit; nothing is changed)."""
    if t.tree is None:
        return t.tip
    head = gitutil.out(t.tree, "rev-parse", "HEAD")
    if not tree_changes(cfg.board, t.tree):
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
    if not runbranch.folds(cfg.publish):
        return
    _, paths, theirs = replay_conflicts(cfg, _work_commit(cfg, t))
    if not paths:
        return
    other = f" ({'; '.join(theirs)})" if theirs else ""
    way = (
        f"`board resolve {t.card.id}` to resolve it by hand"
        if t.tree is not None
        else f"`board requeue {t.card.id}` to rebuild it on {cfg.board.run_branch}"
    )
    raise Conflict(
        f"{t.name} still conflicts with {cfg.board.run_branch} in {', '.join(paths)}{other}; "
        f"nothing was changed: {way}"
    )


def _take(store: Store, cfg: Config, card: Card, target: str, who: str) -> tuple[Drive, Card]:
    """The card becomes `working` under a salvage drive row: the loop will not claim it."""
    attempt = store.next_attempt(card.id)
    log_rel = cfg.rel(log_path(cfg, card.id, attempt))
    row = store.start_drive(card.id, SALVAGE_TIER, attempt, log_rel, os.getpid())
    row = store.update_drive(row.id, result=before_note(card))
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


def _commit_all(board: BoardSection, tree: Path, card: Card) -> str:
    """Commit everything the tree holds (scratch and the board's links excepted); '' if none."""
    snapshot.stage_all(board, tree)
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
        live = [d for d in store.list_drives(card.id, limit=20) if d.live]
        if live:
            raise Refused(f"{card.id}: drive {live[0].id} is still running; wait for it to end")
        if t.tree is not None and not gitutil.out(t.tree, "branch", "--show-current", check=False):
            raise Refused(
                f"{cfg.rel(t.tree)} is on no branch (a detached HEAD): check out a branch "
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
        if self.cfg.publish.mode == "push":
            return self._push(draft_why)
        return self._fold(draft_why)

    # -- steps -----------------------------------------------------------------------------

    def _prepare_tree(self) -> Path:
        if self.t.tree is not None:
            self._check()
            made = _commit_all(self.cfg.board, self.t.tree, self.card)
            if made:
                self.say(f"committed what {self.t.tree.name} held as {made[:10]}")
                self.result.commit = made
            return self.t.tree
        slug = _free_slug(self.cfg, self.card.id)
        path = self.cfg.worktrees_dir / naming.tree_name(self.card.id, slug)
        branch = naming.branch_for(self.card.id, slug)
        self.cfg.worktrees_dir.mkdir(parents=True, exist_ok=True)
        start = self._replay() if runbranch.folds(self.cfg.publish) else self.t.tip
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
        self.say(f"{self.t.branch} checked out at {self.cfg.rel(path)} on {branch}")
        return path

    def _replay(self) -> str:
        """The stranded work as ONE commit on the run branch's current tip, its message
        naming the card and its title (`c-4: Add modulo (salvaged from stranded/…)`), so
        the gate runs on what the fold will publish. Refused, changing nothing, when it
        conflicts (the check before the salvage took the card lost a race)."""
        tip, paths, _ = replay_conflicts(self.cfg, self.t.tip)
        if paths:
            raise Conflict(
                f"{self.t.name} conflicts with {self.cfg.board.run_branch} in {', '.join(paths)}; "
                "nothing was published"
            )
        tree = gitutil.out(
            self.cfg.root, "merge-tree", "--write-tree", "--no-messages", tip, self.t.tip
        ).split("\n", 1)[0]
        message = picked_message(
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
        self.say(
            f"{self.t.branch} replayed onto {self.cfg.board.run_branch} ({tip[:10]}) as {new[:10]}"
        )
        return new

    def _gate(self) -> GateVerdict | None:
        if not self.cfg.gate.argv:
            self.say("no gate is configured (gate.argv is empty): publishing as it stands")
            return None
        assert self.tree is not None
        self._check()
        self.say(f"gate: {list(self.cfg.gate.argv)}")

        def on_line(text: str) -> None:
            if self.log is not None:
                self.log.write_line(text)

        def on_start(pid: int) -> None:
            self.store.update_drive(self.row.id, pgid=pid)

        brief = write_brief(
            self.cfg.board,
            self.tree,
            brief_text(
                self.cfg.gate,
                self.card,
                tree=self.tree,
                branch=gitutil.out(self.tree, "branch", "--show-current", check=False),
                tier=SALVAGE_TIER,
                attempt=self.row.attempt,
            ),
        )
        verdict = run_gate(
            self.cfg.gate,
            self.tree,
            on_line,
            on_start=on_start,
            card=self.card.id,
            brief=str(brief),
            env={"BOARD_DRIVE": self.row.id},
        )
        self.store.update_drive(self.row.id, pgid=0)
        self.result.gate = "red" if verdict.red else verdict.status
        self.result.gate_reason = verdict.reason
        self.result.gate_tail = tail(verdict.tail)
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
        self.say(f"folded onto {self.cfg.board.run_branch} at {res.commit[:10]}")
        if draft_why:
            self._comment(f"salvage of {self.t.name} {draft_why}", self.result.gate_tail)
        self._end_row("passed", f"salvage folded onto {self.cfg.board.run_branch}")
        self._drop_stranded(f"refs/heads/{self.cfg.board.run_branch}")
        after_fold(self.cfg, self.store, card.id, self.tree, f"salvage of {self.t.name}")
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
            self._drop_stranded(f"refs/remotes/{self.cfg.publish.remote}/{branch}")
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
            if self.store.get_drive(self.row.id).live:
                self.store.update_drive(self.row.id, status=status, pgid=0, result=why[:500])

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
            and not tree_changes(self.cfg.board, tree)
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
        save_trees(self.cfg, self.store, self.card.id, f"salvage of {self.t.name}", [tree])

    def _drop_stranded(self, published_on: str) -> None:
        """A salvaged stranded branch goes once its content is verified on `published_on`."""
        if self.t.branch:
            for line in drop_published(
                self.cfg, self.store, self.t.branch, self.t.tip, published_on, "salvaged"
            ):
                self.say(line)


def drop_published(
    cfg: Config, store: Store, branch: str, tip: str, published_on: str, verb: str
) -> list[str]:
    """Delete stranded `branch` (at `tip`) once its content is verified on `published_on`,
    so saved work lands exactly once: kept, and said, when it cannot be verified. A salvage
    and an approve of another candidate (`verb`: what was done with it) both end so."""
    if not gitutil.rev(cfg.root, published_on) or not already_on(cfg, tip, published_on):
        return [f"{branch} is kept: its content could not be verified on {published_on}"]
    gone = gitutil.ok(cfg.root, *gitutil.NO_HOOKS, "update-ref", "-d", f"refs/heads/{branch}", tip)
    if not gone:
        return [f"{branch} is kept: it moved meanwhile"]
    lines = [f"{branch} was {verb} and deleted (its content is published)"]
    # buried, and deleted from the remote, so no host fetches it back to salvage twice
    try:
        shared.bury(cfg, store, [(branch, tip)])
    except BoardError as exc:
        return [*lines, exc.line()]
    if runbranch.on_remote(cfg.publish):
        shared.delete_remote(cfg, branch, tip)
    return lines


__all__ = [
    "SalvageResult",
    "already_on",
    "drop_published",
    "replay_conflicts",
    "salvage",
    "stranded_of",
]

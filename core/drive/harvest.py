"""The board's commit of what a coder left in its tree, with the surface harvest.

With a declared surface, what lies inside it is the card's product and is committed;
tracked changes outside it are discarded so the fold can rebase (a rewritten lockfile),
and untracked files outside it are named. Before anything outside the surface is
dropped, the whole tree is saved to a `stranded/…` branch (invariant 1), and the result
names that branch. A coder that committed by itself has its commits folded back into the
board's one commit, so the surface rule applies to them too.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path

from board.core.config import BoardSection, Config
from board.core.git import gitutil, saves, snapshot
from board.core.model import Card
from board.core.records import Record, field

# ---------------------------------------------------------------------------------------------
# surfaces


def in_surface(path: str, surface: tuple[str, ...] | list[str]) -> bool:
    """Whether `path` (relative, `/`-separated) lies inside any of the surface's globs.

    fnmatch rules (`*` also crosses `/`), and a glob naming a directory (`src`,
    `src/`) holds everything under it.
    """
    for glob in surface:
        g = glob.strip()
        if g.startswith("./"):
            g = g[2:]
        if not g:
            continue
        if g.endswith("/"):
            g = g.rstrip("/")
        if fnmatchcase(path, g) or fnmatchcase(path, g + "/*"):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# the board's commit, with the surface harvest (docs/lifecycle.md, "Every edge")


class Harvest(Record):
    """What the board's commit took, and what it dropped and said out loud."""

    commit: str = ""  # the board's commit ('' when nothing was committed)
    committed: list[str] = field(default_factory=list)
    discarded: list[str] = field(default_factory=list)  # tracked, outside the surface
    untracked_outside: list[str] = field(default_factory=list)  # named, saved, then removed
    saved_branch: str = ""  # stranded/… holding the whole tree before anything was dropped
    coder_commits: list[str] = field(default_factory=list)  # folded into the board's commit
    branch: str = ""  # the tree's branch, as its status named it ('' when detached)

    def summary(self) -> str:
        parts = [f"committed {len(self.committed)} file(s) as {self.commit[:10]}"]
        if self.coder_commits:
            parts.append(
                f"the coder's own {len(self.coder_commits)} commit(s) "
                f"({', '.join(c[:10] for c in self.coder_commits)}) were folded into it"
            )
        if self.discarded:
            parts.append(f"discarded outside the surface: {', '.join(self.discarded)}")
        if self.untracked_outside:
            parts.append(f"untracked outside the surface: {', '.join(self.untracked_outside)}")
        if self.saved_branch:
            parts.append(f"the whole tree was saved first to {self.saved_branch}")
        return "; ".join(parts)


def _is_scratch(board: BoardSection, path: str) -> bool:
    return any(path == s.strip("/") or path.startswith(s.strip("/") + "/") for s in board.scratch)


def tree_changes(board_cfg: BoardSection, tree: Path) -> list[tuple[str, str]]:
    """(XY, path) of every uncommitted change, scratch excluded (`tree_status`)."""
    return tree_status(board_cfg, tree).changes


class TreeStatus(Record):
    """A tree's HEAD, branch and uncommitted changes, read in one `git status`."""

    head: str | None = None  # None before the first commit
    branch: str = ""  # the branch checked out ('' when detached), without refs/heads/
    changes: list[tuple[str, str]] = field(default_factory=list)  # (XY, path), as v1 says

    def staged(self) -> bool:
        """Anything in the index that HEAD does not hold: a staged change, an unmerged
        path, an intent-to-add entry (an edit in the tree alone is `.M`/`.D`)."""
        return any(xy != "??" and (xy[0] != " " or xy[1] not in "MD") for xy, _ in self.changes)


def tree_status(board_cfg: BoardSection, tree: Path) -> TreeStatus:
    """The tree's HEAD, branch and every uncommitted change (XY as `--porcelain=v1` writes
    it, a space for unchanged; scratch excluded; no rename detection, so a rename is a
    deletion and an addition), from one `git status --porcelain=v2 --branch`: the drive
    asked for the HEAD apart, twice a card.

    Edits hidden behind `assume-unchanged` or `skip-worktree` count: the bits are cleared in
    the tree's index first (`snapshot.unhide`), or an edit behind one is never committed.
    """

    snapshot.unhide(tree)
    res = gitutil.git(
        tree,
        "status",
        "--porcelain=v2",
        "--branch",
        "-z",
        "--no-renames",
        "--untracked-files=all",
    )
    status = TreeStatus()
    entries = res.stdout.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        kind = entry[:2]
        if kind == "# ":
            key, _, value = entry[2:].partition(" ")
            if key == "branch.oid" and gitutil.is_commit_id(value):
                status.head = value
            elif key == "branch.head" and value != "(detached)":
                status.branch = value
            continue
        if kind == "? ":
            found = [("??", entry[2:])]
        elif kind == "1 ":  # 1 XY sub mH mI mW hH hI path
            parts = entry.split(" ", 8)
            found = [(parts[1], parts[8])]
        elif kind == "2 ":  # a rename (none with --no-renames): the origin path follows
            parts = entry.split(" ", 9)
            found = [(parts[1], parts[9]), (parts[1], entries[i] if i < len(entries) else "")]
            i += 1
        elif kind == "u ":  # u XY sub m1 m2 m3 mW h1 h2 h3 path
            parts = entry.split(" ", 10)
            found = [(parts[1], parts[10])]
        else:  # the empty tail, an ignored path (not asked for)
            continue
        for xy, path in found:
            xy = xy.replace(".", " ")
            if not path or _is_scratch(board_cfg, path):
                continue
            if xy == "??" and (tree / path).is_symlink() and "node_modules" in Path(path).parts:
                continue  # the board's own node_modules links are never work (docs/lifecycle.md)
            status.changes.append((xy, path))
    return status


def git_commit(tree: Path, message: str) -> str:
    """The board's own commit in a tree (no hooks, its identity); the new HEAD."""
    gitutil.git(
        tree,
        *gitutil.NO_HOOKS,
        "commit",
        "--no-verify",
        "-q",
        "-m",
        message,
        env=gitutil.identity_env(),
    )
    return gitutil.out(tree, "rev-parse", "HEAD")


def _add_paths(tree: Path, paths: list[str]) -> None:
    gitutil.git(
        tree,
        "--literal-pathspecs",
        "add",
        "-A",
        "--pathspec-from-file=-",
        "--pathspec-file-nul",
        input_bytes="\0".join(paths).encode("utf-8", "surrogateescape"),
    )


def harvest(cfg: Config, tree: str | Path, card: Card, start: str, message: str) -> Harvest:
    """The board's commit of what the coder left in `tree` (the harvest).

    A coder that committed by itself is handled: its commits since `start` are
    folded back (soft reset) so the surface rule applies to them too, and they are
    named. Raises StrandedWorkError — the tree untouched beyond that soft reset,
    which keeps every byte — when something outside the surface would be dropped
    and the tree could not be saved first.
    """

    tree = Path(tree)
    result = Harvest()
    status = tree_status(cfg.board, tree)
    head = status.head
    if start and head and head != start:
        result.coder_commits = gitutil.out(tree, "rev-list", "--reverse", f"{start}..HEAD").split()
        if result.coder_commits:
            gitutil.git(tree, "reset", "-q", "--soft", start)
            status = tree_status(cfg.board, tree)
    result.branch = status.branch
    changes = status.changes
    if not changes:
        return result
    if not card.surface:
        snapshot.stage_all(cfg.board, tree)
        names = gitutil.out(tree, "diff", "--cached", "--name-only", "-z").split("\0")
        result.committed = sorted(p for p in names if p)
        if result.committed:
            result.commit = git_commit(tree, message)
        return result
    inside = sorted({p for _, p in changes if in_surface(p, card.surface)})
    tracked_out = sorted({p for xy, p in changes if xy != "??" and not in_surface(p, card.surface)})
    untracked_out = sorted(
        {p for xy, p in changes if xy == "??" and not in_surface(p, card.surface)}
    )
    if tracked_out or untracked_out:
        saved = saves.preserve_worktree(cfg, tree)
        result.saved_branch = saved.branch if saved is not None else ""
    result.discarded = tracked_out
    result.untracked_outside = untracked_out
    if status.staged():  # unstage all: only the surface goes into the commit
        gitutil.git(tree, "reset", "-q")
    if inside:
        _add_paths(tree, inside)
        names = gitutil.out(tree, "diff", "--cached", "--name-only", "-z").split("\0")
        result.committed = sorted(p for p in names if p)
        if result.committed:
            result.commit = git_commit(tree, message)
    if tracked_out:
        gitutil.git(tree, "reset", "-q", "--hard", "HEAD")  # tracked changes outside: dropped
    for rel in untracked_out:  # they are on the saved branch; the tree must not re-save them
        try:
            (tree / rel).unlink()
        except OSError:
            pass
    return result

"""Worktree lifecycle: no tree holding work that exists nowhere else goes before it is saved.

Peers lost their users' work exactly here: a crash wiped uncommitted trees, a re-dispatch
force-removed the tree the next build reused, a cancel raced the save. So every removal in
board goes through one function, `discard_worktree`, which takes a per-path lock across
processes, saves whatever the tree holds to `stranded/<tree dir>/<UTC ms stamp>` (verified by
reading the branch back), and only then moves the tree out of its path. When the save fails the
tree stays exactly as it is and the caller gets a `StrandedWorkError` saying why.

The save never touches the tree, its index or its branch: the working state is staged into a
private copy of the index, committed with `commit-tree` (pinned identity, no hooks, no
signing) and put on a new ref created with an empty old value, so no branch is overwritten.

Nothing may still run in a tree while it is saved and removed: a coder left behind by a
`board run` that died keeps writing, and what it writes after the save is lost with the
tree. So every removal first kills what runs there (`stop_what_runs_in`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import re
import shutil
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from board.core import locks, proc
from board.core.config import Config
from board.core.errors import BoardError, GitError, Refused, StrandedWorkError
from board.core.git import runbranch
from board.core.git.gitutil import NO_HOOKS, git, identity_env, out

log = logging.getLogger("board.worktrees")

TREE_PREFIX = "feat-"
BRANCH_PREFIX = "feat/"
STRANDED = "stranded/"
STRANDED_REFS = "refs/heads/stranded/"
HUSK_DIR = ".stranded"  # husks moved aside, bytes intact, under the worktrees root
TRASH_DIR = ".trash"  # saved trees on their way out; anything left here was saved first
SAVE_TRAILER = "Board-Save"
KIND_SAVED = "saved"  # a tree's work saved before an edge removed it
KIND_ATTEMPT = "attempt"  # a drive's own failed attempt, saved before it climbed a rung
KINDS = (KIND_SAVED, KIND_ATTEMPT)
STATS_FILE = "stranded-stats.tsv"
LOCK_TIMEOUT_S = 600.0
MAX_NAME_TRIES = 100
NO_PARENT_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

# Test-only fault hooks: the fault test SIGKILLs the save at a named step, or pauses there to
# make two processes overlap. Unset in production, where they cost one dict lookup.
FAULT_KILL_ENV = "BOARD_TEST_KILL_AT"
FAULT_PAUSE_ENV = "BOARD_TEST_PAUSE_AT"

_CARD_RE = re.compile(r"^[a-z][a-z0-9]{0,9}-[0-9]+$")
_SLUG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$")


class CommentSink(Protocol):
    """What a save needs from the store: a way to leave a comment on the card."""

    def add_comment(self, card_id: str, text: str, who: str = "board") -> None: ...


def _fault(step: str) -> None:
    if os.environ.get(FAULT_KILL_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)
    pause = os.environ.get(FAULT_PAUSE_ENV, "")
    if pause.startswith(step + ":"):
        time.sleep(float(pause.split(":", 1)[1]))


# names ------------------------------------------------------------------------------------


def _check_name(card_id: str, slug: str) -> None:
    if not _CARD_RE.match(card_id):
        raise Refused(f"not a card id: {card_id!r} (expected <prefix>-<number>, e.g. c-12)")
    if slug and (not _SLUG_RE.match(slug) or ".." in slug or slug.endswith(".lock")):
        raise Refused(f"not a usable slug: {slug!r} (letters, digits, '.', '_' and '-')")


def tree_name(card_id: str, slug: str = "") -> str:
    """The directory name of a card's tree: `feat-<id>[-<slug>]`."""
    _check_name(card_id, slug)
    return f"{TREE_PREFIX}{card_id}-{slug}" if slug else f"{TREE_PREFIX}{card_id}"


def branch_for(card_id: str, slug: str = "") -> str:
    """The branch a card's tree is on: `feat/<id>[-<slug>]`."""
    _check_name(card_id, slug)
    return f"{BRANCH_PREFIX}{card_id}-{slug}" if slug else f"{BRANCH_PREFIX}{card_id}"


def card_id_of(tree_dir_name: str, prefix: str) -> str | None:
    """The card id in a tree's directory name, or None when it has none we can read.

    `feat-c-12` and `feat-c-12-fix-login` are c-12's; `feat-c-120` is c-120's, never c-12's;
    `feat-c-12.test1` (a test-rung tree) is nobody's, so no card sweep touches it.
    """
    m = re.fullmatch(rf"{TREE_PREFIX}({re.escape(prefix)}-[0-9]+)(?:-(.+))?", tree_dir_name)
    return m.group(1) if m else None


def _branch_of_tree_name(name: str) -> str | None:
    return BRANCH_PREFIX + name[len(TREE_PREFIX) :] if name.startswith(TREE_PREFIX) else None


def card_trees(cfg: Config, card_id: str) -> list[Path]:
    """A card's trees, found by directory name whatever created them (husks included)."""
    root = cfg.worktrees_dir
    if not root.is_dir():
        return []
    found = []
    for entry in sorted(root.iterdir()):
        if entry.name.startswith("."):
            continue
        if card_id_of(entry.name, cfg.prefix) == card_id:
            found.append(entry)
    return found


def utc_stamp() -> str:
    """UTC to the millisecond, e.g. 20250102T030405.678Z: sortable and a valid ref component."""
    now = datetime.now(UTC)
    return now.strftime("%Y%m%dT%H%M%S") + f".{now.microsecond // 1000:03d}Z"


# what a tree holds ---------------------------------------------------------------------------


@dataclass
class Stats:
    files: int = 0
    insertions: int = 0
    deletions: int = 0

    def text(self) -> str:
        plural = "s" if self.files != 1 else ""
        return f"{self.files} file{plural} changed, +{self.insertions} -{self.deletions}"


@dataclass
class Work:
    """What a tree holds that exists nowhere else; empty means it may go without a save."""

    tree: Path
    changes: list[str] = field(default_factory=list)  # "M path", "A path", "D path"
    commits: list[str] = field(default_factory=list)  # "<sha> <subject>", newest first
    nested: list[str] = field(default_factory=list)  # nested git repositories (never saved)
    head: str | None = None
    branch: str | None = None  # full ref of the tree's branch (HEAD's, or its name's when detached)
    branch_tip: str | None = None
    detached: bool = False
    snapshot: str | None = None  # tree object of HEAD plus the working state
    parents: list[str] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)  # what `git diff <base>...<save>` shows
    base_ref: str = ""  # short name of the base the stats and the diff command use
    existing: dict[str, tuple[str, str, str]] = field(default_factory=dict, repr=False)

    @property
    def empty(self) -> bool:
        return not (self.changes or self.commits or self.nested)

    def describe(self) -> str:
        """One line: what the tree holds, e.g. '2 uncommitted changes, 1 unpushed commit'."""
        parts = []
        if self.changes:
            n = len(self.changes)
            parts.append(f"{n} uncommitted change{'s' if n != 1 else ''}")
        if self.commits:
            n = len(self.commits)
            what = "commit on a detached HEAD" if self.detached else "unpushed commit"
            parts.append(f"{n} {what}{'s' if n != 1 else ''}")
        if self.nested:
            parts.append(f"nested git repository at {', '.join(self.nested)}")
        return ", ".join(parts) if parts else "nothing unpublished"


IGNORED_NAMED = 5  # how many ignored paths a save's comment names before "and N more"


@dataclass
class Dropped:
    """Ignored files a removal deletes: not work (build output, secrets), but said out loud.

    A save holds what `git add -A` holds, so ignored files stay out of it: `.env` on a branch
    that may be pushed would leak it. Removing the tree deletes them all the same, so the
    save's comment names them (how many, how big, the first paths).
    """

    files: int = 0
    bytes: int = 0
    paths: list[str] = field(default_factory=list)  # what git lists (a directory once, with /)

    def __bool__(self) -> bool:
        return bool(self.paths)

    def text(self) -> str:
        """`3 ignored files (1,234 bytes): .env, build/, dist/app.bin`."""
        named = ", ".join(self.paths[:IGNORED_NAMED])
        more = len(self.paths) - IGNORED_NAMED
        if more > 0:
            named += f" and {more} more"
        plural = "s" if self.files != 1 else ""
        return f"{self.files} ignored file{plural} ({self.bytes:,} bytes): {named}"

    def to_json(self) -> dict[str, Any]:
        return {"files": self.files, "bytes": self.bytes, "paths": self.paths}


@dataclass
class SaveResult:
    """A verified save: the branch exists, points at `commit`, and its tree was read back."""

    branch: str  # short name, stranded/<tree dir>/<stamp>[-N]
    commit: str
    tree_dir: str
    card: str | None
    stamp: str
    stats: Stats
    holds: str
    base_ref: str
    reused: bool = False  # an earlier save of exactly this state was found and verified
    kind: str = KIND_SAVED  # KIND_ATTEMPT: a drive's own failed attempt

    @property
    def ref(self) -> str:
        return "refs/heads/" + self.branch

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "branch": self.branch,
            "commit": self.commit,
            "tree": self.tree_dir,
            "card": self.card,
            "stamp": self.stamp,
            "files": self.stats.files,
            "insertions": self.stats.insertions,
            "deletions": self.stats.deletions,
            "holds": self.holds,
            "reused": self.reused,
        }


@dataclass
class RemoveResult:
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


# small git helpers -----------------------------------------------------------------------

_common_dirs: dict[Path, Path] = {}


def common_dir(cfg: Config) -> Path:
    """The repository's shared git dir (where refs and worktree admin entries live)."""
    cached = _common_dirs.get(cfg.root)
    if cached is None:
        cached = Path(out(cfg.root, "rev-parse", "--path-format=absolute", "--git-common-dir"))
        _common_dirs[cfg.root] = cached
    return cached


def _refs(cwd: Path, patterns: Sequence[str]) -> dict[str, tuple[str, str, str]]:
    """refname -> (commit, tree, parents) for refs matching `patterns`, in one call."""
    if not patterns:
        return {}
    fmt = "%(refname)%00%(objectname)%00%(tree)%00%(parent)"
    res = git(cwd, "for-each-ref", f"--format={fmt}", *patterns)
    found = {}
    for line in res.stdout.splitlines():
        parts = line.split("\0")
        if len(parts) == 4:
            found[parts[0]] = (parts[1], parts[2], parts[3])
    return found


def base_ref(cfg: Config) -> str:
    """The base by name: `<remote>/<base>` or `<base>` (see `runbranch.base_ref`)."""
    return runbranch.base_ref(cfg)


def _start_names(cfg: Config) -> list[str]:
    """The refs a save's stats and "inspect" command compare with, first found wins: the
    run branch in `fold` mode (trees start at its tip), then the base (see runbranch)."""
    names = [f"refs/heads/{cfg.run_branch}"] if runbranch.folds(cfg) else []
    if cfg.remote:
        names.append(f"refs/remotes/{cfg.remote}/{cfg.base}")
    return [*names, f"refs/heads/{cfg.base}"]


def _short(ref: str) -> str:
    for prefix in ("refs/heads/", "refs/remotes/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref


def _parse_raw_numstat(text: str) -> tuple[list[tuple[str, str, str]], Stats]:
    """Parse `diff-tree -z --raw --numstat`: [(status, new mode, path)] and the totals."""
    tokens = text.split("\0")
    raw: list[tuple[str, str, str]] = []
    stats = Stats()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith(":") and i + 1 < len(tokens):
            meta = tok[1:].split(" ")
            if len(meta) >= 5:
                raw.append((meta[4][:1], meta[1], tokens[i + 1]))
                i += 2
                continue
        if tok.count("\t") >= 2:
            added, deleted, _ = tok.split("\t", 2)
            stats.files += 1
            stats.insertions += int(added) if added.isdigit() else 0
            stats.deletions += int(deleted) if deleted.isdigit() else 0
        i += 1
    return raw, stats


def _numstat(cwd: Path, old: str, new: str) -> Stats:
    res = git(cwd, "diff-tree", "-r", "-z", "--numstat", "--no-renames", old, new)
    return _parse_raw_numstat(res.stdout)[1]


# staging -----------------------------------------------------------------------------------


_HIDDEN_RE = re.compile(r"(?:^|\0)([hsS]) ([^\0]+)")


def hidden_paths(tree: Path, env: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(assume-unchanged paths, skip-worktree paths whose file is present) in the index.

    `git ls-files -v` tags an assume-unchanged entry in lower case and a skip-worktree one
    `S`; one call, read with one regular expression.
    """
    text = git(tree, "ls-files", "-v", "-z", env=env).stdout
    assumed: list[str] = []
    skipped: list[str] = []
    for tag, path in _HIDDEN_RE.findall(text):
        if tag in "hs":
            assumed.append(path)
        if tag in "sS" and os.path.lexists(tree / path):
            skipped.append(path)
    return assumed, skipped


def unhide(tree: Path, env: dict[str, str] | None = None) -> list[str]:
    """Clear the index bits that hide edits from git; return the paths they were on.

    `assume-unchanged` and `skip-worktree` both tell git not to look at a file, so
    `git status` and `git add -A` miss an edit behind them: the tree was judged empty and
    removed, and a card reached `done` without the edit. The bits are cleared in the index
    `env` names (the save's private copy; the tree's own only for the board's commit, which
    owns it). A skip-worktree file that is absent is a sparse checkout's and keeps its bit:
    clearing it would stage a deletion nobody made.
    """
    assumed, skipped = hidden_paths(tree, env)
    for flag, paths in (("--no-assume-unchanged", assumed), ("--no-skip-worktree", skipped)):
        if paths:  # one flag per call: update-index applies only the last of two
            git(
                tree,
                "update-index",
                flag,
                "-z",
                "--stdin",
                env=env,
                input_bytes=("\0".join(paths) + "\0").encode("utf-8", "surrogateescape"),
            )
    return sorted(set(assumed) | set(skipped))


def _add_all(cfg: Config, tree: Path, env: dict[str, str] | None) -> None:
    """`git add -A` of the whole tree except the scratch directories.

    A scratch directory git already ignores (`board init` puts it in info/exclude) is left
    out of the pathspec: naming an ignored path, even to exclude it, makes `git add` fail.
    Edits hidden behind index bits are unhidden first (`unhide`): they are work.
    """
    unhide(tree, env)
    names = [n for n in (s.strip("/") for s in cfg.scratch) if n]
    ignored: set[str] = set()
    if names:  # one call for all of them
        res = git(tree, "check-ignore", "--", *names, env=env, check=False)
        ignored = {line.strip().rstrip("/") for line in res.stdout.splitlines()}
    excludes = [f":(exclude,literal){n}" for n in names if n not in ignored]
    git(
        tree,
        "-c",
        "advice.addEmbeddedRepo=false",
        "add",
        "-A",
        "--",
        ".",
        *excludes,
        env=env,
    )


def _is_board_link(tree: Path, status: str, mode: str, path: str) -> bool:
    """An untracked node_modules symlink: the board's own link, never work, never committed.

    `node_modules/` in .gitignore matches only a directory, so git happily stages the link.
    """
    return status == "A" and mode == "120000" and path.rsplit("/", 1)[-1] == "node_modules"


def _unstage(tree: Path, paths: list[str], env: dict[str, str] | None) -> None:
    git(
        tree,
        "update-index",
        "--force-remove",
        "-z",
        "--stdin",
        env=env,
        input_bytes=("\0".join(paths) + "\0").encode(),
    )


def stage_all(cfg: Config, tree: Path, env: dict[str, str] | None = None) -> list[str]:
    """Stage everything a commit of this tree should hold; return the links left out.

    Never the scratch directories, never an untracked (not in HEAD) `node_modules` symlink,
    even under a `node_modules/` ignore pattern. The drive's commit and the save both use it
    (the save with a private GIT_INDEX_FILE in `env`).
    """
    tree = Path(tree)
    _add_all(cfg, tree, env)
    head = git(tree, "rev-parse", "--verify", "-q", "HEAD", check=False).stdout.strip()
    res = git(
        tree,
        "diff-index",
        "--cached",
        "-z",
        "--no-renames",
        "--diff-filter=A",
        head or NO_PARENT_TREE,
        env=env,
    )
    raw, _ = _parse_raw_numstat(res.stdout)
    links = [p for s, m, p in raw if _is_board_link(tree, s, m, p)]
    if links:
        _unstage(tree, links, env)
    return links


def _tree_bytes(path: Path) -> tuple[int, int]:
    """(files, bytes) under `path`, links not followed (each link counts as itself)."""
    try:
        st = os.lstat(path)
    except OSError:
        return 0, 0
    if not stat.S_ISDIR(st.st_mode):
        return 1, st.st_size
    files = size = 0
    stack = [str(path)]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        else:
                            files += 1
                            size += entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue
        except OSError:
            continue
    return files, size


def ignored_files(cfg: Config, tree: Path) -> Dropped:
    """The ignored files in `tree` (scratch and the board's node_modules links left out).

    One `git ls-files --ignored --directory` (an ignored directory is listed once), then
    their sizes from the file system.
    """
    res = git(
        tree,
        "ls-files",
        "-z",
        "--others",
        "--ignored",
        "--exclude-standard",
        "--directory",
    )
    scratch = [n for n in (s.strip("/") for s in cfg.scratch) if n]
    dropped = Dropped()
    for path in res.stdout.split("\0"):
        bare = path.rstrip("/")
        if not bare or any(bare == n or bare.startswith(n + "/") for n in scratch):
            continue
        if bare.rsplit("/", 1)[-1] == "node_modules" and (tree / bare).is_symlink():
            continue  # the board's own link: its target is not in the tree
        files, size = _tree_bytes(tree / bare)
        dropped.paths.append(path)
        dropped.files += files
        dropped.bytes += size
    return dropped


# the snapshot ------------------------------------------------------------------------------


def _gitfile_dir(tree: Path) -> Path | None:
    """The admin dir a tree's `.git` file points at, or None."""
    try:
        text = (tree / ".git").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:") :].strip())
    return target if target.is_absolute() else (tree / target)


def _nested_repos(tree: Path, raw: list[tuple[str, str, str]]) -> list[str]:
    """Nested git repositories: saving them would keep a gitlink and lose their files."""
    nested = [p for s, m, p in raw if m == "160000" and (tree / p / ".git").exists()]
    modules = tree / ".gitmodules"
    if modules.is_file():
        res = git(
            tree,
            "config",
            "-f",
            ".gitmodules",
            "--get-regexp",
            r"^submodule\..*\.path$",
            check=False,
        )
        for line in res.stdout.splitlines():
            path = line.split(" ", 1)[-1].strip()
            if path and path not in nested and (tree / path / ".git").exists():
                nested.append(path)
    return nested


def _untracked_nested(tree: Path, env: dict[str, str]) -> list[str]:
    """After `git add` refused: untracked directories that are git repositories of their own."""
    res = git(tree, "status", "--porcelain=v1", "-z", "-uall", env=env, check=False)
    found = []
    for entry in res.stdout.split("\0"):
        if entry.startswith("?? ") and entry.endswith("/") and (tree / entry[3:] / ".git").exists():
            found.append(entry[3:].rstrip("/"))
    return found


def _merge_changes_nothing(cwd: Path, pub: tuple[str, str], tip: str) -> bool:
    """True when merging `tip` into the published commit would change nothing (content check)."""
    pub_commit, pub_tree = pub
    res = git(cwd, "merge-tree", "--write-tree", "--no-messages", pub_commit, tip, check=False)
    if res.returncode != 0:
        return False
    return res.stdout.split("\n", 1)[0].strip() == pub_tree


def _rev_list(
    cwd: Path, tips: Sequence[str], exclude: str | None, extra_not: Sequence[str] = ()
) -> list[str]:
    """Commits reachable from `tips` held by no ref but the excluded one: `<sha> <subject>`."""
    args = ["rev-list", "--no-commit-header", "--format=%H %s", *tips, "--not", *extra_not]
    if exclude:
        args.append(f"--exclude={exclude}")
    args.append("--glob=refs/*")
    return [line for line in git(cwd, *args).stdout.splitlines() if line.strip()]


def _snapshot(cfg: Config, tree: Path) -> Work:
    """Everything the save needs, computed without touching the tree, its index or branch."""
    work = Work(tree=tree)
    gitdir = _gitfile_dir(tree)
    if gitdir is None or not gitdir.is_dir():
        raise GitError(f"{tree} is not a git worktree (no admin entry)")
    res = git(tree, "rev-parse", "HEAD", "--symbolic-full-name", "HEAD", check=False)
    info = res.stdout.split() if res.returncode == 0 else []
    head = info[0] if info and re.fullmatch(r"[0-9a-f]{40,64}", info[0]) else None
    symbolic = info[1] if len(info) > 1 else ""
    if head is None:  # an unborn branch: no commit yet
        symbolic = git(tree, "symbolic-ref", "-q", "HEAD", check=False).stdout.strip()
    work.head = head
    if symbolic.startswith("refs/heads/"):
        work.branch = symbolic
    else:
        work.detached = head is not None
        name_branch = _branch_of_tree_name(tree.name)
        work.branch = f"refs/heads/{name_branch}" if name_branch else None
    short_branch = _short(work.branch) if work.branch else ""
    remote = cfg.remote
    pub_names = [
        *([f"refs/remotes/{remote}/{short_branch}"] if remote and short_branch else []),
        *([f"refs/remotes/{remote}/{cfg.base}", f"refs/remotes/{remote}/HEAD"] if remote else []),
        f"refs/heads/{cfg.base}",
        f"refs/heads/{cfg.run_branch}",
    ]
    patterns = [*pub_names, f"{STRANDED_REFS}{tree.name}/"]
    if work.branch:
        patterns.append(work.branch)
    refs = _refs(tree, patterns)
    work.existing = {r: v for r, v in refs.items() if r.startswith(f"{STRANDED_REFS}{tree.name}/")}
    tip = refs[work.branch][0] if work.branch and work.branch in refs else None
    work.branch_tip = tip
    base_name = next((n for n in _start_names(cfg) if n in refs), None)
    work.base_ref = _short(base_name) if base_name else cfg.base
    base_commit = refs[base_name][0] if base_name else None

    # commits: held by HEAD or the tree's branch and by no other ref, minus published content
    tips = [t for t in dict.fromkeys([head, tip]) if t]
    commits = _rev_list(tree, tips, work.branch) if tips else []
    unpublished_tips = list(tips)
    if commits:
        pubs = {(refs[n][0], refs[n][1]) for n in pub_names if n in refs and refs[n][1]}
        published = []
        for t in tips:
            held_alone = len(tips) == 1 or bool(_rev_list(tree, [t], work.branch)[:1])
            if held_alone and any(_merge_changes_nothing(tree, p, t) for p in pubs):
                published.append(t)
        if published:
            unpublished_tips = [t for t in tips if t not in published]
            commits = (
                _rev_list(tree, unpublished_tips, work.branch, extra_not=published)
                if unpublished_tips
                else []
            )
    work.commits = commits
    parents = [head] if head else []
    if work.detached and head and tip and tip != head and tip in unpublished_tips and commits:
        if _rev_list(tree, [tip], work.branch, extra_not=[head])[:1]:
            parents.append(tip)  # the branch tip a moved detached HEAD left behind
    work.parents = parents

    # the working state, staged into a private copy of the tree's index
    private = gitdir / f"board-save-{os.getpid()}-{threading.get_ident()}.index"
    env = {"GIT_INDEX_FILE": str(private)}
    try:
        with contextlib.suppress(FileNotFoundError):
            # copy2 keeps the index's mtime: git's racy-clean check compares it with each
            # file's, and a fresh mtime would hide a same-size edit made in the same second
            shutil.copy2(gitdir / "index", private)
        try:
            _add_all(cfg, tree, env)
        except GitError:
            nested = _untracked_nested(tree, env)
            if nested:
                work.nested = nested
                return work
            raise
        snap = out(tree, "write-tree", env=env)
        res = git(
            tree,
            "diff-tree",
            "-r",
            "-z",
            "--raw",
            "--numstat",
            "--no-renames",
            head or NO_PARENT_TREE,
            snap,
        )
        raw, stats = _parse_raw_numstat(res.stdout)
        links = [p for s, m, p in raw if _is_board_link(tree, s, m, p)]
        if links:
            _unstage(tree, links, env)
            snap = out(tree, "write-tree", env=env)
            raw = [r for r in raw if r[2] not in links]
            stats = _numstat(tree, head or NO_PARENT_TREE, snap)
        work.nested = _nested_repos(tree, raw)
        work.changes = [f"{s} {p}" for s, _, p in raw]
        work.snapshot = snap
    finally:
        for leftover in (private, Path(str(private) + ".lock")):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()

    # the diffstat `git diff <base>...<save>` will show, recorded in the save's message
    if not work.empty:
        if base_commit and parents and not (len(parents) == 1 and base_commit == parents[0]):
            mb = git(tree, "merge-base", base_commit, *parents, check=False).stdout.strip()
            work.stats = _numstat(tree, mb or NO_PARENT_TREE, work.snapshot)
        else:
            work.stats = stats
    return work


def unpublished_work(cfg: Config, tree: Path) -> Work:
    """What `tree` holds that exists nowhere else (uncommitted changes, unique commits).

    Counted: modified, staged, deleted and untracked files; commits that HEAD or the tree's
    branch hold and no other ref holds (a detached HEAD's included). Not counted: commits whose
    content is already published (merging them into <remote>/<branch>, <remote>/<base>,
    <remote>/HEAD, <base> or the run branch changes nothing: rebased and squash-merged work),
    the scratch directories, untracked node_modules symlinks. Reads only; changes nothing.
    """
    return _snapshot(cfg, Path(tree))


# the save ------------------------------------------------------------------------------------


def _message(
    tree_dir: str, card: str | None, holds: str, stats: Stats, why: str, kind: str = KIND_SAVED
) -> str:
    """The save commit's message; its `Board-Save:` trailer is what `stranded list` reads.

    `kind=attempt` marks a drive's own failed attempt. It lives in the trailer (and the
    stats file), not the branch name, so the name keeps its one format and a listing
    learns the kind from the same line that gives the diffstat, at no extra cost.
    """
    fields = (
        f"tree={tree_dir} card={card or '-'} files={stats.files} "
        f"insertions={stats.insertions} deletions={stats.deletions} kind={kind}"
    )
    because = f" before {why}" if why else ""
    what = "the failed attempt" if kind == KIND_ATTEMPT else "the work"
    return (
        f"stranded: {tree_dir} ({holds})\n\n"
        f"board saved {what} in {tree_dir}{because}: it existed nowhere else.\n\n"
        f"{SAVE_TRAILER}: {fields}\n"
    )


def stats_file(cfg: Config) -> Path:
    """Each save's stats, one line per save commit, so `stranded list` reads no objects."""
    return cfg.board_dir / STATS_FILE


def stats_line(
    commit: str, tree_dir: str, card: str | None, stats: Stats | None, kind: str = KIND_SAVED
) -> str:
    """One stats-file line: commit, tree, card, files, insertions, deletions, kind.

    Lines written before kinds existed have six fields; they are all `saved`.
    """
    if stats is None:  # known to carry no Board-Save trailer (a branch made by hand)
        return f"{commit}\t-\t-\t-\t-\t-\t{KIND_SAVED}\n"
    return (
        f"{commit}\t{tree_dir}\t{card or '-'}\t{stats.files}\t{stats.insertions}\t"
        f"{stats.deletions}\t{kind}\n"
    )


def record_stats(cfg: Config, lines: Sequence[str]) -> None:
    """Append to the stats file (O_APPEND, one write); a failure here never fails a save."""
    if not lines:
        return
    with contextlib.suppress(OSError):
        cfg.board_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(stats_file(cfg), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, "".join(lines).encode())
        finally:
            os.close(fd)


def parse_save_trailer(value: str) -> dict[str, str]:
    """The fields of a `Board-Save:` trailer value (`k=v k=v …`)."""
    fields = {}
    for item in value.replace(";", " ").split():
        if "=" in item:
            k, v = item.split("=", 1)
            fields[k] = v
    return fields


def _verify(cfg: Config, ref: str, commit: str, snapshot: str) -> None:
    """Read the new branch back: it must name our commit, whose tree is the snapshot."""
    res = git(cfg.root, "rev-parse", f"{ref}^{{commit}}", f"{ref}^{{tree}}", check=False)
    got = res.stdout.split() if res.returncode == 0 else []
    if got != [commit, snapshot]:
        raise GitError(
            f"read-back of {ref} found {' / '.join(got) or 'nothing'}, "
            f"expected commit {commit} with tree {snapshot}"
        )


def _kind_of(cfg: Config, commit: str) -> str:
    """The kind a save commit's trailer records (`saved` when it records none)."""
    fmt = f"%(trailers:key={SAVE_TRAILER},valueonly,separator=%x3B)"
    text = git(cfg.root, "log", "-1", f"--format={fmt}", commit, check=False).stdout
    kind = parse_save_trailer(text).get("kind", KIND_SAVED)
    return kind if kind in KINDS else KIND_SAVED


def _write_save(
    cfg: Config,
    tree_dir: str,
    card: str | None,
    snapshot: str,
    parents: list[str],
    stats: Stats,
    holds: str,
    base: str,
    existing: dict[str, tuple[str, str, str]],
    why: str,
    kind: str = KIND_SAVED,
) -> SaveResult:
    """Commit the snapshot and put it on a new stranded branch; verified, never overwriting."""
    # an earlier save of exactly this state (a save killed before its tree went): reuse it,
    # keeping the kind its commit records
    for ref, (commit, tree_oid, ps) in sorted(existing.items()):
        if tree_oid == snapshot and ps.split() == parents:
            _verify(cfg, ref, commit, snapshot)
            was = _kind_of(cfg, commit)
            record_stats(cfg, [stats_line(commit, tree_dir, card, stats, was)])
            return SaveResult(
                _short(ref),
                commit,
                tree_dir,
                card,
                ref.rsplit("/", 1)[-1],
                stats,
                holds,
                base,
                reused=True,
                kind=was,
            )
    parent_args = [a for p in parents for a in ("-p", p)]
    commit = out(
        cfg.root,
        *NO_HOOKS,
        "commit-tree",
        snapshot,
        *parent_args,
        "-F",
        "-",
        env=identity_env(),
        input_bytes=_message(tree_dir, card, holds, stats, why, kind).encode(),
    )
    _fault("after-commit-tree")
    stamp = utc_stamp()
    last = ""
    for n in range(1, MAX_NAME_TRIES + 1):
        name = f"{stamp}-{n}" if n > 1 else stamp
        ref = f"{STRANDED_REFS}{tree_dir}/{name}"
        res = git(
            cfg.root,
            *NO_HOOKS,
            "update-ref",
            "-m",
            f"board: save {tree_dir}",
            ref,
            commit,
            "",  # empty old value: create only, never overwrite
            env=identity_env(),
            check=False,
        )
        if res.returncode == 0:
            _fault("after-update-ref")
            _verify(cfg, ref, commit, snapshot)
            record_stats(cfg, [stats_line(commit, tree_dir, card, stats, kind)])
            return SaveResult(
                _short(ref), commit, tree_dir, card, name, stats, holds, base, kind=kind
            )
        last = (res.stderr.strip() or res.stdout.strip()).splitlines()[-1:] or ["failed"]
        last = last[0]
        if "reference already exists" not in last and "File exists" not in last:
            break
    raise GitError(f"could not create a stranded/{tree_dir}/… branch: {last}")


def preserve_worktree(
    cfg: Config, tree: Path, why: str = "", kind: str = KIND_SAVED
) -> SaveResult | None:
    """Save the tree's HEAD plus its working state to a new verified stranded/… branch.

    Returns None when the tree holds nothing unpublished. Raises StrandedWorkError, with the
    tree untouched, when the work cannot be saved (a nested git repository is refused whole).
    """
    return _preserve(cfg, Path(tree), why, kind)[0]


def _preserve(
    cfg: Config, tree: Path, why: str, kind: str = KIND_SAVED
) -> tuple[SaveResult | None, Work]:
    card = card_id_of(tree.name, cfg.prefix)
    try:
        work = _snapshot(cfg, tree)
    except (GitError, OSError) as exc:
        raise StrandedWorkError(
            str(tree), "unknown: it could not be read", _why(exc), cfg.base
        ) from exc
    _fault("after-snapshot")
    if work.nested:
        raise StrandedWorkError(
            str(tree),
            work.describe(),
            "it holds a nested git repository, which a save would keep only as a gitlink "
            "while its files were deleted, so the whole tree is refused",
            work.base_ref,
        )
    if work.empty:
        return None, work
    assert work.snapshot is not None
    try:
        saved = _write_save(
            cfg,
            tree.name,
            card,
            work.snapshot,
            work.parents,
            work.stats,
            work.describe(),
            work.base_ref,
            work.existing,
            why,
            kind,
        )
    except (GitError, OSError) as exc:
        raise StrandedWorkError(str(tree), work.describe(), _why(exc), work.base_ref) from exc
    return saved, work


def _why(exc: BaseException) -> str:
    text = exc.line() if isinstance(exc, BoardError) else f"{type(exc).__name__}: {exc}"
    return text.rstrip(".")


def _save_branch(
    cfg: Config, branch_ref: str, tree_dir: str, card: str | None, why: str
) -> SaveResult | None:
    """Save a branch's unique, unpublished commits (a husk's, or a leftover branch's)."""
    short = _short(branch_ref)
    remote = cfg.remote
    pub_names = [
        *(
            [
                f"refs/remotes/{remote}/{short}",
                f"refs/remotes/{remote}/{cfg.base}",
                f"refs/remotes/{remote}/HEAD",
            ]
            if remote
            else []
        ),
        f"refs/heads/{cfg.base}",
        f"refs/heads/{cfg.run_branch}",
    ]
    refs = _refs(cfg.root, [branch_ref, *pub_names, f"{STRANDED_REFS}{tree_dir}/"])
    if branch_ref not in refs:
        return None
    tip, tip_tree, _ = refs[branch_ref]
    commits = _rev_list(cfg.root, [tip], branch_ref)
    if not commits:
        return None
    pubs = {(refs[n][0], refs[n][1]) for n in pub_names if n in refs and refs[n][1]}
    if any(_merge_changes_nothing(cfg.root, p, tip) for p in pubs):
        return None
    base_name = next((n for n in _start_names(cfg) if n in refs), None)
    base = _short(base_name) if base_name else cfg.base
    mb = (
        git(cfg.root, "merge-base", refs[base_name][0], tip, check=False).stdout.strip()
        if base_name
        else ""
    )
    stats = _numstat(cfg.root, mb or NO_PARENT_TREE, tip_tree)
    n = len(commits)
    holds = f"{n} unpushed commit{'s' if n != 1 else ''} on {short}"
    existing = {r: v for r, v in refs.items() if r.startswith(f"{STRANDED_REFS}{tree_dir}/")}
    return _write_save(cfg, tree_dir, card, tip_tree, [tip], stats, holds, base, existing, why)


# removal -------------------------------------------------------------------------------------

_held = threading.local()


@contextlib.contextmanager
def tree_lock(cfg: Config, tree: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """One holder per tree path across processes and threads (re-entrant within a thread)."""
    absolute = os.path.abspath(tree)
    key = os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))
    held: set[str] = getattr(_held, "keys", None) or set()
    _held.keys = held
    if key in held:
        yield
        return
    lock_dir = cfg.board_dir / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    path = lock_dir / f"tree-{hashlib.sha1(key.encode()).hexdigest()[:20]}.lock"
    busy = f"{tree} is being saved or removed by another process (lock {path}); try again"
    with locks.file_lock(path, timeout, busy, holder=f"{os.getpid()} {key}"):
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)


def _admin_entries(cfg: Config) -> list[Path]:
    admin_root = common_dir(cfg) / "worktrees"
    return sorted(p for p in admin_root.iterdir() if p.is_dir()) if admin_root.is_dir() else []


def _admin_target(admin: Path) -> Path | None:
    """The tree path an admin entry says it belongs to (its `gitdir` file, minus `/.git`)."""
    try:
        text = (admin / "gitdir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return Path(text).parent if text else None


def _same(a: Path, b: Path) -> bool:
    return os.path.abspath(a) == os.path.abspath(b) or Path(a).resolve() == Path(b).resolve()


def _admin_for(cfg: Config, tree: Path) -> Path | None:
    pointed = _gitfile_dir(tree)
    if pointed is not None and (pointed / "gitdir").is_file():
        target = _admin_target(pointed)
        if target is not None and _same(target, tree):
            return pointed
    for admin in _admin_entries(cfg):
        target = _admin_target(admin)
        if target is not None and _same(target, tree):
            return admin
    return None


def _classify(cfg: Config, tree: Path) -> tuple[str, Path | None]:
    """'worktree', 'locked' (the operator's `git worktree lock`: never deleted) or 'husk'."""
    admin = _admin_for(cfg, tree)
    if admin is not None and (admin / "locked").exists():
        return "locked", admin
    if (
        admin is not None
        and not tree.is_symlink()
        and tree.is_dir()
        and (tree / ".git").is_file()
        and _gitfile_dir(tree) is not None
        and _same(_gitfile_dir(tree), admin)  # type: ignore[arg-type]
    ):
        return "worktree", admin
    return "husk", admin


def _make_writable(path: Path) -> None:
    """Give the owner write access throughout, so read-only files cannot stop a deletion."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        return
    if stat.S_ISDIR(st.st_mode):
        with contextlib.suppress(OSError):
            os.chmod(path, st.st_mode | stat.S_IRWXU)
        with contextlib.suppress(OSError):
            for entry in os.scandir(path):
                _make_writable(Path(entry.path))
    elif not st.st_mode & stat.S_IWUSR:
        with contextlib.suppress(OSError):
            os.chmod(path, st.st_mode | stat.S_IWUSR)


def _rmtree_force(path: Path) -> None:
    if not os.path.lexists(path):
        return
    if os.path.islink(path) or not os.path.isdir(path):
        os.unlink(path)
        return
    try:
        shutil.rmtree(path)
    except OSError:
        _make_writable(path)
        shutil.rmtree(path)


def _forget_admin(cfg: Config, admin: Path | None) -> None:
    """Drop a worktree admin entry (what `git worktree prune` does for a tree that is gone)."""
    if admin is None or (admin / "locked").exists():
        return
    if admin.parent != common_dir(cfg) / "worktrees":
        return
    with contextlib.suppress(FileNotFoundError):
        _rmtree_force(admin)


def cleanup(cfg: Config) -> None:
    """Finish removals a killed process left: saved trees in .trash, admin entries of gone trees."""
    trash = cfg.worktrees_dir / TRASH_DIR
    if trash.is_dir():
        for entry in trash.iterdir():
            with contextlib.suppress(OSError):
                _rmtree_force(entry)
    root = cfg.worktrees_dir
    for admin in _admin_entries(cfg):
        target = _admin_target(admin)
        if target is None or os.path.lexists(target) or (admin / "locked").exists():
            continue
        if str(os.path.abspath(target)).startswith(str(root) + os.sep):
            _forget_admin(cfg, admin)


def _rename(src: Path, dest: Path) -> None:
    """Rename a directory; a read-only one (which cannot update its `..`) is made writable."""
    try:
        os.rename(src, dest)
    except PermissionError:
        if src.is_symlink() or not src.is_dir():
            raise
        os.chmod(src, os.lstat(src).st_mode | stat.S_IRWXU)
        os.rename(src, dest)


def _move_out(cfg: Config, tree: Path, admin: Path | None) -> str:
    """Move a saved tree out of its path, then delete it; '' when it went, else why not."""
    trash = cfg.worktrees_dir / TRASH_DIR
    trash.mkdir(parents=True, exist_ok=True)
    dest = trash / f"{tree.name}-{utc_stamp()}-{os.getpid()}"
    _fault("before-remove")
    try:
        _rename(tree, dest)  # atomic: a kill leaves the tree whole at its path, or in .trash
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            return f"it could not be moved out of its path ({exc.strerror or exc})"
        # another filesystem (a tree outside the worktrees root): delete it in place; its
        # work is on a verified branch, so even a half-finished delete loses nothing
        _forget_admin(cfg, admin)
        try:
            _rmtree_force(tree)
        except OSError as rm_exc:
            return f"it could not be deleted ({rm_exc.strerror or rm_exc})"
        return ""
    _fault("during-remove")
    _forget_admin(cfg, admin)
    with contextlib.suppress(OSError):
        _rmtree_force(dest)
    return ""


def _checked_out(cfg: Config, branch_ref: str) -> bool:
    """Whether any worktree (the main one included) has `branch_ref` checked out."""
    heads = [common_dir(cfg) / "HEAD", *(a / "HEAD" for a in _admin_entries(cfg))]
    for head in heads:
        with contextlib.suppress(OSError):
            if head.read_text().strip() == f"ref: {branch_ref}":
                return True
    return False


def _delete_branch(cfg: Config, branch_ref: str | None, expected: str | None) -> None:
    """Delete the tree's own feat/… branch once its commits are saved or published (CAS)."""
    if not branch_ref or not expected or not branch_ref.startswith(f"refs/heads/{BRANCH_PREFIX}"):
        return
    if _checked_out(cfg, branch_ref):
        return
    git(cfg.root, *NO_HOOKS, "update-ref", "-d", branch_ref, expected, check=False)


def _move_husk(cfg: Config, tree: Path, admin: Path | None) -> Path:
    dest_dir = cfg.worktrees_dir / HUSK_DIR
    dest_dir.mkdir(parents=True, exist_ok=True)
    stamp = utc_stamp()
    for n in range(1, MAX_NAME_TRIES + 1):
        dest = dest_dir / (f"{tree.name}-{stamp}" + (f"-{n}" if n > 1 else ""))
        if os.path.lexists(dest):
            continue
        try:
            _rename(tree, dest)
        except OSError as exc:
            raise Refused(
                f"{tree} is a husk (no git admin entry) and could not be moved aside: {exc}"
            ) from exc
        _forget_admin(cfg, admin)
        return dest
    raise Refused(f"{tree} is a husk and no free name was left under {dest_dir}")


def _husk_branch(cfg: Config, tree: Path, admin: Path | None) -> str | None:
    if admin is not None:
        with contextlib.suppress(OSError):
            head = (admin / "HEAD").read_text().strip()
            if head.startswith("ref: refs/heads/"):
                return head[len("ref: ") :]
    name = _branch_of_tree_name(tree.name)
    return f"refs/heads/{name}" if name else None


def stop_what_runs_in(tree: Path) -> list[int]:
    """Kill every process a drive started in `tree` (and what they started); the pids of any
    that still run after `proc.MARK_KILL_S` (then the tree must not be saved or removed).

    Found by the `BOARD_WORKTREE=<tree>` the drive puts in the environment of every coder,
    formatter and gate it starts, which their children inherit. Why this and not the process
    group recorded in the store: the drive records that group after the child has started,
    through the store's write lock, and a `board run` killed while that lock was busy (another
    process writing) left an orphan coder nobody knew of, still writing while boot saved its
    tree (3 to 11 lines lost per crash in the report of issue 15). The environment is the
    child's from its first instruction, so there is no window in which it runs unmarked.
    Why not every process whose working directory is inside the tree: that would kill the
    operator's own shell, `cd`'d into a tree to look at it. A process that scrubs its
    environment and leaves the coder's group escapes both; none of ours does.
    """
    absolute = os.path.abspath(tree)
    marks = {proc.MARK_TREE: sorted({absolute, os.path.realpath(absolute)})}
    killed = proc.kill_marked(marks, proc.MARK_KILL_S)
    if killed:
        log.warning("killed process groups %s still running in %s before saving it", killed, tree)
    return [pid for pid, _ in proc.marked_processes(marks)]


def discard_worktree(
    cfg: Config,
    tree: Path,
    store: CommentSink | None = None,
    card_id: str | None = None,
    why: str = "",
    kind: str = KIND_SAVED,
) -> RemoveResult:
    """THE one save-then-remove: every edge that removes a tree calls this.

    Locked per tree path across processes, so two edges reaching one tree make one save and one
    removal. A tree the operator locked is kept. A husk is moved aside to .stranded/, bytes
    intact, after its branch's unique commits are saved. Otherwise the tree's work is saved to
    a verified branch and only then the tree leaves its path (read-only files included). When
    the save fails, StrandedWorkError is raised and the tree is exactly as it was. `kind`
    (`attempt` for a drive's own failed attempt) is recorded with the save.
    """
    if kind not in KINDS:
        raise Refused(f"not a kind of save: {kind!r} (one of {', '.join(KINDS)})")
    tree = Path(os.path.abspath(tree))
    card = card_id or card_id_of(tree.name, cfg.prefix)
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
                cfg.base,
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
                        cfg.base,
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
        result.saved, work = _preserve(cfg, tree, why, kind)
        try:
            ignored = ignored_files(cfg, tree)
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
            _delete_branch(cfg, work.branch, work.branch_tip)
        if result.saved is not None or not result.removed:
            _comment(store, result, cfg)
        return result


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


def _save_lines(save: SaveResult) -> list[str]:
    b = save.branch
    again = " (an earlier save of exactly this state, verified)" if save.reused else ""
    what = ", a failed attempt," if save.kind == KIND_ATTEMPT else ""
    return [
        f"Saved to {b}{what}{again}: {save.stats.text()} ({save.holds}).",
        f"  inspect:     git diff {save.base_ref}...{b}",
        f"  cherry-pick: board stranded pick {b}   (or: git cherry-pick {save.base_ref}..{b})",
        f"  delete:      board stranded discard {b}   (or: git branch -D {b})",
    ]


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
            lines.extend(_save_lines(s))
        name = result.husk_to.name
        lines.append(f"  delete the husk: board stranded discard {name}")
        return "\n".join(lines)
    if result.saved is not None:
        lines.append(f"{where} held work that existed nowhere else{because}.")
        lines.extend(_save_lines(result.saved))
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


def sweep_orphans(
    cfg: Config,
    lane_of: Callable[[str], str | None],
    live_trees: set[Path],
    store: CommentSink | None = None,
) -> list[RemoveResult]:
    """Save then remove trees whose card is done, cancelled or unknown; never a live one.

    `lane_of(card_id)` returns the card's lane, or None when the store does not know it. A name
    whose card id cannot be read (a test-rung tree, a hand-made dir) is kept and logged once.
    """
    root = cfg.worktrees_dir
    if not root.is_dir():
        return []
    live = {Path(os.path.abspath(p)).resolve() for p in live_trees}
    results = []
    for entry in sorted(root.iterdir()):
        if entry.name.startswith("."):
            continue
        if Path(os.path.abspath(entry)).resolve() in live:
            continue
        card = card_id_of(entry.name, cfg.prefix)
        if card is None:
            _log_once(
                f"unparsed:{entry}",
                "kept %s: no card id in its name; remove it by hand if it is not needed",
                entry,
            )
            continue
        lane = lane_of(card)
        if lane is not None and lane not in ("done", "cancelled"):
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
                str(path), f"branch {branch} holds unpushed commits", _why(exc), cfg.base
            ) from exc
        if saved is not None and store is not None:
            store.add_comment(
                card_id,
                "\n".join(
                    [f"Branch {branch} held commits that existed nowhere else (create_worktree)."]
                    + _save_lines(saved)
                ),
                "board",
            )
        cfg.worktrees_dir.mkdir(parents=True, exist_ok=True)
        git(cfg.root, "worktree", "add", "--no-track", "-B", branch, str(path), start)
    return path

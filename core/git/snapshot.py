"""What a tree holds that exists nowhere else, read without touching the tree.

Before anything removes a tree the board must know whether it may go: uncommitted changes
(edits hidden behind index bits included), commits no other ref holds, nested repositories.
That reading is the snapshot: the working state staged into a private copy of the tree's index
and written as a tree object, so the tree, its index and its branch stay as they are, and the
save (`saves`) commits exactly what was judged. The drive's own commit stages by the same rules
(`stage_all`): never the scratch directories, never the board's node_modules link.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from board.core.config import BoardSection, Config, PublishSection
from board.core.errors import GitError
from board.core.git import gitutil, runbranch
from board.core.git.gitutil import git, out
from board.core.git.naming import NO_PARENT_TREE, STRANDED_REFS, _branch_of_tree_name, _gitfile_dir
from board.core.records import Record, field

# what a tree holds ---------------------------------------------------------------------------


class Stats(Record):
    files: int = 0
    insertions: int = 0
    deletions: int = 0

    def text(self) -> str:
        plural = "s" if self.files != 1 else ""
        return f"{self.files} file{plural} changed, +{self.insertions} -{self.deletions}"


class Work(Record):
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
    start: str = ""  # the commit the tree's own work starts from (`own_start`); "" if a root
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


# small git helpers -----------------------------------------------------------------------


def _refs(cwd: Path, patterns: Sequence[str]) -> dict[str, tuple[str, str, str]]:
    """refname -> (commit, tree, parents) for refs matching `patterns`, in one call."""
    if not patterns:
        return {}
    fmt = "%(refname)%00%(objectname)%00%(tree)%00%(parent)"
    res = git(cwd, "for-each-ref", f"--format={fmt}", *patterns)
    found = {}
    for line in gitutil.lines(res.stdout):
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
    names = [f"refs/heads/{cfg.board.run_branch}"] if runbranch.folds(cfg.publish) else []
    if cfg.publish.remote:
        names.append(f"refs/remotes/{cfg.publish.remote}/{cfg.board.base}")
    return [*names, f"refs/heads/{cfg.board.base}"]


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
_HIDDEN_TAG = re.compile(r"\0[hsS] ")


def hidden_paths(tree: Path, env: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(assume-unchanged paths, skip-worktree paths whose file is present) in the index.

    `git ls-files -v` tags an assume-unchanged entry in lower case and a skip-worktree one
    `S`; one call, read with one regular expression. A path holds no NUL, so each tag starts
    the text or follows a NUL: with no NUL then `h`, `s` or `S` then a space anywhere, no entry
    is hidden. That search skips along at C speed; the full expression steps through the text
    a character at a time (19 ms for 20,000 entries, on every save's path), so it runs only
    when a tag is there.
    """
    text = git(tree, "ls-files", "-v", "-z", env=env).stdout
    if not _HIDDEN_TAG.search("\0" + text):
        return [], []
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


def _add_all(
    board: BoardSection, tree: Path, env: dict[str, str] | None, unhidden: bool = False
) -> None:
    """`git add -A` of the whole tree except the scratch directories.

    A scratch directory git already ignores (`board init` puts it in info/exclude) is left
    out of the pathspec: naming an ignored path, even to exclude it, makes `git add` fail.
    Edits hidden behind index bits are unhidden first (`unhide`): they are work. `unhidden`:
    the caller sees to that itself (the save, see `_snapshot`).
    """
    if not unhidden:
        unhide(tree, env)
    names = [n for n in (s.strip("/") for s in board.scratch) if n]
    # only a scratch path that is there can make `git add` fail; an absent one is excluded
    # as it is, and asks git nothing (the usual case: one process fewer per save)
    present = [n for n in names if os.path.lexists(tree / n)]
    ignored: set[str] = set()
    if present:  # one call for all of them
        res = git(tree, "check-ignore", "--", *present, env=env, check=False)
        ignored = {line.strip().rstrip("/") for line in res.stdout.splitlines()}
    excludes = [f":(exclude,literal){n}" for n in names if n not in ignored]
    # --sparse: in a sparse checkout add otherwise leaves every path outside the patterns
    # alone (an edited file put back there, a new file there: lost, or the add fails), and
    # git, reading the index, clears the skip-worktree bit of a file that is there, so no
    # listing shows it hidden. An absent skip-worktree file keeps its entry as it is.
    git(
        tree,
        "-c",
        "advice.addEmbeddedRepo=false",
        "add",
        "-A",
        "--sparse",
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


def stage_all(board_cfg: BoardSection, tree: Path, env: dict[str, str] | None = None) -> list[str]:
    """Stage everything a commit of this tree should hold; return the links left out.

    Never the scratch directories, never an untracked (not in HEAD) `node_modules` symlink,
    even under a `node_modules/` ignore pattern. The drive's commit and the save both use it
    (the save with a private GIT_INDEX_FILE in `env`).
    """
    tree = Path(tree)
    _add_all(board_cfg, tree, env)
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


# the snapshot ------------------------------------------------------------------------------


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
        for line in gitutil.lines(res.stdout):
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
    return [line for line in gitutil.lines(git(cwd, *args).stdout) if line.strip()]


def own_start(publish: PublishSection, cwd: Path, tips: Sequence[str], branch: str | None) -> str:
    """The commit a tree's (or a branch's) own work starts from: the first parent of the
    oldest commit that only `tips`, the tree's branch (and its copy on the remote) or saved
    work hold; the first tip itself when every commit is held elsewhere; "" when that work
    reaches a root commit.

    A save records it (`start=` in its trailer) and its diff, stats and recovery commands
    compare with it, so a tree made by hand from `origin/main` while the run branch lagged
    shows only its own change, not the base's commits as if the coder had written them.
    For a tree a drive started this is the drive's start point: the run branch's tip (or
    the base, or a dependency's branch) is held by a ref of its own.
    """
    if not tips:
        return ""
    short = _short(branch) if branch else ""
    mine = ["--exclude=refs/heads/stranded/*", "--exclude=refs/remotes/*/stranded/*"]
    if branch:
        mine.append(f"--exclude={branch}")
        if publish.remote and short:
            mine.append(f"--exclude=refs/remotes/{publish.remote}/{short}")
    res = git(
        cwd,
        "rev-list",
        "--topo-order",
        "--no-commit-header",
        "--format=%P",
        *tips,
        "--not",
        *mine,
        "--glob=refs/*",
    )
    rows = res.stdout.split("\n")[:-1]  # one a commit, children first; a root's is empty
    if not rows:
        return tips[0]
    oldest = rows[-1].split()
    return oldest[0] if oldest else ""


def _history(cfg: Config, tree: Path, work: Work) -> str | None:
    """HEAD, the tree's branch, the refs the save compares with, and the commits that HEAD
    or the branch hold and no other ref does, minus published content; into `work`.

    Returns the start point's commit (for the stats). Reads refs and commits only, never the
    index: `_snapshot` runs it alongside the staging.
    """
    res = git(tree, "rev-parse", "HEAD", "--symbolic-full-name", "HEAD", check=False)
    # one answer a line: a branch name may hold U+00A0, U+0085 or U+2028 (see gitutil.lines)
    info = gitutil.lines(res.stdout) if res.returncode == 0 else []
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
    remote = cfg.publish.remote
    pub_names = [
        *([f"refs/remotes/{remote}/{short_branch}"] if remote and short_branch else []),
        *(
            [f"refs/remotes/{remote}/{cfg.board.base}", f"refs/remotes/{remote}/HEAD"]
            if remote
            else []
        ),
        f"refs/heads/{cfg.board.base}",
        f"refs/heads/{cfg.board.run_branch}",
    ]
    patterns = [*pub_names, f"{STRANDED_REFS}{tree.name}/"]
    if work.branch:
        patterns.append(work.branch)
    refs = _refs(tree, patterns)
    work.existing = {r: v for r, v in refs.items() if r.startswith(f"{STRANDED_REFS}{tree.name}/")}
    tip = refs[work.branch][0] if work.branch and work.branch in refs else None
    work.branch_tip = tip
    base_name = next((n for n in _start_names(cfg) if n in refs), None)
    work.base_ref = _short(base_name) if base_name else cfg.board.base
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
    work.start = own_start(
        cfg.publish, tree, [t for t in dict.fromkeys([head, tip]) if t], work.branch
    )
    return base_commit


def _staged_diff(
    tree: Path, head: str | None, env: dict[str, str]
) -> tuple[list[tuple[str, str, str]], Stats]:
    """What the private index changes from HEAD, and its diffstat: parsed here, in the
    thread that waited for it, so the parse (3 ms for 1,000 files) overlaps `write-tree`."""
    res = git(
        tree,
        "diff-index",
        "--cached",
        "-z",
        "--raw",
        "--numstat",
        "--no-renames",
        head or NO_PARENT_TREE,
        env=env,
    )
    return _parse_raw_numstat(res.stdout)


def _snapshot(cfg: Config, tree: Path) -> Work:
    """Everything the save needs, computed without touching the tree, its index or branch.

    Two things run side by side, each in git processes of its own: the history (`_history`:
    refs and commits) and the staging of the working state into a private index; then the
    snapshot's tree is written while its diffstat is read. A save is mostly `git add -A` and
    `git write-tree`, and the rest costs little more than those two then (issue 27).
    """
    work = Work(tree=tree)
    gitdir = _gitfile_dir(tree)
    if gitdir is None or not gitdir.is_dir():
        raise GitError(f"{tree} is not a git worktree (no admin entry)")
    # the working state, staged into a private copy of the tree's index
    private = gitdir / f"board-save-{os.getpid()}-{threading.get_ident()}.index"
    env = {"GIT_INDEX_FILE": str(private)}
    # the copy as `git add` finds it, for the listing of hidden entries: add replaces the
    # private index by renaming a new file over it, so a second name keeps the first
    listed = Path(f"{private}.listed")
    with ThreadPoolExecutor(max_workers=3, thread_name_prefix="board-save") as pool:
        history = pool.submit(_history, cfg, tree, work)
        try:
            hidden = None
            with contextlib.suppress(FileNotFoundError):  # no index yet: nothing is hidden
                # copy2 keeps the index's mtime: git's racy-clean check compares it with each
                # file's, and a fresh mtime would hide a same-size edit made in the same second
                shutil.copy2(gitdir / "index", private)
                try:
                    os.link(private, listed)
                except OSError:  # a file system without hard links
                    shutil.copy2(private, listed)
                # hidden entries are rare, so they are listed while `git add` runs; only when
                # there are some are they unhidden and the tree added again (the first add
                # skipped them and stays right)
                hidden = pool.submit(hidden_paths, tree, {"GIT_INDEX_FILE": str(listed)})
            try:
                _add_all(cfg.board, tree, env, unhidden=True)
                if hidden is not None and any(hidden.result()):
                    _add_all(cfg.board, tree, env)
            except GitError:
                nested = _untracked_nested(tree, env)
                if nested:
                    history.result()
                    work.nested = nested
                    return work
                raise
            base_commit = history.result()
            head = work.head
            # the same diff as `diff-tree <head> <snapshot>`, read (and parsed) from the index
            # the snapshot is written from, while it is written
            staged = pool.submit(_staged_diff, tree, head, env)
            snap = out(tree, "write-tree", env=env)
            raw, stats = staged.result()
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
            for leftover in (private, Path(str(private) + ".lock"), listed):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()

    # the diffstat `git diff <start>...<save>` will show, recorded in the save's message
    parents = work.parents
    if not work.empty:
        if work.start:
            if parents != [work.start]:
                work.stats = _numstat(tree, work.start, work.snapshot)
            else:
                work.stats = stats
        elif base_commit and parents and not (len(parents) == 1 and base_commit == parents[0]):
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

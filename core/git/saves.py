"""The save: a tree's work on a new, verified `stranded/…` branch before the tree goes.

The save never touches the tree, its index or its branch: the working state is staged into a
private copy of the index, committed with `commit-tree` (pinned identity, no hooks, no
signing) and put on a new ref created with an empty old value, so no branch is overwritten.

The branch is read back before the save counts, and a save killed before its tree went is
found again and reused, not made twice. Each save's diffstat is written into the commit's
`Board-Save:` trailer (which travels with the branch) and into a stats file in the user's
cache directory (never `.board/`, which a clone may bring: core/cachedir.py), so `board
stranded list` reads no objects.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from board.core.config import Config
from board.core.errors import BoardError, GitError, StrandedWorkError
from board.core.git import naming, treefiles
from board.core.git.faults import _fault
from board.core.git.gitutil import NO_HOOKS, git, identity_env, is_commit_id, out
from board.core.git.naming import (
    KIND_ATTEMPT,
    KIND_CANDIDATE,
    KIND_SAVED,
    KINDS,
    MAX_NAME_TRIES,
    NO_PARENT_TREE,
    SAVE_TRAILER,
    STATS_FILE,
    STRANDED_REFS,
    card_id_of,
)
from board.core.git.snapshot import (
    Stats,
    Work,
    _merge_changes_nothing,
    _numstat,
    _refs,
    _rev_list,
    _short,
    _snapshot,
    _start_names,
    own_start,
)
from board.core.records import Record


class SaveResult(Record):
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
    start: str = ""  # the commit its tree started from (the trailer's `start=`); "" unknown

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
            "start": self.start or None,
        }


# the save ------------------------------------------------------------------------------------


def _message(
    tree_dir: str,
    card: str | None,
    holds: str,
    stats: Stats,
    why: str,
    kind: str = KIND_SAVED,
    start: str = "",
) -> str:
    """The save commit's message; its `Board-Save:` trailer is what `stranded list` reads.

    `kind=attempt` marks a drive's own failed attempt. It lives in the trailer (and the
    stats file), not the branch name, so the name keeps its one format and a listing
    learns the kind from the same line that gives the diffstat, at no extra cost.
    `start=` is the commit the tree's work started from (`snapshot.own_start`): the diff,
    the stats and the recovery commands compare with it.
    """
    fields = (
        f"tree={tree_dir} card={card or '-'} files={stats.files} "
        f"insertions={stats.insertions} deletions={stats.deletions} kind={kind}"
        + (f" start={start}" if start else "")
    )
    because = f" before {why}" if why else ""
    what = {KIND_ATTEMPT: "the failed attempt", KIND_CANDIDATE: "the candidate not chosen"}.get(
        kind, "the work"
    )
    return (
        f"stranded: {tree_dir} ({holds})\n\n"
        f"board saved {what} in {tree_dir}{because}: it existed nowhere else.\n\n"
        f"{SAVE_TRAILER}: {fields}\n"
    )


def stats_file(cfg: Config) -> Path | None:
    """Each save's stats, one line per save commit, so `stranded list` reads no objects: in
    the repository's folder of the user's cache directory, None when caching is off.

    Only a cache of the trailers: a commit it does not know is read from its trailer. So it
    is never kept in `.board/`, where a clone could bring lines naming other cards (and
    `stranded prune` deletes by card): docs/lifecycle.md, "Nothing is lost"."""
    folder = cfg.cache_folder
    return None if folder is None else Path(folder.path, STATS_FILE)


def stats_text(cfg: Config) -> str:
    """The stats file's text ('' when there is none, or it is not the user's own), its line
    ends read as `open` reads them (a CR or CR LF is a newline)."""
    folder = cfg.cache_folder
    blob = folder.read(STATS_FILE) if folder is not None else None
    if not blob:
        return ""
    text = blob.decode("utf-8", "replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def stats_line(
    commit: str,
    tree_dir: str,
    card: str | None,
    stats: Stats | None,
    kind: str = KIND_SAVED,
    branch: str = "",
) -> str:
    """One stats-file line: commit, tree, card, files, insertions, deletions, kind, branch.

    Lines written before kinds existed have six fields (all `saved`), lines written before
    the branch was recorded seven. The branch (its short name, stranded/<tree>/<stamp>) lets
    the listing make each row while git still reads the refs (stranded.py, `_read_stats`).
    """
    tail = f"\t{branch}" if branch else ""
    if stats is None:  # known to carry no Board-Save trailer (a branch made by hand)
        return f"{commit}\t-\t-\t-\t-\t-\t{naming.KIND_FOREIGN}{tail}\n"
    return (
        f"{commit}\t{tree_dir}\t{card or '-'}\t{stats.files}\t{stats.insertions}\t"
        f"{stats.deletions}\t{kind}{tail}\n"
    )


def record_stats(cfg: Config, lines: Sequence[str]) -> None:
    """Append to the stats file (O_APPEND, one write); a failure here never fails a save,
    and with caching off nothing is kept (the listing reads the trailers)."""
    folder = cfg.cache_folder
    if lines and folder is not None:
        folder.append(STATS_FILE, "".join(lines).encode())


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


# a commit's Board-Save trailer fields as `git log --format` gives them, `;`-separated
TRAILER_FORMAT = f"%(trailers:key={SAVE_TRAILER},valueonly,separator=%x3B)"


def trailer_of(cfg: Config, commit: str) -> dict[str, str] | None:
    """A commit's `Board-Save:` trailer fields; None when it has none (no save of ours)."""
    fmt = TRAILER_FORMAT
    res = git(cfg.root, "log", "-1", f"--format={fmt}", commit, "--", check=False)
    text = res.stdout.strip() if res.returncode == 0 else ""
    return parse_save_trailer(text) if text else None


def _kind_of(cfg: Config, commit: str) -> str:
    """The kind a save commit's trailer records (`saved` when it records none)."""
    kind = (trailer_of(cfg, commit) or {}).get("kind", KIND_SAVED)
    return kind if kind in KINDS else KIND_SAVED


def named_start(cfg: Config, commit: str, start: str, name: str) -> str:
    """What a save's recovery commands compare with, as the operator reads it: `name` (the
    run branch, the base) while `name...save` still means `start...save` (their merge base
    is the start), else the start commit itself."""
    if not start:
        return name
    res = git(cfg.root, "merge-base", name, commit, "--", check=False)
    return name if res.returncode == 0 and res.stdout.strip() == start else start


def start_of(cfg: Config, commit: str) -> str | None:
    """The commit a save's tree started from, as its trailer records it; None for a save
    made before saves recorded it (or a branch the board did not make): the caller then
    compares with where trees start today (`runbranch.start_ref`)."""
    start = (trailer_of(cfg, commit) or {}).get("start", "")
    return start if is_commit_id(start) else None


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
    start: str = "",
) -> SaveResult:
    """Commit the snapshot and put it on a new stranded branch; verified, never overwriting."""
    # an earlier save of exactly this state (a save killed before its tree went): reuse it,
    # keeping the kind its commit records
    for ref, (commit, tree_oid, ps) in sorted(existing.items()):
        if tree_oid == snapshot and ps.split() == parents:
            _verify(cfg, ref, commit, snapshot)
            was = _kind_of(cfg, commit)
            began = start_of(cfg, commit) or ""
            record_stats(cfg, [stats_line(commit, tree_dir, card, stats, was, _short(ref))])
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
                start=began,
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
        input_bytes=_message(tree_dir, card, holds, stats, why, kind, start).encode(),
    )
    _fault("after-commit-tree")
    stamp = naming.utc_stamp()
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
            record_stats(cfg, [stats_line(commit, tree_dir, card, stats, kind, _short(ref))])
            return SaveResult(
                _short(ref),
                commit,
                tree_dir,
                card,
                name,
                stats,
                holds,
                base,
                kind=kind,
                start=start,
            )
        last = ((res.stderr.strip() or res.stdout.strip()).splitlines()[-1:] or ["failed"])[0]
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
    card = card_id_of(tree.name, cfg.board.prefix)
    try:
        work = _snapshot(cfg, tree)
    except (GitError, OSError) as exc:
        raise StrandedWorkError(
            str(tree), "unknown: it could not be read", _why(exc), cfg.board.base
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
    treefiles.check_save(cfg, tree, work.snapshot)  # a copied secret never goes on a branch
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
            work.start,
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
    remote = cfg.publish.remote
    pub_names = [
        *(
            [
                f"refs/remotes/{remote}/{short}",
                f"refs/remotes/{remote}/{cfg.board.base}",
                f"refs/remotes/{remote}/HEAD",
            ]
            if remote
            else []
        ),
        f"refs/heads/{cfg.board.base}",
        f"refs/heads/{cfg.board.run_branch}",
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
    base = _short(base_name) if base_name else cfg.board.base
    start = own_start(cfg.publish, cfg.root, [tip], branch_ref)
    if start:
        mb = start
    elif base_name:
        mb = git(cfg.root, "merge-base", refs[base_name][0], tip, check=False).stdout.strip()
    else:
        mb = ""
    stats = _numstat(cfg.root, mb or NO_PARENT_TREE, tip_tree)
    n = len(commits)
    holds = f"{n} unpushed commit{'s' if n != 1 else ''} on {short}"
    existing = {r: v for r, v in refs.items() if r.startswith(f"{STRANDED_REFS}{tree_dir}/")}
    return _write_save(
        cfg, tree_dir, card, tip_tree, [tip], stats, holds, base, existing, why, start=start
    )


def recovery_commands(
    branch: str, start: str, target: str, tree: str = "", delete: bool = False
) -> list[tuple[str, str, str]]:
    """(label, command, the same by plain git) for bringing a saved branch's work home:
    the one writer of these commands, for the save's card comment and the TUI's `y`.

    `start` is what the diff compares with (where the tree started), `target` where a
    pick lands by default. The delete command is only listed when asked for: the TUI
    copies these to be pasted, and a paste must never delete anything.
    """
    q = shlex.quote
    b = q(branch)
    rows = [
        ("inspect", f"git diff {q(start)}...{b}", ""),
        (
            "cherry-pick",
            f"board stranded pick {b} --onto {q(target)}",
            f"git cherry-pick {q(start)}..{b}",
        ),
        ("by hand", f"git switch -c {q('rescue/' + (tree or 'stranded'))} {b}", ""),
    ]
    if delete:
        rows.append(("delete", f"board stranded discard {b}", f"git branch -D {b}"))
    return rows

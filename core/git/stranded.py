"""The operator's verbs over saved work: list, show, pick, discard and prune stranded branches.

A stranded branch is `stranded/<tree dir>/<UTC ms stamp>[-N]`, made by the save before a tree
went (see worktrees.py). Its diffstat is recorded in the save commit's `Board-Save:` trailer,
so listing thousands of them is one `git for-each-ref` call. `pick` works in a temporary
worktree and moves the target with a compare-and-swap, so the operator's checkout and index
are never touched and a conflict leaves the target exactly as it was.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from board.core import proc
from board.core.config import Config
from board.core.errors import BoardError, Conflict, NotFound, Refused
from board.core.git import naming, removal, runbranch, saves, snapshot
from board.core.git.gitutil import BOARD_IDENTITY, NO_HOOKS, git, out
from board.core.store import Store

_STAMP = r"\d{8}T\d{6}\.\d{3}Z"
_HUSK_RE = re.compile(rf"^(?P<tree>.+)-(?P<stamp>{_STAMP})(?:-\d+)?$")
_REF_RE = re.compile(rf"^stranded/(?P<tree>[^/]+)/(?P<stamp>{_STAMP})(?:-\d+)?$")


@dataclass(slots=True)
class StrandedBranch:
    """One saved tree's branch, as `board stranded list` shows it."""

    branch: str  # short name: stranded/<tree dir>/<stamp>[-N]
    card: str | None
    tree: str
    stamp: str
    commit: str
    files: int | None
    insertions: int | None
    deletions: int | None
    kind: str = naming.KIND_SAVED  # or KIND_ATTEMPT: a drive's own failed attempt

    @property
    def is_attempt(self) -> bool:
        return self.kind == naming.KIND_ATTEMPT

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "branch": self.branch,
            "card": self.card,
            "tree": self.tree,
            "stamp": self.stamp,
            "commit": self.commit,
            "files": self.files,
            "insertions": self.insertions,
            "deletions": self.deletions,
        }


@dataclass(frozen=True)
class Husk:
    """A tree directory whose git admin entry was gone, moved aside with its bytes intact."""

    name: str  # directory name under <worktrees>/.stranded/
    path: Path
    card: str | None
    tree: str
    stamp: str

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "husk",
            "branch": None,
            "husk": self.name,
            "path": str(self.path),
            "card": self.card,
            "tree": self.tree,
            "stamp": self.stamp,
            "commit": None,
            "files": None,
            "insertions": None,
            "deletions": None,
        }


@dataclass
class PickResult:
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


# list --------------------------------------------------------------------------------------


_CachedStats = tuple[str, str | None, int | None, int | None, int | None, str]
_SAVED = naming.KIND_SAVED
_NO_STATS: _CachedStats = ("", None, None, None, None, _SAVED)
_KINDS = frozenset(naming.KINDS)


def _parse_stats_line(line: str) -> _CachedStats | None:
    """One stats-file line as (tree, card, files, insertions, deletions, kind); None if
    malformed. A six-field line was written before kinds existed: `saved`."""
    f = line.split("\t")
    if len(f) == 7:
        kind = f[6] if f[6] in _KINDS else _SAVED
    elif len(f) == 6:
        kind = _SAVED
    else:
        return None
    if f[1] == "-" or not f[3].isdigit():
        return _NO_STATS
    return (f[1], None if f[2] == "-" else f[2], int(f[3]), int(f[4]), int(f[5]), kind)


def _read_stats(cfg: Config) -> dict[str, _CachedStats]:
    """commit -> (tree, card, files, insertions, deletions, kind) from the stats file."""
    try:
        text = saves.stats_file(cfg).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    # `_parse_stats_line` inlined: this loop runs once per save (2,000 lines), and the
    # listing must not get slower for the kind it now reads
    cache: dict[str, _CachedStats] = {}
    kinds, saved, no_stats = _KINDS, _SAVED, _NO_STATS
    for line in text.splitlines():
        f = line.split("\t")
        n = len(f)
        if n == 7:
            kind = f[6] if f[6] in kinds else saved
        elif n == 6:
            kind = saved
        else:
            continue
        if f[1] == "-" or not f[3].isdigit():
            cache[f[0]] = no_stats
        else:
            card = None if f[2] == "-" else f[2]
            cache[f[0]] = (f[1], card, int(f[3]), int(f[4]), int(f[5]), kind)
    return cache


def _lookup_stats(cfg: Config, commits: list[str]) -> dict[str, _CachedStats]:
    """The stats of just `commits`, found in the file's text (a screenful, not 2,000 lines).

    The last well-formed line of a commit wins, as in `_read_stats`.
    """
    try:
        text = saves.stats_file(cfg).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    found: dict[str, _CachedStats] = {}
    for commit in commits:
        key = commit + "\t"
        end = len(text)
        while (i := text.rfind(key, 0, end)) >= 0:
            if i == 0 or text[i - 1] in "\n\r":
                stop = text.find("\n", i)
                parsed = _parse_stats_line(text[i : len(text) if stop < 0 else stop].rstrip("\r"))
                if parsed is not None:
                    found[commit] = parsed
                    break
            end = i + len(key) - 1
    return found


def _stats_from_trailers(cfg: Config, commits: list[str]) -> dict[str, _CachedStats]:
    """Read the Board-Save trailers of commits the stats file does not know (one git call)."""
    fmt = f"%H%x00%(trailers:key={naming.SAVE_TRAILER},valueonly,separator=%x3B)"
    res = git(
        cfg.root,
        "log",
        "--no-walk=unsorted",
        "--stdin",
        f"--format={fmt}",
        input_bytes=("\n".join(commits) + "\n").encode(),
    )
    found: dict[str, _CachedStats] = {c: _NO_STATS for c in commits}
    lines = []
    for line in res.stdout.splitlines():
        commit, _, trailer = line.partition("\0")
        fields = saves.parse_save_trailer(trailer)
        if commit not in found:
            continue
        try:
            stats = snapshot.Stats(
                int(fields["files"]), int(fields["insertions"]), int(fields["deletions"])
            )
        except (KeyError, ValueError):
            lines.append(saves.stats_line(commit, "", None, None))
            continue
        card = fields.get("card")
        card = None if card in (None, "-") else card
        tree = fields.get("tree", "")
        kind = fields.get("kind", _SAVED)
        kind = kind if kind in naming.KINDS else _SAVED
        found[commit] = (tree, card, stats.files, stats.insertions, stats.deletions, kind)
        lines.append(saves.stats_line(commit, tree, card, stats, kind))
    saves.record_stats(cfg, lines)
    return found


def _compact_stats(cfg: Config, cache: dict[str, _CachedStats], live: set[str]) -> None:
    """Rewrite the stats file with only live commits (a lost line is re-read from trailers)."""
    lines = []
    for commit in sorted(live & cache.keys()):
        tree, card, files, ins, dels, kind = cache[commit]
        stats = None if files is None else snapshot.Stats(files, ins or 0, dels or 0)
        lines.append(saves.stats_line(commit, tree, card, stats, kind))
    path = saves.stats_file(cfg)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        tmp.write_text("".join(lines), encoding="utf-8")
        os.replace(tmp, path)


_RefRow = tuple[str, str, str, str]  # (stamp, branch, commit, tree)


@dataclass
class StrandedRefs:
    """The stranded refs as ONE `git for-each-ref` read them, newest first.

    `newest(n)` gives a screenful with its stats looked up for those commits only (the
    browser paints that first); `all()` gives every branch, as `list_stranded` does.
    """

    cfg: Config
    refs: list[_RefRow]

    def __len__(self) -> int:
        return len(self.refs)

    def newest(self, count: int) -> list[StrandedBranch]:
        head = self.refs[: max(0, count)]
        commits = [r[2] for r in head]
        cache = _lookup_stats(self.cfg, commits)
        missing = [c for c in commits if c not in cache]
        if missing:
            cache.update(_stats_from_trailers(self.cfg, sorted(set(missing))))
        return _branches(self.cfg, head, cache)

    def all(self) -> list[StrandedBranch]:
        cache = _read_stats(self.cfg)
        missing = [r[2] for r in self.refs if r[2] not in cache]
        if missing:
            cache.update(_stats_from_trailers(self.cfg, sorted(set(missing))))
        if len(cache) > 2 * len(self.refs) + 200:  # mostly discarded branches: keep it small
            _compact_stats(self.cfg, cache, {r[2] for r in self.refs})
        return _branches(self.cfg, self.refs, cache)


def read_refs(cfg: Config, newest: int | None = None) -> StrandedRefs:
    """Every ref under stranded/ (or only the `newest`), newest first, from ONE git call.

    The age order is the stamp, the last part of the name: git sorts by it and cuts the
    list, so a first screenful costs git's read of the refs but only a screenful's output.
    """
    limit = []
    if newest is not None:
        limit = ["--sort=-refname", "--sort=-refname:lstrip=-1", f"--count={max(1, newest)}"]
    fmt = "--format=%(objectname) %(refname)"
    text = git(cfg.root, "for-each-ref", *limit, fmt, naming.STRANDED_REFS).stdout
    refs: list[_RefRow] = []
    for line in text.splitlines():
        commit, _, refname = line.partition(" ")
        branch = refname[11:]  # len("refs/heads/")
        tree, _, stamp = branch[9:].rpartition("/")  # len("stranded/")
        if "/" in tree:
            tree = tree.split("/", 1)[0]
        refs.append((stamp, branch, commit, tree))
    refs.sort(reverse=True)  # (stamp, branch): the order `list_stranded` gives
    return StrandedRefs(cfg, refs)


def _branches(
    cfg: Config, refs: list[_RefRow], cache: dict[str, _CachedStats]
) -> list[StrandedBranch]:
    card_of = naming.card_id_of
    prefix = cfg.prefix
    found = []
    for stamp, branch, commit, tree in refs:
        cached = cache.get(commit, _NO_STATS)
        card = cached[1] if cached[1] is not None else card_of(tree, prefix)
        found.append(
            StrandedBranch(
                branch, card, tree, stamp, commit, cached[2], cached[3], cached[4], cached[5]
            )
        )
    return found


def list_stranded(cfg: Config) -> list[StrandedBranch]:
    """Every branch under stranded/, newest first, from ONE `git for-each-ref` call.

    The diffstat was recorded at save time, in the save commit's `Board-Save:` trailer and in
    the stats file beside the store; the listing reads that file, not 2,000 commit objects.
    A commit the file does not know (a save made elsewhere, a branch made by hand) has its
    trailer read once, by one more git call, and is added to the file.
    """
    return read_refs(cfg).all()


def husk_dir(cfg: Config) -> Path:
    return cfg.worktrees_dir / naming.HUSK_DIR


def list_husks(cfg: Config) -> list[Husk]:
    """Husks moved aside under <worktrees>/.stranded/, newest first."""
    root = husk_dir(cfg)
    if not root.is_dir():
        return []
    husks = []
    for entry in root.iterdir():
        m = _HUSK_RE.match(entry.name)
        tree = m.group("tree") if m else entry.name
        husks.append(
            Husk(
                name=entry.name,
                path=entry,
                card=naming.card_id_of(tree, cfg.prefix),
                tree=tree,
                stamp=m.group("stamp") if m else "",
            )
        )
    husks.sort(key=lambda h: (h.stamp, h.name), reverse=True)
    return husks


# show --------------------------------------------------------------------------------------


def _branch(cfg: Config, name: str) -> tuple[str, str]:
    """(short name, commit) of a stranded branch; refuse anything outside stranded/."""
    short = name.strip()
    if short.startswith("refs/heads/"):
        short = short[len("refs/heads/") :]
    if not short.startswith(naming.STRANDED) or ".." in short:
        raise Refused(f"{name!r} is not a stranded branch (they are named stranded/<tree>/<stamp>)")
    commit = git(
        cfg.root, "rev-parse", "--verify", "-q", f"refs/heads/{short}^{{commit}}", check=False
    )
    if commit.returncode != 0:
        raise NotFound(f"no stranded branch {short} (see `board stranded list`)")
    return short, commit.stdout.strip()


def show(cfg: Config, branch: str) -> str:
    """The saved work as a diff against the point its tree started from:
    `git diff --stat --patch <start>...<branch>` (`runbranch.start_ref`)."""
    short, _ = _branch(cfg, branch)
    base = runbranch.start_ref(cfg)
    return git(
        cfg.root,
        "diff",
        "--stat",
        "--patch",
        "--no-color",
        "--no-ext-diff",
        f"{base}...refs/heads/{short}",
    ).stdout


DIFF_TIMEOUT_S = 600.0
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}


# How the diff view's patch is written. Pinned (a/ b/ prefixes, the files' own bytes
# rather than a textconv rendering), so the start of it can also be known without git
# (`diff_preview`).
_DIFF_OPTS = (
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


def diff_args(cfg: Config, branch: str) -> list[str]:
    """The git arguments of a stranded branch's patch against its start (`show`'s range).

    Refuses, running nothing, what `show` refuses. The bench runs the same arguments bare.
    """
    short, _ = _branch(cfg, branch)
    base = runbranch.start_ref(cfg)
    return ["diff", "--patch", *_DIFF_OPTS, f"{base}...refs/heads/{short}"]


PREVIEW_MIN_BYTES = 1 << 20  # a smaller new file: git's own first bytes come soon enough
PREVIEW_BYTES = 256 << 10  # of the new file shown before git's diff arrives
PREVIEW_MAX_BYTES = 256 << 20  # bigger: git may call it binary (core.bigFileThreshold)
_BINARY_PROBE = 8000  # git looks for a NUL in this many first bytes (buffer_is_binary)
_PLAIN_PATH = re.compile(r"[ !#-\[\]-~]+")  # printable ASCII but `"` and `\\`: never quoted


def diff_preview(cfg: Config, branch: str, timeout: float = 60.0) -> bytes | None:
    """The first bytes the diff view's `git diff` will write, when its first file is a big
    new text file; None when they cannot be known this way.

    For a new file of a million lines git diffs all of it before writing its first byte
    (half a second here), yet that patch starts with a header and the file's first lines,
    each behind a `+`. `git diff --raw` names the files at once, `git cat-file` streams
    the blob, and the line count for the hunk header comes from counting its newlines. The
    viewer shows these bytes at once and checks git's own output against them as it
    arrives (see the TUI's DiffScreen): a preview that differs is replaced, never kept.
    """
    short, _ = _branch(cfg, branch)
    base = runbranch.start_ref(cfg)
    raw = proc.run(
        # the ids abbreviated as the patch's `index` line has them (the same git call)
        ("git", "diff", "--raw", "-z", f"{base}...refs/heads/{short}"),
        cfg.root,
        timeout=timeout,
        env=_GIT_ENV,
    )
    fields = raw.stdout.split("\0", 2)
    if raw.returncode != 0 or len(fields) < 2:
        return None
    meta, path = fields[0].split(), fields[1]
    if len(meta) != 5 or meta[4] != "A" or meta[1] not in ("100644", "100755"):
        return None  # only a new regular file: a change, rename or link needs git's diff
    if not _PLAIN_PATH.fullmatch(path):
        return None  # git would quote it
    attr = proc.run(
        ("git", "check-attr", "diff", "--", path), cfg.root, timeout=timeout, env=_GIT_ENV
    )
    if attr.returncode != 0 or attr.stdout.strip() != f"{path}: diff: unspecified":
        return None  # marked binary, or with a diff driver of its own
    head = bytearray()
    size = newlines = 0
    last = b""

    def take(chunk: bytes) -> None:
        nonlocal size, newlines, last
        size += len(chunk)
        newlines += chunk.count(b"\n")
        last = chunk[-1:] or last
        if len(head) < PREVIEW_BYTES:
            head.extend(chunk[: PREVIEW_BYTES - len(head)])

    blob = meta[3]
    res = proc.stream(
        ("git", "cat-file", "blob", blob),
        cfg.root,
        timeout,
        on_line=_ignore_line,
        env=_GIT_ENV,
        on_chunk=take,
    )
    if res.returncode != 0 or not PREVIEW_MIN_BYTES <= size <= PREVIEW_MAX_BYTES:
        return None
    if b"\0" in head[:_BINARY_PROBE]:
        return None  # git says "Binary files … differ"
    cut = head.rfind(b"\n")
    if cut < 0:
        return None  # no whole line in the preview
    lines = newlines + (last != b"\n")  # a last line without a newline is a line too
    tab = "\t" if " " in path else ""  # git ends a name holding a space with a tab there
    header = (
        f"diff --git a/{path} b/{path}\n"
        f"new file mode {meta[1]}\n"
        f"index {meta[2]}..{blob}\n"
        f"--- /dev/null\n"
        f"+++ b/{path}{tab}\n"
        f"@@ -0,0 +1{f',{lines}' if lines != 1 else ''} @@\n"
    ).encode()
    return header + b"+" + bytes(head[:cut]).replace(b"\n", b"\n+") + b"\n"


def stream_diff(
    cfg: Config,
    branch: str,
    on_chunk: Callable[[bytes], None],
    on_start: Callable[[int], None] | None = None,
    timeout: float = DIFF_TIMEOUT_S,
) -> proc.Result:
    """`show` for a diff too big to hold as one string: git's bytes passed on as they arrive.

    The TUI's diff view pages a million-line diff while it loads. `on_start` gets the
    process group id, so a viewer that is closed mid-load can kill git at once.
    """
    args = diff_args(cfg, branch)
    return proc.stream(
        ("git", *args),
        cfg.root,
        timeout,
        on_line=_ignore_line,
        env=_GIT_ENV,
        on_start=on_start,
        on_chunk=on_chunk,
    )


def _ignore_line(_line: str) -> None:
    """`stream_diff` takes raw chunks; no line callback is ever made."""


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


def titles_from(store: Any) -> Callable[[str], str | None]:
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


def _card_of_branch(cfg: Config, short: str) -> str | None:
    m = _REF_RE.match(short)
    return naming.card_id_of(m.group("tree"), cfg.prefix) if m else None


def _identity_env(cfg: Config) -> dict[str, str]:
    """The operator's committer identity if git has one, else the board's (author kept)."""
    if git(cfg.root, "var", "GIT_COMMITTER_IDENT", check=False).returncode == 0:
        return {}
    return {k: v for k, v in BOARD_IDENTITY.items() if k.startswith("GIT_COMMITTER")}


def own_commits(cfg: Config, tip: str, target: str) -> list[tuple[str, list[str], str]]:
    """The branch's own commits, oldest first: (commit, parents, tree), minus target and base."""
    base = snapshot.base_ref(cfg)
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
    )
    commits = []
    for line in res.stdout.splitlines():
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
    target_ref, old = _target(cfg, onto)
    card = _card_of_branch(cfg, short)
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
                result.conflicts = [p for p in unmerged.stdout.splitlines() if p]
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
        if moved.returncode != 0:
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


@dataclass(frozen=True)
class DiscardTarget:
    """A validated thing `discard` may delete: a stranded branch or a husk directory."""

    kind: str  # "branch" | "husk"
    name: str
    commit: str = ""
    path: Path | None = None

    def describe(self, cfg: Config) -> str:
        if self.kind == "branch":
            match = next((b for b in list_stranded(cfg) if b.branch == self.name), None)
            stat = (
                f", {match.files} files +{match.insertions} -{match.deletions}"
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
        return DiscardTarget("branch", short, commit=commit)
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


def discard(cfg: Config, name: str) -> DiscardTarget:
    """Delete a stranded branch (compare-and-swap on its commit) or a husk directory."""
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


@dataclass
class PrunePlan:
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
                f", {b.files} files +{b.insertions} -{b.deletions}" if b.files is not None else ""
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
        found = store.find(cid)
        if found is not None:
            lanes[cid] = found.lane
    chosen = []
    left = 0
    for b in every:
        if card is not None and b.card != card:
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
    return [b.branch for b in plan.branches]

"""Saved work, read: list, show and diff the stranded branches, and list the husks.

A stranded branch is `stranded/<tree dir>/<UTC ms stamp>[-N]`, made by the save before a tree
went (see saves.py). Its diffstat is recorded in the save commit's `Board-Save:` trailer,
so listing thousands of them is one `git for-each-ref` call. A diff too big to hold streams as
git writes it, and the first bytes of a big new file's patch are known before git writes them
(`diff_preview`). The verbs that change saved work (pick, discard, prune) are in `pick`.
"""

from __future__ import annotations

import contextlib
import operator
import os
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import repeat
from operator import is_
from pathlib import Path
from typing import Any, cast

from board.core import proc
from board.core.config import BoardSection, Config
from board.core.errors import NotFound, Refused
from board.core.git import gitutil, naming, runbranch, saves
from board.core.git.gitutil import git
from board.core.git.savestats import (
    _NO_STATS,
    StrandedBranch,
    _CachedStats,
    _compact_stats,
    _lookup_stats,
    _read_stats,
    _stats_from_trailers,
    _StatsFile,
    _where,
)
from board.core.records import Frozen, Record

_STAMP = r"\d{8}T\d{6}\.\d{3}Z"
_HUSK_RE = re.compile(rf"^(?P<tree>.+)-(?P<stamp>{_STAMP})(?:-\d+)?$")


class Husk(Frozen):
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


# list --------------------------------------------------------------------------------------


class StrandedRefs(Record):
    """The stranded refs as ONE `git for-each-ref` read them, newest first.

    `newest(n)` gives a screenful with its stats looked up for those commits only (the
    browser paints that first); `all()` gives every branch, as `list_stranded` does.
    `words` is git's output split: stamp, short name, commit, for each ref in turn.
    """

    cfg: Config
    words: list[str]
    stats: _StatsFile | None = None  # the stats file, when read with the refs

    def __len__(self) -> int:
        return len(self.words) // 3

    def newest(self, count: int) -> list[StrandedBranch]:
        head = self.words[: 3 * max(0, count)]
        commits = head[2::3]
        cache = _lookup_stats(self.cfg, commits)
        missing = [c for c in commits if c not in cache]
        if missing:
            named = dict(zip(head[2::3], head[1::3], strict=True))
            cache.update(_stats_from_trailers(self.cfg, sorted(set(missing)), named))
        return _branches(self.cfg.board, head, cache)

    def all(self) -> list[StrandedBranch]:
        read = self.stats if self.stats is not None else _read_stats(self.cfg)
        names, commits = self.words[1::3], self.words[2::3]
        # every row made already, from lines naming the branch git names: a lookup each
        found = list(map(read.ready.get, commits))
        if None not in found:
            rows = cast(list[StrandedBranch], found)
            if list(map(_BRANCH_OF, rows)) == names:
                if read.whole and read.lines > 2 * len(commits) + 200:  # mostly discarded
                    named = dict(zip(commits, names, strict=True))
                    _compact_stats(self.cfg, read.cache, named)
                return rows
        cache, ready, named = read.cache, read.ready, dict(zip(commits, names, strict=True))
        # lines from before the branch was recorded: write the file again, naming it
        unnamed = any(c in cache and c not in ready for c in named)
        if not all(map(cache.__contains__, commits)):  # in C: a commit the file does not know
            missing = [c for c in commits if c not in cache]
            trailers = _stats_from_trailers(
                self.cfg, sorted(set(missing)), named, record=read.whole
            )
            cache.update(trailers)
        # Never while a save's line is being written (the text ends inside it): a line
        # read cut short (a cut kind or number reads as six or seven fields) would be
        # written back as if whole, and the save's own line would land in the old file.
        if read.whole and (unnamed or len(cache) > 2 * len(commits) + 200):
            _compact_stats(self.cfg, cache, named)
        return _branches(self.cfg.board, self.words, cache)


_BRANCH_OF = operator.itemgetter(0)  # a StrandedBranch's `branch`


# What `read_refs` asks git for, space-separated (a ref name holds no space), newest first:
# the stamp (the name's last part), the short name and the commit. git sorts, by stamp then
# name, both descending (the order `list_stranded` gives); Python splits the text once.
_REF_ARGS = (
    "--sort=-refname",
    "--sort=-refname:lstrip=-1",
    "--format=%(refname:lstrip=-1) %(refname:lstrip=2) %(objectname)",
)


def read_refs(cfg: Config, newest: int | None = None, *, stats: bool = False) -> StrandedRefs:
    """Every ref under stranded/ (or only the `newest`), newest first, from ONE git call.

    The age order is the stamp, the last part of the name: git sorts by it and cuts the
    list, so a first screenful costs git's read of the refs but only a screenful's output.
    With `stats` (for `all()`), the stats file is read in a thread started before git:
    git takes most of a listing's time starting up and reading the refs, and the file is
    read meanwhile, from git's start on.
    """
    limit = [] if newest is None else [f"--count={max(1, newest)}"]
    # Started before git, not once git has started in this thread: then git's start (the
    # fork and exec this thread waits on) and the reading of its output followed the file
    # instead of overlapping it. With packed refs git answers in about 4 ms, and the
    # listing took 1.2-1.7x that; read beside it, 1.0x (bench_stranded_list). A plain
    # thread: a one-worker ThreadPoolExecutor's hand-off and shutdown cost 1.1-1.3x.
    reading = _beside(_read_stats, cfg) if stats else None
    listing = git(cfg.root, "for-each-ref", *_REF_ARGS, *limit, naming.STRANDED_REFS).stdout
    read = reading.result() if reading is not None else None  # raises what it raised
    # git's own separators only: a ref name may hold a Unicode space (split() cuts at
    # U+00A0, U+0085, U+2028…), never an ASCII space or a newline
    words = listing.rstrip("\n").replace("\n", " ").split(" ") if listing.strip() else []
    return StrandedRefs(cfg, words, read)


def _beside(fn: Callable[[Config], _StatsFile], cfg: Config) -> Future[_StatsFile]:
    """`fn(cfg)` in a daemon thread started now; its future holds the result or error."""
    future: Future[_StatsFile] = Future()

    def run() -> None:
        try:
            future.set_result(fn(cfg))
        except BaseException as exc:  # raised where the listing asks for the result
            future.set_exception(exc)

    threading.Thread(target=run, name="stranded-stats", daemon=True).start()
    return future


def _branches(
    board: BoardSection, words: list[str], cache: dict[str, _CachedStats]
) -> list[StrandedBranch]:
    """The branches of `words` (stamp, short name, commit, …) with their cached stats.

    This runs once per saved branch (2,000) and `board stranded list` must cost little more
    than git's own listing, so it goes column by column (`map` and `zip`: a C loop each)
    rather than branch by branch, and makes each branch in one C call (`tuple.__new__`);
    only a branch whose stats name no card has its card read from its tree's name, one by
    one.
    """
    stamps, names, commits = words[0::3], words[1::3], words[2::3]
    if not commits:
        return []
    stats = map(cache.get, commits, repeat(_NO_STATS))
    _, found, files, ins, dels, kinds = zip(*stats, strict=True)
    cards: Sequence[str | None] = found
    # stranded/<tree dir>/<stamp>; stranded/<stamp> (made by hand) has no tree dir
    trees = [name[9:cut] if (cut := name.find("/", 9)) >= 0 else "" for name in names]
    if None in found:
        card_of, prefix, mended = naming.card_id_of, board.prefix, list(found)
        for i in _where(map(is_, mended, repeat(None))):
            mended[i] = card_of(trees[i], prefix)
        cards = mended
    rows = zip(names, cards, trees, stamps, commits, files, ins, dels, kinds, strict=True)
    return list(map(tuple.__new__, repeat(StrandedBranch), rows))


def list_stranded(cfg: Config) -> list[StrandedBranch]:
    """Every branch under stranded/, newest first, from ONE `git for-each-ref` call.

    The diffstat was recorded at save time, in the save commit's `Board-Save:` trailer and in
    the stats file in the user's cache; the listing reads that file (while git runs), not
    2,000 commit objects. A commit the file does not know (a save made elsewhere, a branch made by
    hand) has its trailer read once, by one more git call, and is added to the file.
    """
    return read_refs(cfg, stats=True).all()


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
                card=naming.card_id_of(tree, cfg.board.prefix),
                tree=tree,
                stamp=m.group("stamp") if m else "",
            )
        )
    husks.sort(key=lambda h: (h.stamp, h.name), reverse=True)
    return husks


def _stat_key(path: Path | None) -> tuple[int, int]:
    if path is None:
        return (0, -1)
    try:
        st = os.stat(path)
    except OSError:
        return (0, -1)
    return (st.st_mtime_ns, st.st_size)


def refs_signature(cfg: Config) -> tuple[object, ...]:
    """A cheap fingerprint of the saved work: equal while no save was made or dropped.

    The browser asks every second whether to read the list again; reading it is one git call
    and a store read, this is a few stat calls (and one `os.scandir` of the stranded refs'
    top directory), taken in a worker. A save writes a loose ref under
    refs/heads/stranded/<tree>/ and a stats line; a discard deletes a loose ref or rewrites
    packed-refs (or the reftable's table list); a husk moved aside changes the husk
    directory. Any of those changes the fingerprint.
    """
    common = naming.common_dir(cfg)
    parts: list[object] = [_stat_key(saves.stats_file(cfg)), _stat_key(husk_dir(cfg))]
    parts += [_stat_key(common / "packed-refs"), _stat_key(common / "reftable" / "tables.list")]
    top = common / "refs" / "heads" / "stranded"
    parts.append(_stat_key(top))
    try:
        with os.scandir(top) as entries:
            parts += sorted((e.name, e.stat().st_mtime_ns) for e in entries)
    except OSError:
        pass
    return tuple(parts)


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


def start_of(cfg: Config, commit: str) -> str:
    """What a save's diff compares with: the commit its tree started from, as its trailer
    records it (`saves.start_of`), else where trees start today (`runbranch.start_ref`)."""
    return saves.start_of(cfg, commit) or runbranch.start_ref(cfg)


def show(cfg: Config, branch: str) -> str:
    """The saved work as a diff against the point its tree started from:
    `git diff --stat --patch <start>...<branch>` (`start_of`)."""
    short, commit = _branch(cfg, branch)
    base = start_of(cfg, commit)
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
# Once its first bytes are out, the viewer's `git diff` runs at a lower CPU priority (ours +
# DIFF_NICE): on a busy machine the operator's keys come first while the rest streams in, as
# fast as the CPU left over allows. Only ever lowered, so no privilege is needed.
DIFF_NICE = 10
_GIT_ENV = gitutil.READ_ENV  # reads only: no prompt, no optional locks


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
    short, commit = _branch(cfg, branch)
    base = start_of(cfg, commit)
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
    the blob, and the line count for the hunk header comes from the save's own stats when
    the save is that one new file (its `Board-Save` trailer counts its lines: only the
    blob's first bytes are read), else from counting the blob's newlines (all of it is
    read). The viewer shows these bytes at once and checks git's own output against them as
    it arrives (see the TUI's DiffScreen): a preview that differs is replaced, never kept.
    """
    with ThreadPoolExecutor(max_workers=3, thread_name_prefix="board-preview") as pool:
        return _preview(cfg, branch, timeout, pool)


def _preview(cfg: Config, branch: str, timeout: float, pool: ThreadPoolExecutor) -> bytes | None:
    """`diff_preview`, its independent git calls run side by side in `pool`: the first
    screenful waits for the slowest of them, not for their sum."""
    short, commit = _branch(cfg, branch)
    start = pool.submit(start_of, cfg, commit)
    counted_f = pool.submit(_saved_new_file_lines, cfg, commit, short)
    base = start.result()
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
    blob = meta[3]
    sized = pool.submit(_blob_size, cfg, blob, timeout)
    first = pool.submit(_blob_head, cfg, blob, timeout)
    attr = proc.run(
        ("git", "check-attr", "diff", "--", path), cfg.root, timeout=timeout, env=_GIT_ENV
    )
    if attr.returncode != 0 or attr.stdout.strip() != f"{path}: diff: unspecified":
        return None  # marked binary, or with a diff driver of its own
    counted = counted_f.result()
    if counted is None:  # the blob is read to its end to count its lines
        got = _read_blob(cfg, blob, timeout)
        if got is None:
            return None
        head, size, lines = got
    else:
        blob_size, head, lines = sized.result(), first.result(), counted
        if blob_size is None or len(head) < min(blob_size, PREVIEW_BYTES):
            return None  # git ended before the first bytes were read
        size = blob_size
    if not PREVIEW_MIN_BYTES <= size <= PREVIEW_MAX_BYTES:
        return None
    if b"\0" in head[:_BINARY_PROBE]:
        return None  # git says "Binary files … differ"
    cut = head.rfind(b"\n")
    if cut < 0:
        return None  # no whole line in the preview
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


def _saved_new_file_lines(cfg: Config, commit: str, branch: str) -> int | None:
    """The line count of the one new file a save holds, from its stats (the stats file, or
    the commit's `Board-Save` trailer); None when the save is not exactly one new file.

    The stats are `git diff --numstat` of the save against where its tree started, the same
    range the diff view shows: one file, no deletions, N insertions is one new file of N
    lines. (Were it ever wrong, git's own bytes replace the preview.)
    """
    stats = _lookup_stats(cfg, [commit]) or _stats_from_trailers(cfg, [commit], {commit: branch})
    _, _, files, insertions, deletions, _ = stats.get(commit, _NO_STATS)
    if files == 1 and deletions == 0 and insertions:
        return insertions
    return None


def _read_blob(cfg: Config, blob: str, timeout: float) -> tuple[bytes, int, int] | None:
    """(first PREVIEW_BYTES, size, lines) of a blob, reading all of it to count its lines."""
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

    res = gitutil.stream_bytes(cfg.root, ("cat-file", "blob", blob), take, timeout)
    if res.returncode != 0:
        return None
    return bytes(head), size, newlines + (last != b"\n")  # a last line without \n counts


def _blob_size(cfg: Config, blob: str, timeout: float) -> int | None:
    sized = proc.run(("git", "cat-file", "-s", blob), cfg.root, timeout=timeout, env=_GIT_ENV)
    text = sized.stdout.strip()
    return int(text) if sized.returncode == 0 and text.isdecimal() else None


def _blob_head(cfg: Config, blob: str, timeout: float) -> bytes:
    """A blob's first PREVIEW_BYTES: git is stopped once they are read, so a 70 MB blob
    costs its first 256 KB, not all of it."""
    head = bytearray()
    group: list[int] = []

    def take(chunk: bytes) -> None:
        if len(head) < PREVIEW_BYTES:
            head.extend(chunk[: PREVIEW_BYTES - len(head)])
            if len(head) >= PREVIEW_BYTES and group:
                proc.kill_group(group[0])  # enough: git need not inflate the rest

    gitutil.stream_bytes(cfg.root, ("cat-file", "blob", blob), take, timeout, group.append)
    return bytes(head)


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

    group: list[int] = []

    def started(pid: int) -> None:
        group.append(pid)
        if on_start is not None:
            on_start(pid)

    def chunk(data: bytes) -> None:
        if len(group) == 1:  # git's first bytes (the first screenful) came at full speed
            group.append(0)
            with contextlib.suppress(OSError):  # where the OS will not, git runs as it is
                lower = min(19, os.getpriority(os.PRIO_PROCESS, 0) + DIFF_NICE)
                os.setpriority(os.PRIO_PROCESS, group[0], lower)
        on_chunk(data)

    return gitutil.stream_bytes(cfg.root, diff_args(cfg, branch), chunk, timeout, started)

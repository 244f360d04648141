"""The stats file: each save's diffstat, kept in the user's cache, read into listing rows.

A save records its diffstat in its commit's `Board-Save:` trailer and, as one line, in
`stranded-stats.tsv` in the repository's folder of the user's cache directory (saves.py;
never `.board/`, which a clone may bring), so `board stranded list` reads no commit
objects: this module reads that file into each branch's `StrandedBranch` row while git
lists the refs (stranded.py), keeps the rows it made beside the file, and reads the
trailers of the commits the file does not know (all of them, with caching off).
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Iterable, Mapping
from itertools import repeat
from operator import is_
from typing import Any, NamedTuple, TypeGuard

from board.core import tomlcache
from board.core.config import Config
from board.core.git import gitutil, naming, saves, snapshot
from board.core.git.gitutil import git


class StrandedBranch(NamedTuple):
    """One saved tree's branch, as `board stranded list` shows it.

    A named tuple rather than a record: a listing makes 2,000 of them at once, each in
    one C call (`tuple.__new__` over the columns), where a record's `__init__` is a Python
    call apiece. Its fields are never changed after the listing.
    """

    branch: str  # short name: stranded/<tree dir>/<stamp>[-N]
    card: str | None
    tree: str
    stamp: str
    commit: str
    files: int | None
    insertions: int | None
    deletions: int | None
    kind: str = naming.KIND_SAVED  # KIND_ATTEMPT: a drive's own failed attempt; KIND_FOREIGN

    @property
    def is_attempt(self) -> bool:
        return self.kind == naming.KIND_ATTEMPT

    @property
    def is_candidate(self) -> bool:
        """A best-of-N candidate the race did not choose (issue 42): kept, like an attempt,
        for the operator to pick a line from, not to act on first."""
        return self.kind == naming.KIND_CANDIDATE

    @property
    def is_foreign(self) -> bool:
        """Not a save of the board's (no Board-Save trailer): prune leaves it alone."""
        return self.kind == naming.KIND_FOREIGN

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


_CachedStats = tuple[str, str | None, int | None, int | None, int | None, str]
_SAVED = naming.KIND_SAVED
_NO_STATS: _CachedStats = ("", None, None, None, None, _SAVED)
_FOREIGN: _CachedStats = ("", None, None, None, None, naming.KIND_FOREIGN)  # no trailer
_KINDS = frozenset(naming.KINDS)
# `int`, remembered: a diffstat's numbers repeat (2,000 saves hold a few hundred distinct
# ones), and a string is looked up faster than it is parsed. It raises as `int` does.
_number = functools.cache(int)


def _parse_stats_line(line: str) -> _CachedStats | None:
    """One stats-file line as (tree, card, files, insertions, deletions, kind); None if
    malformed. An eighth field, the branch, is `_read_lines`' alone."""
    return _stats_of(line.split("\t"))


def _stats_of(f: list[str]) -> _CachedStats | None:
    """A stats-file line's fields as (tree, card, files, insertions, deletions, kind); None if
    malformed (a number `int` cannot read included: the file is only a cache of the
    trailers, and a damaged line must not stop the listing). A six-field line was written
    before kinds existed: `saved`."""
    n = len(f)
    if n == 7 or n == 8:
        kind = f[6] if f[6] in _KINDS else _SAVED
    elif n == 6:
        kind = _SAVED
    else:
        return None
    if f[1] == "-":  # a branch whose commit has no Board-Save trailer (`saves.stats_line`)
        return _FOREIGN
    if not f[3].isdigit():
        return _NO_STATS
    try:
        return (
            f[1],
            None if f[2] == "-" else f[2],
            _number(f[3]),
            _number(f[4]),
            _number(f[5]),
            kind,
        )
    except ValueError:
        return None


class _StatsFile:
    """The stats file as the listing reads it.

    `ready`: commit -> its whole listing row, for the lines that name their branch, made
    while git reads the refs: a listing whose every commit is there, under the name git gives
    it, then costs a lookup per branch and one comparison (`StrandedRefs.all`). A row whose
    name git does not give is never shown. `cache`: commit -> (tree, card, files,
    insertions, deletions, kind), from every line, read when a listing needs more than
    `ready` (a commit the file does not know, a line from before the branch was recorded).
    """

    __slots__ = ("_cache", "_cfg", "_text", "ready")

    def __init__(
        self,
        cfg: Config,
        text: str,
        ready: dict[str, StrandedBranch],
        cache: dict[str, _CachedStats] | None = None,
    ) -> None:
        self._cfg, self._text, self.ready, self._cache = cfg, text, ready, cache

    @property
    def cache(self) -> dict[str, _CachedStats]:
        if self._cache is None:
            self._cache = _read_lines(self._cfg, self._text, self._text.splitlines()).cache
        return self._cache

    @property
    def whole(self) -> bool:
        """Whether the text ends with a whole line: a save appends its line in one write, and
        a reader may see that write half done."""
        return not self._text or self._text.endswith("\n")

    @property
    def lines(self) -> int:
        """About how many lines the file has (at least one per commit it knows)."""
        return self._text.count("\n")


# what a kept row is: change it whenever a row is made otherwise (a field, a rule of
# `naming.card_id_of`), so no row made the old way is read back
_KEPT_MAGIC = b"board stranded stats 1\n"


def _read_stats(cfg: Config) -> _StatsFile:
    """The stats file read into `_StatsFile` (the last well-formed line of a commit wins).

    The rows made of a text are kept beside it (`naming.STATS_KEPT`, core/tomlcache.py's
    layout, keyed by that exact text and the card prefix, which names a save's card when
    its line names none) and taken from there while both are the same: the file changes
    only when a save is made or a listing reads trailers or compacts it, and the listing
    is read far more often (each `board stranded list`, the browser's refresh). A file
    appended to since (a save's line) has only its new lines read, over the kept rows, and
    those are kept again once there are `_KEEP_AFTER` such lines.
    """
    folder = cfg.cache_folder
    text = saves.stats_text(cfg) if folder is not None else ""
    if folder is None or not text:
        return _StatsFile(cfg, "", {}, {})
    key = f"{cfg.board.prefix}\n{text}"
    kept = tomlcache.load_keyed(folder, naming.STATS_KEPT, _KEPT_MAGIC)
    read: _StatsFile | None = None
    if kept is not None and _rows(rows := kept[1]):
        kept_key = kept[0]
        if kept_key == key or (key.startswith(kept_key) and kept_key.endswith("\n")):
            made = map(tuple.__new__, repeat(StrandedBranch), rows)
            read = _StatsFile(cfg, text, dict(zip(map(_COMMIT_OF, rows), made, strict=True)))
            if kept_key == key:
                return read
            tail = key[len(kept_key) :]
            _read_after(cfg, read.ready, tail)
            if tail.count("\n") < _KEEP_AFTER:  # a few saves' lines: read again next time
                return read
    if read is None:
        lines = text.splitlines()
        read = _read_plain_lines(cfg, text, lines) or _read_lines(cfg, text, lines)
    blob = tomlcache.pack(_KEPT_MAGIC, key, list(map(tuple, read.ready.values())))
    if blob is not None:
        tomlcache.write(folder, naming.STATS_KEPT, blob)
    return read


# lines appended since the rows were kept that a listing reads over them before it keeps
# them again: below this, reading them (a few microseconds each) costs less than writing
_KEEP_AFTER = 64


def _rows(data: object) -> TypeGuard[list[tuple[Any, ...]]]:
    """Whether kept data has the shape of rows: a list of tuples of a row's length."""
    return (
        type(data) is list
        and set(map(type, data)) <= {tuple}
        and set(map(len, data)) <= {len(StrandedBranch._fields)}
    )


def _read_after(cfg: Config, ready: dict[str, StrandedBranch], tail: str) -> None:
    """`ready` as read from a text, brought to that text + `tail` (whole lines): each
    commit with a well-formed line in `tail` gets the row its last one makes, or none when
    that line names no branch, as reading the whole text line by line would leave it."""
    read = _read_lines(cfg, tail, tail.splitlines())
    for commit in read.cache:
        row = read.ready.get(commit)
        if row is None:
            ready.pop(commit, None)
        else:
            ready[commit] = row


_COMMIT_OF = operator.itemgetter(StrandedBranch._fields.index("commit"))


@functools.cache  # a diffstat's numbers repeat: a hit is a lookup in C, not a call
def _count(text: str) -> int:
    """A diffstat number as the line-by-line reading takes it: digits only (`_stats_of`)."""
    if not text.isdigit():
        raise ValueError(text)
    return int(text)  # may raise too: a digit `int` refuses (`²`)


_TAB = repeat("\t")
_SLASH = repeat("/")
_PLAIN_KIND = {k: k for k in naming.KINDS}
_NO_CARD = {"-": None}
_AFTER_PREFIX = operator.itemgetter(slice(len(naming.STRANDED), None))
_FIRST, _LAST = operator.itemgetter(0), operator.itemgetter(2)


def _read_plain_lines(cfg: Config, text: str, lines: list[str]) -> _StatsFile | None:
    """The rows `_read_lines` makes, made column by column in C, when every line is as a save
    writes it today (eight fields, the diffstat in digits, no `stranded/a/b/<stamp>`); None
    for any other file, which `_read_lines` reads line by line.

    It runs while git reads the refs (2,000 lines: the listing's whole cost but git's), so it
    makes no Python call per line. The `cache` is left for when it is asked for.
    """
    if not lines or set(map(str.count, lines, _TAB)) != {7}:
        return None
    flat = "\t".join(lines).split("\t")
    commits, names, trees = flat[0::8], flat[7::8], flat[1::8]
    if "-" in trees:  # a branch with no trailer: `_read_lines` gives it no stats
        return None
    try:
        counts = [list(map(_count, flat[i::8])) for i in (3, 4, 5)]
    except ValueError:  # damaged: for `_read_lines` to skip
        return None
    kinds = map(_PLAIN_KIND.get, flat[6::8], repeat(_SAVED))
    cards = flat[2::8]
    found = list(map(_NO_CARD.get, cards, cards))  # "-" is None
    # the tree dir is the part between stranded/ and the stamp, the name's last part
    # ("" for stranded/<stamp>); a name of more parts is left to `_read_lines`
    split = list(map(str.rpartition, names, _SLASH))
    dirs = list(map(_AFTER_PREFIX, map(_FIRST, split)))
    if any(map(operator.contains, dirs, _SLASH)):
        return None
    if None in found:  # a save that named no card: its tree's, as `_branches` reads it
        for i in _where(map(is_, found, repeat(None))):
            found[i] = naming.card_id_of(dirs[i], cfg.board.prefix)
    rows = zip(names, found, dirs, map(_LAST, split), commits, *counts, kinds, strict=True)
    ready = dict(zip(commits, map(tuple.__new__, repeat(StrandedBranch), rows), strict=True))
    return _StatsFile(cfg, text, ready)


def _read_lines(cfg: Config, text: str, lines: list[str]) -> _StatsFile:
    """The stats file's lines read one by one: any line a save ever wrote, and damage."""
    cache: dict[str, _CachedStats] = {}
    ready: dict[str, StrandedBranch] = {}
    card_of, prefix, new, row = naming.card_id_of, cfg.board.prefix, tuple.__new__, StrandedBranch
    stats_of = _stats_of
    for line in lines:
        f = line.split("\t")
        stats = stats_of(f)
        if stats is None:
            continue  # damaged
        commit = f[0]
        cache[commit] = stats
        if len(f) == 8:
            # the row `_branches` would make of this branch
            name = f[7]
            cut = name.find("/", 9)
            tree = name[9:cut] if cut >= 0 else ""
            card = card_of(tree, prefix) if stats[1] is None else stats[1]
            stamp = name[name.rfind("/") + 1 :]
            ready[commit] = new(row, (name, card, tree, stamp, commit, *stats[2:]))
        elif commit in ready:  # a later line that names no branch wins over the earlier row
            del ready[commit]
    return _StatsFile(cfg, text, ready, cache)


def _where(flags: Iterable[object]) -> list[int]:
    """The positions of the true flags, found in C (`compress` over a count)."""
    return list(itertools.compress(itertools.count(), flags))


def _lookup_stats(cfg: Config, commits: list[str]) -> dict[str, _CachedStats]:
    """The stats of just `commits`, found in the file's text (a screenful, not 2,000 lines).

    The last well-formed line of a commit wins, as in `_read_stats`.
    """
    text = saves.stats_text(cfg)
    if not text:
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


def _stats_from_trailers(
    cfg: Config, commits: list[str], names: Mapping[str, str], *, record: bool = True
) -> dict[str, _CachedStats]:
    """Read the Board-Save trailers of commits the stats file does not know (one git call),
    and add their lines, each with its branch's name from `names` (commit -> branch),
    unless not to `record` (the file was read ending inside a save's line)."""
    fmt = f"%H%x00{saves.TRAILER_FORMAT}"
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
    for line in gitutil.lines(res.stdout):
        commit, _, trailer = line.partition("\0")
        fields = saves.parse_save_trailer(trailer)
        if commit not in found:
            continue
        try:
            stats = snapshot.Stats(
                int(fields["files"]), int(fields["insertions"]), int(fields["deletions"])
            )
        except (KeyError, ValueError):  # no trailer of ours: a branch the board did not make
            found[commit] = _FOREIGN
            lines.append(saves.stats_line(commit, "", None, None, branch=names.get(commit, "")))
            continue
        card = fields.get("card")
        card = None if card in (None, "-") else card
        tree = fields.get("tree", "")
        kind = fields.get("kind", _SAVED)
        kind = kind if kind in naming.KINDS else _SAVED
        found[commit] = (tree, card, stats.files, stats.insertions, stats.deletions, kind)
        lines.append(saves.stats_line(commit, tree, card, stats, kind, names.get(commit, "")))
    if record:
        saves.record_stats(cfg, lines)
    return found


def _compact_stats(cfg: Config, cache: dict[str, _CachedStats], live: Mapping[str, str]) -> None:
    """Rewrite the stats file with only the live commits (`live`: commit -> its branch), each
    line naming its branch (a line lost to a save meanwhile is read again from the trailer)."""
    lines = []
    for commit in sorted(live.keys() & cache.keys()):
        tree, card, files, ins, dels, kind = cache[commit]
        stats = None if files is None else snapshot.Stats(files, ins or 0, dels or 0)
        lines.append(saves.stats_line(commit, tree, card, stats, kind, live[commit]))
    folder = cfg.cache_folder
    if folder is not None:
        folder.write(naming.STATS_FILE, "".join(lines).encode())  # whole, by rename

"""The board's parsed stylesheet, kept between starts in the user's cache directory.

Textual parses every CSS source at each start: its own defaults, board.tcss, and each
widget class's DEFAULT_CSS as the class first mounts. For a 10,000-card board that was
about 5 ms of a first paint of some 165 ms, a fifth of what the board adds to an empty
Textual app. What a source parses to depends only on its text, where it was read from,
its place among the sources and the theme's variables; Textual itself keeps it by those
in the stylesheet's parse cache, for the life of the process. Here that cache is filled
before the first parse with what an earlier start kept, and kept again after the first
paint when the start parsed anything new (a first start, another theme, an upgrade).

Exact by construction: an entry is keyed by the source's whole text (and the rest of
Textual's key), a file holds the rules of one set of variables, one Python and one
installed Textual (its CSS modules' sizes and times), and anything else (missing, torn,
another program's) is ignored, so Textual parses as it would without it.

The rules are Textual's own objects, so the file is a pickle, and a pickle can run code
when loaded. So it is never read from the repository (a clone could bring a `.board/`),
only from the user's own cache directory: `$BOARD_CACHE_DIR`, else
`$XDG_CACHE_HOME/board`, else `~/.cache/board` (an empty `BOARD_CACHE_DIR` turns it off),
and only when the directory and the file belong to this user and no one else may write
them, as ssh checks its keys.
"""

from __future__ import annotations

import contextlib
import os
import sys
from binascii import crc32
from collections.abc import Hashable
from typing import Any

_MAGIC = "board css cache 1"
_ENV = "BOARD_CACHE_DIR"
_FILE = "css-{:08x}"  # then -start.pickle, -later.pickle
PARTS = ("start", "later")


def cache_dir() -> str | None:
    """Where kept stylesheets live; None when the operator turned it off."""
    given = os.environ.get(_ENV)
    if given is not None:
        return given or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "board")


def _textual_stamp() -> tuple[Any, ...]:
    """The installed Textual, as its CSS modules' sizes and times (a stat each; asking
    importlib.metadata for its version would cost the start more than the cache saves)."""
    import textual.css.model as model
    import textual.css.styles as styles

    stamp: list[Any] = [model.__file__]
    for path in (model.__file__, styles.__file__):
        st = os.stat(path)
        stamp += [st.st_size, st.st_mtime_ns]
    return tuple(stamp)


def _own(st: os.stat_result) -> bool:
    """This user's, and writable by no one else."""
    getuid = getattr(os, "getuid", None)
    return (getuid is None or st.st_uid == getuid()) and not st.st_mode & 0o022


Entries = list[tuple[Hashable, list[Any]]]


class KeptCss:
    """The kept rules for one stylesheet and one set of its variables, in two files: what
    the board's first paint parses (`prime` loads it at start, `keep_start` writes it) and
    what later screens parse (`prime_later`, when the first of them opens; `keep_later`,
    at exit), so the start loads no rules it does not draw with."""

    def __init__(self, stylesheet: Any, variables: dict[str, str]) -> None:
        self.stylesheet = stylesheet
        self.variables = dict(variables)
        self.kept: dict[str, set[Hashable] | None] = {"start": set(), "later": None}
        folder = cache_dir()
        try:
            self.header: tuple[Any, ...] | None = (
                _MAGIC,
                sys.version,
                _textual_stamp(),
                tuple(sorted(variables.items())),
            )
        except (OSError, ImportError, AttributeError, TypeError):
            self.header = None
        self.paths: dict[str, str] = {}
        if folder is not None and self.header is not None:
            stem = _FILE.format(crc32(repr(self.header).encode("utf-8", "replace")))
            self.paths = {part: os.path.join(folder, f"{stem}-{part}.pickle") for part in PARTS}

    @property
    def _cache(self) -> Any:
        """Textual's parse cache (an LRUCache keyed as `Stylesheet._parse_rules` keys it),
        or None if this Textual has none or the stylesheet's variables are no longer the
        ones kept here (the theme changed: its key holds no variables), and then nothing
        is read or kept."""
        if not self.paths or getattr(self.stylesheet, "_variables", None) != self.variables:
            return None
        return getattr(self.stylesheet, "_parse_cache", None)

    def prime(self) -> int:
        """Fill the parse cache with the first paint's kept rules; how many sources."""
        return self._prime("start")

    def prime_later(self) -> int:
        """Fill it with the later screens' kept rules, once; how many sources."""
        return self._prime("later") if self.kept["later"] is None else 0

    def _prime(self, part: str) -> int:
        cache = self._cache
        if cache is None:
            return 0
        entries = self._read(part)
        for key, rules in entries:
            if cache.get(key) is None:
                cache.set(key, rules)
        self.kept[part] = {key for key, _ in entries}
        return len(entries)

    def keep_start(self) -> bool:
        """At the first paint: keep what the stylesheets parsed to so far, if the first
        paint's file lacked any of it. True if written."""
        return self._keep("start", self._entries(lambda key: True))

    def keep_later(self) -> bool:
        """At exit: keep what was parsed after the first paint, with what the later file
        held already, if it lacked any of it. True if written."""
        if self._cache is None:
            return False
        start = self.kept["start"] or set()
        entries = self._entries(lambda key: key not in start)
        if self.kept["later"] is None:  # not read this time: keep what it holds too
            held = self._read("later")
            self.kept["later"] = {key for key, _ in held}
            have = {key for key, _ in entries}
            entries += [(key, rules) for key, rules in held if key not in have]
        return self._keep("later", entries)

    def _entries(self, wanted: Any) -> Entries:
        cache = self._cache
        if cache is None:
            return []
        entries: Entries = []
        for key in list(cache.keys()):
            rules = cache.get(key)
            if wanted(key) and type(rules) is list and not any(r.errors for r in rules):
                entries.append((key, rules))
        return entries

    def _read(self, part: str) -> Entries:
        path = self.paths.get(part)
        if path is None:
            return []
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
        try:
            if not _own(os.stat(os.path.dirname(path))):
                return []
            fd = os.open(path, flags)
        except OSError:
            return []
        try:
            with os.fdopen(fd, "rb") as fh:
                if not _own(os.fstat(fh.fileno())):
                    return []
                import pickle

                kept = pickle.load(fh)
        except Exception:  # torn, another program's, a class that moved: Textual parses
            return []
        if type(kept) is not tuple or len(kept) != 2 or kept[0] != self.header:
            return []
        entries = kept[1]
        if type(entries) is not list or not all(
            type(e) is tuple and len(e) == 2 and type(e[1]) is list for e in entries
        ):
            return []
        return entries

    def _keep(self, part: str, entries: Entries) -> bool:
        """Write `entries` as the part's file if they hold a source it lacks; best effort
        and atomic (a whole file or none)."""
        keys = {key for key, _ in entries}
        if not entries or keys <= (self.kept[part] or set()):
            return False
        path = self.paths[part]
        folder = os.path.dirname(path)
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            import pickle

            data = pickle.dumps((self.header, entries), protocol=pickle.HIGHEST_PROTOCOL)
            os.makedirs(folder, mode=0o700, exist_ok=True)
            if not _own(os.stat(folder)):
                return False
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except Exception:  # unwritable, full, a rule pickle cannot hold: parse next time
            return False
        self.kept[part] = keys
        return True

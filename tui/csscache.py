"""The board's parsed stylesheet, kept between starts in the user's cache directory.

Textual parses every CSS source at each start: its own defaults, board.tcss, and each
widget class's DEFAULT_CSS as the class first mounts. For a 10,000-card board that was
about 5 ms of a first paint of some 165 ms, a fifth of what the board adds to an empty
Textual app. What a source parses to depends only on its text, where it was read from,
its place among the sources and the theme's variables; Textual itself keeps it by those
in the stylesheet's parse cache, for the life of the process. Here that cache is filled
before the first parse with what an earlier start kept, and kept again when the start
parsed anything new (a first start, another theme, an upgrade).

Two files per theme: what the board screen parses (its first paint, its footer, a filter
field), read at start; and what the other screens parse, read when the first of them
opens, so the start loads no rules it does not draw with.

Exact by construction: an entry is keyed by the source's whole text (and the rest of
Textual's key), a file holds the rules of one set of variables, one Python and one
installed Textual (its version and its CSS modules' sizes and times), and anything else
(missing, torn, another program's) is ignored, so Textual parses as it would without it.
Only the sources the stylesheet holds now are written back, so an edited or upgraded
source's old rules go with the next write; and only the 16 newest files are kept.

The rules are Textual's own objects, so the file is a pickle, and a pickle can run code
when loaded. So it is never read from the repository (a clone could bring a `.board/`),
only from the user's own cache directory (core/cachedir.py, where every cache the board
keeps lives): an absolute path, `$BOARD_CACHE_DIR`, else `$XDG_CACHE_HOME/board`, else
`~/.cache/board` (an empty `BOARD_CACHE_DIR` turns it off); and only when that directory
(not a symlink) and the file in it (a regular file, not a symlink) belong to this user and
no one else may write them, as ssh checks its keys. A system without POSIX file modes
never passes that check: there nothing is kept.
"""

from __future__ import annotations

import contextlib
import os
import sys
from binascii import crc32
from collections.abc import Hashable
from typing import Any

from board.core.cachedir import cache_dir, make_dir, open_dir, read_file, write_file

_MAGIC = "board css cache 2"
_FILE = "css-{:08x}"  # then -start.pickle, -later.pickle
PARTS = ("start", "later")
KEEP_FILES = 16  # the newest kept files a write leaves; older ones (old themes) go
STALE_TMP_S = 600  # a write's temporary file older than this was left by a crash

Entries = list[tuple[Hashable, list[Any]]]


def _textual_stamp() -> tuple[Any, ...]:
    """The installed Textual: its distribution's name and version (the dist-info beside
    it) and its CSS modules' sizes and times, for an editable one (a listing and a stat
    each; asking importlib.metadata would cost the start more than the cache saves)."""
    import textual.css.model as model

    css = os.path.dirname(model.__file__)
    package = os.path.dirname(css)
    site = os.path.dirname(package)
    stamp: list[Any] = [package]
    stamp += sorted(n for n in os.listdir(site) if n.lower().startswith("textual-"))
    for name in ("model.py", "styles.py", "parse.py", "_styles_builder.py", "tokenize.py"):
        st = os.stat(os.path.join(css, name))
        stamp += [name, st.st_size, st.st_mtime_ns]
    return tuple(stamp)


def _valid(entries: object) -> bool:
    """A list of (Textual's parse key, a list of rule sets): anything else is not ours."""
    from textual.css.model import RuleSet

    if type(entries) is not list:
        return False
    for entry in entries:
        if type(entry) is not tuple or len(entry) != 2:
            return False
        key, rules = entry
        if type(key) is not tuple or len(key) != 5 or type(key[0]) is not str:
            return False
        if type(rules) is not list or not all(type(rule) is RuleSet for rule in rules):
            return False
    return True


class KeptCss:
    """The kept rules for one stylesheet and one set of its variables, in two files.

    `prime` at start fills the parse cache from the board screen's file; `keep_start` at
    the first paint writes it if the start parsed anything new; `open_later`, as the
    first other screen opens, writes it again (the footer and the like, parsed since) and
    reads the other screens' file; `keep_at_exit` writes whichever part was last in use."""

    def __init__(self, stylesheet: Any, variables: dict[str, str]) -> None:
        self.stylesheet = stylesheet
        self.variables = dict(variables)
        # the parse keys each file gave or was written with; "later" is None until a
        # screen other than the board's opens
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
        self.folder = folder
        self.names: dict[str, str] = {}
        if folder is not None and self.header is not None:
            stem = _FILE.format(crc32(repr(self.header).encode("utf-8", "replace")))
            self.names = {part: f"{stem}-{part}.pickle" for part in PARTS}

    @property
    def _cache(self) -> Any:
        """Textual's parse cache (an LRUCache keyed as `Stylesheet._parse_rules` keys it),
        or None if this Textual has none or the stylesheet's variables are no longer the
        ones kept here (the theme changed: its key holds no variables), and then nothing
        is read or kept."""
        if not self.names or getattr(self.stylesheet, "_variables", None) != self.variables:
            return None
        return getattr(self.stylesheet, "_parse_cache", None)

    def prime(self) -> int:
        """Fill the parse cache with the board screen's kept rules; how many sources."""
        return self._prime("start")

    def keep_start(self) -> bool:
        """Keep what the board screen's stylesheets parsed to, if its file lacked any of
        it (not once another screen opened: its rules are not the start's). True if
        written."""
        if self.kept["later"] is not None:
            return False
        return self._keep("start", self._entries(lambda key: True))

    def open_later(self) -> int:
        """The first screen other than the board's is opening: keep the start's part as
        it stands, then fill the cache with the other screens' kept rules (once)."""
        if self.kept["later"] is not None:
            return 0
        self.keep_start()
        self.kept["later"] = set()
        return self._prime("later")

    def keep_at_exit(self) -> bool:
        """At exit: keep the part in use, the later screens' if any opened. True if
        written."""
        if self.kept["later"] is None:
            return self.keep_start()
        start = self.kept["start"] or set()
        return self._keep("later", self._entries(lambda key: key not in start))

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

    def _entries(self, wanted: Any) -> Entries:
        """The parse cache's entries for the texts the stylesheet holds now (an edited
        source's old text is not kept), with no errors, that `wanted` takes."""
        cache = self._cache
        if cache is None:
            return []
        sources = getattr(self.stylesheet, "source", {})
        entries: Entries = []
        for key in list(cache.keys()):
            rules = cache.get(key)
            if not wanted(key) or type(rules) is not list or any(r.errors for r in rules):
                continue
            # the text the stylesheet holds now from that place (its tie breaker may have
            # changed since: Textual parses a class's DEFAULT_CSS under each it had)
            source = sources.get(key[1])
            if source is not None and source[0] == key[0]:
                entries.append((key, rules))
        return entries

    def _read(self, part: str) -> Entries:
        if self.folder is None or part not in self.names:
            return []
        dir_fd = open_dir(self.folder)
        if dir_fd is None:
            return []
        try:
            blob = read_file(dir_fd, self.names[part])  # the user's own, or None
        finally:
            os.close(dir_fd)
        if blob is None:
            return []
        try:
            import pickle

            kept = pickle.loads(blob)
        except Exception:  # torn, another program's, a class that moved: Textual parses
            return []
        if type(kept) is not tuple or len(kept) != 2 or kept[0] != self.header:
            return []
        return kept[1] if _valid(kept[1]) else []

    def _keep(self, part: str, entries: Entries) -> bool:
        """Write `entries` as the part's file if they hold a source it lacks; best effort
        and atomic (a whole file or none)."""
        keys = {key for key, _ in entries}
        if self.folder is None or not entries or keys <= (self.kept[part] or set()):
            return False
        try:
            import pickle

            data = pickle.dumps((self.header, entries), protocol=pickle.HIGHEST_PROTOCOL)
            make_dir(self.folder)
            dir_fd = open_dir(self.folder)
            if dir_fd is None:
                return False
            try:
                write_file(dir_fd, self.names[part], data)
                _tidy(dir_fd)
            finally:
                os.close(dir_fd)
        except Exception:  # unwritable, full, a rule pickle cannot hold: parse next time
            return False
        self.kept[part] = keys
        return True


def _tidy(dir_fd: int) -> None:
    """Remove what a crash left (a write's temporary file) and all but the newest
    KEEP_FILES kept files (themes, Pythons, Textuals no longer in use: each costs only a
    parse if it comes back)."""
    import time

    now = time.time()
    kept: list[tuple[float, str]] = []
    for name in os.listdir(dir_fd):
        if not name.startswith("css-"):
            continue
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue
        if name.endswith(".tmp"):
            if now - st.st_mtime > STALE_TMP_S:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=dir_fd)
        elif name.endswith(".pickle"):
            kept.append((st.st_mtime, name))
    for _, name in sorted(kept, reverse=True)[KEEP_FILES:]:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)

"""The user's cache directory: where the board keeps what it can make again, never a clone.

A clone brings whatever its repository committed, `.board/` included: a cache kept there
is the repository's to write. A kept reading of board.toml could hold another coder's
argv than the file names, a kept stats line another card than the save's (and `stranded
prune` deletes by card). So every cache lives here, outside the repository, and is read
only when this user's own (docs/lifecycle.md, "Nothing is lost"): the directory is
`$BOARD_CACHE_DIR`, else `$XDG_CACHE_HOME/board`, else `~/.cache/board`, an absolute path
(an empty `BOARD_CACHE_DIR` turns every cache off); it and the folders and files in it are
opened without following a symlink and used only when they belong to this user and no one
else may write them, as ssh checks its keys. A system without POSIX file modes never passes
that check: there nothing is kept.

What belongs to one repository (its board.toml's and themes' readings, its saves'
stats) is kept in a folder of its own, `repo-<crc32 of its path>-<its name>`: two
repositories that shared one (a crc32 collision) would only undo each other's caching, as
every cache is checked against what it was made of. Writes are whole (a temporary file
renamed) or one `O_APPEND` write.

Plain os calls: this is read at every verb's start, so it imports nothing the start does not.
"""

from __future__ import annotations

import contextlib
import os
import stat
from binascii import crc32

ENV = "BOARD_CACHE_DIR"
REPO_PREFIX = "repo-"
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def cache_dir() -> str | None:
    """Where kept files live; None when the operator turned it off, or the place is not an
    absolute path (a relative one would land in whatever directory the board runs in, a
    clone's perhaps; the XDG spec says to ignore it)."""
    given = os.environ.get(ENV)
    if given is not None:
        folder = given
    else:
        base = os.environ.get("XDG_CACHE_HOME") or ""
        if not os.path.isabs(base):
            base = os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "board")
    return folder if os.path.isabs(folder) else None


def own(st: os.stat_result) -> bool:
    """This user's, and writable by no one else."""
    getuid = getattr(os, "getuid", None)
    return (getuid is None or st.st_uid == getuid()) and not st.st_mode & 0o022


def open_dir(folder: str, dir_fd: int | None = None) -> int | None:
    """`folder` (relative to `dir_fd` when given), opened (not through a symlink) if it is
    the user's own; files are then opened relative to it, so it cannot be swapped after the
    check."""
    try:
        fd = os.open(folder, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        if own(os.fstat(fd)):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def make_dir(folder: str) -> None:
    """Make the cache directory (0700), but only under a directory of the user's own: root
    running with another user's HOME must not leave root's directories there."""
    missing: list[str] = []
    path = folder
    while not os.path.exists(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            return
        path = parent
    if not missing:
        return
    getuid = getattr(os, "getuid", None)
    if getuid is not None and os.stat(path).st_uid != getuid():
        return
    for made in reversed(missing):
        os.mkdir(made, 0o700)


def read_file(dir_fd: int, name: str) -> bytes | None:
    """The bytes of `name` in the opened directory, if it is a regular file (not a symlink,
    not a fifo that would block) of the user's own; else None."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or not own(st):
                return None
            return fh.read()
    except (OSError, ValueError):
        return None


def write_file(dir_fd: int, name: str, data: bytes) -> None:
    """`data` as `name` in the opened directory, whole (a temporary file renamed, 0600);
    raises OSError, leaving no temporary file."""
    tmp = f"{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


class Folder:
    """One repository's folder of kept files in the cache directory, `base/name`.

    Each call opens the directory and the folder afresh (checked as `open_dir` checks them)
    and makes them when it writes; nothing here raises: a read that cannot be made is None,
    a write that cannot be made is False, and the caller does without."""

    __slots__ = ("base", "name")

    def __init__(self, base: str, name: str) -> None:
        self.base = base
        self.name = name

    @property
    def path(self) -> str:
        return os.path.join(self.base, self.name)

    def read(self, file: str) -> bytes | None:
        fd = self._open(make=False)
        if fd is None:
            return None
        try:
            return read_file(fd, file)
        finally:
            os.close(fd)

    def write(self, file: str, data: bytes) -> bool:
        """`data` as `file`, whole (by rename); False when it cannot be."""
        fd = self._open(make=True)
        if fd is None:
            return False
        try:
            write_file(fd, file, data)
        except OSError:
            return False
        finally:
            os.close(fd)
        return True

    def append(self, file: str, data: bytes) -> bool:
        """`data` at the end of `file` in one write (O_APPEND: two writers' lines never
        interleave), made 0600 if missing; not to a symlink or a file of anyone else's."""
        fd = self._open(make=True)
        if fd is None:
            return False
        try:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | os.O_NONBLOCK
            out = os.open(file, flags, 0o600, dir_fd=fd)
        except OSError:
            return False
        finally:
            os.close(fd)
        try:
            st = os.fstat(out)
            if not stat.S_ISREG(st.st_mode) or not own(st):
                return False
            os.write(out, data)
        except OSError:
            return False
        finally:
            os.close(out)
        return True

    def _open(self, make: bool) -> int | None:
        base = open_dir(self.base)
        if base is None and make:
            try:
                make_dir(self.base)
            except OSError:
                return None
            base = open_dir(self.base)
        if base is None:
            return None
        try:
            fd = open_dir(self.name, dir_fd=base)
            if fd is None and make:
                with contextlib.suppress(OSError):
                    os.mkdir(self.name, 0o700, dir_fd=base)
                fd = open_dir(self.name, dir_fd=base)
            return fd
        finally:
            os.close(base)


def for_repo(root: str | os.PathLike[str]) -> Folder | None:
    """The folder kept for the repository at `root`; None when caching is off.

    Named by the path as given, made absolute, not resolved again (a realpath is a stat per
    part, at every verb's start): the board's roots are real paths already (`where.toplevel`
    and `Config.root` resolve them), and another spelling would only keep its own copies."""
    base = cache_dir()
    if base is None:
        return None
    path = os.path.abspath(root)
    tail = "".join(c if c in _NAME_CHARS else "_" for c in os.path.basename(path))[:40]
    return Folder(base, f"{REPO_PREFIX}{crc32(os.fsencode(path)):08x}-{tail}")

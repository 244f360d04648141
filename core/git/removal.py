"""Taking a saved tree out of its path: the steps `worktrees.discard_worktree` runs.

One holder per tree path across processes (`tree_lock`), so two edges reaching one tree make
one removal. A tree the operator locked is never deleted; a husk (its git admin entry gone) is
moved aside with its bytes; a saved tree is renamed into `.trash` first, atomically, so a kill
leaves it whole at its path or already saved in `.trash`, where `cleanup` finishes the job.
The ignored files a removal deletes are never saved (they are not work), but they are named.

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
import shutil
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from board.core import locks, proc
from board.core.config import BoardSection, Config
from board.core.errors import Refused
from board.core.git import gitutil, naming
from board.core.git.faults import _fault
from board.core.git.gitutil import NO_HOOKS, git
from board.core.git.naming import (
    BRANCH_PREFIX,
    HUSK_DIR,
    MAX_NAME_TRIES,
    TRASH_DIR,
    _branch_of_tree_name,
    _gitfile_dir,
    common_dir,
)
from board.core.records import Record, field

log = logging.getLogger("board.worktrees")

LOCK_TIMEOUT_S = 600.0


# ignored files ---------------------------------------------------------------------------

IGNORED_NAMED = 5  # how many ignored paths a save's comment names before "and N more"


class Dropped(Record):
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


def ignored_files(board: BoardSection, tree: Path) -> Dropped:
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
    scratch = [n for n in (s.strip("/") for s in board.scratch) if n]
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


# removal -------------------------------------------------------------------------------------

_held = threading.local()
# the saved trees in .trash that a thread of this process is deleting now (see `cleanup`)
_deleting: set[Path] = set()
_deleting_mu = threading.Lock()


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


def _admin_paths(cfg: Config) -> list[str]:
    """Every worktree admin entry's path, in name order. Plain strings and os calls: with
    100 live trees, every tree made or removed reads them all (cleanup, `_checked_out`),
    and through pathlib that was 4 ms of the loop's CPU each time."""
    try:
        with os.scandir(common_dir(cfg) / "worktrees") as found:
            return sorted(entry.path for entry in found if entry.is_dir())
    except (FileNotFoundError, NotADirectoryError):
        return []


def _admin_entries(cfg: Config) -> list[Path]:
    return [Path(p) for p in _admin_paths(cfg)]


def _small_text(path: str) -> str | None:
    """A small file's text (an admin entry's `gitdir` or `HEAD`), None if it cannot be read:
    os.read, without a text stream's set-up, since a hundred are read at a time."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        parts = []
        while chunk := os.read(fd, 65536):
            parts.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(parts).decode("utf-8", "replace")


def _admin_target_text(admin: str) -> str | None:
    """The tree path an admin entry says it belongs to (its `gitdir` file, minus `/.git`)."""
    text = _small_text(os.path.join(admin, "gitdir"))
    text = text.strip() if text is not None else ""
    return (os.path.dirname(text.rstrip("/") or "/") or ".") if text else None


def _admin_target(admin: Path) -> Path | None:
    target = _admin_target_text(str(admin))
    return None if target is None else Path(target)


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
        and (pointed := _gitfile_dir(tree)) is not None
        and _same(pointed, admin)
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
    try:
        with gitutil.admin_locked(cfg.root), contextlib.suppress(FileNotFoundError):
            _rmtree_force(admin)
    except Refused as exc:  # left for the next cleanup, or git's own prune
        log.warning("%s: its admin entry %s is left: %s", cfg.root, admin, exc)


def cleanup(cfg: Config) -> None:
    """Finish removals a killed process left: saved trees in .trash, admin entries of gone trees.

    A tree this process is deleting from .trash right now (`_deleting`) is left to the
    thread deleting it: with 100 drives, every fresh tree's cleanup deleted the trees the
    drives ending beside it were deleting, each file of them twice."""
    trash = cfg.worktrees_dir / TRASH_DIR
    if trash.is_dir():
        for entry in trash.iterdir():
            with _deleting_mu:
                if entry in _deleting:
                    continue
            with contextlib.suppress(OSError):
                _rmtree_force(entry)
    root = str(cfg.worktrees_dir) + os.sep
    for admin in _admin_paths(cfg):
        target = _admin_target_text(admin)
        if target is None or os.path.lexists(target):
            continue
        if os.path.exists(os.path.join(admin, "locked")):
            continue
        if os.path.abspath(target).startswith(root):
            _forget_admin(cfg, Path(admin))


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
    dest = trash / f"{tree.name}-{naming.utc_stamp()}-{os.getpid()}"
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
    with _deleting_mu:
        _deleting.add(dest)
    try:
        with contextlib.suppress(OSError):
            _rmtree_force(dest)
    finally:
        with _deleting_mu:
            _deleting.discard(dest)
    return ""


def _checked_out(cfg: Config, branch_ref: str) -> bool:
    """Whether any worktree (the main one included) has `branch_ref` checked out."""
    want = f"ref: {branch_ref}"
    heads = [str(common_dir(cfg) / "HEAD"), *(os.path.join(a, "HEAD") for a in _admin_paths(cfg))]
    return any((_small_text(head) or "").strip() == want for head in heads)


def _delete_branch(cfg: Config, branch_ref: str | None, expected: str | None) -> bool:
    """Delete the tree's own feat/… branch once its commits are saved or published (CAS);
    True when it was deleted."""
    if not branch_ref or not expected or not branch_ref.startswith(f"refs/heads/{BRANCH_PREFIX}"):
        return False
    if _checked_out(cfg, branch_ref):
        return False
    res = git(cfg.root, *NO_HOOKS, "update-ref", "-d", branch_ref, expected, check=False)
    return res.returncode == 0 and not res.timed_out


def _move_husk(cfg: Config, tree: Path, admin: Path | None) -> Path:
    dest_dir = cfg.worktrees_dir / HUSK_DIR
    dest_dir.mkdir(parents=True, exist_ok=True)
    stamp = naming.utc_stamp()
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
    tree (3 to 11 lines lost per crash; docs/lifecycle.md, "Nothing is lost"). The
    environment is the child's from its first instruction, so there is no window in which
    it runs unmarked.
    Why not every process whose working directory is inside the tree: that would kill the
    operator's own shell, `cd`'d into a tree to look at it. A process that scrubs its
    environment and leaves the coder's group escapes both; none of ours does.
    """
    absolute = os.path.abspath(tree)
    marks = {proc.MARK_TREE: sorted({absolute, os.path.realpath(absolute)})}
    if not proc.marked_processes(marks):
        # nothing runs marked with this tree, and nothing can start so marked but from a
        # marked process: one look at /proc is the answer (it was two, 5 ms of every tree's
        # removal with 100 coders' processes to read)
        return []
    killed = proc.kill_marked(marks, proc.MARK_KILL_S)
    if killed:
        log.warning("killed process groups %s still running in %s before saving it", killed, tree)
    return [pid for pid, _ in proc.marked_processes(marks)]

"""Where the repository is, read from the `.git` on disk when that is plain, else from git.

Every verb starts by finding the main working tree's root. Asking git
(`gitutil.toplevel`) is one process, plus importing the process machinery, on every
`board card list`: a few milliseconds of a verb that should answer at once. In the usual
layouts the answer is on disk: walking up from where the verb started, the first `.git` is
either a directory (a main working tree, whose root holds it) or a file `gitdir: X` whose
`X/commondir` names the main tree's `.git` (a linked worktree, as `git worktree add` makes).

Anything else is left to git, which knows every rule: a GIT_DIR, GIT_WORK_TREE or
GIT_CEILING_DIRECTORIES in the environment, a `.git` that is a symlink, a submodule or a
`--separate-git-dir` repository, core.worktree or core.bare or an include in the config, a
repository owned by another user (git's safe.directory check), a filesystem boundary, a
bare repository or the inside of a `.git`, no repository at all (git's own refusal), or no
git on PATH (the board needs it, and a verb says so the moment it starts, as before).
tests/test_git_where.py holds the two answers equal over these layouts.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

# what changes git's discovery, or the answer, from the environment: git decides then
_GIT_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_OBJECT_DIRECTORY",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
)
# a config that moves the working tree, says it is bare, or pulls in other files
_ODD_CONFIG = re.compile(
    r"^[ \t]*(?:worktree[ \t]*="  # core.worktree
    r"|worktreeconfig[ \t]*="  # extensions.worktreeConfig
    r"|\[[ \t]*include"  # [include] and [includeIf ...]
    r"|bare[ \t]*$|bare[ \t]*=(?![ \t]*false[ \t]*$))",  # core.bare, unless false
    re.I | re.M,
)


def toplevel(start: str | Path) -> Path:
    """The root of the main working tree that contains `start` (as `gitutil.toplevel`)."""
    root = _from_disk(start)
    if root is not None:
        return root
    from board.core.git import gitutil  # git decides, and says why when it refuses

    return gitutil.toplevel(start)


def _from_disk(start: str | Path) -> Path | None:
    """The main working tree's root as the `.git` files say it, or None to ask git."""
    if any(name in os.environ for name in _GIT_ENV):
        return None
    if not _on_path("git"):  # board needs git: git's lookup says so in one line
        return None
    try:
        here = os.path.realpath(start, strict=True)
        dev = os.stat(here).st_dev
        while True:
            dot_git = os.path.join(here, ".git")
            try:
                st = os.lstat(dot_git)
            except FileNotFoundError:
                st = None
            if st is not None:
                if stat.S_ISDIR(st.st_mode):
                    return _main_tree(here, dot_git)
                if stat.S_ISREG(st.st_mode):
                    return _linked_tree(here, dot_git)
                return None  # a symlink, or stranger
            if os.path.exists(os.path.join(here, "HEAD")):
                return None  # perhaps a bare repository, or inside a .git: git knows
            parent = os.path.dirname(here)
            if parent == here or os.stat(parent).st_dev != dev:
                return None
            here = parent
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _main_tree(root: str, git_dir: str) -> Path | None:
    """`root`, whose `.git` is a directory, when it is a plain repository of this user's."""
    if os.path.exists(os.path.join(git_dir, "commondir")):
        return None
    if not _plain_git_dir(git_dir) or not _owned(root, git_dir):
        return None
    return Path(root)


def _linked_tree(here: str, dot_git: str) -> Path | None:
    """The main tree of a linked worktree whose `.git` file names its git directory."""
    with open(dot_git, encoding="utf-8") as fh:
        text = fh.read()
    if not text.startswith("gitdir: ") or text.count("\n") > 1:
        return None
    git_dir = os.path.realpath(os.path.join(here, text[len("gitdir: ") :].rstrip("\n")))
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as fh:
            common_rel = fh.read().rstrip("\n")
    except FileNotFoundError:
        return None  # a submodule or --separate-git-dir: git answers with --show-toplevel
    common = os.path.realpath(os.path.join(git_dir, common_rel))
    if os.path.basename(common) != ".git" or not os.path.isfile(os.path.join(git_dir, "HEAD")):
        return None
    if not _plain_git_dir(common) or not _owned(here, git_dir, common):
        return None
    return Path(os.path.dirname(common))


def _plain_git_dir(git_dir: str) -> bool:
    """A git directory as `git init` leaves it, with no setting that changes the answer."""
    if not (
        os.path.isfile(os.path.join(git_dir, "HEAD"))
        and os.path.isdir(os.path.join(git_dir, "objects"))
        and os.path.isdir(os.path.join(git_dir, "refs"))
    ):
        return False
    if os.path.exists(os.path.join(git_dir, "config.worktree")):
        return False
    try:
        with open(os.path.join(git_dir, "config"), encoding="utf-8") as fh:
            config = fh.read()
    except FileNotFoundError:
        return True
    return _ODD_CONFIG.search(config) is None


def _owned(*paths: str) -> bool:
    """Whether this user owns each path: git refuses another user's repository unless
    safe.directory says otherwise, and that is for git to read."""
    uid = os.geteuid()
    return all(os.stat(path).st_uid == uid for path in paths)


def _on_path(name: str) -> bool:
    """`shutil.which(name) is not None` for a bare name on POSIX, step for step, without
    importing shutil (which imports bz2, lzma and zlib: a few per cent of a quick verb's
    start). tests/test_git_where.py holds the two equal."""
    path = os.environ.get("PATH", None)
    if path is None:
        try:
            path = os.confstr("CS_PATH")
        except (AttributeError, ValueError):
            path = os.defpath
    if not path:  # PATH='' matches nothing, where PATH=':' looks in the current directory
        return False
    seen = set()
    for directory in os.fsdecode(path).split(os.pathsep):
        if directory in seen:
            continue
        seen.add(directory)
        candidate = os.path.join(directory, name)
        if (
            os.path.exists(candidate)
            and os.access(candidate, os.F_OK | os.X_OK)
            and not os.path.isdir(candidate)
        ):
            return True
    return False

"""The files a fresh tree needs that git does not hold: ignored files copied from the checkout.

A project's tests often read a file nobody commits (`.env`, a local config). A fresh tree
never has it, so `[tree] copy` and a `.worktreeinclude` at the repository root (both in
.gitignore syntax, as Claude Code, Codex and agent-deck read that file) name what is copied
from the operator's checkout into each fresh tree. Only files that are really ignored there
and in the tree are copied: a tracked file, or one no ignore rule matches, would be
committed as the card's work, so it is refused with that reason. A copy is not an install:
dependency folders and virtual environments are made by `[tree] setup`, never copied.

A copied file may hold secrets. Its `KEY=value` values must not leave the machine through
the coder either: a change that adds one to a file that would be committed or saved is
refused (`leak_in`). The drive blocks the card `secret-leak`, and the save, the last line,
refuses to put such a tree on a branch (the tree stays as it is). What was copied is kept
in the tree's git admin directory (`board-copied`), not in the tree: it is no work, and
goes with the tree.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path

from board.core.config import BOARD_DIR, Config
from board.core.errors import GitError, StrandedWorkError
from board.core.git.gitutil import git, lines, out
from board.core.git.naming import _gitfile_dir
from board.core.records import Frozen, Record, field

INCLUDE_FILE = ".worktreeinclude"
MANIFEST = "board-copied"
MAX_INCLUDE_BYTES = 64 * 1024  # a .worktreeinclude is a few lines; a repository's is input
MAX_FILES = 200
MAX_BYTES = 64 * 1024 * 1024
MAX_SECRET_FILE_BYTES = 1024 * 1024
MIN_SECRET_LEN = 8  # `DEBUG=1` or `PORT=3000` is no secret, and would match everything
MAX_DIFF_BYTES = 256 * 1024 * 1024
# made by setup, never copied: a copied install would be the checkout's, not the tree's
INSTALL_DIRS = frozenset(
    {"node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache", ".gradle"}
)
_KEY_VALUE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.\-]*)\s*[=:]\s*(.*?)\s*$")


class CopyPlan(Record):
    """What a fresh tree gets from the checkout: (path, size) copied, (path, why) refused."""

    files: list[tuple[str, int]] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        """What the drive log says: paths and sizes, never contents."""
        out = [f"copied {p} ({size} bytes)" for p, size in self.files]
        out += [f"not copied {p}: {why}" for p, why in self.refused]
        return out


class Leak(Frozen):
    """Where a copied file's value (or the copied file itself) would be committed or saved."""

    path: str
    line: int
    source: str  # the copied file the value comes from
    key: str  # its key, never its value

    def text(self) -> str:
        if self.key:
            where = f"{self.path} line {self.line}" if self.line else self.path
            return f"{where} holds the value of {self.key} from the copied file {self.source}"
        return f"the copied file {self.source} is no longer ignored, so it would be committed"


class SecretLeak(StrandedWorkError):
    """A tree whose change holds a copied secret: kept as it is, never saved to a branch."""

    def __init__(self, tree: str, leak: Leak, base: str = "main") -> None:
        self.leak = leak
        super().__init__(
            tree,
            "a change that holds a copied secret",
            f"{leak.text()}; it is never committed, saved or pushed: remove it there",
            base,
        )


def patterns(cfg: Config) -> list[str]:
    """`[tree] copy`, then the checkout's `.worktreeinclude` lines (comments and blanks out)."""
    found = list(cfg.tree.copy)
    data = read_regular(cfg.root / INCLUDE_FILE, MAX_INCLUDE_BYTES + 1)
    if len(data) > MAX_INCLUDE_BYTES:
        data = b""  # not a list of a few paths: read as none (doctor names it)
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("!"):
            continue
        if ".." in line.strip("/").split("/") or line.strip("/").split("/")[0] == ".git":
            continue
        found.append(line)
    return found


def _excludes(pats: list[str]) -> list[str]:
    return [f"--exclude={p}" for p in pats]


def _z(text: str) -> list[str]:
    return [p for p in text.split("\0") if p]


def plan(cfg: Config) -> CopyPlan:
    """Which ignored files of the checkout the patterns name, and which are refused, why."""
    result = CopyPlan()
    pats = patterns(cfg)
    if not pats:
        return result
    root = cfg.root
    tracked = _z(out(root, "ls-files", "-z", "--cached", "--ignored", *_excludes(pats)))
    for p in tracked:
        result.refused.append((p, "git tracks it: copying it would make it look like work"))
    untracked = _z(out(root, "ls-files", "-z", "--others", "--ignored", *_excludes(pats)))
    ignored = set(_ignored(root, [p for p in untracked if not p.startswith(":")]))
    total = 0
    venvs: dict[str, bool] = {}
    own = _own_dirs(cfg)
    for p in sorted(untracked):
        why = ""
        parts = p.split("/")
        if p.startswith(":"):
            why = "a name git would read as pathspec magic"
        elif any(p == d or p.startswith(d + "/") for d in own):
            why = "the board's own (its store, its trees, its scratch)"
        elif p not in ignored:
            why = "no ignore rule matches it: copying it would make it look like work"
        elif any(part in INSTALL_DIRS for part in parts[:-1]) or _in_venv(root, parts, venvs):
            why = "a copy is not an install: [tree] setup makes dependencies and environments"
        else:
            st = os.lstat(root / p)
            if not _regular(st.st_mode):
                why = "not a regular file (a symlink is never copied)"
            elif len(result.files) >= MAX_FILES or total + st.st_size > MAX_BYTES:
                why = f"over the copy limit ({MAX_FILES} files, {MAX_BYTES // 2**20} MiB)"
            else:
                total += st.st_size
                result.files.append((p, st.st_size))
                continue
        result.refused.append((p, why))
    return result


def _own_dirs(cfg: Config) -> list[str]:
    """The board's own places inside the checkout: never copied into a tree."""

    own = [BOARD_DIR, ".git", *cfg.board.scratch]
    try:
        own.append(str(cfg.worktrees_dir.relative_to(cfg.root.resolve())))
    except ValueError:
        pass
    return [d.strip("/") for d in own if d.strip("/")]


def _through_link(tree: Path, rel: str) -> bool:
    """Whether a folder on `rel`'s way inside the tree is a symlink (a copy would be written
    wherever it points, outside the tree)."""
    here = tree
    for part in rel.split("/")[:-1]:
        here = here / part
        if here.is_symlink():
            return True
        if not here.exists():
            return False
    return False


def _regular(mode: int) -> bool:
    return stat.S_ISREG(mode)


def _in_venv(root: Path, parts: list[str], seen: dict[str, bool]) -> bool:
    for i in range(1, len(parts)):
        d = "/".join(parts[:i])
        if d not in seen:
            seen[d] = (root / d / "pyvenv.cfg").is_file()
        if seen[d]:
            return True
    return False


def _ignored(cwd: Path, paths: list[str]) -> list[str]:
    """The paths git ignores in `cwd` (its .gitignore files, info/exclude, core.excludesFile)."""
    if not paths:
        return []
    res = git(
        cwd,
        "check-ignore",
        "-z",
        "--stdin",
        "--no-index",
        check=False,
        input_bytes="\0".join(paths).encode() + b"\0",
    )
    if res.returncode not in (0, 1):
        raise GitError(f"git check-ignore: {res.stderr.strip() or 'failed'}")
    return _z(res.stdout)


def copy_into(cfg: Config, tree: Path, start: str) -> CopyPlan:
    """Copy the planned files into a fresh tree, each only where the tree ignores it and does
    not track it (its start point may differ from the checkout); record what was copied."""
    made = plan(cfg)
    if not made.files:
        _write_manifest(tree, start, [])
        return made
    linked = {p for p, _ in made.files if _through_link(tree, p)}
    want = [p for p, _ in made.files if p not in linked]
    tracked = set(_z(out(tree, "--literal-pathspecs", "ls-files", "-z", "--cached", "--", *want)))
    ignored = set(_ignored(tree, want))
    kept: list[tuple[str, int]] = []
    for p, size in made.files:
        if p in linked:
            made.refused.append((p, "a folder on its path in the tree is a symlink"))
            continue
        if p in tracked:
            made.refused.append((p, "the tree's start point tracks it: it would be work"))
            continue
        if p not in ignored:
            made.refused.append((p, "no ignore rule matches it in the tree: it would be work"))
            continue
        dest = tree / p
        dest.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(dest):
            os.unlink(dest)
        shutil.copy2(cfg.root / p, dest, follow_symlinks=False)
        kept.append((p, size))
    made.files = kept
    _write_manifest(tree, start, [p for p, _ in kept])
    return made


def read_regular(path: Path, limit: int) -> bytes:
    """Up to `limit` bytes of `path` when it is a regular file; b"" for anything else. A
    tree and a repository are input: a symlink to a FIFO or a device must not hang a read
    (invariant 8), so the link is not followed and the open does not block."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        chunks = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _manifest_path(tree: Path) -> Path | None:
    gitdir = _gitfile_dir(tree)
    return gitdir / MANIFEST if gitdir is not None else None


def _write_manifest(tree: Path, start: str, files: list[str]) -> None:
    path = _manifest_path(tree)
    if path is None:
        return
    if not files:
        path.unlink(missing_ok=True)
        return
    path.write_text(json.dumps({"start": start, "files": files}), encoding="utf-8")


def copied(tree: Path) -> tuple[str, list[str]]:
    """The start point and the files copied into `tree` ('' and [] when none were)."""
    path = _manifest_path(tree)
    if path is None:
        return "", []
    try:
        data = json.loads(read_regular(path, MAX_INCLUDE_BYTES))
    except (OSError, ValueError):
        return "", []
    if not isinstance(data, dict):
        return "", []
    files = [f for f in data.get("files", []) if isinstance(f, str)]
    start = data.get("start", "")
    return (start if isinstance(start, str) else ""), files


def secrets(root: Path, tree: Path, files: list[str]) -> list[tuple[str, str, str]]:
    """(file, key, value) of every `KEY=value` line in the copied files, as the checkout and
    the tree hold them; values shorter than MIN_SECRET_LEN are left out."""
    found: dict[str, tuple[str, str, str]] = {}
    for rel in files:
        for base in (root, tree):
            data = read_regular(base / rel, MAX_SECRET_FILE_BYTES)
            for raw in data.decode("utf-8", "replace").splitlines():
                m = _KEY_VALUE.match(raw)
                if not m:
                    continue
                value = m.group(2)
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                    value = value[1:-1]
                if len(value) >= MIN_SECRET_LEN and value not in found:
                    found[value] = (rel, m.group(1), value)
    return list(found.values())


def leak_in(cfg: Config, tree: Path, snapshot: str | None = None) -> Leak | None:
    """The first place where the tree's change (its working state, or the save's `snapshot`
    tree) adds a copied value, or where a copied file itself would be committed; None when
    nothing was copied or nothing leaks."""
    start, files = copied(tree)
    if not files or not start:
        return None
    if snapshot is not None:
        changed = set(_z(out(tree, "diff", "--name-only", "-z", "--no-renames", start, snapshot)))
    else:
        changed = set(_z(out(tree, "diff", "--name-only", "-z", "--no-renames", start)))
        changed |= set(_z(out(tree, "ls-files", "-z", "--others", "--exclude-standard")))
    for rel in files:
        if rel in changed:
            return Leak(rel, 0, rel, "")
    values = secrets(cfg.root, tree, files)
    if not values:
        return None
    if snapshot is not None:
        return _scan_diff(
            git(tree, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-renames", "--text",
                start, snapshot).stdout,
            values,
        )  # fmt: skip
    leak = _scan_diff(
        git(tree, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-renames", "--text",
            start).stdout,
        values,
    )  # fmt: skip
    if leak is not None:
        return leak
    others = _z(out(tree, "ls-files", "-z", "--others", "--exclude-standard"))
    read = 0
    for rel in others:
        path = tree / rel
        data = read_regular(path, MAX_DIFF_BYTES - read)
        if path.is_symlink():  # git would commit the link's target as its content
            data = os.fsencode(os.readlink(path))
        read += len(data)
        for number, text in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
            for source, key, value in values:
                if value in text:
                    return Leak(rel, number, source, key)
        if read >= MAX_DIFF_BYTES:
            break
    return None


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def _scan_diff(diff: str, values: list[tuple[str, str, str]]) -> Leak | None:
    """The first added line of a `git diff -U0` that holds one of the values."""
    path = ""
    number = 0
    for text in lines(diff[:MAX_DIFF_BYTES]):
        if text.startswith("+++ "):
            name = text[4:]
            path = name[2:] if name.startswith("b/") else name
            continue
        m = _HUNK.match(text)
        if m:
            number = int(m.group(1))
            continue
        if text.startswith("+"):
            for source, key, value in values:
                if value in text:
                    return Leak(path, number, source, key)
            number += 1
    return None


def check_save(cfg: Config, tree: Path, snapshot: str) -> None:
    """The save's last line: raise SecretLeak (the tree kept as it is) when the snapshot
    about to go on a branch holds a copied value or a copied file."""
    leak = leak_in(cfg, tree, snapshot)
    if leak is not None:
        raise SecretLeak(str(tree), leak, cfg.board.base)

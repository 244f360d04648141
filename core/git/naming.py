"""What the board calls its trees, branches and saves, and where git keeps them.

Every other part of git and trees reads these names, so they sit below all of them: a tree is
`feat-<id>[-<slug>]` on `feat/<id>[-<slug>]`, a save is `stranded/<tree dir>/<UTC ms
stamp>[-N]`. A card's trees are found by directory name, whatever created them, so the name's
grammar is strict: `feat-c-120` is never c-12's, and a name with no card id we can read is
nobody's, so no card's sweep touches it. The save and the removal call the stamp through this
module (`naming.utc_stamp()`), so a test that pins it pins it for both.
"""

from __future__ import annotations

import functools
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from board.core.config import Config
from board.core.errors import Refused
from board.core.git.gitutil import lines, out
from board.core.records import Frozen

TREE_PREFIX = "feat-"
BRANCH_PREFIX = "feat/"
STRANDED = "stranded/"
STRANDED_REFS = "refs/heads/stranded/"
HUSK_DIR = ".stranded"  # husks moved aside, bytes intact, under the worktrees root
TRASH_DIR = ".trash"  # saved trees on their way out; anything left here was saved first
SAVE_TRAILER = "Board-Save"
KIND_SAVED = "saved"  # a tree's work saved before an edge removed it
KIND_ATTEMPT = "attempt"  # a drive's own failed attempt, saved before it climbed a rung
# a candidate of a best-of-N race (issue 42) that was not chosen, saved before its tree went
KIND_CANDIDATE = "candidate"
KINDS = (KIND_SAVED, KIND_ATTEMPT, KIND_CANDIDATE)
# a branch under stranded/ with no Board-Save trailer: the board did not make it, so prune
# never deletes it and discard asks about it by name (a save's kinds are KINDS)
KIND_FOREIGN = "foreign"
STATS_FILE = "stranded-stats.tsv"
STATS_KEPT = "stranded-stats.tsv.cache"  # the listing's rows as read from the stats file
MAX_NAME_TRIES = 100
NO_PARENT_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

_CARD_RE = re.compile(r"^[a-z][a-z0-9]{0,9}-[0-9]+$")
_SLUG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$")


# names ------------------------------------------------------------------------------------


def _check_name(card_id: str, slug: str) -> None:
    if not _CARD_RE.match(card_id):
        raise Refused(f"not a card id: {card_id!r} (expected <prefix>-<number>, e.g. c-12)")
    if slug and (not _SLUG_RE.match(slug) or ".." in slug or slug.endswith(".lock")):
        raise Refused(f"not a usable slug: {slug!r} (letters, digits, '.', '_' and '-')")


def tree_name(card_id: str, slug: str = "") -> str:
    """The directory name of a card's tree: `feat-<id>[-<slug>]`."""
    _check_name(card_id, slug)
    return f"{TREE_PREFIX}{card_id}-{slug}" if slug else f"{TREE_PREFIX}{card_id}"


def branch_for(card_id: str, slug: str = "") -> str:
    """The branch a card's tree is on: `feat/<id>[-<slug>]`."""
    _check_name(card_id, slug)
    return f"{BRANCH_PREFIX}{card_id}-{slug}" if slug else f"{BRANCH_PREFIX}{card_id}"


def card_id_of(tree_dir_name: str, prefix: str) -> str | None:
    """The card id in a tree's directory name, or None when it has none we can read.

    `feat-c-12` and `feat-c-12-fix-login` are c-12's; `feat-c-120` is c-120's, never c-12's;
    `feat-c-12.test1` (a test-rung tree) is nobody's, so no card sweep touches it.
    """
    m = _tree_name_pattern(prefix).fullmatch(tree_dir_name)
    return m.group(1) if m else None


@functools.lru_cache(maxsize=16)
def _tree_name_pattern(prefix: str) -> re.Pattern[str]:
    """Compiled once per card prefix: the sweep reads every tree's name each tick."""
    return re.compile(rf"{TREE_PREFIX}({re.escape(prefix)}-[0-9]+)(?:-(.+))?")


def _branch_of_tree_name(name: str) -> str | None:
    return BRANCH_PREFIX + name[len(TREE_PREFIX) :] if name.startswith(TREE_PREFIX) else None


def card_trees(cfg: Config, card_id: str) -> list[Path]:
    """A card's trees, found by directory name whatever created them (husks included)."""
    return trees_by_card(cfg).get(card_id, [])


def trees_by_card(cfg: Config, names: list[str] | None = None) -> dict[str, list[Path]]:
    """Every card's trees from one reading of the worktrees directory, by card id (as
    `card_trees` finds them): the loop's sweep asks for all its running cards' trees each
    tick, and reading the directory once per card made that tick grow with the square of
    the drives (100 drives: 10,000 names matched). `names`: that reading, when the caller
    has made it (`tree_names`)."""
    root = cfg.worktrees_dir
    found: dict[str, list[Path]] = {}
    for name in tree_names(root) if names is None else names:
        card = card_id_of(name, cfg.board.prefix)
        if card is not None:
            found.setdefault(card, []).append(root / name)
    return found


def tree_names(root: Path) -> list[str]:
    """The names in the worktrees directory, sorted, without the hidden ones (.trash,
    .husks): plain strings from one `scandir`, since the loop's sweep reads them every
    tick, and sorting 100 paths through pathlib was most of that sweep's time."""
    try:
        with os.scandir(root) as found:
            return sorted(entry.name for entry in found if not entry.name.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return []


def utc_stamp() -> str:
    """UTC to the millisecond, e.g. 20250102T030405.678Z: sortable and a valid ref component."""
    now = datetime.now(UTC)
    return now.strftime("%Y%m%dT%H%M%S") + f".{now.microsecond // 1000:03d}Z"


# where git keeps things ------------------------------------------------------------------

_common_dirs: dict[Path, Path] = {}


def common_dir(cfg: Config) -> Path:
    """The repository's shared git dir (where refs and worktree admin entries live)."""
    cached = _common_dirs.get(cfg.root)
    if cached is None:
        cached = Path(out(cfg.root, "rev-parse", "--path-format=absolute", "--git-common-dir"))
        _common_dirs[cfg.root] = cached
    return cached


def _gitfile_dir(tree: Path) -> Path | None:
    """The admin dir a tree's `.git` file points at, or None."""
    try:
        text = (tree / ".git").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:") :].strip())
    return target if target.is_absolute() else (tree / target)


# the trees git lists ---------------------------------------------------------------------


class ListedTree(Frozen):
    """One worktree as `git worktree list` gives it: where, on which branch, whose."""

    path: Path
    branch: str  # the short name checked out there (`feat/c-3`); "" when detached or bare
    card: str | None  # the card its directory name says it is for (`card_id_of`), if any


def listed_trees(cfg: Config) -> list[ListedTree]:
    """Every worktree git knows, the main checkout first, with its branch and its card.

    The control room shows which tree holds a card's work; it asks here rather than
    parsing git's listing and the tree names' grammar itself.
    """
    listing = out(cfg.root, "worktree", "list", "--porcelain", timeout=10)
    trees: list[ListedTree] = []
    path: Path | None = None
    branch = ""
    for line in [*lines(listing), ""]:
        if line.startswith("worktree "):
            path, branch = Path(line[len("worktree ") :]), ""
        elif line.startswith("branch refs/heads/"):
            branch = line[len("branch refs/heads/") :]
        elif not line and path is not None:  # a blank line ends each tree's block
            trees.append(ListedTree(path, branch, card_id_of(path.name, cfg.board.prefix)))
            path = None
    return trees


def card_worktree(cfg: Config, card_id: str, branch: str = "") -> Path | None:
    """The tree holding a card's work: the first listed that is the card's by its name
    (`feat-<id>[-<slug>]`) or has the card's branch checked out; None when none does."""
    for tree in listed_trees(cfg):
        if tree.card == card_id or (branch and tree.branch == branch):
            return tree.path
    return None

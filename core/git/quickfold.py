"""The fold's replay of a card's one commit without its tree: a speed trick, fenced here.

Why: with 100 drives folding, the fold is the board's one serial step (under the run lock),
and its `git rebase` in the card's tree was most of it. The rebase checks out into the
tree every file the run branch gained since the tree started (up to a hundred other
cards'), and took 50 ms of a 75 ms fold on an idle machine, 0.25-0.3 s at load 6-8, so
300 folds held the lock for 80-90 s (docs/performance.md, `bench_fleet`). Here the same
commit is made from objects alone: `git merge-tree --write-tree` (the merge machinery a
rebase uses, ort) and `git commit-tree`, 9 ms, and the tree catches up after the lock.

It stands in for the rebase only where it makes the very commit the rebase would: the
card's HEAD is one commit whose only parent is the commit its tree started from, an
ancestor of the run branch; the commit carries no header a rebase would change (a
signature, an encoding); its change is not empty and not already on the run branch; and
the merge is clean. Anything else (a conflict, a coder's own commits, a hand-moved run
branch) returns None and the fold rebases as before. tests/test_quickfold.py holds it
equal to `git rebase` (tree, author, message, parents, committer) over named cases and
random histories.
"""

from __future__ import annotations

import threading
from pathlib import Path

from board.core.git import gitutil
from board.core.records import Record

# the headers of a commit this replay can reproduce; any other (gpgsig, encoding,
# mergetag) and the rebase is left to say what it makes of it
_HEADERS = ("tree", "parent", "author", "committer")


class OneCommit(Record):
    """A card's HEAD read for the replay: the parts a rebase keeps (author, message) and
    the trees that say whether it changes anything."""

    commit: str
    parent: str
    tree: str
    parent_tree: str
    author_name: str
    author_email: str
    author_date: str  # git's raw form: "<seconds> <zone>"
    message: bytes


def read(cwd: Path, head: str, start: str) -> OneCommit | None:
    """`head` when it can be replayed: one commit on `start`, plain headers, not empty.

    Read before the run lock: a card's commit never changes under its own drive. One git
    process reads both the commit and its parent's tree (`cat-file --batch-command`)."""
    if not (gitutil.is_commit_id(head) and gitutil.is_commit_id(start)):
        return None  # a name, not an id: one line each of the batch's input, nothing else
    res = gitutil.git(
        cwd,
        "cat-file",
        "--batch-command",
        check=False,
        input_bytes=f"contents {head}\ninfo {start}^{{tree}}\n".encode(),
    )
    if res.returncode != 0 or res.timed_out or "\ufffd" in res.stdout:  # not UTF-8: the
        return None  # bytes would change
    said, _, rest = res.stdout.partition("\n")
    kind = said.split(" ")
    text, _, info = rest[:-1].rpartition("\n")  # the commit, "\n", the tree's line, "\n"
    if len(kind) != 3 or kind[1] != "commit" or not kind[2].isdigit():
        return None
    if len(text.encode()) != int(kind[2]) or not rest.endswith("\n"):
        return None
    found = info.split(" ")
    if len(found) != 3 or found[1] != "tree" or not gitutil.is_commit_id(found[0]):
        return None
    parent_tree = found[0]
    header, sep, message = text.partition("\n\n")
    if not sep:
        return None
    fields: dict[str, list[str]] = {}
    for line in header.split("\n"):
        key, _, value = line.partition(" ")
        if key not in _HEADERS or not value:  # also a continuation line (" ..."): a signature
            return None
        fields.setdefault(key, []).append(value)
    if fields.get("parent") != [start] or len(fields.get("tree", ())) != 1:
        return None
    author = fields.get("author", [])
    who = _person(author[0]) if len(author) == 1 else None
    if who is None:
        return None
    if parent_tree == fields["tree"][0]:
        return None  # an empty commit: the rebase drops or keeps it by its own rules
    name, email, date = who
    return OneCommit(
        head, start, fields["tree"][0], parent_tree, name, email, date, message.encode()
    )


def _person(value: str) -> tuple[str, str, str] | None:
    """`Name <email> 1700000000 +0100` → its three parts (None when it is not that form)."""
    name, lt, rest = value.partition(" <")
    email, gt, date = rest.partition("> ")
    seconds, _, zone = date.partition(" ")
    if not (lt and gt and seconds.isdigit() and len(zone) == 5 and zone[0] in "+-"):
        return None
    if any(c in name + email for c in "<>\n\0"):
        return None
    return name, email, f"@{seconds} {zone}"


class RunLine:
    """What this process knows of one local run branch from its own folds, so that a fold
    under the run lock asks git three times, not six (merge-tree, commit-tree, the
    compare-and-swap): the tip it last set (or read) there, commits known to be that tip's
    ancestors, and the trees of commits it made.

    Why: the run lock is the board's one serial step; with 100 drives ending together the
    folds queued a median 3.8 s (p90 9.2 s) behind it at load 10 (bench_fleet's stages),
    and half of each fold's calls under it asked what the fold before had just said.

    Only `publish._Fold` uses it, under the run lock. Nothing here is trusted for safety:
    `guess` is a tip the compare-and-swap `update-ref` checks (anyone else's move makes it
    fail, and the fold asks git); ancestry never changes once true; a commit's tree never
    changes. tests/test_quickfold.py holds a sequence of folds equal with and without it."""

    MAX = 4096  # commits remembered before it starts over (a few hundred KiB)

    def __init__(self) -> None:
        self.tip = ""
        self.below: set[str] = set()
        self.trees: dict[str, str] = {}

    def guess(self) -> str:
        """The tip this process last set or read under the lock ('' when it knows none)."""
        return self.tip

    def saw(self, tip: str) -> None:
        """The tip as git said it under the lock: what was known holds only for that tip."""
        if tip != self.tip:
            self.tip, self.below, self.trees = tip, set(), {}

    def holds(self, commit: str, tip: str) -> bool:
        """`commit` is known to be `tip` or an ancestor of it."""
        return tip == self.tip and bool(tip) and (commit == tip or commit in self.below)

    def made(self, old: str, new: str, tree: str = "") -> None:
        """The compare-and-swap moved the run branch from `old` to `new`, a descendant."""
        if old != self.tip or len(self.below) >= self.MAX:
            self.below, self.trees = set(), {}
        else:
            self.below.add(old)
        self.tip = new
        if tree:
            self.trees[new] = tree

    def lost(self) -> None:
        """The compare-and-swap failed: someone else moved the branch; forget everything."""
        self.tip, self.below, self.trees = "", set(), {}


_LINES: dict[tuple[str, str], RunLine] = {}
_LINES_MU = threading.Lock()


def line(root: Path, run_ref: str) -> RunLine:
    """This process's `RunLine` of `run_ref` in the repository at `root`."""
    key = (str(Path(root).resolve()), run_ref)
    with _LINES_MU:
        return _LINES.setdefault(key, RunLine())


def replay(
    cwd: Path,
    one: OneCommit,
    onto: str,
    env: dict[str, str],
    timeout: float = gitutil.GIT_TIMEOUT_S,
    known: RunLine | None = None,
) -> str | None:
    """The commit `git rebase onto` makes of `one`, made from objects alone; None when only
    the rebase can say (its start is not under `onto`, a conflict, already applied).

    Call under the run lock with `onto` the run branch's tip as read there; `env` is the
    rebase's committer. `known` answers what it can of the ancestry and `onto`'s tree."""
    if not (known is not None and known.holds(one.parent, onto)) and not gitutil.ok(
        cwd, "merge-base", "--is-ancestor", one.parent, onto, timeout=timeout
    ):
        return None  # merge-tree's merge base would not be the commit's parent
    res = gitutil.git(
        cwd,
        "merge-tree",
        "--write-tree",
        "--no-messages",
        f"{onto}^{{commit}}",
        one.commit,
        check=False,
        timeout=timeout,
    )
    lines = gitutil.lines(res.stdout)
    if res.returncode != 0 or res.timed_out or not lines:
        return None  # a conflict: the rebase names its paths
    tree = lines[0].strip()
    onto_tree = (known.trees.get(onto) if known is not None else None) or gitutil.out(
        cwd, "rev-parse", f"{onto}^{{tree}}", timeout=timeout
    )
    if tree == onto_tree:
        return None  # the run branch holds the change already: the rebase drops the commit
    author = {
        "GIT_AUTHOR_NAME": one.author_name,
        "GIT_AUTHOR_EMAIL": one.author_email,
        "GIT_AUTHOR_DATE": one.author_date,
    }
    made = gitutil.git(
        cwd,
        *gitutil.NO_HOOKS,
        "commit-tree",
        tree,
        "-p",
        onto,
        "-F",
        "-",
        env={**env, **author},
        input_bytes=one.message,
        check=False,
        timeout=timeout,
    )
    new = made.stdout.strip()
    if made.returncode != 0 or not new:
        return None
    if known is not None:
        known.trees[new] = tree
    return new


def catch_up(tree: Path, one: OneCommit, new: str) -> bool:
    """Move the card's tree and branch from its commit to the replayed one, as the rebase
    would have left them; after the run lock. False (nothing moved) when the tree is not
    where it was: its owner saves it as it is."""
    if gitutil.rev(tree, "HEAD") != one.commit:
        return False
    return gitutil.ok(tree, *gitutil.NO_HOOKS, "reset", "-q", "--keep", new)

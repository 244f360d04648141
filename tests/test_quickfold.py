"""quickfold's replay is held equal to the fold's rebase: the same commit, byte for byte.

Each case is a real repository: a start commit S, the run branch moved on from S (the
other cards' folds), and the card's one commit C on S in a tree of its own. The plain
path is the fold's own `publish._rebase` in that tree; the trick is `quickfold.read` and
`quickfold.replay` with the same committer and the same clock (GIT_COMMITTER_DATE), so
equal commits have equal ids. Wherever the replay makes a commit, it must be the rebase's;
where it declines (None), the fold rebases, so declining is always safe. The named cases
also say which way each goes, so the trick cannot silently stop covering the fold's
common case (surfaces apart), and the random histories look for a case nobody named.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from board.core.config import PublishSection
from board.core.git import quickfold
from board.core.publish import publish

from tests.support.repos import git

COMMITTER = {"GIT_COMMITTER_NAME": "board", "GIT_COMMITTER_EMAIL": "board@localhost"}
Edit = Callable[[Path], None]


def write(rel: str, text: str | bytes, mode: int | None = None) -> Edit:
    def edit(root: Path) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        if mode is not None:
            path.chmod(mode)

    return edit


def remove(rel: str) -> Edit:
    return lambda root: (root / rel).unlink()


def rename(old: str, new: str) -> Edit:
    def edit(root: Path) -> None:
        (root / new).parent.mkdir(parents=True, exist_ok=True)
        (root / old).rename(root / new)

    return edit


def link(rel: str, target: str) -> Edit:
    return lambda root: os.symlink(target, root / rel)


LINES = "".join(f"line {i}\n" for i in range(1, 21))
BASE: dict[str, str] = {
    "README.md": "readme\n",
    "lib/a.py": LINES,
    "lib/b.py": "b = 1\n",
    "docs/guide.md": "guide\n",
}


class Case:
    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "repo"
        self.root.mkdir()
        git(self.root, "init", "-q", "-b", "main")
        for rel, text in BASE.items():
            write(rel, text)(self.root)
        self.commit("start")
        self.start = git(self.root, "rev-parse", "HEAD")

    def commit(self, message: str, root: Path | None = None, env: dict | None = None) -> str:
        where = root or self.root
        git(where, "add", "-A")
        git(where, "commit", "-q", "--allow-empty", "-m", message, env=env)
        return git(where, "rev-parse", "HEAD")

    def run_side(self, *commits: list[Edit]) -> str:
        """The run branch's commits on the start (the other cards' folds); its tip."""
        git(self.root, "checkout", "-q", "-b", "run")
        for i, edits in enumerate(commits):
            for edit in edits:
                edit(self.root)
            self.commit(f"run {i}")
        tip = git(self.root, "rev-parse", "HEAD")
        git(self.root, "checkout", "-q", "--detach")
        return tip

    def card(self, edits: list[Edit], message: str = "c-1: the card\n\nBuilt by board.", env=None):
        """The card's tree at the start, with its one commit; (tree, commit)."""
        tree = self.root.parent / "tree"
        git(self.root, "worktree", "add", "-q", "-b", "feat/c-1", str(tree), self.start)
        for edit in edits:
            edit(tree)
        git(tree, "add", "-A")
        msg = tree.parent / "msg"
        msg.write_bytes(message.encode() if isinstance(message, str) else message)
        git(tree, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-F", str(msg), env=env)
        return tree, git(tree, "rev-parse", "HEAD")


def both(case: Case, tree: Path, head: str, tip: str, monkeypatch) -> tuple[str | None, str | None]:
    """(the replay's commit or None, the rebase's commit or None on a conflict)."""
    monkeypatch.setenv("GIT_COMMITTER_DATE", "@1800000000 +0000")
    one = quickfold.read(tree, head, case.start)
    replayed = quickfold.replay(case.root, one, tip, COMMITTER) if one is not None else None
    ok, _paths, _said = publish._rebase(PublishSection(), tree, tip)
    rebased = git(tree, "rev-parse", "HEAD") if ok else None
    if replayed is not None:
        assert rebased is not None, "the replay made a commit where the rebase conflicts"
        assert git(case.root, "cat-file", "commit", replayed) == git(
            case.root, "cat-file", "commit", rebased
        ), "the replay's commit is not the rebase's"
        assert replayed == rebased
    return replayed, rebased


# (name, the run side's commits, the card's edits, whether the replay makes the commit)
CASES: list[tuple[str, list[list[Edit]], list[Edit], bool]] = [
    ("surfaces apart: a new file each", [[write("work/c-2.txt", "2\n")]],
     [write("work/c-1.txt", "1\n")], True),
    ("many folds since the start", [[write(f"work/c-{i}.txt", f"{i}\n")] for i in range(2, 40)],
     [write("work/c-1.txt", "1\n")], True),
    ("one file, hunks apart", [[write("lib/a.py", LINES.replace("line 2\n", "LINE 2\n"))]],
     [write("lib/a.py", LINES.replace("line 19\n", "LINE 19\n"))], True),
    ("one file, one hunk: a conflict", [[write("lib/a.py", LINES.replace("line 5", "run"))]],
     [write("lib/a.py", LINES.replace("line 5", "card"))], False),
    ("the change is on the run branch already", [[write("lib/b.py", "b = 2\n")]],
     [write("lib/b.py", "b = 2\n")], False),
    ("the card renames what the run changed",
     [[write("lib/a.py", LINES.replace("line 3\n", "LINE 3\n"))]],
     [rename("lib/a.py", "lib/moved.py")], True),
    ("the run renames what the card changed", [[rename("lib/a.py", "src/a.py")]],
     [write("lib/a.py", LINES + "line 21\n")], True),
    ("the run moves a directory the card adds to", [[rename("lib", "pkg")]],
     [write("lib/new.py", "new\n")], False),
    ("the card deletes a file", [[write("work/c-2.txt", "2\n")]], [remove("docs/guide.md")], True),
    ("modify against delete", [[remove("lib/b.py")]], [write("lib/b.py", "b = 3\n")], False),
    ("an executable bit", [[write("work/c-2.txt", "2\n")]],
     [write("tool.sh", "#!/bin/sh\n", 0o755)], True),
    ("a symlink", [[write("work/c-2.txt", "2\n")]], [link("latest", "lib/b.py")], True),
    ("a binary file", [[write("img.bin", bytes(range(256)) * 4)]],
     [write("data.bin", bytes(reversed(range(256))) * 4)], True),
    ("both add one file alike", [[write("same.txt", "same\n")]],
     [write("same.txt", "same\n"), write("work/c-1.txt", "1\n")], True),
    ("both add one file apart", [[write("same.txt", "run\n")]], [write("same.txt", "card\n")],
     False),
]  # fmt: skip


@pytest.mark.parametrize(("name", "run", "edits", "fast"), CASES, ids=[c[0] for c in CASES])
def test_the_replay_is_the_rebase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, run, edits, fast: bool
) -> None:
    case = Case(tmp_path)
    tip = case.run_side(*run)
    tree, head = case.card(edits)
    replayed, _ = both(case, tree, head, tip, monkeypatch)
    assert (replayed is not None) == fast, f"{name}: the replay {'declined' if fast else 'ran'}"


@pytest.mark.parametrize(
    ("name", "message", "env"),
    [
        ("a message with no newline at its end", "c-1: no end", None),
        ("trailing blank lines and spaces", "c-1: spaces  \n\n\nbody  \n\n\n", None),
        ("a message in UTF-8", "c-1: ünïcödé — ✓\n\n日本語\n", None),
        ("an author in another zone, long ago",
         "c-1: old\n", {"GIT_AUTHOR_DATE": "@1000000000 -0930", "GIT_AUTHOR_NAME": "A. Person"}),
    ],
)  # fmt: skip
def test_the_replay_keeps_what_the_rebase_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, message: str, env
) -> None:
    case = Case(tmp_path)
    tip = case.run_side([write("work/c-2.txt", "2\n")])
    tree, head = case.card([write("work/c-1.txt", "1\n")], message=message, env=env)
    replayed, _ = both(case, tree, head, tip, monkeypatch)
    assert replayed is not None, f"{name}: the replay declined"


def test_what_the_replay_cannot_make_it_leaves_to_the_rebase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A coder's own commits (two on the start), an empty commit, a start the run branch
    does not hold, a message that is not UTF-8: read or replay declines, never guesses."""
    case = Case(tmp_path)
    tip = case.run_side([write("work/c-2.txt", "2\n")])
    tree, first = case.card([write("work/c-1.txt", "1\n")])
    write("work/c-1b.txt", "1b\n")(tree)
    second = case.commit("c-1: a second commit", root=tree)
    assert quickfold.read(tree, second, case.start) is None, "two commits were read as one"
    git(tree, "reset", "-q", "--hard", first)
    empty = case.commit("c-1: empty", root=tree)
    assert quickfold.read(tree, empty, first) is None, "an empty commit was read"
    one = quickfold.read(tree, first, case.start)
    assert one is not None
    # a start the run branch does not hold: the merge's base would be the start's parent,
    # where the rebase replays the start's commit too
    git(tree, "reset", "-q", "--hard", case.start)
    write("lib/b.py", "b = 5\n")(tree)
    newer = case.commit("a newer base", root=tree)
    write("work/c-1.txt", "1\n")(tree)
    on_newer = case.commit("c-1: on the newer base", root=tree)
    one = quickfold.read(tree, on_newer, newer)
    assert one is not None
    assert quickfold.replay(case.root, one, tip, COMMITTER) is None, (
        "replayed onto a tip that does not hold the commit's start"
    )
    git(tree, "reset", "-q", "--hard", first)
    raw = git(tree, "cat-file", "commit", first).encode()
    header, _, _message = raw.partition(b"\n\n")
    for odd, why in [
        (header + b"\n\nc-1: caf\xe9\n", "a message that is not UTF-8"),
        (header + b"\nencoding ISO-8859-1\n\nc-1: cafe\n", "an encoding header"),
        (header + b"\ngpgsig -----BEGIN PGP SIGNATURE-----\n x\n -----END PGP SIGNATURE-----"
         b"\n\nc-1: signed\n", "a signature"),
    ]:  # fmt: skip
        made = tmp_path / "made"
        made.write_bytes(odd)
        crafted = git(tree, "hash-object", "-t", "commit", "-w", str(made))
        assert quickfold.read(tree, crafted, case.start) is None, f"{why} was read"


def test_the_tree_catches_up_as_the_rebase_would_have_left_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = Case(tmp_path)
    tip = case.run_side([write("work/c-2.txt", "2\n")], [write("lib/b.py", "b = 9\n")])
    tree, head = case.card([write("work/c-1.txt", "1\n")])
    one = quickfold.read(tree, head, case.start)
    assert one is not None
    new = quickfold.replay(case.root, one, tip, COMMITTER)
    assert new is not None
    assert quickfold.catch_up(tree, one, new)
    assert git(tree, "rev-parse", "HEAD") == new
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD") == "feat/c-1"
    assert git(tree, "status", "--porcelain") == ""
    assert (tree / "work" / "c-2.txt").read_text() == "2\n"
    assert (tree / "lib" / "b.py").read_text() == "b = 9\n"
    assert not quickfold.catch_up(tree, one, new), "a tree that moved on was moved again"


PATHS = ["a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "g.txt"]


def _random_edits(rng: random.Random, root: Path) -> None:
    for _ in range(rng.randint(1, 3)):
        rel = rng.choice(PATHS)
        path = root / rel
        roll = rng.random()
        if path.exists() and roll < 0.15:
            path.unlink()
        elif path.exists() and roll < 0.25:
            other = rng.choice([p for p in PATHS if not (root / p).exists()] or [rel])
            if other != rel:
                (root / other).parent.mkdir(parents=True, exist_ok=True)
                path.rename(root / other)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            lines = path.read_text().splitlines(keepends=True) if path.exists() else []
            lines = lines or [f"{i}\n" for i in range(8)]
            i = rng.randrange(len(lines))
            lines[i] = f"{rng.choice(['x', 'y', 'z'])}{i}\n"
            path.write_text("".join(lines))


@pytest.mark.parametrize("seed", range(24))
def test_random_histories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Small random histories on five paths (edits, deletions, renames, conflicts): wherever
    the replay makes a commit, it is the rebase's."""
    rng = random.Random(seed)
    case = Case(tmp_path)
    for rel in PATHS[:3]:
        write(rel, "".join(f"{i}\n" for i in range(8)))(case.root)
    case.commit("five paths")
    case.start = git(case.root, "rev-parse", "HEAD")
    git(case.root, "checkout", "-q", "-b", "run")
    for i in range(rng.randint(1, 3)):
        _random_edits(rng, case.root)
        case.commit(f"run {i}")
    tip = git(case.root, "rev-parse", "HEAD")
    git(case.root, "checkout", "-q", "--detach")
    tree, head = case.card([lambda root: _random_edits(rng, root)])
    if head != case.start and git(tree, "rev-parse", "HEAD^{tree}") != git(
        tree, "rev-parse", f"{case.start}^{{tree}}"
    ):
        both(case, tree, head, tip, monkeypatch)


# the run line: what a process knows of the run branch from its own folds --------------------


def _fold_cards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: list[str]):
    """A board with one card per file, all built from the same start (as 100 drives ending
    together are), each folded in turn; the run branch's commits, newest first."""
    from tests.support.boards import make_board
    from tests.support.loop import add_card, built_tree

    for var in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(var, "@1700000000 +0000")  # equal commits have equal ids
    tmp_path.mkdir(parents=True, exist_ok=True)
    cfg, store = make_board(tmp_path, origin=True)
    built = []
    for rel in files:
        card = add_card(store, f"edit {rel}", surface=[rel])
        built.append((card, *built_tree(cfg, store, card, rel, f"{card.id} was here\n")))
    for card, token, tree, start in built:
        res = publish.fold(cfg, store, store.get(card.id), tree, token, start=start)
        assert res.outcome == "done", res
    log = git(cfg.root, "log", "--format=%H %T %P", cfg.board.run_branch).splitlines()
    store.close()
    return cfg, log


def test_folds_with_the_run_line_make_the_commits_folds_without_it_make(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = ["a.txt", "b.txt", "dir/c.txt", "d.txt"]
    _, known = _fold_cards(tmp_path / "known", monkeypatch, files)
    with monkeypatch.context() as m:  # a line that never knows anything: git is asked each time
        m.setattr(quickfold, "line", lambda root, ref: quickfold.RunLine())
        _, asked = _fold_cards(tmp_path / "asked", monkeypatch, files)
    assert len(known) == len(files) + 1
    assert known == asked, "the run line changed what the folds made"


def test_a_fold_after_this_processs_fold_asks_git_only_what_it_does_not_know(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under the run lock, the folds after the first ask git for the merge and the commit
    and the compare-and-swap, not again for the tip, its tree or the start's ancestry."""
    from board.core import proc

    real = proc.run
    calls: list[tuple[str, ...]] = []

    def counting(argv, *args, **kw):
        calls.append(tuple(str(a) for a in argv))
        return real(argv, *args, **kw)

    original = publish._Fold.under_lock

    def under_lock(self):
        monkeypatch.setattr(proc, "run", counting)
        try:
            return original(self)
        finally:
            monkeypatch.setattr(proc, "run", real)

    monkeypatch.setattr(publish._Fold, "under_lock", under_lock)
    _fold_cards(tmp_path, monkeypatch, ["a.txt", "b.txt", "c.txt"])
    asked = [" ".join(a[1:3]) for a in calls if a[0] == "git"]
    assert asked.count("merge-base --is-ancestor") == 0, asked
    assert [a for a in asked if a.startswith("rev-parse")] == ["rev-parse --verify"], (
        f"the tip or a tree was asked again: {asked}"
    )
    assert asked.count("merge-tree --write-tree") == 2, asked  # the first fold fast-forwards


def test_a_tip_moved_by_someone_else_is_found_and_folded_onto(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The line's tip is a guess the compare-and-swap checks: moved by another writer between
    two folds (here back to what the first fold changed, so the replay onto the guess
    conflicts and onto the real tip does not), the second card lands on the real tip and is
    not blocked for a conflict the run branch does not have."""
    from tests.support.boards import make_board
    from tests.support.loop import add_card, built_tree

    cfg, store = make_board(tmp_path, origin=True)
    built = []
    for n in (1, 2):
        card = add_card(store, f"edit {n}", surface=["shared.txt"])
        built.append((card, *built_tree(cfg, store, card, "shared.txt", f"card {n}'s line\n")))
    (card1, token1, tree1, start1), (card2, token2, tree2, start2) = built
    assert publish.fold(cfg, store, store.get(card1.id), tree1, token1, start=start1).outcome == (
        "done"
    )
    # another writer puts the run branch's file back as it was before card 1
    side = tmp_path / "side"
    git(cfg.root, "worktree", "add", "-q", "--detach", str(side), cfg.board.run_branch)
    git(side, "revert", "--no-edit", "HEAD")
    moved = git(side, "rev-parse", "HEAD")
    git(cfg.root, "update-ref", f"refs/heads/{cfg.board.run_branch}", moved)
    git(cfg.root, "worktree", "remove", "--force", str(side))

    res = publish.fold(cfg, store, store.get(card2.id), tree2, token2, start=start2)
    assert res.outcome == "done", res
    assert store.get(card2.id).blocked is None
    tip = git(cfg.root, "rev-parse", cfg.board.run_branch)
    assert git(cfg.root, "rev-parse", f"{tip}^") == moved, "the other writer's commit was lost"
    assert git(cfg.root, "show", f"{tip}:shared.txt") == "card 2's line"
    store.close()

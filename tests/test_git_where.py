"""Where the repository is: read from `.git` on disk, it must be git's own answer.

Every verb finds the main working tree's root first. `board card list` used to ask git
(`rev-parse --git-common-dir`), a process on every call; core/git/where.py now reads the
plain layouts from disk and leaves the rest to git. Each case here asks both and requires
the same root, or the same refusal; the plain layouts must also be read without git
(otherwise the quick path would pass these tests by never running).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from board.core.errors import BoardError
from board.core.git import gitutil, where

from tests.support.repos import git


def _answer(find: Callable[[Path], Path], start: Path) -> str:
    try:
        return str(find(start))
    except BoardError as exc:
        return f"refused: {exc.line()}"


def _same(start: Path, quick: bool) -> str:
    """Both answers for `start`, required equal; whether git was left out, as expected."""
    want = _answer(gitutil.toplevel, start)
    assert _answer(where.toplevel, start) == want, start
    assert (where._from_disk(start) is not None) == quick, start
    return want


def _repo(path: Path) -> Path:
    git(path.parent, "init", "-q", "-b", "main", str(path))
    (path / "a" / "b" / "c").mkdir(parents=True)
    (path / "a" / "f.txt").write_text("x\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def test_a_main_working_tree_and_its_subdirectories(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    for start in (root, root / "a", root / "a" / "b" / "c"):
        assert _same(start, quick=True) == str(root)


def test_a_linked_worktree_answers_with_the_main_tree(tmp_path: Path) -> None:
    """As board's own trees are: inside the main tree (.worktrees/), and one outside it."""
    root = _repo(tmp_path / "repo")
    inside, outside = root / ".worktrees" / "feat-c-1", tmp_path / "elsewhere" / "wt"
    git(root, "worktree", "add", "-q", "-b", "feat-c-1", str(inside))
    git(root, "worktree", "add", "-q", "--detach", str(outside))
    for start in (inside, inside / "a", outside, outside / "a"):
        assert _same(start, quick=True) == str(root)


def test_a_path_through_a_symlink_and_a_relative_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path / "repo")
    link = tmp_path / "link"
    link.symlink_to(root / "a")
    assert _same(link, quick=True) == str(root)
    monkeypatch.chdir(root / "a" / "b")
    assert _same(Path("c"), quick=True) == str(root)
    assert _same(Path(".."), quick=True) == str(root)


@pytest.mark.parametrize(
    "var", ["GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES", "GIT_COMMON_DIR"]
)
def test_the_environment_leaves_it_to_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, var: str
) -> None:
    root = _repo(tmp_path / "repo")
    other = _repo(tmp_path / "other")
    value = {
        "GIT_DIR": str(other / ".git"),
        "GIT_WORK_TREE": str(other),
        "GIT_CEILING_DIRECTORIES": str(root),
        "GIT_COMMON_DIR": str(other / ".git"),
    }[var]
    monkeypatch.setenv(var, value)
    _same(root / "a", quick=False)


@pytest.mark.parametrize(
    "setting", [("core.worktree", "../elsewhere"), ("core.bare", "true"), ("include.path", "x")]
)
def test_a_config_that_moves_or_widens_the_tree_leaves_it_to_git(
    tmp_path: Path, setting: tuple[str, str]
) -> None:
    root = _repo(tmp_path / "repo")
    (tmp_path / "elsewhere").mkdir()
    git(root, "config", *setting)
    _same(root / "a", quick=False)


def test_a_submodule_and_a_separate_git_dir_leave_it_to_git(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    lib = _repo(tmp_path / "lib")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "sub")
    assert _same(root / "sub" / "a", quick=False) == str(root / "sub")
    assert _same(root / "a", quick=True) == str(root)

    sep = tmp_path / "sep"
    git(tmp_path, "init", "-q", "--separate-git-dir", str(tmp_path / "sep.git"), str(sep))
    (sep / "d").mkdir()
    assert _same(sep / "d", quick=False) == str(sep)


def test_a_symlinked_dot_git_leaves_it_to_git(tmp_path: Path) -> None:
    real = _repo(tmp_path / "real")
    other = tmp_path / "other"
    other.mkdir()
    (other / ".git").symlink_to(real / ".git")
    _same(other, quick=False)


def test_bare_repositories_the_inside_of_git_and_no_repository(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    assert _same(bare, quick=False).startswith("refused: ")
    assert _same(bare / "refs", quick=False).startswith("refused: ")
    wt = tmp_path / "from-bare"
    git(root, "push", "-q", str(bare), "main")
    git(bare, "worktree", "add", "-q", str(wt), "main")
    assert _same(wt, quick=False) == str(wt)
    _same(root / ".git" / "refs", quick=False)
    nothing = tmp_path / "plain" / "dir"
    nothing.mkdir(parents=True)
    assert _same(nothing, quick=False).startswith("refused: ")
    assert _same(tmp_path / "missing", quick=False).startswith("refused: ")


def test_another_user_s_repository_leaves_it_to_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git refuses a repository another user owns unless safe.directory allows it: the
    quick path never decides that (here this user is made to look like someone else)."""
    root = _repo(tmp_path / "repo")
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(root).st_uid + 1)
    assert where._from_disk(root / "a") is None


def test_git_on_path_is_shutil_which_s_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """where._on_path (no shutil import) answers as shutil.which over the PATHs that differ:
    unset, empty, the current directory, files that are not executable, directories, links."""
    import shutil

    plain, folder, runs, linked, empty = (tmp_path / n for n in ("p", "f", "r", "l", "e"))
    for d in (plain, folder, runs, linked, empty):
        d.mkdir()
    (plain / "git").write_text("")  # not executable
    (folder / "git").mkdir()  # a directory, even executable
    (runs / "git").write_text("#!/bin/sh\n")
    (runs / "git").chmod(0o755)
    (linked / "git").symlink_to(runs / "git")
    (empty / "git").symlink_to(tmp_path / "missing")  # a dangling link
    monkeypatch.chdir(runs)
    paths: list[str | None] = [
        None,
        "",
        ":",
        ".",
        "p",
        str(plain),
        f"{plain}:{folder}",
        f"{plain}:{folder}:{empty}",
        f"{plain}:{runs}",
        f"{folder}:{linked}",
        f"{empty}:{plain}:{plain}",
        f"{plain}::",
        f"{plain}:",
        f"{tmp_path / 'nowhere'}",
        os.environ.get("PATH", ""),
    ]
    answers = []
    for value in paths:
        if value is None:
            monkeypatch.delenv("PATH", raising=False)
        else:
            monkeypatch.setenv("PATH", value)
        want = shutil.which("git") is not None
        assert where._on_path("git") == want, value
        answers.append(want)
    assert True in answers and False in answers  # both answers are checked

"""An older commit's source, laid out as the import package `board`, for a child process
that makes a board with that code (tests/test_state_upgrade.py, tests/test_store_usage.py):
what an operator's board really holds when a newer board opens it, not what a test
thinks an older board held."""

from __future__ import annotations

import shutil
import sys
import tarfile
from pathlib import Path

from board.core import proc
from board.core.git import gitutil

ROOT = Path(__file__).resolve().parents[2]


def package_of(commit: str, dest: Path) -> Path:
    """The source of `commit` as a folder for PYTHONPATH: board/, with core/, tui/ and
    themes/ inside it, as pyproject maps them. Fails the test when the commit is not in
    this repository's history."""
    import pytest  # a helper of the tests only

    tar = dest / "old.tar"
    res = gitutil.git(
        ROOT, "archive", "-o", str(tar), commit, "--", "board", "core", "tui", "themes",
        check=False,
    )  # fmt: skip
    if res.returncode != 0:
        pytest.fail(f"commit {commit} is needed in {ROOT}'s history to make an old board: "
                    f"{res.stderr}")  # fmt: skip
    with tarfile.open(tar) as archive:
        archive.extractall(dest / "src", filter="data")
    pkg = dest / "pkg"
    shutil.copytree(dest / "src" / "board", pkg / "board")
    for part in ("core", "tui", "themes"):
        shutil.copytree(dest / "src" / part, pkg / "board" / part)
    return pkg


def run_script(script: Path, pkg: Path, tmp_path: Path, *args: str) -> None:
    """Run `script` (a file of tests/support/) under the code in `pkg`, from a copy in
    `tmp_path` (so its folder, sys.path[0], is not tests/support)."""
    copy = tmp_path / script.name
    shutil.copy(script, copy)
    res = proc.run(
        [sys.executable, str(copy), *args], cwd=tmp_path, env={"PYTHONPATH": str(pkg)},
        timeout=180,
    )  # fmt: skip
    assert res.returncode == 0, f"the old code failed:\n{res.stdout}\n{res.stderr}"


# what a card of a board made before schema 9 (`board card import`, issue 44) gains in its
# JSON when a newer board opens it: no source
NO_SOURCE = {"source": None, "source_url": None}

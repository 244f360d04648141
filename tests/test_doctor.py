"""`board doctor` on real repositories, real setups and real gates: ready, or says why not.

Each red test is a repository a first card would have found broken only once claimed (a gate
red in a fresh tree, a setup that fails, a coder not installed, a copy refused, a gate that
imports the operator's checkout); each checks the throwaway tree is gone afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from board.core import proc
from board.core.ops import pytrap

from tests.support.boards import make_board
from tests.support.loop import write_config
from tests.support.paths import script
from tests.support.procs import group_members, kill_group_quietly
from tests.support.repos import GIT_ENV, git, run_cli
from tests.support.waiting import has_text, wait_for


def doctor(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    res = run_cli(root, "doctor", *args, timeout=600, env=env)
    assert "Traceback" not in res.stderr, res.stderr
    return res.returncode, res.stdout, res.stderr


def line_of(out: str, name: str) -> str:
    """The line of the check `name` (`ok    gate: …`)."""
    found = [ln for ln in out.splitlines() if ln[6:].startswith(f"{name}: ")]
    assert len(found) == 1, f"no single {name!r} line in:\n{out}"
    return found[0]


def no_doctor_tree(root: Path) -> None:
    trees = root / ".worktrees"
    left = sorted(p.name for p in trees.iterdir()) if trees.is_dir() else []
    assert [n for n in left if n.startswith("doctor-")] == [], f"a doctor tree was left: {left}"
    listed = [ln for ln in git(root, "worktree", "list", "--porcelain").splitlines()]
    assert [ln for ln in listed if ln.startswith("worktree ")] == [f"worktree {root}"], listed


def ready_board(tmp_path: Path, **kw: Any) -> Path:
    """A board whose gate is green only where its setup ran (as a Node project's)."""
    opts: dict[str, Any] = {
        "gate": [script("gate_needs_setup.sh")],
        "tree": {"setup": [[script("setup_record.sh")]]},
    }
    opts.update(kw)
    cfg, store = make_board(tmp_path, origin=True, **opts)
    store.close()
    return cfg.root


# ---------------------------------------------------------------------------------------------
# ready


def test_a_ready_repository_passes_every_check(tmp_path: Path) -> None:
    root = ready_board(tmp_path)
    (root / ".env").write_text("API_TOKEN=abcdefgh12345\n")
    exclude = root / ".git" / "info" / "exclude"
    exclude.write_text(exclude.read_text() + ".env\n")
    (root / ".worktreeinclude").write_text(".env\n")
    git(root, "add", ".worktreeinclude")
    git(root, "commit", "-q", "-m", "copy .env into trees")

    code, out, err = doctor(root)
    assert code == 0, out + err
    checks = [ln for ln in out.splitlines() if not ln.startswith((" ", "ready:"))]
    assert all(ln.startswith("ok ") for ln in checks), out
    for name in ("git", "base", "run-branch", "store", "ignored", "tier:default", "copy"):
        line_of(out, name)
    assert "copied .env" in out
    assert "setup_record.sh" in out, "each setup command's time is not shown"
    assert "green in a fresh tree" in line_of(out, "gate")
    assert out.splitlines()[-1].startswith("ready: ")
    no_doctor_tree(root)

    code, out, err = doctor(root, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["ok"] is True
    by_name = {c["name"]: c for c in report["checks"]}
    for name in ("config", "git", "base", "run-branch", "store", "ignored", "tracked",
                 "start-point", "tree", "copy", "setup", "tier:default", "gate",
                 "cleanup"):  # fmt: skip
        check = by_name[name]
        assert set(check) == {"name", "ok", "level", "detail", "seconds", "lines"}, check
        assert check["ok"] is True and check["level"] == "ok", check
    assert isinstance(by_name["gate"]["seconds"], float)
    assert isinstance(by_name["setup"]["seconds"], float)
    assert any("setup_record.sh" in ln for ln in by_name["setup"]["lines"])
    no_doctor_tree(root)


# ---------------------------------------------------------------------------------------------
# not ready


def test_a_gate_red_in_a_fresh_tree_fails_and_the_tree_is_gone(tmp_path: Path) -> None:
    """No setup: the gate cannot find its dependencies in a fresh tree, as every card's
    gate would not: the first card would have blocked gate-red for it."""
    root = ready_board(tmp_path, tree={})
    code, out, _ = doctor(root)
    assert code == 1, out
    assert line_of(out, "gate").startswith("FAIL  gate: the gate exited 1"), out
    assert "Cannot find module" in out, "the gate's own words are not shown"
    assert out.splitlines()[-1].startswith("not ready: 1 check(s) failed (gate)")
    no_doctor_tree(root)
    report = json.loads(doctor(root, "--json")[1])
    assert report["ok"] is False
    assert [c["name"] for c in report["checks"] if not c["ok"]] == ["gate"]


def test_a_node_tree_that_would_use_the_checkouts_node_modules_fails(tmp_path: Path) -> None:
    """Trees live inside the checkout, and require() climbs parent folders: a tree with no
    node_modules of its own runs its gate against the checkout's installed packages."""

    def node(clone: Path) -> None:
        (clone / "package.json").write_text('{"name": "x", "dependencies": {"a": "1"}}\n')

    root = ready_board(tmp_path, tree={}, gate=[script("gate_pass.sh")], setup=node)
    (root / "node_modules" / "a").mkdir(parents=True)
    code, out, _ = doctor(root)
    assert code == 1, out
    line = line_of(out, "node-modules")
    assert (
        line.startswith("FAIL  node-modules: the tree has no node_modules")
        and str(root / "node_modules") in line
    ), line
    write_config(root, gate=[script("gate_pass.sh")], tree={"setup": [[script("setup_record.sh")]]})
    code, out, _ = doctor(root)
    assert code == 0, out
    assert line_of(out, "node-modules").startswith("ok    node-modules: the tree has")
    no_doctor_tree(root)


def test_a_failing_setup_fails_and_the_gate_is_not_run(tmp_path: Path) -> None:
    root = ready_board(tmp_path, tree={"setup": [[script("setup_record.sh"), "3"]]})
    code, out, _ = doctor(root)
    assert code == 1, out
    setup = line_of(out, "setup")
    assert setup.startswith("FAIL  setup: setup command 1 of 1") and "exited 3" in setup, out
    assert "the lockfile does not match" in out, "setup's own words are not shown"
    assert line_of(out, "gate").startswith("skip  gate: not run: setup failed")
    no_doctor_tree(root)


def test_a_tier_whose_program_is_missing_fails(tmp_path: Path) -> None:
    root = ready_board(
        tmp_path,
        tiers={"default": [script("coder_edit.sh")], "big": ["no-such-agent-cli", "{brief}"]},
    )
    code, out, _ = doctor(root)
    assert code == 1, out
    assert line_of(out, "tier:default").startswith("ok ")
    big = line_of(out, "tier:big")
    assert big.startswith("FAIL  tier:big: 'no-such-agent-cli' is not installed"), big
    no_doctor_tree(root)


def test_a_tracked_file_named_for_copying_is_refused(tmp_path: Path) -> None:
    root = ready_board(tmp_path)
    (root / ".worktreeinclude").write_text("app.py\n")
    code, out, _ = doctor(root)
    assert code == 1, out
    copy = line_of(out, "copy")
    assert copy.startswith("FAIL  copy: not copied: app.py (git tracks it"), copy
    no_doctor_tree(root)


def test_files_git_tracks_in_the_board_s_folder_are_named_with_how_to_untrack_them(
    tmp_path: Path,
) -> None:
    """A repository that commits `.board/` files hands them to every clone as the board's
    own (issue 39): doctor fails, naming each, and the command it gives untracks them and
    keeps the files."""
    root = ready_board(tmp_path)
    (root / ".board" / "board.toml.cache").write_bytes(b"forged")
    (root / ".board" / "logs" / "c-1").mkdir(parents=True)
    (root / ".board" / "logs" / "c-1" / "1.log").write_text("a log\n")
    git(root, "add", "-f", ".board/board.toml.cache", ".board/logs/c-1/1.log")
    git(root, "commit", "-q", "-m", "commit the board's folder")
    code, out, _ = doctor(root)
    assert code == 1, out
    line = line_of(out, "tracked")
    assert line.startswith("FAIL  tracked: git tracks 2 file(s) in .board/"), line
    below = out.splitlines()[out.splitlines().index(line) + 1 :][:3]
    assert [x.strip() for x in below[:2]] == [".board/board.toml.cache", ".board/logs/c-1/1.log"]
    fix = below[2].strip()
    assert fix.startswith("untrack them (the files stay here): git rm -r --cached .board"), fix
    assert line_of(out, "gate").startswith("ok "), "one failed check stopped the others"
    assert out.splitlines()[-1].startswith("not ready: 1 check(s) failed (tracked)"), out
    report = json.loads(doctor(root, "--json")[1])
    [tracked] = [c for c in report["checks"] if c["name"] == "tracked"]
    assert tracked["level"] == "fail" and tracked["lines"][:2] == [
        ".board/board.toml.cache",
        ".board/logs/c-1/1.log",
    ]
    # the fix as given: the files stay, git no longer tracks them
    git(root, "rm", "-q", "-r", "--cached", ".board")
    git(root, "commit", "-q", "-m", "untrack .board/")
    assert (root / ".board" / "logs" / "c-1" / "1.log").read_text() == "a log\n"
    assert (root / ".board" / "board.db").is_file()
    code, out, _ = doctor(root)
    assert code == 0, out
    assert line_of(out, "tracked") == "ok    tracked: git tracks nothing in .board/"
    no_doctor_tree(root)


def test_a_corrupt_store_is_a_failed_check_not_a_traceback(tmp_path: Path) -> None:
    root = ready_board(tmp_path)
    db = root / ".board" / "board.db"
    for extra in ("-wal", "-shm"):
        Path(f"{db}{extra}").unlink(missing_ok=True)
    db.write_bytes(b"not a database at all" * 100)
    code, out, _ = doctor(root)
    assert code == 1, out
    assert line_of(out, "store").startswith("FAIL  store: store "), out
    assert "not a board database" in line_of(out, "store")
    assert line_of(out, "gate").startswith("ok "), "one failed check stopped the others"


def test_push_mode_without_its_remote_and_forge_fails(tmp_path: Path) -> None:
    root = ready_board(
        tmp_path,
        publish={"mode": "push", "remote": "upstream", "pr_argv": ["no-such-forge", "pr"]},
    )
    code, out, _ = doctor(root)
    assert code == 1, out
    assert line_of(out, "remote").startswith("FAIL  remote: no remote 'upstream'"), out
    assert line_of(out, "forge").startswith("FAIL  forge: not installed or not on PATH"), out
    assert "'no-such-forge'" in line_of(out, "forge")


def test_an_interrupted_doctor_kills_its_gate_and_removes_its_tree(tmp_path: Path) -> None:
    pids = tmp_path / "gate.pids"
    root = ready_board(tmp_path, gate=[script("coder_hang.sh"), "{worktree}", "gate", str(pids)])
    child = subprocess.Popen(
        [sys.executable, "-m", "board.cli", "doctor"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **GIT_ENV},
        start_new_session=True,
    )
    try:
        wait_for(lambda: has_text(pids), 30, "the gate to start")
        gate = int(pids.read_text().split()[0])
        assert any(p.name.startswith("doctor-") for p in (root / ".worktrees").iterdir())
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        kill_group_quietly(child.pid)
    assert child.returncode == 130, out + err
    assert err.strip().splitlines()[-1] == "board: interrupted", err
    assert "ok    cleanup: " in out, out
    assert group_members(gate) == [], "the gate's process group outlived the doctor"
    no_doctor_tree(root)


def test_a_tree_left_by_a_killed_doctor_is_removed_by_the_next(tmp_path: Path) -> None:
    root = ready_board(tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    left = root / ".worktrees" / f"doctor-20250102T030405.678Z-{dead.stdout.strip()}"
    git(root, "worktree", "add", "--detach", str(left), "main")
    (left / "node_modules").mkdir()
    (left / "node_modules" / "x.js").write_text("x")
    code, out, _ = doctor(root)
    assert code == 0, out
    assert f"removed .worktrees/{left.name}, left by a doctor that was killed" in out
    no_doctor_tree(root)


# ---------------------------------------------------------------------------------------------
# the editable-install trap

PROJECT = {
    ".gitignore": "node_modules/\n*.egg-info/\n__pycache__/\n.pytest_cache/\nbuild/\n",
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '\n[project]\nname = "calcpkg"\nversion = "0.1"\n'
        '\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    ),
    "src/calcpkg/__init__.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": (
        "from calcpkg import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    ),
}
PIP_ENV = {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
# builds an editable wheel with no `wheel` package (a venv's bundled setuptools may not)
SETUPTOOLS = "setuptools>=70.1"


@pytest.fixture(scope="session")
def wheelhouse(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pytest and setuptools as wheels, fetched once and kept in pytest's cache: every venv
    these tests make installs from here with --no-index, so only the first run needs PyPI."""
    cache = getattr(request.config, "cache", None)
    where = Path(cache.mkdir("doctor-wheels")) if cache else tmp_path_factory.mktemp("wheels")
    if not list(where.glob("pytest-*.whl")) or not list(where.glob("setuptools-*.whl")):
        res = proc.run(
            [sys.executable, "-m", "pip", "download", "-q", "-d", str(where), "pytest",
             "setuptools"],
            timeout=600, env=PIP_ENV,
        )  # fmt: skip
        assert res.ok, f"pip download: {res.stderr}"
    return where


def pip_install(python: Path, wheels: Path, *args: str, cwd: Path) -> None:
    res = proc.run(
        [str(python), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(wheels),
         *args],
        cwd=cwd, timeout=600, env=PIP_ENV,
    )  # fmt: skip
    assert res.ok, f"pip install {' '.join(args)}: {res.stdout}{res.stderr}"


def write_project(clone: Path) -> None:
    (clone / "tests").mkdir()  # not the board's tests: the project's
    for name, text in PROJECT.items():
        path = clone / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_gate_importing_the_checkout_through_an_editable_install_fails(
    tmp_path: Path, wheelhouse: Path
) -> None:
    """The operator did `pip install -e .` in their venv; `python3 -m pytest` in a card's
    tree imported calcpkg from the checkout, so the gate passed whatever the card did.
    Then setup makes the tree its own venv, the gate runs its python, and doctor passes."""
    cfg, store = make_board(
        tmp_path, origin=True, gate=["python3", "-m", "pytest", "-q"], setup=write_project
    )
    store.close()
    root = cfg.root
    venv = tmp_path / "operator-venv"
    res = proc.run([sys.executable, "-m", "venv", str(venv)], timeout=300)
    assert res.ok, res.stderr
    pip_install(venv / "bin" / "python", wheelhouse, SETUPTOOLS, "pytest", cwd=root)
    pip_install(
        venv / "bin" / "python", wheelhouse, "--no-build-isolation", "--no-deps", "-e", ".",
        cwd=root,
    )  # fmt: skip
    env = {
        **os.environ,
        **GIT_ENV,
        **PIP_ENV,
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }

    code, out, _ = doctor(root, env=env)
    assert code == 1, out
    assert line_of(out, "gate").startswith("ok "), "premise: the trapped gate is green"
    imports = line_of(out, "imports")
    assert imports.startswith("FAIL  imports: the gate's python (python3) imports calcpkg from "), (
        imports
    )
    assert str(root / "src" / "calcpkg" / "__init__.py") in imports, imports
    assert "[tree] setup = " in out, "the fix is not said"
    no_doctor_tree(root)

    def tree_venv(*install: str) -> None:
        py = "{worktree}/.board-scratch/venv/bin/python"
        pip = [py, "-m", "pip", "install", "-q", "--no-index", "--find-links", str(wheelhouse)]
        write_config(
            root,
            gate=[py, "-m", "pytest", "-q"],
            tree={
                "setup": [
                    ["python3", "-m", "venv", "{worktree}/.board-scratch/venv"],
                    [*pip, SETUPTOOLS, "pytest"],
                    [*pip, "--no-build-isolation", "--no-deps", *install],
                ],
                "setup_timeout_s": 300,
            },
        )

    # a tree-local venv with a plain install: the gate tests a copy of the tree as setup
    # left it, not the coder's edits
    tree_venv(".")
    code, out, _ = doctor(root, env=env)
    assert code == 1, out
    imports = line_of(out, "imports")
    assert "imports calcpkg from .board-scratch/venv/lib/" in imports, imports
    assert "a copy setup installed, not the tree's source" in imports, imports
    no_doctor_tree(root)

    tree_venv("-e", ".")
    code, out, _ = doctor(root, env=env)
    assert code == 0, out
    imports = line_of(out, "imports")
    assert imports.startswith("ok    imports: the gate's python ("), imports
    assert "calcpkg: src/calcpkg/__init__.py" in out, out
    no_doctor_tree(root)


# ---------------------------------------------------------------------------------------------
# which Python a gate runs, and what the project's packages are


def test_the_gate_s_python_is_read_from_its_argv(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "bin").mkdir(parents=True)

    def py(*argv: str, path: str = "") -> tuple[list[str], str | None] | None:
        found = pytrap.interpreter(list(argv), tree, path or None)
        return None if found is None else (found.argv, found.path0)

    here = str(tree)
    assert py("python3", "-m", "pytest", "-q") == (["python3"], here)
    assert py("/v/bin/python3.12", "-P", "-m", "pytest") == (["/v/bin/python3.12"], None)
    assert py("python", "run_tests.py") == (["python"], here)
    assert py("uv", "run", "pytest") == (["uv", "run", "python"], None)
    assert py("uv", "run", "--extra", "test", "pytest") == (
        ["uv", "run", "--extra", "test", "python"],
        None,
    )
    assert py("poetry", "run", "python", "-m", "pytest") == (["poetry", "run", "python"], here)
    assert py("make", "test") is None
    assert py("npm", "test", path=str(tree / "bin")) is None

    script = tree / "bin" / "pytest"
    script.write_text("#!/opt/venv/bin/python3\nimport sys\n")
    script.chmod(0o755)
    assert py("pytest", path=str(tree / "bin")) == (["/opt/venv/bin/python3"], str(tree / "bin"))
    script.write_text("#!/usr/bin/env python3\n")
    assert py("bin/pytest") == (["python3"], str(tree / "bin"))
    # pip writes this for an interpreter whose path is too long for a #! line
    script.write_text('#!/bin/sh\n\'\'\'exec\' "/a/very/long/venv/bin/python" "$0" "$@"\n')
    assert py("bin/pytest") == (["/a/very/long/venv/bin/python"], str(tree / "bin"))
    script.write_text("#!/bin/sh\nexec node test.js\n")
    assert py("bin/pytest") is None
    assert pytrap.own_environment(["tox", "-e", "py311"])
    assert pytrap.own_environment(["python3", "-m", "nox"])
    assert not pytrap.own_environment(["python3", "-m", "pytest"])


def test_the_project_s_packages_are_found_in_the_tree(tmp_path: Path) -> None:
    for name in ("src/calc/__init__.py", "src/single.py", "src/conftest.py", "app/__init__.py",
                 "tests/__init__.py", "docs/__init__.py", "notapackage/x.py", "my-dir/__init__.py",
                 "setup.py"):  # fmt: skip
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert pytrap.packages(tmp_path) == ["calc", "single", "app"]
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\npythonpath = ["src", "."]\n'
    )
    assert pytrap.pytest_paths(tmp_path) == [str(tmp_path / "src"), str(tmp_path)]

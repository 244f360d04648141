"""Trees a real project can build in: plain `board init` on real projects, end to end.

No stand-ins and no mocks: a real Python package installed editable into a real virtual
environment (the operator's, activated: its bin first on PATH), a real Node project whose
lockfile real `npm install` wrote, the real `board` command line in its own processes, and
a coder script (tests/scripts/coder_project.py) that makes the change its card names.

What they guard: a fresh tree holds only what git holds. Before `board init` wrote a
`[tree] setup`, a src/-layout package's gate (`python3 -m pytest -q` from the operator's
venv) imported the operator's checkout through the editable install, not the tree: a right
change that adds a module ended `gate-red` and a wrong change that breaks the package ended
`done`. A Node project's gate failed on `require` in a tree with no node_modules.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import tomli_w

from tests.support.paths import script
from tests.support.repos import GIT_ENV, git, make_repo, run_cli

RUN_TIMEOUT_S = 600  # two tree environments built on a 2-core machine, pip and npm included


def _pip_cache() -> str:
    """The operator's pip cache (the tests' own HOME is empty): warm after the first run."""
    return os.environ.get("PIP_CACHE_DIR") or str(
        Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "pip"
    )


def _operator_env(venv: Path | None = None) -> dict[str, str]:
    """The environment the operator runs `board` in: their venv activated, when given."""
    env = {**os.environ, **GIT_ENV, "PIP_CACHE_DIR": _pip_cache()}
    env.update(npm_config_audit="false", npm_config_fund="false")
    env["npm_config_update_notifier"] = "false"
    env.pop("PYTHONHOME", None)
    if venv is not None:
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
        env["VIRTUAL_ENV"] = str(venv)
    return env


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    res = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert res.returncode == 0, f"{argv} failed: {res.stdout}\n{res.stderr}"
    return res.stdout


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    """A clone of a bare origin whose main holds the project (pushed), no board yet."""
    repo = make_repo(tmp_path, init="")
    for name in ("app.py", "lib.py"):  # the test repositories' usual files: not this project
        (repo.root / name).unlink()
    repo.commit(repo.root, files, "the project")
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "only the project")
    git(repo.root, "push", "-q", "origin", "main")
    return repo.root


def _init(repo: Path, env: dict[str, str]) -> str:
    """Plain `board init`, then the one thing it cannot know: the coder (and a quick tick)."""
    res = run_cli(repo, "init", env=env)
    assert res.returncode == 0, res.stderr
    path = repo / "board.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data["coder"]["tiers"]["default"]["argv"] = [
        script("coder_project.py"),
        "{brief}",
        "{worktree}",
    ]
    data["board"]["loop_interval_s"] = 0.2
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    return res.stdout


def _card(repo: Path, env: dict[str, str], change: str, surface: list[str]) -> str:
    args = ["card", "add", f"make {change}", "--spec", f"do: {change}", "--ready", "--json"]
    for glob in surface:
        args += ["--surface", glob]
    res = run_cli(repo, *args, env=env)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["id"]


def _run_until_idle(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_cli(repo, "run", "--until-idle", "--quiet", env=env, timeout=RUN_TIMEOUT_S)


def _show(repo: Path, env: dict[str, str], card: str) -> dict:
    res = run_cli(repo, "card", "show", card, "--json", env=env)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _log(repo: Path, env: dict[str, str], card: str) -> str:
    return run_cli(repo, "logs", card, env=env).stdout


# a Python package in the src/ layout ---------------------------------------------------

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "0.1.0"
requires-python = ">=3.9"

[project.optional-dependencies]
test = ["pytest"]

[tool.setuptools.packages.find]
where = ["src"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""
CALC = {
    "pyproject.toml": PYPROJECT,
    ".gitignore": ".venv/\n*.egg-info/\n__pycache__/\n.pytest_cache/\n",
    "src/calc/__init__.py": "def add(a, b):\n    return a + b\n",
    "tests/test_add.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


def test_a_src_layout_package_is_tested_in_the_tree_not_the_checkout(tmp_path: Path) -> None:
    """Red before: with no [tree] setup and the gate `python3 -m pytest -q`, c-1 (the right
    change, a new calc.mul) ended blocked gate-red (ModuleNotFoundError: the editable
    install points at the checkout) and c-2 (add() broken in the tree) ended done."""
    repo = _project(tmp_path, CALC)
    venv = repo / ".venv"
    # the operator's venv, their package installed editable: made without a pip of its own
    # and filled by this interpreter's pip (seconds quicker than ensurepip)
    base = _operator_env()
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], repo, base)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install"]
    _run([*pip, "-q", "-e", ".[test]"], repo, base)
    env = _operator_env(venv)  # the operator activated it: `python3` is the venv's

    said = _init(repo, env)
    assert "setup: python3 -m venv {worktree}/.board-scratch/venv" in said, said
    right = _card(repo, env, "calc-right", ["src/calc/mul.py", "tests/test_mul.py"])
    wrong = _card(repo, env, "calc-wrong", ["src/calc/__init__.py"])

    res = _run_until_idle(repo, env)

    right_card, wrong_card = _show(repo, env, right), _show(repo, env, wrong)
    log = _log(repo, env, right)
    assert right_card["lane"] == "done", f"{right_card}\n{log}\n{res.stderr}"
    assert "board: setup 2 of 2 ended: exited 0" in log, log
    assert wrong_card["lane"] != "done", "a change that breaks the package was folded"
    assert (wrong_card["blocked"] or {}).get("class") == "gate-red", wrong_card
    assert "assert -1 == 5" in _log(repo, env, wrong), "the gate did not test the tree's add"
    assert res.returncode != 0, "--until-idle ended 0 with a card not done"
    assert git(repo, "show", "board/run:src/calc/mul.py").startswith("def mul")
    assert git(repo, "show", "board/run:src/calc/__init__.py") == CALC[
        "src/calc/__init__.py"
    ].rstrip("\n")
    assert git(repo, "status", "--porcelain") == "?? board.toml", "the checkout was touched"


# a Node project with a local file: dependency --------------------------------------------

NODE = {
    "package.json": json.dumps(
        {
            "name": "app",
            "version": "1.0.0",
            "private": True,
            "scripts": {"test": "node --test test/"},
            "dependencies": {"greet": "file:deps/greet"},
        },
        indent=2,
    )
    + "\n",
    ".gitignore": "node_modules/\n",
    "deps/greet/package.json": '{"name": "greet", "version": "1.0.0", "main": "index.js"}\n',
    "deps/greet/index.js": "module.exports = { greet: (name) => `Hello, ${name}` };\n",
    "src/app.js": (
        "const { greet } = require('greet');\nmodule.exports = { hello: (n) => greet(n) + '!' };\n"
    ),
    "test/app.test.js": (
        "const test = require('node:test');\n"
        "const assert = require('node:assert');\n"
        "const { hello } = require('../src/app');\n"
        "test('hello', () => { assert.strictEqual(hello('bob'), 'Hello, bob!'); });\n"
    ),
}


def _need_npm() -> None:
    if shutil.which("npm") and shutil.which("node"):
        return
    why = "npm and node are needed for the Node project (not on PATH)"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{why}; under CI that is a failure, not a skip")
    pytest.skip(why)


def test_a_node_project_installs_its_lockfile_in_each_tree(tmp_path: Path) -> None:
    """Red before: no [tree] setup was written, so the gate `npm test` ran in a tree with no
    node_modules, and Node, walking up the parent folders, found the checkout's (the tree
    lives under it, in .worktrees/): the checkout's deps/greet, not the tree's. The right
    change (greet gains shout(), src/shout.js uses it) ended gate-red."""
    _need_npm()
    env = _operator_env()
    repo = _project(tmp_path, NODE)
    _run(["npm", "install", "--no-audit", "--no-fund"], repo, env)  # writes package-lock.json
    git(repo, "add", "package-lock.json")
    git(repo, "commit", "-q", "-m", "lockfile")
    git(repo, "push", "-q", "origin", "main")

    said = _init(repo, env)
    want = "setup: npm ci — package-lock.json: a fresh tree has no node_modules"
    assert want in said and "gate: npm test" in said, said
    card = _card(repo, env, "node-right", ["deps/greet/**", "src/shout.js", "test/**"])

    res = _run_until_idle(repo, env)

    shown, log = _show(repo, env, card), _log(repo, env, card)
    assert shown["lane"] == "done", f"{shown}\n{log}\n{res.stderr}"
    assert res.returncode == 0, res.stderr
    assert "board: setup 1 of 1 ended: exited 0" in log, log
    assert git(repo, "show", "board/run:src/shout.js").startswith("const { shout }")

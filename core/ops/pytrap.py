"""Where a Python gate imports the project from: the editable-install trap, found before a card.

An operator who ran `pip install -e .` in their venv has a gate (`python3 -m pytest`) that
passes in a card's tree while testing the wrong code: the interpreter on PATH imports the
project's package through the editable install, that is from the operator's checkout, not
from the tree the coder edited. Nothing fails; a broken change is folded green. The same
happens with a plain `pip install .` (an installed copy) and with a tree-local environment
made by a non-editable install (a copy of the tree as setup found it, not as the coder left
it).

So `board doctor` asks the gate's own interpreter, started in the fresh tree with the gate's
environment, where each of the project's top-level packages would be imported from
(`importlib.util.find_spec`, which imports nothing), with `sys.path` as the gate would have
it: the tree first for `python -m …`, the script's folder for a console script, and pytest's
`pythonpath` setting. A package found outside the tree, or in a site-packages inside it, is
named with the path it would come from.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from board.core import discover, proc
from board.core.records import Record, field

MARK = "BOARD-DOCTOR-IMPORTS "
MAX_PACKAGES = 50
MAX_PYPROJECT_BYTES = 1024 * 1024
_PYTHON = re.compile(r"^(python|pypy)(\d+(\.\d+)*)?$")
# top-level folders with an __init__.py that are not what the project ships
_NOT_PACKAGES = frozenset(
    {"tests", "test", "testing", "docs", "doc", "examples", "example", "scripts", "benchmarks",
     "bench", "build", "dist", "site-packages"}
)  # fmt: skip
# the runners whose `run CMD` starts CMD in the project's environment, and their options
# that take a value (so the value is not taken for the command)
_RUNNERS = frozenset({"uv", "poetry", "pdm", "pipenv", "hatch"})
_VALUE_OPTIONS = frozenset(
    {"--with", "--with-editable", "--with-requirements", "--extra", "--group", "--only-group",
     "--package", "--python", "-p", "--env-file", "--directory", "--project", "--index",
     "--default-index", "--index-url", "--extra-index-url", "--find-links", "-f", "--env",
     "-e", "--config-file", "--cache-dir", "-C"}
)  # fmt: skip

# Run by the gate's interpreter with `-c`: sys.path as the gate would have it, then where each
# package would come from. `-c` puts '' (the cwd, the tree) first, as `python -m` does; a
# console script has its own folder there instead.
PROBE = r"""
import importlib.util, json, sys
opts = json.loads(sys.argv[1])
if sys.path and sys.path[0] == "":
    del sys.path[0]
    if opts["path0"] is not None:
        sys.path.insert(0, opts["path0"])
sys.path[:0] = opts["extra"]
found = {}
for name in opts["names"]:
    try:
        spec = importlib.util.find_spec(name)
    except Exception as exc:
        found[name] = {"error": type(exc).__name__ + ": " + str(exc)[:200]}
        continue
    if spec is None:
        found[name] = None
    elif spec.origin and spec.has_location:
        found[name] = {"path": spec.origin}
    elif spec.submodule_search_locations:
        found[name] = {"path": list(spec.submodule_search_locations)[0]}
    else:
        found[name] = {"error": "not a file (" + str(spec.origin) + ")"}
print("BOARD-DOCTOR-IMPORTS " + json.dumps(found), flush=True)
"""


class Interpreter(Record):
    """How to start the gate's Python, and what it puts first on sys.path."""

    argv: list[str]
    shown: str  # as the operator knows it: `python3`, `uv run python`, a path
    path0: str | None  # what stands first on sys.path in place of the cwd (None: nothing)
    pytest: bool  # the gate runs pytest (its `pythonpath` and root conftest.py count)
    named: bool = True  # False: a guess (python3 on PATH) for a gate that names no Python


class Found(Record):
    """What the probe said: per package, where it imports from, and what is wrong."""

    ok: bool = True
    ran: bool = True
    why: str = ""  # the probe could not run: why
    lines: list[str] = field(default_factory=list)  # `pkg: where` per package
    wrong: list[str] = field(default_factory=list)  # one sentence per package found elsewhere
    seconds: float = 0.0


def packages(tree: Path) -> list[str]:
    """The project's top-level packages: `src/<pkg>/__init__.py`, `src/<mod>.py`, and
    top-level folders with an `__init__.py` (tests, docs and the like left out)."""
    names: list[str] = []
    src = tree / "src"
    if src.is_dir():
        for entry in sorted(src.iterdir(), key=lambda p: p.name):
            if entry.is_dir() and (entry / "__init__.py").is_file():
                names.append(entry.name)
            elif entry.suffix == ".py" and entry.stem not in ("conftest", "setup"):
                names.append(entry.stem)
    for entry in sorted(tree.iterdir(), key=lambda p: p.name):
        if entry.name in _NOT_PACKAGES or entry.name == "src":
            continue
        if entry.is_dir() and (entry / "__init__.py").is_file():
            names.append(entry.name)
    return [n for n in dict.fromkeys(names) if n.isidentifier()][:MAX_PACKAGES]


def interpreter(argv: Sequence[str], tree: Path, path: str | None) -> Interpreter | None:
    """The Python the gate `argv` runs (substituted already), or None when it names none:
    `python3 -m pytest` runs `python3`, `uv run pytest` `uv run python`, a bare `pytest` the
    interpreter on its first line. `path` is the gate's PATH."""
    if not argv:
        return None
    runs_pytest = any(os.path.basename(a) in ("pytest", "py.test") for a in argv)
    first = argv[0]
    if _PYTHON.match(os.path.basename(first)):
        return Interpreter([first], first, _path0(argv[1:], tree), runs_pytest)
    if os.path.basename(first) in _RUNNERS and len(argv) > 1 and argv[1] == "run":
        i = 2
        while i < len(argv) and argv[i].startswith("-"):
            i += 2 if argv[i] in _VALUE_OPTIONS else 1
        if i >= len(argv):
            return None
        prefix = list(argv[:i])
        if _PYTHON.match(os.path.basename(argv[i])):
            cmd = [*prefix, argv[i]]
            return Interpreter(cmd, " ".join(cmd), _path0(argv[i + 1 :], tree), runs_pytest)
        cmd = [*prefix, "python"]
        return Interpreter(cmd, " ".join(cmd), None, runs_pytest)
    script = _program_file(first, tree, path)
    if script is None:
        return None
    python = _shebang_python(script)
    if python is None:
        return None
    return Interpreter([python], python, str(script.parent), runs_pytest)


def own_environment(argv: Sequence[str]) -> bool:
    """Whether the gate makes its own environment from the tree (tox, nox): then no Python
    on the gate's PATH is the one its tests run in."""
    makers = ("tox", "nox")
    if argv and os.path.basename(argv[0]) in makers:
        return True
    return any(a == "-m" and b in makers for a, b in zip(argv, argv[1:], strict=False))


def guess(path: str | None) -> Interpreter | None:
    """For a gate that names no Python (`make test`, a script): python3 on its PATH, as
    what such a gate most likely runs; a console script's sys.path (no cwd first)."""
    python = shutil.which("python3", path=path)
    if python is None:
        return None
    return Interpreter(["python3"], "python3", None, False, named=False)


def _path0(args: Sequence[str], tree: Path) -> str | None:
    """What `python ARGS` puts first on sys.path: the cwd for `-m` and `-c`, a script's
    folder, nothing with -P or -I."""
    safe = False
    first: str | None = str(tree)
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith(("-m", "-c")):
            break
        if a in ("-X", "-W"):
            i += 2
            continue
        if a.startswith(("-X", "-W")):
            pass
        elif a.startswith("-") and not a.startswith("--"):
            safe = safe or "P" in a or "I" in a
        elif not a.startswith("-"):
            script = Path(a) if os.path.isabs(a) else tree / a
            first = str(script.parent.resolve())
            break
        i += 1
    return None if safe else first


def _program_file(name: str, tree: Path, path: str | None) -> Path | None:
    if "/" in name:
        p = Path(name) if os.path.isabs(name) else tree / name
        return p if p.is_file() else None
    found = shutil.which(name, path=path)
    return Path(found) if found else None


def _shebang_python(script: Path) -> str | None:
    """The Python on a script's first line (`#!/venv/bin/python`, `#!/usr/bin/env python3`,
    or pip's `#!/bin/sh` + `'''exec' "/long/path/python"` for a long path)."""
    try:
        with script.open("rb") as fh:
            head = fh.read(1024)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    lines = head.decode("utf-8", "replace").splitlines()
    words = lines[0][2:].split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
    if words and os.path.basename(words[0]) == "sh" and len(lines) > 1:
        m = re.match(r"""^'''exec' "?([^" ]+)"?""", lines[1])
        words = [m.group(1)] if m else []
    if words and _PYTHON.match(os.path.basename(words[0])):
        return words[0]
    return None


def pytest_paths(tree: Path) -> list[str]:
    """`[tool.pytest.ini_options] pythonpath` of the tree's pyproject.toml, as paths."""
    try:
        with (tree / "pyproject.toml").open("rb") as fh:
            data = tomllib.loads(fh.read(MAX_PYPROJECT_BYTES).decode("utf-8", "replace"))
    except (OSError, tomllib.TOMLDecodeError):
        return []
    opts = data.get("tool", {}).get("pytest", {}).get("ini_options", {})
    value = opts.get("pythonpath", []) if isinstance(opts, dict) else []
    items = value.split() if isinstance(value, str) else value
    if not isinstance(items, list):
        return []
    return [str((tree / p).resolve()) for p in items if isinstance(p, str)]


def probe(
    py: Interpreter,
    tree: Path,
    checkout: Path,
    names: list[str],
    env: Mapping[str, str],
    timeout: float,
    on_start: Callable[[int], None],
) -> Found:
    """Ask `py`, started in `tree` with `env`, where each package would be imported from;
    `checkout` (the operator's) is named as such when a package comes from there."""
    extra = pytest_paths(tree) if py.pytest else []
    if py.pytest and (tree / "conftest.py").is_file():  # pytest puts a root conftest's folder first
        extra.append(str(tree))
    opts = json.dumps({"path0": py.path0, "extra": extra, "names": names})
    said: list[str] = []

    def keep(line: str) -> None:
        if line.startswith(MARK):
            said.append(line[len(MARK) :])

    t0 = time.monotonic()
    res = proc.stream(
        [*py.argv, "-c", PROBE, opts], cwd=tree, timeout=timeout, on_line=keep, env=env,
        on_start=on_start,
    )  # fmt: skip
    found = Found(seconds=time.monotonic() - t0)
    if not said:
        found.ok = found.ran = False
        if res.missing:
            found.why = f"{py.argv[0]!r} could not be started"
        elif res.timed_out:
            found.why = f"it ran past {timeout:g}s"
        else:
            last = res.tail[-1] if res.tail else "no output"
            found.why = f"it exited {res.returncode}: {last[:200]}"
        return found
    try:
        where = json.loads(said[-1])
    except ValueError:
        where = None
    if not isinstance(where, dict):
        found.ok = found.ran = False
        found.why = "its answer could not be read"
        return found
    _judge(found, where, tree, checkout)
    return found


def _judge(found: Found, where: dict[str, object], tree: Path, checkout: Path) -> None:
    home = tree.resolve()
    for name, got in where.items():
        if not isinstance(got, dict):
            found.lines.append(f"{name}: not found by it (the gate decides whether that matters)")
            continue
        if "path" not in got:
            found.lines.append(f"{name}: {got.get('error', 'unreadable')}")
            continue
        path = Path(str(got["path"]))
        real = path.resolve()
        if not real.is_relative_to(home):
            mine = real.is_relative_to(checkout.resolve())
            where_ = "the checkout" if mine else "outside the tree"
            found.ok = False
            found.lines.append(f"{name}: {path} ({where_})")
            found.wrong.append(f"{name} from {path}" + (" (the checkout)" if mine else ""))
            continue
        rel = real.relative_to(home)
        if {"site-packages", "dist-packages"} & set(rel.parts):
            found.ok = False
            found.lines.append(f"{name}: {rel} (an installed copy)")
            found.wrong.append(
                f"{name} from {rel}, a copy setup installed, not the tree's source "
                "(install it editable: pip install -e)"
            )
            continue
        found.lines.append(f"{name}: {rel}")


def fix_lines(root: Path, scratch: str) -> list[str]:
    """How to make the gate import the tree: the tree-local environment `board init` would
    write for this project (core/discover.py), so the advice and init never differ."""

    pytest = discover.Found(discover.PYTEST_GATE, "pytest")
    found = discover.tree_setup(root, pytest, scratch)
    venv = f"{{worktree}}/{scratch.strip('/')}/venv"
    argvs: list[list[str]] = [
        ["python3", "-m", "venv", venv],
        [f"{venv}/bin/python", "-m", "pip", "install", "-q", "-e", ".", "pytest"],
    ]
    gate = [f"{venv}/bin/python", "-m", "pytest", "-q"]
    if found is not None and found.gate is not None:
        argvs = [list(a) for a in found.argvs]
        gate = list(found.gate.argv)
    return [
        "fix: give each tree its own environment, made by [tree] setup, and run the gate "
        "with its python (`board init` on a fresh board.toml writes one):",
        f"  [tree] setup = {json.dumps(argvs)}",
        f"  [gate] argv = {json.dumps(gate)}",
    ]

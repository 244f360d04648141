"""Gate and setup discovery: how the repository is tested, and what a fresh tree installs
first, found from the files it keeps.

Most first runs without a gate fold whatever the coder wrote, and most with a hand-written
one get it subtly wrong; the repository usually says how it is tested. `board init` asks
here, writes what is found as `[gate] argv` (never over an existing one) and prints why.

A fresh tree holds what git holds: no node_modules, no environment. Its gate fails on an
import, or (worse) imports the operator's checkout through their editable install and tests
the wrong code. So `board init` also writes `[tree] setup` from the lockfiles it finds (the
install each one's tool does from it), and gives a Python package with no lockfile a
virtual environment of the tree's own in the scratch directory, with the gate run by its
interpreter (`tree_setup`).

Read-only: files are read, nothing is run.
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib
from pathlib import Path

from board.core.records import Frozen


class Found(Frozen):
    """A gate: the argv, and the one line saying what in the repository it came from."""

    argv: tuple[str, ...]
    why: str
    note: str = ""  # something the operator should know (an install the tree lacks)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _makefile(root: Path) -> Found | None:
    for name in ("GNUmakefile", "makefile", "Makefile"):
        text = _read(root / name)
        if re.search(r"^test\s*:(?!=)", text, re.MULTILINE):
            return Found(("make", "test"), f"{name} has a `test` target")
    return None


def _python_runner(root: Path) -> tuple[tuple[str, ...], str]:
    if (root / "uv.lock").exists():
        return ("uv", "run", "pytest", "-q"), " (uv.lock: run through uv)"
    if (root / "poetry.lock").exists():
        return ("poetry", "run", "pytest", "-q"), " (poetry.lock: run through poetry)"
    return ("python3", "-m", "pytest", "-q"), ""


def _pytest(root: Path) -> Found | None:
    why = ""
    text = _read(root / "pyproject.toml")
    if text:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            data = {}
        if "pytest" in data.get("tool", {}):
            why = "pyproject.toml configures pytest ([tool.pytest.ini_options])"
    if not why and (root / "pytest.ini").exists():
        why = "pytest.ini configures pytest"
    if not why:
        for name, section in (("setup.cfg", "tool:pytest"), ("tox.ini", "pytest")):
            parser = configparser.ConfigParser()
            try:
                parser.read_string(_read(root / name))
            except configparser.Error:
                continue
            if parser.has_section(section):
                why = f"{name} configures pytest ([{section}])"
                break
    if not why and (root / "tests").is_dir():
        if any((root / "tests").rglob("test_*.py")) or any((root / "tests").rglob("*_test.py")):
            why = "tests/ holds test_*.py files"
    if not why:
        return None
    argv, how = _python_runner(root)
    return Found(argv, why + how, "pytest and the project's dependencies must be installed")


# (lockfile, the gate, the install that makes node_modules from it exactly as locked)
_LOCKS = (
    ("pnpm-lock.yaml", ("pnpm", "test"), ("pnpm", "install", "--frozen-lockfile")),
    ("yarn.lock", ("yarn", "test"), ("yarn", "install", "--frozen-lockfile")),
    ("bun.lockb", ("bun", "run", "test"), ("bun", "install", "--frozen-lockfile")),
    ("bun.lock", ("bun", "run", "test"), ("bun", "install", "--frozen-lockfile")),
    ("package-lock.json", ("npm", "test"), ("npm", "ci")),
)
_NPM_PLACEHOLDER = "no test specified"


def _package_json(root: Path) -> dict | None:
    text = _read(root / "package.json")
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _node(root: Path) -> Found | None:
    # a fresh tree has no node_modules: `tree_setup` installs them from the lockfile
    data = _package_json(root)
    if data is None:
        return None
    scripts = data.get("scripts")
    test = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(test, str) or not test.strip() or _NPM_PLACEHOLDER in test:
        return None
    for lock, argv, _ in _LOCKS:
        if (root / lock).exists():
            return Found(argv, f"package.json has a test script, and {lock} says {argv[0]}")
    return Found(("npm", "test"), "package.json has a test script (no lockfile: npm)")


def _cargo(root: Path) -> Found | None:
    if (root / "Cargo.toml").exists():
        return Found(("cargo", "test"), "Cargo.toml: a Rust crate")
    return None


def _go(root: Path) -> Found | None:
    if (root / "go.mod").exists():
        return Found(("go", "test", "./..."), "go.mod: a Go module")
    return None


# a Makefile's `test` target is the project's own word on how it is tested, so it comes
# first; then each language's usual runner
FINDERS = (_makefile, _pytest, _node, _cargo, _go)


def discover(root: Path) -> tuple[Found | None, list[Found]]:
    """The gate to write, and every other candidate found (named, not used)."""
    found = [f for f in (finder(root) for finder in FINDERS) if f is not None]
    return (found[0] if found else None), found[1:]


# tree setup ------------------------------------------------------------------------------


class Setup(Frozen):
    """`[tree] setup`: the commands, the one line saying why, the gate to write instead of
    the one found (run by the tree's own interpreter) if any, what the operator should know
    (an install product no ignore rule covers), and the install products init itself
    excludes, since setup would fail on them otherwise."""

    argvs: tuple[tuple[str, ...], ...]
    why: str
    gate: Found | None = None
    notes: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()  # what init adds to .git/info/exclude: setup makes it


PYTEST_GATE = ("python3", "-m", "pytest", "-q")
# the optional-dependency groups a project's tests usually need, in the order they are tried
TEST_EXTRAS = ("test", "tests", "testing", "dev")
_TEST_REQUIREMENTS = (
    "requirements-test.txt",
    "requirements-tests.txt",
    "test-requirements.txt",
    "requirements-dev.txt",
    "dev-requirements.txt",
    "requirements/test.txt",
    "requirements/dev.txt",
)


def _toml(path: Path) -> dict:
    try:
        return tomllib.loads(_read(path))
    except tomllib.TOMLDecodeError:
        return {}


def _ignores(root: Path, word: str) -> bool:
    """Whether a line of .gitignore or .git/info/exclude names `word` (read, not matched:
    a hint for a note, never a verdict; the setup's own check is git's)."""
    for path in (root / ".gitignore", root / ".git" / "info" / "exclude"):
        for line in _read(path).splitlines():
            if word in line and not line.lstrip().startswith(("#", "!")):
                return True
    return False


def _extra(root: Path, pyproject: dict) -> str:
    """The first of TEST_EXTRAS the project declares (pyproject.toml, else setup.cfg)."""
    project = pyproject.get("project")
    extras = project.get("optional-dependencies") if isinstance(project, dict) else None
    names: set[str] = set(extras) if isinstance(extras, dict) else set()
    if not names:
        parser = configparser.ConfigParser()
        try:
            parser.read_string(_read(root / "setup.cfg"))
        except configparser.Error:
            pass
        if parser.has_section("options.extras_require"):
            names = set(parser.options("options.extras_require"))
    return next((name for name in TEST_EXTRAS if name in names), "")


def _python_setup(root: Path, gate: Found | None, scratch: str) -> Setup | None:
    if (root / "uv.lock").exists():
        return Setup(
            (("uv", "sync", "--frozen"),),
            "uv.lock: a fresh tree has no environment; uv sync makes the tree's own .venv",
        )
    if (root / "poetry.lock").exists():
        return Setup(
            (("poetry", "install"),),
            "poetry.lock: a fresh tree has no environment; poetry install makes the tree's own",
        )
    if gate is None or gate.argv != PYTEST_GATE:
        return None  # no pytest gate of ours to run in an environment of the tree's
    pyproject = _toml(root / "pyproject.toml")
    venv = f"{{worktree}}/{scratch.strip('/')}/venv"
    python = f"{venv}/bin/python"
    where = f"each tree gets its own virtual environment ({scratch.strip('/')}/venv)"
    notes: list[str] = []
    excludes: list[str] = []
    has_setup_py = (root / "setup.py").is_file()
    declared = "project" in pyproject or "build-system" in pyproject
    test_req = next((n for n in _TEST_REQUIREMENTS if (root / n).is_file()), "")
    if declared or has_setup_py:
        source = "pyproject.toml" if declared else "setup.py"
        extra = _extra(root, pyproject)
        args = ["-e", f".[{extra}]" if extra else "."]
        with_what = f" with its `{extra}` extra" if extra else ""
        if not extra and test_req:
            args += ["-r", test_req]
            with_what = f", and {test_req}"
        why = (
            f"{source}: an installable package with no lockfile: {where}, the package "
            f"installed editable from the tree{with_what}, so the gate tests the tree's code, "
            "not your checkout's"
        )
        system = pyproject.get("build-system")
        backend = system.get("build-backend", "") if isinstance(system, dict) else ""
        setuptools = has_setup_py or not backend or str(backend).startswith("setuptools")
        if setuptools and not _ignores(root, "egg-info"):
            excludes.append("*.egg-info/")
            notes.append(
                "pip install -e with setuptools makes a *.egg-info folder in the tree, and no "
                "line of .gitignore names it: init adds *.egg-info/ to .git/info/exclude (else "
                "setup fails: git would commit it as the card's work)"
            )
    else:
        reqs = [n for n in ("requirements.txt", test_req) if n and (root / n).is_file()]
        if not reqs:
            return None  # nothing declares what to install: the gate's python3 it is
        args = [x for name in reqs for x in ("-r", name)]
        why = (
            f"{' and '.join(reqs)}, no installable package and no lockfile: {where} with "
            "them and pytest installed; the tests import the tree's code from the tree"
        )
    argvs = (
        ("python3", "-m", "venv", venv),
        (python, "-m", "pip", "install", "-q", *args, "pytest"),
    )
    own = Found((python, "-m", "pytest", "-q"), f"{gate.why}, run by the tree's own environment")
    return Setup(argvs, why, own, tuple(notes), tuple(excludes))


def _node_setup(root: Path) -> Setup | None:
    data = _package_json(root)
    if data is None:
        return None
    notes: tuple[str, ...] = ()
    if not _ignores(root, "node_modules"):
        notes = (
            "no line of .gitignore names node_modules: ignore it (.gitignore or "
            ".git/info/exclude), or setup fails (git would commit the install as the card's "
            "work)",
        )
    for lock, _, install in _LOCKS:
        if (root / lock).exists():
            return Setup((install,), f"{lock}: a fresh tree has no node_modules", notes=notes)
    deps = [data.get(k) for k in ("dependencies", "devDependencies", "optionalDependencies")]
    if not any(isinstance(d, dict) and d for d in deps):
        return None
    return Setup(
        (("npm", "install", "--no-package-lock"),),
        "package.json has dependencies and no lockfile: a fresh tree has no node_modules; "
        "npm install writes no lockfile there (a tree must stay clean). Commit a "
        "package-lock.json to install exactly what it locks (npm ci)",
        notes=notes,
    )


def tree_setup(root: Path, gate: Found | None, scratch: str) -> Setup | None:
    """What `[tree] setup` a fresh tree needs before its gate can pass, from the lockfiles
    (Python's, then Node's; Cargo and Go fetch their own), or a tree-local environment in
    `scratch` for a Python project with no lockfile whose `gate` is pytest (the gate then
    runs by its interpreter: `Setup.gate`). None when nothing need be installed."""
    parts = [s for s in (_python_setup(root, gate, scratch), _node_setup(root)) if s is not None]
    if not parts:
        return None
    return Setup(
        tuple(argv for part in parts for argv in part.argvs),
        "; ".join(part.why for part in parts),
        next((part.gate for part in parts if part.gate is not None), None),
        tuple(note for part in parts for note in part.notes),
        tuple(x for part in parts for x in part.excludes),
    )


def shown(argvs: tuple[tuple[str, ...], ...]) -> str:
    """Setup commands as init prints them, one after the other."""
    return ", then ".join(" ".join(argv) for argv in argvs)

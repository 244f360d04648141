"""Gate discovery: the repository's own test command, found from the files it keeps.

Most first runs without a gate fold whatever the coder wrote, and most with a hand-written
one get it subtly wrong; the repository usually says how it is tested. `board init` asks
here, writes what is found as `[gate] argv` (never over an existing one) and prints why.
Read-only: files are read, nothing is run.
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Found:
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


_LOCKS = (
    ("pnpm-lock.yaml", ("pnpm", "test")),
    ("yarn.lock", ("yarn", "test")),
    ("bun.lockb", ("bun", "run", "test")),
    ("bun.lock", ("bun", "run", "test")),
    ("package-lock.json", ("npm", "test")),
)
_NPM_PLACEHOLDER = "no test specified"


def _node(root: Path) -> Found | None:
    text = _read(root / "package.json")
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    test = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(test, str) or not test.strip() or _NPM_PLACEHOLDER in test:
        return None
    for lock, argv in _LOCKS:
        if (root / lock).exists():
            return Found(
                argv,
                f"package.json has a test script, and {lock} says {argv[0]}",
                "a fresh tree has no node_modules: install them in gate.format_argv "
                f'(e.g. ["{argv[0]}", "install"])',
            )
    return Found(
        ("npm", "test"),
        "package.json has a test script (no lockfile: npm)",
        'a fresh tree has no node_modules: install them in gate.format_argv (["npm", "install"])',
    )


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

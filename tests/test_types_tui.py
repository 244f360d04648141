"""The control room type-checks: mypy, strict, over board.tui.

Screens used to reach the app through `getattr` probes and carried `# type: ignore`s no
checker ever read. Now mypy runs over the TUI on every test run, in a subprocess, over a
copy of the tree laid out as Python sees the package (`tui/` as `board/tui/`; the editable
install's path mapping hides it from mypy), with the core's modules followed for their
types but not reported on (the core has its own check). A `type: ignore` must name its
error code and say why on the same line. Each check is also run on a planted fault, so it
cannot pass by being blind.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MYPY_FLAGS = (
    "--strict",
    "--enable-error-code",
    "ignore-without-code",
    "--follow-imports",
    "silent",
    "--no-error-summary",
)
# `# type: ignore[code]` followed on the same line by `# why`
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")


def package_copy(dest: Path) -> Path:
    """The import package `board` laid out as Python sees it, under `dest`."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    pkg = dest / "board"
    shutil.copytree(ROOT / "board", pkg, ignore=ignore)
    for name in ("core", "tui", "themes"):
        shutil.copytree(ROOT / name, pkg / name, ignore=ignore)
    return dest


def mypy(where: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(where), "MYPY_CACHE_DIR": str(where / ".mypy")}
    return subprocess.run(
        [sys.executable, "-m", "mypy", *MYPY_FLAGS, *targets],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=600,
    )


def unexplained_ignores(root: Path) -> list[str]:
    """Each `type: ignore` with no error code, or no `# reason` after it on its line."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = IGNORE.search(line)
            if m and not (m["codes"] and re.match(r"\s*#\s*\S", m["rest"])):
                found.append(f"{path.relative_to(root.parent)}:{n}: {line.strip()}")
    return found


def test_mypy_finds_nothing_in_the_tui(tmp_path: Path) -> None:
    res = mypy(package_copy(tmp_path), "-p", "board.tui")
    assert res.returncode == 0, res.stdout + res.stderr


def test_every_type_ignore_in_the_tui_says_why() -> None:
    assert unexplained_ignores(ROOT / "tui") == []


# --- and each check fails on a planted fault ---------------------------------------------------


def test_mypy_fails_on_a_planted_error(tmp_path: Path) -> None:
    where = package_copy(tmp_path)
    base = where / "board" / "tui" / "base.py"
    base.write_text(base.read_text() + '\n\ndef _planted() -> int:\n    return "no"\n')
    res = mypy(where, "-m", "board.tui.base")
    assert res.returncode != 0 and "board/tui/base.py" in res.stdout, res.stdout + res.stderr


def test_the_reason_check_fails_on_a_bare_ignore(tmp_path: Path) -> None:
    tui = tmp_path / "tui"
    tui.mkdir()
    (tui / "a.py").write_text(
        "x = 1  # type: ignore[assignment]  # a reason\n"
        "y = 2  # type: ignore[assignment]\n"
        "z = 3  # type: ignore  # a reason, but no code\n"
    )
    assert unexplained_ignores(tui) == [
        "tui/a.py:2: y = 2  # type: ignore[assignment]",
        "tui/a.py:3: z = 3  # type: ignore  # a reason, but no code",
    ]

"""CI runs the README's test command, and a run that checked nothing is not a pass.

`.ci/run` must hold the README's second command word for word (so what a newcomer runs is
what CI runs), and turn pytest's exit code 5 (no tests collected) into a failure. The
second is checked by running a copy of the real `.ci/run` with a `python3` whose venv's
pytest exits with the code asked for (tests/scripts/python3_for_ci.sh).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import ROOT, SCRIPTS

CI = ROOT / ".ci" / "run"


def readme_test_command() -> str:
    """The command under "# 2. install, then run the tests" in the README."""
    lines = (ROOT / "README.md").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("# 2. "))
    return lines[at + 1]


def test_ci_runs_exactly_the_readme_test_command_in_parallel() -> None:
    command = readme_test_command()
    assert command.startswith("python3 -m venv .venv && "), command
    assert command in CI.read_text().splitlines(), f"{CI} does not run the README's {command!r}"
    assert " -n auto" in command, "the suite is meant to run in parallel (pytest-xdist)"


@pytest.mark.parametrize(
    ("pytest_rc", "ci_rc", "said"),
    [(0, 0, ""), (1, 1, ""), (5, 1, "collected no tests"), (2, 2, "")],
)
def test_ci_passes_on_pytest_s_code_except_that_no_tests_fails(
    tmp_path: Path, pytest_rc: int, ci_rc: int, said: str
) -> None:
    (tmp_path / ".ci").mkdir()
    shutil.copy2(CI, tmp_path / ".ci" / "run")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(SCRIPTS / "python3_for_ci.sh")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "CI_PYTEST_RC": str(pytest_rc),
    }
    res = subprocess.run(
        [str(tmp_path / ".ci" / "run")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert res.returncode == ci_rc, res.stdout + res.stderr
    assert said in res.stderr
    args = (tmp_path / "ci-args").read_text().split()
    assert args == readme_test_command().split(".venv/bin/python ", 1)[1].split(), args

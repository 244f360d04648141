"""Where things are: the project's root, the real scripts the tests run (tests/scripts/) and
the stand-ins (tests/standins/)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "tests" / "scripts"
# stand-ins for programs that cannot run here (a forge, the agent CLIs)
STANDINS = ROOT / "tests" / "standins"


def script(name: str) -> str:
    """The path of a test script under tests/scripts/, as an argv item."""
    path = SCRIPTS / name
    assert path.is_file(), f"no such test script: {path}"
    return str(path)

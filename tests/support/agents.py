"""The real agent CLIs, at pinned versions, installed once into a cache that test runs and
test workers share: what a test of a preset runs instead of a stand-in.

- npm: Claude Code, Codex and Gemini CLI, by one `npm install --prefix <cache>/npm` (no
  global install); their programs are in `<cache>/npm/node_modules/.bin/`.
- PyPI: aider-chat, in a venv of its own (`<cache>/aider-venv`, made by this interpreter's
  `python -m venv`); its program is `<cache>/aider-venv/bin/aider`.

The cache is `~/.cache/board-test-agents/<key>/` of the user's real home (the tests set HOME
to an empty directory per test), or `$BOARD_TEST_AGENTS_DIR/<key>/`; the key is a hash of
the pinned versions, the Python and the node in use, so a change of pin installs afresh
beside the old one. Each of the two installs holds a file lock (fcntl.flock) while it
works, so several pytest-xdist workers wait for one install instead of racing, and writes
its marker file last: a directory without the marker is a half-finished install (a killed
worker, a full disk) and is removed and done again. A failed install is remembered for
FAILED_TTL_S, so the other workers do not each spend the install's timeout on it again;
`python -m tests.support.agents` (what .ci/run calls) always tries again.

Every child runs through board.core.proc.run: no stdin, its own process group (killed
whole at the timeout), no shell. The installs run with HOME set to the real home, so npm
and pip use the user's download caches (~/.npm, ~/.cache/pip) rather than a test's empty
HOME.

A finished install is checked once, before its marker is written: each program must answer
`--version` (with an empty HOME, no login), else it counts as not installed, with why. The
key also holds LAYOUT, this module's way of laying out a directory, so a change to it never
removes an install from under a running test.

    agent("codex")        # Path of the program, or None
    reason("codex")       # why it is None (None when it is there)
    install_all()         # every agent: {name: Installed}
    help_flags(help_text(agent("codex"), "exec"))   # the flags `codex exec` offers

`python -m tests.support.agents` installs all four (trying again what failed), prints each
one's pin, program and `--version`, and exits 1 when any is missing.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import platform
import pwd
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from board.core import proc

# The pins: the newest each registry served when they were set (`npm view <pkg> version`,
# `pip index versions aider-chat`).
NPM_AGENTS: dict[str, tuple[str, str]] = {
    # name: (package, version); the program is node_modules/.bin/<name>
    "claude": ("@anthropic-ai/claude-code", "2.1.332"),
    "codex": ("@openai/codex", "0.171.0"),
    "gemini": ("@google/gemini-cli", "0.61.0"),
}
AIDER: tuple[str, str] = ("aider-chat", "0.86.2")
NAMES: tuple[str, ...] = (*NPM_AGENTS, "aider")

NPM_TIMEOUT_S = 900.0
PIP_TIMEOUT_S = 1200.0
VERSION_TIMEOUT_S = 60.0
FAILED_TTL_S = 900.0  # how long a failed install is believed before it is tried again
MARKER = ".installed"  # written last: the pins it installed, the programs that do not run
LAYOUT = 1  # of a cache directory and its marker: a change makes a new directory, so an
# install under a running test is never taken apart
FAILED = ".failed"  # the reason of the last failed install, with its time


@dataclass(frozen=True)
class Installed:
    """One agent: its program, or why there is none."""

    name: str
    version: str
    path: Path | None
    reason: str | None = None


def pins() -> dict[str, str]:
    """The pinned version of each agent, by name."""
    out = {name: version for name, (_, version) in NPM_AGENTS.items()}
    out["aider"] = AIDER[1]
    return out


def real_home() -> Path:
    """The user's home from the password database, whatever HOME says."""
    return Path(pwd.getpwuid(os.getuid()).pw_dir)


@cache
def _node_version() -> str:
    res = proc.run(("node", "--version"), timeout=30)
    return res.stdout.strip() if res.ok else "no node"


def cache_key() -> str:
    """What an install depends on: the pins, the Python of the aider venv, the node the npm
    packages' native parts are built for, the machine, and this module's layout."""
    facts = {
        "layout": LAYOUT,
        "npm": {pkg: ver for pkg, ver in NPM_AGENTS.values()},
        "pypi": list(AIDER),
        "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
        "node": _node_version().split(".")[0],
        "machine": platform.machine(),
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:16]


def cache_dir() -> Path:
    base = os.environ.get("BOARD_TEST_AGENTS_DIR") or str(
        real_home() / ".cache" / "board-test-agents"
    )
    return Path(base) / cache_key()


def _install_env() -> dict[str, str]:
    """The installs' environment: the real home (the download caches) and no prompts."""
    return {
        "HOME": str(real_home()),
        "npm_config_update_notifier": "false",
        "npm_config_fund": "false",
        "npm_config_audit": "false",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
    }


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive flock on `path` (made if missing), held for the block: the other
    workers wait here while one installs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _marker(where: Path, want: dict[str, str]) -> dict[str, str] | None:
    """A finished install of `want` at `where`: the programs it found broken, by name, with
    why (empty when all run); None when there is none (never made, half-made, other pins)."""
    try:
        data = json.loads((where / MARKER).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("pins") != want:
        return None
    return dict(data.get("broken") or {})


def _recent_failure(failed: Path) -> str | None:
    try:
        data = json.loads(failed.read_text())
    except (OSError, ValueError):
        return None
    if time.time() - float(data.get("at", 0)) < FAILED_TTL_S:
        return str(data.get("reason") or "install failed")
    return None


def _short(res: proc.Result, lines: int = 15) -> str:
    what = "timed out" if res.timed_out else f"exit {res.returncode}"
    tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-lines:])
    return f"`{' '.join(res.argv[:3])} ...` {what}: {tail}"


def _install(
    group: str,
    want: dict[str, str],
    steps: list[tuple[tuple[str, ...], float]],
    names: list[str],
    retry: bool,
) -> tuple[str | None, dict[str, str]]:
    """Install `group` into <cache>/<group> by running `steps` (argv, timeout) in order under
    the group's lock, then `--version` of each of `names`; the marker last. Returns why the
    install failed (None when it did not) and the programs that do not run, with why."""
    root = cache_dir()
    where = root / group
    failed = root / f"{group}{FAILED}"
    # the usual case, read without the lock; `retry` redoes an install with broken programs
    if (broken := _marker(where, want)) is not None and not (retry and broken):
        return None, broken
    with _locked(root / f"{group}.lock"):
        if (broken := _marker(where, want)) is not None and not (retry and broken):
            return None, broken  # another worker finished it while we waited
        if not retry and (why := _recent_failure(failed)):
            return why, {}
        if where.exists():  # half-finished: start over
            shutil.rmtree(where)
        where.mkdir(parents=True)
        for argv, timeout in steps:
            res = proc.run(argv, cwd=where, timeout=timeout, env=_install_env())
            if not res.ok:
                why = _short(res)
                failed.write_text(json.dumps({"at": time.time(), "reason": why}))
                return why, {}
        # a program that is there but does not start (claude's bin is a placeholder until
        # its postinstall copies the native binary over it) is not installed
        broken = {}
        for name in names:
            ok, said = _probe(program(name))
            if not ok:
                broken[name] = f"installed, but `{name} --version` fails: {said}"
        tmp = where / f"{MARKER}.tmp"
        tmp.write_text(json.dumps({"pins": want, "broken": broken}))
        tmp.replace(where / MARKER)
        failed.unlink(missing_ok=True)
        return None, broken


def _npm_steps() -> list[tuple[tuple[str, ...], float]]:
    where = cache_dir() / "npm"
    specs = [f"{pkg}@{ver}" for pkg, ver in NPM_AGENTS.values()]
    argv = ("npm", "install", "--prefix", str(where), "--no-audit", "--no-fund", *specs)
    return [(argv, NPM_TIMEOUT_S)]


def _aider_steps() -> list[tuple[tuple[str, ...], float]]:
    venv = cache_dir() / "aider-venv"
    pip = str(venv / "bin" / "python")
    return [
        ((sys.executable, "-m", "venv", "--clear", str(venv)), 300.0),
        ((pip, "-m", "pip", "install", "-q", f"{AIDER[0]}=={AIDER[1]}"), PIP_TIMEOUT_S),
    ]


def program(name: str) -> Path:
    """Where `name`'s program is once installed."""
    if name in NPM_AGENTS:
        return cache_dir() / "npm" / "node_modules" / ".bin" / name
    if name == "aider":
        return cache_dir() / "aider-venv" / "bin" / "aider"
    raise KeyError(f"no such agent: {name} (known: {', '.join(NAMES)})")


_results: dict[str, Installed] = {}


def install(name: str, retry: bool = False) -> Installed:
    """Install `name` (and what shares its install) unless it is in the cache. Remembered
    for the process; `retry` tries a failed install again at once."""
    if name in _results and (_results[name].path or not retry):
        return _results[name]
    program(name)  # KeyError for an unknown name
    if name in NPM_AGENTS:
        want = {pkg: ver for pkg, ver in NPM_AGENTS.values()}
        group = list(NPM_AGENTS)
        why, broken = _install("npm", want, _npm_steps(), group, retry)
    else:
        group = ["aider"]
        why, broken = _install("aider-venv", {AIDER[0]: AIDER[1]}, _aider_steps(), group, retry)
    for each in group:
        where = program(each)
        version = pins()[each]
        if why or each in broken:
            _results[each] = Installed(each, version, None, why or broken[each])
        elif not os.access(where, os.X_OK):
            _results[each] = Installed(each, version, None, f"installed, but no program {where}")
        else:
            _results[each] = Installed(each, version, where)
    return _results[name]


def agent(name: str) -> Path | None:
    """The program of agent `name` (claude, codex, gemini, aider), installed if need be;
    None when it could not be installed (`reason(name)` says why)."""
    return install(name).path


def reason(name: str) -> str | None:
    """Why `agent(name)` is None; None when it is there."""
    return install(name).reason


def real_agent(name: str) -> Path:
    """The real program for a test; under CI=true one that cannot be installed fails the
    test (never a silent skip), elsewhere it is skipped with the reason."""
    import pytest

    found = agent(name)
    if found is None:
        why = f"the real {name} could not be installed: {reason(name)}"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    return found


def install_all(retry: bool = False) -> dict[str, Installed]:
    return {name: install(name, retry=retry) for name in NAMES}


def _probe(path: Path) -> tuple[bool, str]:
    """`<path> --version` with an empty HOME of its own and no stdin: whether it exited 0,
    and its first line (or all it said when it failed)."""
    with tempfile.TemporaryDirectory(prefix="agent-home-") as home:
        res = proc.run(
            (str(path), "--version"), cwd=home, timeout=VERSION_TIMEOUT_S, env={"HOME": home}
        )
    if res.missing:
        return False, res.stderr.strip()
    text = res.stdout.strip() or res.stderr.strip()
    if not res.ok:
        what = "timed out" if res.timed_out else f"exit {res.returncode}"
        return False, f"{what}: {(res.stdout + res.stderr).strip()[-500:]}"
    return True, text.splitlines()[0] if text else ""


def version_output(path: Path) -> str:
    """What `<path> --version` says (its first line on stdout), or what went wrong."""
    ok, said = _probe(path)
    return said if ok else f"(--version failed) {said}"


def main() -> int:
    """Install every agent (trying again what failed), print each one's pin, path and
    `--version`; exit 1 when any could not be installed."""
    print(f"cache: {cache_dir()}")
    bad = 0
    for name in NAMES:
        start = time.monotonic()
        got = install(name, retry=True)
        took = time.monotonic() - start
        if got.path is None:
            bad += 1
            print(f"{name} {got.version}: NOT INSTALLED ({took:.1f}s): {got.reason}")
            continue
        print(f"{name} {got.version}: {got.path} ({took:.1f}s) -> {version_output(got.path)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

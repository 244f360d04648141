"""core/childwait.py, a short child's exit waited for on a pidfd, held equal to Popen's own
`communicate(timeout)`: the same outputs, exit code and timeout for every kind of child,
through `proc.run` as git calls go, with real child processes."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from board.core import childwait, proc

# each a child's body; `w(fd, bytes)` writes through os.write
CHILDREN = {
    "lines on both": (
        "for i in range(3000): w(1, f'out {i}\\n'.encode()); w(2, f'err {i}\\n'.encode())"
    ),
    "nothing": "pass",
    "a big output": "w(1, b'x' * 3_000_000); w(2, b'y' * 200_000)",
    "a failing child": "w(2, b'fatal: no\\n'); sys.exit(128)",
    "bytes that are not utf-8": "w(1, b'ok\\n\\xff\\xfe\\n')",
    "output closed, then a pause before the exit": (
        "w(1, b'done\\n'); os.close(1); os.close(2); time.sleep(0.3); sys.exit(4)"
    ),
    "killed by a signal": "w(1, b'bye\\n'); os.kill(os.getpid(), 9)",
    "slow lines": "for i in range(5): w(1, f'{i}\\n'.encode()); time.sleep(0.05)",
}  # fmt: skip


def _argv(body: str) -> list[str]:
    code = f"import os, sys, time\ndef w(fd, b):\n    os.write(fd, b)\n{body}\n"
    return [sys.executable, "-c", code]


@pytest.fixture
def both() -> Iterator[None]:
    was = childwait.USE_PIDFD
    yield
    childwait.USE_PIDFD = was


def _run(use_pidfd: bool, argv: list[str], cwd: Path, timeout: float = 30) -> proc.Result:
    childwait.USE_PIDFD = use_pidfd
    return proc.run(argv, cwd=cwd, timeout=timeout)


def _seen(res: proc.Result) -> tuple[object, ...]:
    return (res.returncode, res.stdout, res.stderr, res.timed_out, res.produced_output, res.tail)


@pytest.mark.parametrize("kind", sorted(CHILDREN))
def test_the_pidfd_wait_gives_what_communicate_gives(tmp_path: Path, kind: str, both: None) -> None:
    argv = _argv(CHILDREN[kind])
    assert _seen(_run(True, argv, tmp_path)) == _seen(_run(False, argv, tmp_path))


@pytest.mark.parametrize(
    "body",
    [
        "w(1, b'started\\n'); w(2, b'still going\\n'); time.sleep(30)",
        # the leader exits; a child it left in its group holds the output open
        "import subprocess; subprocess.Popen([sys.executable, '-c', 'import time; "
        "time.sleep(30)']); w(1, b'leader gone\\n')",
        "w(1, b'done\\n'); os.close(1); os.close(2); time.sleep(30)",
    ],
    ids=["a child that runs on", "a grandchild holding the output", "output closed, no exit"],
)
def test_past_its_timeout_a_child_is_stopped_as_before(
    tmp_path: Path, body: str, both: None
) -> None:
    """The output read before the timeout is kept, the group is killed, `timed_out` is
    said, and the call returns within the kill's grace either way."""
    argv = _argv(body)
    seen = []
    for use_pidfd in (True, False):
        began = time.monotonic()
        res = _run(use_pidfd, argv, tmp_path, timeout=0.5)
        assert time.monotonic() - began < 0.5 + proc.KILL_GRACE_S + 2
        seen.append(_seen(res))
    assert seen[0] == seen[1]
    assert seen[0][3] is True  # timed out


@pytest.mark.parametrize("use_pidfd", [True, False], ids=["pidfd", "plain"])
def test_a_child_that_closed_its_output_is_waited_for_without_a_sleep(
    tmp_path: Path, use_pidfd: bool, both: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reason for the trick: the exit is known when it happens, not at the next of
    Popen's sleeps (0.5 ms doubling to 50 ms). A child that exits 0.2 s after closing its
    output: no sleep on the pidfd; the plain wait sleeps (what the red check shows)."""
    childwait.USE_PIDFD = use_pidfd
    child = subprocess.Popen(
        _argv("os.close(1); os.close(2); time.sleep(0.2)"),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    sleeps: list[float] = []
    real = time.sleep

    def counted(s: float) -> None:
        sleeps.append(s)
        real(s)

    monkeypatch.setattr(time, "sleep", counted)
    stops: list[int] = []
    out, err, timed_out = childwait.communicate(child, 30, lambda: stops.append(1))
    monkeypatch.setattr(time, "sleep", real)
    assert (out, err, timed_out, stops, child.returncode) == (b"", b"", False, [], 0)
    assert (sleeps == []) is use_pidfd, sleeps

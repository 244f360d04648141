"""core/pipepump.py, one thread reading every streaming child's pipe, held equal to the
plain reader (a thread of its own per pipe): the same lines, tail and result for every kind
of output, the same guarantees for a child that holds its pipe or a callback that fails."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from board.core import pipepump, proc
from board.core.git import gitutil

from tests.support.waiting import wait_for

# each writes through os.write, so a chunk boundary falls where the script puts it
OUTPUTS = {
    "lines": "for i in range(2000): w(f'line {i}\\n'.encode())",
    "no final newline": "w(b'a\\nb\\nlast without newline')",
    "nothing": "pass",
    "empty lines": "w(b'\\n\\n\\nx\\n\\n')",
    "an endless line": "w(b'y' * 2_500_000); w(b'\\nafter\\n')",
    "a character split across writes": (
        "b = 'caf\\u00e9 \\u2603\\n'.encode(); w(b[:4]); time.sleep(0.05); w(b[4:7]);"
        "time.sleep(0.05); w(b[7:])"
    ),
    "bytes that are not utf-8": "w(b'ok\\n\\xff\\xfe bad\\n')",
    "slow lines": "for i in range(5): w(f'{i}\\n'.encode()); time.sleep(0.03)",
    "a failing child": "w(b'about to fail\\n'); sys.exit(3)",
}


def _script(body: str) -> list[str]:
    code = (
        "import os, sys, time\n"
        "def w(b):\n"
        "    os.write(1, b)\n"
        f"{body}\n"
    )  # fmt: skip
    return [sys.executable, "-c", code]


@pytest.fixture(params=[True, False], ids=["pump", "plain"])
def reader(request: pytest.FixtureRequest) -> Iterator[bool]:
    was = proc.SHARED_READER
    proc.SHARED_READER = request.param
    yield request.param
    proc.SHARED_READER = was


def _run(argv: list[str], cwd: Path, chunks: bool = False, **kw: object):
    lines: list[str] = []
    raw: list[bytes] = []
    res = proc.stream(
        argv,
        cwd=cwd,
        timeout=30,
        on_line=lines.append,
        on_chunk=raw.append if chunks else None,
        **kw,  # type: ignore[arg-type]
    )
    return res, lines, b"".join(raw)


def _both(argv: list[str], cwd: Path, chunks: bool = False):
    was = proc.SHARED_READER
    try:
        proc.SHARED_READER = True
        pumped = _run(argv, cwd, chunks)
        proc.SHARED_READER = False
        plain = _run(argv, cwd, chunks)
    finally:
        proc.SHARED_READER = was
    return pumped, plain


@pytest.mark.parametrize("kind", sorted(OUTPUTS))
def test_the_pump_passes_on_what_the_plain_reader_does(tmp_path: Path, kind: str) -> None:
    (res, lines, _), (res0, lines0, _) = _both(_script(OUTPUTS[kind]), tmp_path)
    assert lines == lines0
    assert res.tail == res0.tail
    assert (res.returncode, res.produced_output, res.timed_out) == (
        res0.returncode,
        res0.produced_output,
        res0.timed_out,
    )


@pytest.mark.parametrize("kind", ["lines", "an endless line", "a character split across writes"])
def test_the_pump_passes_on_the_same_bytes_to_a_caller_taking_chunks(
    tmp_path: Path, kind: str
) -> None:
    (res, lines, raw), (res0, lines0, raw0) = _both(_script(OUTPUTS[kind]), tmp_path, chunks=True)
    assert raw == raw0 and raw, "the chunks did not add up to the same output"
    assert lines == lines0 == []
    assert res.produced_output and res0.produced_output


def test_many_children_at_once_each_get_their_own_lines_in_order(
    tmp_path: Path, reader: bool
) -> None:
    """More pipes than BATCH_MIN, so the pump gathers output between its looks."""
    n = pipepump.BATCH_MIN * 3
    got: dict[int, list[str]] = {}
    failures: list[BaseException] = []

    def one(k: int) -> None:
        try:
            body = f"for i in range(50): w(f'{k} {{i}}\\n'.encode()); time.sleep(0.005)"
            got[k] = _run(_script(body), tmp_path)[1]
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=one, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures, failures
    for k in range(n):
        assert got[k] == [f"{k} {i}" for i in range(50)], k


def test_every_pipe_is_read_by_one_thread_not_a_thread_each(tmp_path: Path) -> None:
    """The trick itself: 20 children streaming at once start no reader thread of their own."""
    was = proc.SHARED_READER
    proc.SHARED_READER = True
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update(t.name for t in threading.enumerate())
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        runs = [
            threading.Thread(
                target=_run,
                args=(_script("for i in range(20): w(b'x\\n'); time.sleep(0.02)"), tmp_path),
            )
            for _ in range(20)
        ]
        for t in runs:
            t.start()
        for t in runs:
            t.join(60)
    finally:
        done.set()
        watcher.join()
        proc.SHARED_READER = was
    assert not [name for name in seen if name.startswith("read-")], "a thread per pipe"
    assert "pipe-pump" in seen


def test_a_failing_callback_is_raised_and_its_child_and_grandchild_go(
    tmp_path: Path, reader: bool
) -> None:
    """A caller that cannot take a line (its log's disk is full) gets its error back, and
    the child does not run on unread until its timeout: its whole group is killed."""
    marker = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys, time\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(marker)!r}, 'w').write(str(g.pid))\n"
        "print('first', flush=True)\n"
        "time.sleep(60)\n"
    )

    def take(line: str) -> None:
        wait_for(marker.exists, 10, "the grandchild")
        raise OSError(28, "No space left on device")

    started: list[int] = []
    began = time.monotonic()
    with pytest.raises(OSError, match="No space left"):
        proc.stream([sys.executable, "-c", code], cwd=tmp_path, timeout=60, on_line=take,
                    on_start=started.append)  # fmt: skip
    assert time.monotonic() - began < 15, "the child ran on after its caller failed"
    assert not proc.pid_alive(started[0])
    grandchild = int(marker.read_text())
    wait_for(lambda: not proc.pid_alive(grandchild), 5, "the grandchild killed with its group")


def test_a_grandchild_holding_the_pipe_does_not_hold_the_call(tmp_path: Path, reader: bool) -> None:
    """The leader exits; a grandchild it left keeps the pipe open: the call returns at once,
    with what was printed, and the grandchild is killed with the group."""
    code = (
        "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print('leader done', flush=True)\n"
    )
    began = time.monotonic()
    res, lines, _ = _run([sys.executable, "-c", code], tmp_path)
    assert lines == ["leader done"] and res.returncode == 0
    assert time.monotonic() - began < 10
    wait_for(lambda: not proc.group_alive(res.pid), 5, "the group killed")


def test_a_reader_that_waits_holds_no_other_childs_output(tmp_path: Path) -> None:
    """The diff view's reader waits while the operator types (gitutil.stream_bytes asks for
    a reader of its own): a coder's lines meanwhile are read as they come."""
    was = proc.SHARED_READER
    proc.SHARED_READER = True
    release = threading.Event()
    waited: list[bytes] = []

    def held(chunk: bytes) -> None:
        waited.append(chunk)
        release.wait(30)

    diff = threading.Thread(
        target=gitutil.stream_bytes,
        args=(tmp_path, ["--version"], held, 30),
    )
    try:
        diff.start()
        wait_for(lambda: waited, 10, "the diff's first bytes")
        began = time.monotonic()
        res, lines, _ = _run(_script("for i in range(3): w(f'{i}\\n'.encode())"), tmp_path)
        took = time.monotonic() - began
    finally:
        release.set()
        diff.join(30)
        proc.SHARED_READER = was
    assert lines == ["0", "1", "2"] and res.returncode == 0
    assert took < 10, f"the coder's lines waited {took:.1f} s for the diff's reader"

"""Child processes: no stdin, their own process group, a timeout that kills the whole group.

Invariant 3 lives here. Every git call, coder, gate and PR command goes through
`run` or `stream`, so no caller can forget the process group or the timeout.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from board.core import pipepump
from board.core.records import Record, field

KILL_GRACE_S = 2.0


class Result(Record):
    """What a finished child left: exit status, output, and whether we had to kill it."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    first_output_timed_out: bool = False
    produced_output: bool = False
    tail: list[str] = field(default_factory=list)
    pid: int = 0
    missing: bool = False  # the executable was not found / not executable

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def killed_by_signal(self) -> int | None:
        """The signal that killed it (-N from Python, or 128+N from a shell), else None."""
        if self.returncode < 0:
            return -self.returncode
        if 128 < self.returncode <= 128 + 64:
            return self.returncode - 128
        return None

    def tail_text(self, lines: int = 30) -> str:
        return "\n".join(self.tail[-lines:])


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Signal a whole process group; False if it is already gone."""
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return False


def group_alive(pgid: int) -> bool:
    """True while a live (non-zombie) process is in the group.

    killpg(pgid, 0) alone counts zombies, and where PID 1 does not reap orphans a
    killed group stays "alive" for ever; /proc tells a zombie from a live process.
    """
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        entries = os.listdir("/proc")
    except OSError:  # no /proc: trust killpg
        return True
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


# Every child a drive starts carries these in its environment (coder, formatter, gate), and
# so does everything they start, from their first instruction on.
MARK_TREE = "BOARD_WORKTREE"
MARK_DRIVE = "BOARD_DRIVE"
MARK_KILL_S = 5.0


def marked_processes(marks: Mapping[str, Sequence[str]]) -> list[tuple[int, int]]:
    """(pid, pgid) of every live process whose environment has KEY=VALUE for one of `marks`.

    Read from /proc/<pid>/environ, the environment the process was started with. This
    process and its own group are never listed. Processes of other users cannot be read
    and are not listed; a system without /proc lists nothing.
    """
    needles = {f"{k}={v}".encode() for k, values in marks.items() for v in values if v}
    if not needles:
        return []
    own_pid, own_group = os.getpid(), os.getpgrp()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    found = []
    for name in entries:
        if not name.isdigit() or int(name) == own_pid:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                env = fh.read()
        except OSError:
            continue
        if not any(n in env for n in needles):  # cheap test first, exact one below
            continue
        if not needles.intersection(env.split(b"\0")):
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) != own_group:
            found.append((int(name), int(fields[2])))
    return found


def kill_marked(marks: Mapping[str, Sequence[str]], timeout: float = MARK_KILL_S) -> list[int]:
    """Kill the group of every process `marked_processes` finds, until none is left.

    Returns the groups killed. Looks again after each round, so a process forked or moved
    to a group of its own meanwhile is caught too; gives up after `timeout`, and what is
    left then is listed by a last `marked_processes` call the caller may make.
    """
    killed: list[int] = []
    deadline = time.monotonic() + timeout
    while True:
        found = marked_processes(marks)
        if not found or time.monotonic() >= deadline:
            return killed
        for _pid, pgid in found:
            if kill_group(pgid) and pgid not in killed:
                killed.append(pgid)
        time.sleep(0.02)


def pid_alive(pid: int) -> bool:
    """True while the process runs; a zombie is dead for our purposes."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the group, wait a grace period, then SIGKILL it and reap the leader."""
    pgid = proc.pid
    kill_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + KILL_GRACE_S
    while time.monotonic() < deadline:
        if proc.poll() is not None and not group_alive(pgid):
            break
        time.sleep(0.02)
    kill_group(pgid, signal.SIGKILL)
    try:
        proc.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL cannot be ignored
        pass


def _kill_at_once(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the group without `_terminate`'s grace, and reap the leader: for a child its
    caller failed to take on, whom nothing is waiting to hear from."""
    kill_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_GRACE_S)


def _env(env: Mapping[str, str] | None) -> dict[str, str]:
    merged = dict(os.environ)
    if env:
        merged.update(env)
    return merged


def run(
    argv: Sequence[str],
    cwd: str | Path | None = None,
    timeout: float = 120,
    env: Mapping[str, str] | None = None,
    input_bytes: bytes | None = None,
) -> Result:
    """Run to completion and capture stdout/stderr (for git and other short commands).

    `input_bytes`, when given, is fed through a pipe that is closed at once: the child
    never sees the operator's terminal.
    """
    argv = tuple(str(a) for a in argv)
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=_env(env),
            stdin=subprocess.PIPE if input_bytes is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        return Result(argv, 127, "", str(exc), missing=True)
    try:
        out, err = proc.communicate(input=input_bytes, timeout=timeout or None)
        timed_out = False
    except subprocess.TimeoutExpired:
        _terminate(proc)
        out, err = proc.communicate()
        timed_out = True
    # the leader is gone; make sure nothing it started lingers in its group
    kill_group(proc.pid, signal.SIGKILL)
    so = out.decode("utf-8", "replace")
    se = err.decode("utf-8", "replace")
    return Result(
        argv,
        proc.returncode if not timed_out else -signal.SIGKILL,
        so,
        se,
        timed_out=timed_out,
        produced_output=bool(out or err),
        tail=(so + se).splitlines()[-50:],
        pid=proc.pid,
    )


STREAM_POLL_MAX_S = 0.5
# Every streaming child's pipe is read by the one thread of core/pipepump.py (a speed trick,
# fenced there); False: a thread of its own reads each, the plain way it is held equal to.
SHARED_READER = True


class _Lines:
    """A child's output cut into lines for `on_line` (or passed on raw to `on_chunk`), with
    the tail kept for its Result; fed by whichever reader reads the pipe."""

    def __init__(
        self,
        tail_lines: int,
        on_line: Callable[[str], None],
        on_chunk: Callable[[bytes], None] | None,
    ) -> None:
        self.tail: deque[str] = deque(maxlen=tail_lines)
        self.got = False
        self._buf = b""
        self._on_line = on_line
        self._on_chunk = on_chunk

    def take(self, chunk: bytes) -> None:
        self.got = True
        if self._on_chunk is not None:
            self._on_chunk(chunk)
            return
        buf = self._buf + chunk
        while b"\n" in buf:
            raw, buf = buf.split(b"\n", 1)
            line = raw.decode("utf-8", "replace")
            self.tail.append(line)
            self._on_line(line)
        if len(buf) > 1_000_000:  # an endless line: flush it in pieces
            line = buf.decode("utf-8", "replace")
            buf = b""
            self.tail.append(line[:2000])
            self._on_line(line)
        self._buf = buf

    def end(self) -> None:
        if self._buf:
            line = self._buf.decode("utf-8", "replace")
            self._buf = b""
            self.tail.append(line)
            self._on_line(line)


def _read_all(feed: pipepump.Feed) -> None:
    """The plain reader: a thread of its own reads one pipe to its end."""
    while True:
        try:
            chunk = os.read(feed.fd, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            break
        feed.give(chunk)
    feed.ended()


def _poll_s(elapsed: float, *deadlines: float) -> float:
    """How long a streaming child's watcher sleeps between looks while its output is read:
    50 ms at first, then a tenth of the time it has run, up to STREAM_POLL_MAX_S, and never
    past a deadline (0: none). The reader's end wakes it at once; what waits on the sleep
    is only a leader that exited while a grandchild holds the pipe. Every 50 ms, 100
    coders' watchers woke 2,000 times a second."""
    wait = min(STREAM_POLL_MAX_S, max(0.05, elapsed / 10))
    for deadline in deadlines:
        if deadline:
            wait = min(wait, max(0.005, deadline - elapsed))
    return wait


def stream(
    argv: Sequence[str],
    cwd: str | Path,
    timeout: float,
    on_line: Callable[[str], None],
    first_output_timeout: float = 0,
    env: Mapping[str, str] | None = None,
    on_start: Callable[[int], None] | None = None,
    tail_lines: int = 60,
    on_chunk: Callable[[bytes], None] | None = None,
    own_reader: bool = False,
) -> Result:
    """Run a long child (coder, gate), passing each output line to `on_line` as it arrives.

    stdout and stderr are merged. The whole group is killed at `timeout`, or at
    `first_output_timeout` if the child has printed nothing by then. A grandchild
    holding the pipe open cannot hang us: after the kill we stop reading.

    With `on_chunk`, the raw bytes are passed on as read and `on_line` is not called: a
    caller taking millions of lines (a huge `git diff`) indexes them itself, at C speed,
    instead of paying a Python call per line.

    The callbacks run in the thread that reads the pipe: one thread for every such child of
    the process (core/pipepump.py), so they must be quick. A caller whose callback may wait
    (the diff view holds its reader while the operator types) asks for `own_reader`. An
    exception in a callback ends the child's whole group and is raised here.
    """
    argv = tuple(str(a) for a in argv)
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=_env(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        return Result(argv, 127, "", str(exc), missing=True, tail=[str(exc)])
    if on_start:
        try:
            on_start(proc.pid)
        except BaseException:
            # the caller could not take the child on (a drive's store went away while it
            # recorded the group): it must not outlive the call that started it
            _kill_at_once(proc)
            if proc.stdout is not None:
                with contextlib.suppress(OSError):
                    proc.stdout.close()
            raise
    assert proc.stdout is not None
    pipe = proc.stdout
    lines = _Lines(tail_lines, on_line, on_chunk)
    feed = pipepump.Feed(pipe.fileno(), lines.take, lines.end)
    if SHARED_READER and not own_reader:
        pipepump.pump().add(feed)
        thread = None
    else:
        thread = threading.Thread(target=_read_all, args=(feed,), daemon=True,
                                  name=f"read-{proc.pid}")  # fmt: skip
        thread.start()
    start = time.monotonic()
    timed_out = first_timed_out = False
    while True:
        if proc.poll() is not None or feed.error is not None:
            break
        elapsed = time.monotonic() - start
        if timeout and elapsed >= timeout:
            timed_out = True
            break
        if first_output_timeout and not lines.got and elapsed >= first_output_timeout:
            first_timed_out = timed_out = True
            break
        # wake at the end of the output, not up to 50 ms after it (a caller may be waiting
        # for a short child's last bytes); the timeouts are still checked at their moment
        if not feed.done.is_set():
            feed.done.wait(_poll_s(elapsed, timeout, 0 if lines.got else first_output_timeout))
        else:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.05)
    if timed_out:
        _terminate(proc)
    elif feed.error is not None:
        _kill_at_once(proc)  # the caller could not take its output: the error is raised
    else:
        # the leader exited: anything still in its group (a grandchild on our pipe) goes too
        if group_alive(proc.pid):
            kill_group(proc.pid, signal.SIGKILL)
    feed.done.wait(timeout=5)
    if thread is None:
        pipepump.pump().drop(feed)
    else:
        thread.join(timeout=5)
    try:
        pipe.close()
    except OSError:
        pass
    if feed.error is not None:
        raise feed.error
    rc = proc.returncode if proc.returncode is not None else -signal.SIGKILL
    return Result(
        argv,
        rc,
        timed_out=timed_out,
        first_output_timed_out=first_timed_out,
        produced_output=lines.got,
        tail=list(lines.tail),
        pid=proc.pid,
    )


def run_interactive(
    argv: Sequence[str], cwd: str | Path, env: Mapping[str, str] | None = None
) -> int:
    """Run an operator's own interactive program (their shell, their editor) on the terminal
    the control room handed over (`board tui` suspends itself around this call).

    The one exception to invariant 3, and why:
    - stdin is inherited: an editor or a shell reads the operator's keys from the terminal;
      DEVNULL would make vi quit at once and a shell exit on EOF.
    - no process group of its own: a terminal lets only its foreground process group read
      it, so a child in a new group (or session) would be stopped with SIGTTIN on its
      first read. It runs in ours, which the suspended app has left in the foreground.
    - no timeout: the operator is at the keyboard, and killing their editor after a limit
      would throw away what they typed. They end it themselves (`exit`, `:wq`).
    No shell parses `argv` (it goes to exec as a list): a card's fields never reach one;
    the card and its branch reach the child only as environment values. `env` is the child's whole
    environment (not merged over ours: the caller leaves out what must not be handed on);
    None: ours. Returns the exit status, or 127 when the program cannot be started.
    """
    argv = tuple(str(a) for a in argv)
    try:
        child = subprocess.Popen(argv, cwd=cwd, env=dict(env) if env is not None else None)
    except (FileNotFoundError, PermissionError, NotADirectoryError):
        return 127
    return child.wait()

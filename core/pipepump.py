"""One thread reads every streaming child's pipe: a speed trick, fenced here.

Why: `proc.stream` read each child's output in a thread of its own. With 100 coders each
printing a line every 100 ms, 100 reader threads woke a thousand times a second, and each
wake took the interpreter's lock from the loop: about 0.3 ms of the loop's CPU a line,
where the line's own work (its log, its failure rules) is 10-15 µs (bench_fleet,
docs/performance.md). Here one thread waits on every pipe at once (`selectors`, epoll on
Linux) and, while many pipes are open, lets their output gather for `BATCH_S` between two
looks, so a wake reads many lines instead of one.

What it keeps of the thread-per-pipe reader, and tests/test_pipepump.py holds it to:
the same lines, in the same order, with the same tail; raw chunks passed on in order when
the caller takes chunks; the end of the output marked the moment it is read (the caller's
watcher wakes on it); a callback's exception kept for the caller (who kills the child and
raises it) and the pipe still drained; and nothing a child does can stop the others' reading
for longer than its callback takes. The pipe is the caller's: it closes it only after `drop`.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import threading
import time
from collections.abc import Callable

# A wake reads at most this from one pipe, so one chatty child cannot starve the rest.
CHUNK = 65536
# With at least BATCH_MIN pipes open, the thread sleeps BATCH_S after each look that found
# output: a line waits at most that long, and 100 coders' lines are read a few at a wake.
BATCH_MIN = 8
BATCH_S = 0.02


class Feed:
    """One child's pipe as the pump sees it: `take(chunk)` for what was read, `end()` once
    at the end of the output; both run in the pump's thread."""

    def __init__(self, fd: int, take: Callable[[bytes], None], end: Callable[[], None]) -> None:
        self.fd = fd
        self.take = take
        self.end = end
        self.done = threading.Event()  # the output ended (or the pipe failed)
        self.error: BaseException | None = None  # a callback raised: the caller's to raise
        self.registered = False

    def give(self, chunk: bytes) -> None:
        """Bytes read: passed on, unless a callback already failed (the pipe is still read
        to its end, so the child never blocks on it)."""
        if self.error is None:
            try:
                self.take(chunk)
            except BaseException as exc:  # noqa: BLE001 - the caller raises it
                self.error = exc

    def ended(self) -> None:
        """The end of the output: the last partial line passed on, the caller woken."""
        if self.error is None:
            try:
                self.end()
            except BaseException as exc:  # noqa: BLE001 - the caller raises it
                self.error = exc
        self.done.set()


class Pump:
    """The reading thread and the pipes it watches."""

    def __init__(self) -> None:
        self._mu = threading.Lock()  # held while a pipe is read, and to add or drop one
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        self._thread = threading.Thread(target=self._run, daemon=True, name="pipe-pump")
        self._thread.start()

    def add(self, feed: Feed) -> None:
        with self._mu:
            self._sel.register(feed.fd, selectors.EVENT_READ, feed)
            feed.registered = True
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_w, b"x")  # a selector that copies its list sees the new pipe

    def drop(self, feed: Feed) -> None:
        """Stop watching the pipe (it may be closed after this returns)."""
        with self._mu:
            self._forget(feed)

    def _forget(self, feed: Feed) -> None:
        if feed.registered:
            feed.registered = False
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._sel.unregister(feed.fd)

    def _run(self) -> None:
        while True:
            try:
                ready = self._sel.select()
            except OSError:  # pragma: no cover - a pipe closed under us; look again
                time.sleep(0.01)
                continue
            got = False
            with self._mu:
                for key, _ in ready:
                    feed = key.data
                    if feed is None:
                        with contextlib.suppress(BlockingIOError, OSError):
                            os.read(self._wake_r, 4096)
                        continue
                    if feed.registered:
                        got = self._read(feed) or got
                busy = len(self._sel.get_map()) > BATCH_MIN  # the wake pipe is one
            if got and busy:
                time.sleep(BATCH_S)

    def _read(self, feed: Feed) -> bool:
        try:
            chunk = os.read(feed.fd, CHUNK)
        except OSError:
            chunk = b""
        if chunk:
            feed.give(chunk)
            return True
        self._forget(feed)
        feed.ended()
        return False


_pump: Pump | None = None
_pump_mu = threading.Lock()


def pump() -> Pump:
    """The process's pump, started on first use (and again in a forked child)."""
    global _pump
    with _pump_mu:
        if _pump is None:
            _pump = Pump()
        return _pump


def _forked() -> None:
    global _pump, _pump_mu
    _pump = None  # its thread did not come across the fork
    _pump_mu = threading.Lock()


os.register_at_fork(after_in_child=_forked)

"""`board run`'s SIGTERM and SIGINT: noted by the handler, acted on by the main thread.

A handler runs in the main thread between two of its steps, maybe while that thread holds
a lock, so it takes none: the loop's `request_stop` takes several, and inside
`wake.wait` the main thread holds wake's own. When the handler called `request_stop`, its
`wake.set()` waited for that lock forever: a SIGTERM hung `board run`, and every drive
thread that then tried to wake the loop. The loop naps in slices of SIGNAL_POLL_S, so it
acts on a noted signal within that.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from types import FrameType

SIGNAL_POLL_S = 0.2  # how soon the main thread acts on a signal while it waits


def install(note: Callable[[str], None]) -> Callable[[], None]:
    """Route SIGTERM and SIGINT to `note(why)`, which must take no lock; returns the undo.
    Outside the main thread (a test driving the loop), nothing is routed."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}

    def handler(signum: int, frame: FrameType | None) -> None:
        note(f"board run got {signal.Signals(signum).name}")

    for s in old:
        signal.signal(s, handler)

    def restore() -> None:
        for s, h in old.items():
            signal.signal(s, h)

    return restore


def nap(wake: threading.Event, seconds: float, noted: Callable[[], bool]) -> None:
    """Wait `seconds`, or until `wake` is set, or within SIGNAL_POLL_S of `noted()`."""
    end = time.monotonic() + seconds
    while not noted():
        left = end - time.monotonic()
        if left <= 0 or wake.wait(min(left, SIGNAL_POLL_S)):
            break
    wake.clear()

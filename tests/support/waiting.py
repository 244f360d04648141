"""One way to wait: look at a condition until it holds, or fail naming what never came.

Two kinds of test wait, through the same loop and the same deadline:

- on threads and processes (a drive, `board run`, a coder): `wait_for(condition)` sleeps
  between looks and returns the condition's first true value;
- on a Textual app under Pilot, which must keep running while the test waits:
  `await wait_for(pilot, condition)` pauses the app between looks, and once more after the
  condition holds, so that what the condition saw is painted before the test reads the screen.

The deadline is a bound on a failure, not a claim about speed: it is generous, since the
suite runs in parallel on a loaded machine. A test whose claim is a time passes `timeout`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any, TypeVar

from textual.pilot import Pilot

T = TypeVar("T")

TIMEOUT_S = 20.0
POLL_S = 0.02


def has_text(path: Path) -> bool:
    """The file holds some text: a coder's line is written, not only its file opened (a
    shell's `echo >> f` creates f, then writes). A test that stops or kills the coder once
    the file merely exists can catch it between the two, and then finds its work empty."""
    try:
        return bool(path.read_bytes())
    except FileNotFoundError:
        return False


def wait_for(first: Any, *args: Any, **kw: Any) -> Any:
    """Wait until a condition is true, in one of two forms:

    - `wait_for(condition, timeout=TIMEOUT_S, what="")` returns `condition()`'s first true
      value, sleeping between looks;
    - `await wait_for(pilot, condition, timeout=TIMEOUT_S, what="")` does the same while the
      Pilot's app keeps running.

    Either fails at `timeout` naming `what` (or the condition's docstring, or its repr).
    """
    if isinstance(first, Pilot):
        return _wait_app(first, *args, **kw)
    looks = _looks(first, *args, **kw)
    while True:
        try:
            next(looks)
        except StopIteration as held:
            return held.value
        time.sleep(POLL_S)


async def _wait_app(
    pilot: Pilot[Any], condition: Callable[[], T], timeout: float = TIMEOUT_S, what: str = ""
) -> T:
    looks = _looks(condition, timeout, what)
    while True:
        try:
            next(looks)
        except StopIteration as held:
            await pilot.pause(POLL_S)
            return held.value
        await pilot.pause(POLL_S)


def _looks(
    condition: Callable[[], T], timeout: float = TIMEOUT_S, what: str = ""
) -> Generator[None, None, T]:
    """Yields while `condition()` is false; returns its first true value; fails at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            named = what or (condition.__doc__ or "").strip() or repr(condition)
            raise AssertionError(f"timed out after {timeout}s waiting for {named}")
        yield

"""Test-only fault hooks: the save and the removal stop, or pause, at named steps.

The fault test SIGKILLs a save at a named step (after the commit, after the ref, during the
removal) or pauses there to make two processes overlap, then proves nothing was lost and the
next run finishes the job. Unset in production, where a hook costs one dict lookup. Its own
module because the save and the removal both call it, and neither imports the other.
"""

from __future__ import annotations

import os
import signal
import time

FAULT_KILL_ENV = "BOARD_TEST_KILL_AT"
FAULT_PAUSE_ENV = "BOARD_TEST_PAUSE_AT"


def _fault(step: str) -> None:
    if os.environ.get(FAULT_KILL_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)
    pause = os.environ.get(FAULT_PAUSE_ENV, "")
    if pause.startswith(step + ":"):
        time.sleep(float(pause.split(":", 1)[1]))

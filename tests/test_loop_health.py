"""Whether a loop runs (`waits.loop_running`), the one answer `board status`, the TUI's
header and the why-it-waits words give: on this host a dead pid is a dead loop at once,
whatever its heartbeat says; from another host, a heartbeat over STALE_AFTER_S old is.
And which cards need the operator (`waits.needs_operator`), the header's count."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from board.core.cards import waits
from board.core.model import Blocked, LoopBeat
from board.core.store import Expect

from tests.support.boards import make_board
from tests.support.loop import add_card
from tests.support.repos import run_cli

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def beat(pid: int, host: str, age_s: float) -> LoopBeat:
    heard = NOW - timedelta(seconds=age_s)
    return LoopBeat(host, pid, "2025-12-31T00:00:00.000Z", heard.isoformat())


def test_a_loop_on_this_host_is_gone_the_moment_its_pid_is() -> None:
    here = socket.gethostname()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert waits.loop_running(beat(child.pid, here, 0.1), NOW)
        child.kill()
        child.wait(30)
        assert not waits.loop_running(beat(child.pid, here, 0.1), NOW), (
            "a killed loop with a fresh heartbeat was taken for running"
        )
    finally:
        if child.poll() is None:
            child.kill()


def test_a_loop_elsewhere_is_judged_by_its_heartbeats_age() -> None:
    elsewhere = "another-host.example"
    assert waits.loop_running(beat(1, elsewhere, 2 * waits.HEARTBEAT_S), NOW), (
        "a loop one beat late is not dead"
    )
    assert not waits.loop_running(beat(1, elsewhere, waits.STALE_AFTER_S + 0.5), NOW)
    assert not waits.loop_running(LoopBeat(elsewhere, 1, "", "not a time"), NOW)


def test_board_status_says_a_killed_loop_is_stale_and_counts_who_needs_you(
    tmp_path: Path,
) -> None:
    cfg, store = make_board(tmp_path, origin=True, publish={"review": "operator"})
    held = add_card(store, "held")
    store.update(held.id, Expect(), {"blocked": Blocked("held", "design first")})
    healing = add_card(store, "healing")
    store.update(healing.id, Expect(), {"blocked": Blocked("rate-limit", "429")})
    built = add_card(store, "built")
    store.update(built.id, Expect(), {"lane": "review"})
    add_card(store, "free")
    assert [waits.needs_operator(cfg.publish, c) for c in store.list_cards()] == [
        True,
        False,
        True,
        False,
    ], "a hold and an approval need you; a rate limit heals; a free card does not"
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    store.beat(socket.gethostname(), child.pid, "2025-12-31T00:00:00.000Z")
    try:
        status = json.loads(run_cli(cfg.root, "status", "--json").stdout)
        assert status["loop"]["stale"] is False and status["needs_operator"] == 2
        child.kill()
        child.wait(30)
        status = json.loads(run_cli(cfg.root, "status", "--json").stdout)
        assert status["loop"]["stale"] is True, "a killed loop's fresh heartbeat was believed"
        assert "NOT RUNNING" in run_cli(cfg.root, "status").stdout
    finally:
        if child.poll() is None:
            child.kill()
        store.close()


def test_lane_heights_keep_every_heading_and_give_the_focused_lane_the_room() -> None:
    from board.tui.boarddata import lane_heights

    wants = {"backlog": 40, "ready": 7, "working": 2, "review": 0, "done": 300}
    for room in range(5, 60):
        for focused in wants:
            heights = lane_heights(room, wants, focused)
            assert sum(heights.values()) == room, (room, focused, heights)
            assert all(h >= 1 for h in heights.values()), "a lane lost its heading"
            rest = room - len(wants)
            if rest >= 8:
                assert heights[focused] - 1 >= min(wants[focused], rest // 2), (room, heights)
            for lane, want in wants.items():
                if lane != focused:
                    assert heights[lane] - 1 <= want, f"{lane} got blank lines: {heights}"

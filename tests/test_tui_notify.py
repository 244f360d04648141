"""Notices in the control room: each notice the loop records in the store while the app is
open raises one toast (and, with `[tui] notify`, a bell or a desktop notice); what was
recorded before it opened does not (the notices screen lists it); later writes to the card
raise nothing. Nothing is worked out by the TUI itself: a card blocked with no loop to
record it is not told. A notice says the card's id and class only: the OSC 9 test runs the
real `board tui` on a pseudo-terminal and reads the bytes it writes, with a hostile title
and reason on the card."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import threading
import time

from board.core.cards import notices
from board.core.model import Blocked
from board.core.store import Expect
from board.tui.notify import osc9

from tests.support.repos import GIT_ENV
from tests.support.tui import OSC52, add, loaded, make_app, run_pilot, seeded_board, settle
from tests.support.waiting import wait_for

HOSTILE = f"steal {OSC52} \x1b]9;pwned\x07 secret-token-77"


def block(store, card_id: str, cls: str, reason: str = HOSTILE) -> int:
    """Block the card and record its notice as the loop's sweep does when it tells the
    operator (core/cards/notices.needs, keyed by the version of that telling)."""
    card = store.update(card_id, Expect(), {"blocked": Blocked(cls, reason)}, who="test")
    told = store.update(card_id, Expect(version=card.version), {"told": f"{cls}:x"}, who="board")
    assert notices.needs(store, card_id, cls, told.version)
    return told.version


async def test_a_recorded_notice_raises_exactly_one_toast_and_one_before_open_none(
    tmp_path,
) -> None:
    board = seeded_board(tmp_path)
    store = board.store
    before = add(store, "Blocked before the board opened", "ready")
    block(store, before, "held")
    victim = add(store, "Will be blocked", "ready")
    app = make_app(board, poll=0.1)
    async with run_pilot(app, size=(120, 30), notifications=True) as pilot:
        await loaded(pilot)
        await wait_for(pilot, lambda: app.notices.after is not None, what="the first reading")
        assert app.notices.told == [], "a notice recorded before the board opened was toasted"
        assert app.notices.unseen == 1
        store.update(victim, Expect(), {"blocked": Blocked("terminal", "no loop")}, who="test")
        other = add(store, "a write with no loop to tell of it", "backlog")
        await wait_for(pilot, lambda: screen_has(app, other), what="the later writes read")
        await settle(pilot)
        assert app.notices.told == [], "the TUI worked out a notice of its own"
        store.update(victim, Expect(), {"blocked": None}, who="test")
        told = block(store, victim, "gate-red")
        await wait_for(pilot, lambda: app.notices.told, what="the notice")
        store.add_comment(victim, "an unrelated write after the block", "test")
        assert not notices.needs(store, victim, "gate-red", told), "one telling recorded twice"
        other = add(store, "another write", "backlog")
        await wait_for(pilot, lambda: screen_has(app, other), what="the later writes read")
        await settle(pilot)
        assert app.notices.told == [f"{victim} needs you: gate-red"], app.notices.told
        shown = [t for t in app.screen.query("Toast") if victim in str(t.render())]  # by CSS type
        assert len(shown) == 1, f"toasts for {victim}: {len(shown)}"
        assert app.notices.unseen == 2
    board.close()


def screen_has(app, card_id: str) -> bool:
    screen = app.screen_stack[0]
    return any(row.card.id == card_id for rows in screen.lanes.values() for row in rows)


def test_osc9_writes_only_the_id_and_class_to_the_terminal(tmp_path) -> None:
    """`board tui` on a pseudo-terminal (its stdin must be a terminal: the one child of
    the suite given one), with notify = osc9: the desktop notice's bytes name the card's
    id and class and nothing of its hostile title or reason."""
    board = seeded_board(tmp_path, notify="osc9")
    store = board.store
    victim = add(store, HOSTILE, "ready")
    master, slave = os.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    env = {**os.environ, **GIT_ENV, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "30"}
    child = subprocess.Popen(
        [sys.executable, "-m", "board.cli", "-C", str(board.root), "tui"],
        stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True,
    )  # fmt: skip
    os.close(slave)
    out = bytearray()
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                out.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 30
        while b"backlog" not in out and time.monotonic() < deadline:
            time.sleep(0.1)
        assert b"backlog" in out, f"board tui did not draw: {bytes(out[-500:])!r}"
        block(store, victim, "held")
        deadline = time.monotonic() + 30
        while b"\x1b]9;" not in out and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        notices = re.findall(rb"\x1b\]9;([^\x07\x1b]*)\x07", bytes(out))
        assert notices == [f"board: {victim} needs you: held".encode()], notices
    finally:
        os.write(master, b"q")
        try:
            child.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(5)
        done.set()
        reader.join(5)
        os.close(master)
        board.close()


def test_the_osc9_payload_keeps_to_plain_ascii() -> None:
    assert osc9(f"c-1 needs you: {HOSTILE}") == (
        "\x1b]9;board: c-1 needs you: steal ??52?c?cm0gLXJmIH4K? ??9?pwned? secret-token-77\x07"
    )


async def test_the_run_going_idle_is_told_once(tmp_path) -> None:
    """A drive ends and nothing is left to run: the loop records that the run is idle, and
    the open board toasts it once; recorded again (the same stretch of work, another host's
    loop) it is not told again."""
    from tests.support.boards import make_board
    from tests.support.tui import LOOP_HOST, LOOP_PID, LOOP_STARTED, start_drive

    board = make_board(tmp_path)
    store = board.store
    working = add(store, "The last card", "working")
    drive = start_drive(board, working, "default", 1, ["building"])
    store.beat(LOOP_HOST, LOOP_PID, LOOP_STARTED)
    app = make_app(board, poll=0.1)
    async with run_pilot(app, size=(120, 30), notifications=True) as pilot:
        await loaded(pilot)
        assert not notices.idle(store), "a run with a live drive was recorded idle"
        store.update_drive(drive.id, status="passed", result="folded")
        store.update(working, Expect(), {"lane": "done"}, who="test")
        assert notices.idle(store)
        await wait_for(pilot, lambda: app.notices.told, what="the idle notice")
        assert not notices.idle(store), "the same stretch of work was recorded idle twice"
        store.beat(LOOP_HOST, LOOP_PID, LOOP_STARTED)
        await pilot.pause(0.5)
        assert app.notices.told == ["the run is idle: no drive runs and no card is ready to run"], (
            app.notices.told
        )
    board.close()

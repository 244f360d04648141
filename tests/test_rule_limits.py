"""Failure rules cannot hang the loop (invariant 8): a rule is board.toml's regex over a
coder's output, and both are input. `(a+)+$` (or `(a|aa)+$`) over a line of a's and a '!'
backtracks for ages; under `re` it pinned a core inside the drive's thread, the card stayed
`working`, the heartbeat went stale and SIGTERM waited for SIGKILL. Rules are matched by
the `regex` package under RULE_TIMEOUT_S; one that runs past it is named once and skipped.
Real processes: the board's own `board run`, a real coder script, the real store."""

from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path

from board.core import failures
from board.core.store import SQLiteStore

from tests.support.boards import make_board
from tests.support.loop import add_card, board_run, drive_one
from tests.support.paths import script
from tests.support.waiting import wait_for

HOSTILE = "a" * 60 + "!"


def _with_rule(cfg, pattern: str, live: bool = False) -> None:
    path = cfg.root / "board.toml"
    rule = f'\n[[failures.rules]]\npattern = "{pattern}"\nclass = "transient"\n'
    path.write_text(path.read_text() + rule + ("live = true\n" if live else ""))


def test_a_backtracking_rule_is_skipped_within_its_time_limit_and_named_once() -> None:
    rule = failures.Rule("(a|aa)+$", "transient")
    began = time.monotonic()
    assert failures.classify([rule], "coder", HOSTILE, 1) is None
    assert failures.classify([rule], "coder", HOSTILE, 1) is None
    took = time.monotonic() - began
    # a bound on a hang, not a timing: without the limit this match runs for hours; a loaded
    # machine (CI beside benches, load 11) stretched the two limited calls to 3.2 s
    assert took < 20 * failures.RULE_TIMEOUT_S, f"the rule ran {took:.1f}s"
    assert failures.slow_rules() == [rule] and failures.slow_rules() == [], "named twice"


def test_the_issues_rule_and_coder_leave_working(tmp_path: Path) -> None:
    cfg, store = make_board(
        tmp_path, origin=True, tiers={"default": [sys.executable, script("coder_backtrack.py")]}
    )
    _with_rule(cfg, "(a+)+$")
    from board.core import config

    cfg = config.load(cfg.root)
    card = add_card(store, surface=["work/**"])
    began = time.monotonic()
    end = drive_one(cfg, store, card)
    assert time.monotonic() - began < 30
    assert store.get(card.id).lane != "working", end
    store.close()


def test_sigterm_stops_the_loop_within_2s_whatever_a_live_rule_meets(tmp_path: Path) -> None:
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": [sys.executable, script("coder_backtrack.py"), "60"]},
    )
    _with_rule(cfg, "(a|aa)+$", live=True)
    card = add_card(store, surface=["work/**"])
    run = board_run(cfg.root)
    log = cfg.logs_dir / card.id / "1.log"
    try:
        wait_for(
            lambda: log.exists() and "is skipped from now on" in log.read_text(),
            timeout=60,
            what="the slow rule named in the drive log",
        )
        beats = [b.heartbeat_at for b in store.loops()]
        time.sleep(2.5)
        assert [b.heartbeat_at for b in store.loops()] != beats, "the heartbeat stopped"
        run.send_signal(signal.SIGTERM)
        began = time.monotonic()
        run.communicate(timeout=30)
        took = time.monotonic() - began
    finally:
        if run.poll() is None:
            run.kill()
    assert took < 2.0, f"board run took {took:.1f}s to answer SIGTERM"
    assert store.get(card.id).lane == "ready"
    assert "(a|aa)+$" in log.read_text()
    store.close()


class _Watched(SQLiteStore):
    """The real store, noting the thread that writes each comment."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.comments: list[tuple[str, str]] = []

    def add_comment(self, card_id: str, text: str, who: str = "board") -> None:
        self.comments.append((threading.current_thread().name, text))
        super().add_comment(card_id, text, who)


def test_a_slow_rule_met_on_a_coders_line_is_told_from_the_drives_thread(tmp_path: Path) -> None:
    """One thread reads every coder's output (core/pipepump.py): the card's comment on a
    slow rule is written from the drive's thread, not that one, where a store that is away
    would hold every coder's reading for up to reconnect_s. The log names it at once."""
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": [sys.executable, script("coder_backtrack.py"), "1"]},
    )
    _with_rule(cfg, "(aa|a)+$", live=True)  # its own pattern: another test's is skipped
    from board.core import config

    cfg = config.load(cfg.root)
    store.close()
    watched = _Watched(cfg.db_path)
    card = add_card(watched, surface=["work/**"])
    drive_one(cfg, watched, card)
    told = [(thread, text) for thread, text in watched.comments if "(aa|a)+$" in text]
    assert told, f"the slow rule was not told on the card: {watched.comments}"
    assert all(thread != "pipe-pump" for thread, _ in told), told
    assert "(aa|a)+$" in (cfg.logs_dir / card.id / "1.log").read_text()
    watched.close()

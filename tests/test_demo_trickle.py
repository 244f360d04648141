"""The demo keeps going: cards trickle in for three minutes, each built slowly enough to
watch or stop, and a slice split from the too-wide card builds instead of inheriting its
parent's `demo: wide` (which it quotes, indented, for context) and being split again."""

from __future__ import annotations

import sys
import threading
import time

from board.core import proc
from board.core.cards import actions, split
from board.core.model import CardDraft

from board.demo import sandbox
from tests.support.boards import make_board


def run_coder(tmp_path, brief_text: str, pace: str, timeout: float) -> proc.Result:
    brief = tmp_path / "brief.md"
    brief.write_text(brief_text)
    tree = tmp_path / "feat-c-13-slice"
    tree.mkdir(exist_ok=True)
    return proc.run(
        (sys.executable, "-m", "board.demo.coder", "--brief", str(brief), "--worktree", str(tree)),
        timeout=timeout,
        env={"BOARD_DEMO_PACE": pace},
    )


def test_a_slice_of_the_too_wide_card_builds_instead_of_looping(tmp_path) -> None:
    board = make_board(tmp_path)
    wide = actions.add_card(
        board.store,
        CardDraft("Rewrite calc as a plugin system", spec="Plugins.\ndemo: wide", lane="ready"),
    )
    split.split(board.store, board.cfg, wide.id, ["Plugin loader", "Port add and sub"])
    slices = [c for c in board.store.list_cards() if c.title == "Plugin loader"]
    assert slices and "demo: wide" in slices[0].spec, "the slice no longer quotes its parent"
    res = run_coder(tmp_path, slices[0].spec, pace="0.01", timeout=20)
    board.close()
    assert not res.timed_out, "the slice's coder took the parent's `demo: wide` and hung"
    assert res.returncode == 0, res.stdout
    assert (tmp_path / "feat-c-13-slice" / "calc" / "feat_c_13_slice.py").is_file()


def test_a_wide_card_of_its_own_still_hangs(tmp_path) -> None:
    """The marker still works where it is the card's own (the demo's too-wide card)."""
    res = run_coder(tmp_path, "Plugins.\ndemo: wide\n", pace="0.01", timeout=3)
    assert res.timed_out


def test_cards_trickle_in_for_three_minutes_each_slow_but_within_the_timeout(tmp_path) -> None:
    assert len(sandbox.TRICKLE_OPS) * sandbox.TRICKLE_S >= 180
    board = make_board(tmp_path)
    before = len(board.store.list_cards())
    stop = threading.Event()
    added = sandbox.trickle(board.root, stop, every_s=0.01)
    cards = board.store.list_cards()
    assert added == len(sandbox.TRICKLE_OPS) == len(cards) - before
    assert all(c.lane == "ready" and "demo: slow" in c.spec for c in cards[before:])
    surfaces = [c.surface for c in cards[before:]]
    assert len({s for group in surfaces for s in group}) == 2 * added, "surfaces overlap"
    board.close()
    started = time.monotonic()  # the demo's own pace: slow, yet inside its coder timeout
    res = run_coder(tmp_path, cards[-1].spec, pace="0.5", timeout=30)
    took = time.monotonic() - started
    assert res.returncode == 0 and took < 12, (took, res.stdout)
    assert "edit calc/percent.py" in res.stdout


def test_a_stopped_trickle_adds_no_more(tmp_path) -> None:
    board = make_board(tmp_path)
    stop = threading.Event()
    stop.set()
    assert sandbox.trickle(board.root, stop, every_s=0.01) == 0
    board.close()

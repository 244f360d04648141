"""Notices from the loop (issue 43): recorded once in the store whether or not a TUI is open,
sent by `[notify] argv` (a real script under tests/scripts/ recording its argv) and
`[notify] urls` (Apprise, to a small HTTP server of the test's own on 127.0.0.1), and read
by a TUI opened afterwards. The loop is the real `board run --until-idle`, the store the real
SQLite file; what is told is the card's id, its class and a fixed phrase, never its title."""

from __future__ import annotations

import json
from pathlib import Path

from board.core.cards import notices
from board.core.model import Blocked
from board.core.store import Expect

from tests.support.boards import make_board
from tests.support.loop import add_card
from tests.support.paths import script
from tests.support.repos import run_cli

IDLE = notices.IDLE_TEXT
HOSTILE = "evil\x1b]52;c;cm0gLXJmIH4K\x07 [b]bold[/b] <i>x</i>\nsecond line *md* `tick`"


def sends(record: Path) -> list[list[str]]:
    """The argv of each `[notify] argv` run, in order (none had a stdin to read)."""
    if not record.exists():
        return []
    lines = [json.loads(x) for x in record.read_text(encoding="utf-8").splitlines()]
    assert all(not x["stdin"] for x in lines), f"a notify command was given a stdin: {lines}"
    return [x["argv"] for x in lines]


def notify_argv(record: Path) -> list[str]:
    return [script("notify_record.py"), str(record), "{kind}", "{card}", "{class}", "{text}"]


def test_a_terminal_block_runs_notify_argv_once_later_writes_nothing_and_idle_once(
    tmp_path: Path,
) -> None:
    """No TUI is open. The card's coder fails on the only rung: blocked `terminal`; the
    loop records the notice and runs `[notify] argv` once, then the run goes idle: once
    more. A comment and an edit of the card, and a second `board run`, send nothing."""
    record = tmp_path / "sent.jsonl"
    fail = [script("coder_fail.sh"), "{worktree}", "{card}"]
    cfg, store = make_board(
        tmp_path, origin=True, tiers={"default": fail}, notices={"argv": notify_argv(record)}
    )
    card = add_card(store, "doomed", surface=["work/**"])
    done = run_cli(cfg.root, "run", "--until-idle", timeout=120)
    assert store.get(card.id).blocked == Blocked("terminal", store.get(card.id).blocked.reason)
    expected = [
        ["needs", card.id, "terminal", f"{card.id} needs you: terminal"],
        ["idle", "", "", IDLE],
    ]
    assert sends(record) == expected, (sends(record), done.stderr[-2000:])
    rows = store.notices()
    assert [(n.kind, n.sent_to, n.tries, bool(n.sent_at)) for n in rows] == [
        ("needs", "argv", 1, True),
        ("idle", "argv", 1, True),
    ], rows

    store.add_comment(card.id, "a comment after the block", "operator")
    now = store.get(card.id)
    store.update(card.id, Expect(version=now.version), {"title": "doomed, renamed"}, "operator")
    again = run_cli(cfg.root, "run", "--until-idle", timeout=120)
    assert sends(record) == expected, ("a later write or run sent again", again.stderr[-2000:])
    assert len(store.notices()) == 2
    store.close()

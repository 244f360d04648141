"""Notices from the loop (issue 43): recorded once in the store whether or not a TUI is open,
sent by `[notify] argv` (a real script under tests/scripts/ recording its argv) and
`[notify] urls` (Apprise, to a small HTTP server of the test's own on 127.0.0.1), and read
by a TUI opened afterwards. The loop is the real `board run --until-idle`, the store the real
SQLite file; what is told is the card's id, its class and a fixed phrase, never its title."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from board.core.cards import notices
from board.core.model import Blocked
from board.core.store import SCHEMA_VERSION, Expect, SQLiteStore, Store
from board.core.store.postgres import PostgresStore
from board.core.store.sqltx import SqlTx
from board.tui.noticescreen import NoticesScreen
from board.tui.widgets import HealthBar

from tests.support.boards import Board, make_board
from tests.support.loop import add_card, loop_log
from tests.support.paths import script
from tests.support.repos import GIT_ENV, run_cli
from tests.support.tui import make_app, run_pilot, settle
from tests.support.waiting import wait_for

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


async def test_a_terminal_block_runs_notify_argv_once_later_writes_nothing_and_idle_once(
    tmp_path: Path,
) -> None:
    """No TUI is open. The card's coder fails on the only rung: blocked `terminal`; the
    loop records the notice and runs `[notify] argv` once, then the run goes idle: once
    more. A comment and an edit of the card, and a second `board run`, send nothing. A TUI
    opened afterwards lists both on its notices screen, and its header's count of new
    notices goes once that screen was opened."""
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

    app = make_app(Board(cfg.root, cfg, store), poll=0.1)
    async with run_pilot(app, size=(140, 30), notifications=True) as pilot:
        bar = app.screen.query_one(HealthBar)
        await wait_for(pilot, lambda: "2 new notices" in bar.text, what="the header's count")
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, NoticesScreen), what="the screen")
        screen = app.screen
        assert isinstance(screen, NoticesScreen)
        await wait_for(pilot, lambda: screen.shown, what="the notices read")
        rows = [str(w.render()) for w in screen.query(".notice-row")]
        assert len(rows) == 2, rows
        assert f"{card.id} needs you: terminal · sent (argv)" in rows[1], rows
        assert f"{IDLE} · sent (argv)" in rows[0], rows
        await pilot.press("escape")
        await wait_for(pilot, lambda: "new notice" not in bar.text, what="the count to go")
        await settle(pilot)
        assert app.notices.told == [], "what was recorded before the app opened was toasted"
        assert all(n.seen for n in store.notices())
    store.close()


class Hook(BaseHTTPRequestHandler):
    """The test's own HTTP endpoint for Apprise's json:// URL: keeps each POST's body."""

    got: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        size = int(self.headers.get("Content-Length", "0"))
        type(self).got.append(json.loads(self.rfile.read(size)))
        self.send_response(200)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass


@contextmanager
def hook_server() -> Iterator[tuple[int, list[dict[str, Any]]]]:
    got: list[dict[str, Any]] = []
    handler = type("ThisHook", (Hook,), {"got": got})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], got
    finally:
        server.shutdown()
        server.server_close()


HOSTILE_ID = "c-1\x1b[31m<b>x</b>\n[red]*y*`z`"


def test_an_apprise_json_url_gets_the_notice_as_plain_text(tmp_path: Path) -> None:
    """`[notify] urls = ["json://127.0.0.1:PORT/hook"]`: the test's server receives the
    notice of a card whose id, title and reason are hostile (escapes, markup, a newline)
    as plain text: the id cleaned, nothing of the title or reason."""
    with hook_server() as (port, got):
        cfg, store = make_board(
            tmp_path, origin=True, notices={"urls": [f"json://127.0.0.1:{port}/hook"]}
        )
        card = add_card(store, "a title, made hostile below")
        blocked = Blocked("held", f"SECRET-REASON {HOSTILE}")  # classes are a closed set
        store.update(card.id, Expect(), {"blocked": blocked})
        store.close()
        with sqlite3.connect(cfg.db_path) as db:  # what no verb would write: the row's own
            db.execute(
                "UPDATE cards SET id = ?, title = ? WHERE id = ?",
                (HOSTILE_ID, f"SECRET-TITLE {HOSTILE}", card.id),
            )
        done = run_cli(cfg.root, "run", "--until-idle", timeout=120)
        assert len(got) == 1, (got, done.stderr[-2000:])
        body = got[0]
        assert body["message"] == f"{notices.plain(HOSTILE_ID)} needs you: held", body
        assert body["title"] == "board: needs", body
        for value in (body["message"], body["title"]):
            assert not any(c in value for c in "\x1b\x07\n<>[]*`"), value
            assert "SECRET" not in value, value
    store = SQLiteStore(cfg.db_path)
    [row] = store.notices()
    assert (row.sent_to, row.tries, row.error) == ("urls", 1, ""), row
    store.close()


def test_notify_urls_without_apprise_are_refused_in_one_line_and_nothing_runs(
    tmp_path: Path,
) -> None:
    """Apprise made unimportable in the `board` process (a `sys.modules` block, as a Python
    without the extra has none): `board run` with `[notify] urls` says in one line what to
    install, and starts nothing (no loop log, no claim)."""
    cfg, store = make_board(tmp_path, origin=True, notices={"urls": ["ntfy://my-topic"]})
    add_card(store, "would be claimed")
    store.close()
    blocked = (
        "import sys; sys.modules['apprise'] = None; sys.argv = ['board', 'run', '--until-idle']; "
        "from board.cli.entry import main; sys.exit(main())"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocked], cwd=cfg.root, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=60, env={**os.environ, **GIT_ENV},
    )  # fmt: skip
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "notify.urls: needs Apprise" in lines[0], lines
    assert "pip install 'board[notify]'" in lines[0], lines
    assert "ntfy://" not in lines[0], "the refusal repeated a URL (it may hold a token)"
    assert not (cfg.board_dir / "loop.log").exists(), "the loop ran"
    store = SQLiteStore(cfg.db_path)
    assert store.get("c-1").lane == "ready" and store.list_drives() == []
    store.close()


@pytest.mark.backends()
def test_the_store_records_a_notice_once_and_hands_it_to_one_sender(
    new_store: Callable[..., Store],
) -> None:
    """Two loops (two hosts, on PostgreSQL) recording the same thing write one row; two
    senders reading it at once, one takes it; a failed send keeps its error and is pending
    again, the channel that took it remembered; opening the notices screen marks it seen."""
    store = new_store(clock=lambda: "2026-01-01T00:00:00.000Z")
    assert store.notice_counts() == (0, 0)
    assert store.record_notice("needs", "c-1", "held", "c-1 needs you: held", "needs:c-1:held:3")
    assert not store.record_notice("needs", "c-1", "held", "again", "needs:c-1:held:3")
    assert store.record_notice("idle", "", "", notices.IDLE_TEXT, "idle:d-1")
    first, second = store.notices()
    assert (first.kind, first.card, first.cls, first.text, first.tries, first.seen) == (
        "needs", "c-1", "held", "c-1 needs you: held", 0, False,
    )  # fmt: skip
    assert [n.id for n in store.notices(after=first.id)] == [second.id]
    assert [n.id for n in store.notices(limit=1, newest=True)] == [second.id]
    assert store.notice_counts() == (second.id, 2)

    pending = store.pending_notices("2025-12-31T00:00:00.000Z", 3, "2025-12-31T23:59:00.000Z")
    assert [n.id for n in pending] == [first.id, second.id]
    assert store.claim_notice(first) and not store.claim_notice(first), "taken twice"
    store.notice_sent(first.id, "argv", "urls: refused")
    again = store.notices()[0]
    assert (again.tries, again.sent_to, again.error, again.sent_at) == (
        1,
        "argv",
        "urls: refused",
        "",
    )
    assert store.claim_notice(again)
    store.notice_sent(first.id, "argv,urls", "")
    done = store.notices()[0]
    assert done.sent_at and not done.error and done.tries == 2
    left = store.pending_notices("2025-12-31T00:00:00.000Z", 3, "2025-12-31T23:59:00.000Z")
    assert [n.id for n in left] == [second.id]
    assert not store.pending_notices("2026-01-02T00:00:00.000Z", 3, "2025-12-31T23:59:00.000Z")

    assert store.mark_seen(first.id) == 1
    assert store.notice_counts() == (second.id, 1)
    assert store.mark_seen(second.id) == 1 and store.notice_counts() == (second.id, 0)


@pytest.mark.backends()
def test_a_schema_8_store_gets_the_notices_table_when_opened(
    new_store: Callable[..., Store],
) -> None:
    """A store as a board before notices left it (no such table, schema 8) opens with the
    table, and records one. What schema 10 added (a card's source) is taken away too, as a
    schema-8 store never had it."""
    store = new_store()
    with store.transaction() as tx:
        assert isinstance(tx, SqlTx)
        tx.execute("DROP TABLE notices")
        tx.execute("DROP INDEX cards_source")
        tx.execute("ALTER TABLE cards DROP COLUMN source")
        tx.execute("ALTER TABLE cards DROP COLUMN source_url")
        tx.execute(store._q("UPDATE meta SET value = ? WHERE key = 'schema'"), ("8",))
    store.close()
    again = type(store)(store.url if isinstance(store, PostgresStore) else store.path)
    try:
        assert again._read("SELECT value FROM meta WHERE key = 'schema'") == [
            (str(SCHEMA_VERSION),)
        ]
        assert again.record_notice("idle", "", "", notices.IDLE_TEXT, "idle:d-1")
        assert [n.key for n in again.notices()] == ["idle:d-1"]
    finally:
        again.close()


def test_a_send_that_fails_is_retried_and_its_failure_kept(tmp_path: Path) -> None:
    """The notify command fails once: the loop logs it, keeps the error on the row, tries
    again and sends it; `board run --until-idle` waits for that before it exits."""
    record = tmp_path / "sent.jsonl"
    Path(f"{record}.fail").write_text("", encoding="utf-8")
    cfg, store = make_board(tmp_path, origin=True, notices={"argv": notify_argv(record)})
    card = add_card(store, "held for the operator")
    store.update(card.id, Expect(), {"blocked": Blocked("held", "wait")})
    run_cli(cfg.root, "run", "--until-idle", timeout=120)
    assert sends(record) == [["needs", card.id, "held", f"{card.id} needs you: held"]] * 2
    [row] = store.notices()
    assert (row.tries, row.sent_to, row.error, bool(row.sent_at)) == (2, "argv", "", True), row
    said = [x for x in loop_log(cfg) if x["event"] == "notice"]
    assert "told to fail once" in said[0]["error"] and said[1]["sent_to"] == "argv", said
    store.close()

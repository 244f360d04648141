"""`Store.lane_heads`: the cheap first read the board paints from, against the real stores.

The board paints each lane's first rows and its counts from this read before the whole
board is read, so a wrong order, a wrong count or a missing dependency here would show
the operator a board that is not the store's. Each test runs on the SQLite file and on a
PostgreSQL database (the `backends` mark, tests/conftest.py), but those about the SQLite
file's own indexes and locks.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from board.core.errors import CorruptCard, StoreError
from board.core.model import Blocked, CardDraft
from board.core.store import Expect, SQLiteStore, Store
from board.core.store.postgres import PostgresStore
from board.tui.boarddata import build_lanes

pytestmark = pytest.mark.backends()


def ticking_clock():
    """Timestamps that repeat in threes, so closed lanes need the seq tie-break."""
    counter = itertools.count()
    return lambda: f"2026-01-01T00:{next(counter) // 3:06d}Z"


def make_store(new_store: Callable[..., Store], cards: int) -> Store:
    """Cards over every lane, some blocked (open and closed lanes), priorities that tie."""
    store = new_store(clock=ticking_clock())
    lanes = ("backlog", "ready", "working", "review", "done", "cancelled")
    with store.transaction() as tx:
        for i in range(cards):
            lane = lanes[(i * 7) % len(lanes)] if i % 3 else "done"
            card = tx.create(
                CardDraft(
                    title=f"card {i}",
                    spec="s",
                    priority=(i * 3) % 4,
                    lane="backlog" if lane == "backlog" else "ready",
                    deps=[f"c-{i - 1}"] if i and i % 5 == 0 else [],
                ),
                "c",
                "t",
            )
            changes: dict = {}
            if lane not in ("backlog", "ready"):
                changes["lane"] = lane
            if i % 4 == 0:
                changes["blocked"] = Blocked("held", f"r{i}")
            if changes:
                tx.update(card.id, Expect(), changes, "t")
    return store


@pytest.fixture
def store(new_store: Callable[..., Store]) -> Store:
    return make_store(new_store, 700)  # closed by new_store


def raw(store: Store, sql: str) -> None:
    """A hand edit, bypassing the store (what an older or hand-edited row looks like)."""
    if isinstance(store, SQLiteStore):
        store.conn.execute(sql)
        return
    assert isinstance(store, PostgresStore)
    with psycopg.connect(store.url, autocommit=True) as conn:
        conn.execute(sql)


def full_board(store: Store) -> dict[str, list]:
    """What the board shows after reading every card (the TUI's own ordering)."""
    return {
        lane: [row.card for row in rows] for lane, rows in build_lanes(store.list_cards()).items()
    }


@pytest.mark.parametrize("limit", [0, 1, 7, 60, 1000])
def test_heads_are_the_top_of_each_lane_in_board_order(store: Store, limit: int) -> None:
    heads = store.lane_heads(limit)
    board = full_board(store)
    for lane, cards in board.items():
        assert heads.cards.get(lane, []) == cards[:limit], (
            f"the first {limit} rows of {lane} differ from the board's order: the first paint "
            "would show other cards (or cards with other fields) than the full read"
        )


def test_heads_counts_are_the_whole_lanes_not_the_heads(store: Store) -> None:
    heads = store.lane_heads(5)
    board = full_board(store)
    assert {k: v for k, v in heads.totals.items()} == {
        lane: len(cards) for lane, cards in board.items() if cards
    }, "the lane counts are not the store's: the first paint would show wrong counts"
    assert heads.blocked == {
        lane: sum(c.blocked is not None for c in cards) for lane, cards in board.items() if cards
    }, "the blocked counts are not the store's"
    assert not heads.complete, "lanes were cut at 5 rows but the read claims to be complete"
    biggest = max(heads.totals.values())
    assert store.lane_heads(biggest).complete, "no lane was cut, yet the read says incomplete"
    assert not store.lane_heads(biggest - 1).complete, "a lane was cut by one, yet 'complete'"


def test_heads_carry_their_deps_across_read_chunks(new_store: Callable[..., Store]) -> None:
    # 1200 cards, limit 400: more head ids than one chunk of the deps read
    st = make_store(new_store, 1200)
    heads = st.lane_heads(400)
    got = {c.id: c.deps for cards in heads.cards.values() for c in cards}
    assert sum(1 for deps in got.values() if deps) > 10, "the fixture lost its deps"
    want = {c.id: c.deps for c in st.list_cards() if c.id in got}
    assert got == want, "a head card lost its dependencies (the card screen would lie)"


def test_heads_change_count_and_an_empty_store(
    new_store: Callable[..., Store], store: Store
) -> None:
    assert store.lane_heads(3).changes == store.change_count(), "the read's change count is off"
    heads = new_store().lane_heads(10)
    assert (heads.totals, heads.cards, heads.complete) == ({}, {}, True), heads


def test_an_empty_block_class_counts_as_not_blocked(store: Store) -> None:
    """A block class stored as '' reads as no block (`_card_from_row`); the heads agree."""
    raw(store, "UPDATE cards SET blocked_class = '' WHERE seq % 8 = 0")
    heads = store.lane_heads(1000)
    board = full_board(store)
    assert heads.cards == {lane: cards for lane, cards in board.items() if cards}
    assert heads.blocked == {
        lane: sum(c.blocked is not None for c in cards) for lane, cards in board.items() if cards
    }, "a card with an empty block class was counted as blocked"


def rows_of(store: Store, sql: str) -> list[tuple]:
    """A query's rows, read beside the store (what a plain SQL client sees)."""
    if isinstance(store, SQLiteStore):
        return store.conn.execute(sql).fetchall()
    assert isinstance(store, PostgresStore)
    with psycopg.connect(store.url, autocommit=True) as conn:
        return conn.execute(sql).fetchall()


def test_every_lane_in_the_table_is_counted_hand_edited_ones_too(store: Store) -> None:
    """A hand-edited lane (empty, unknown, another case) is counted under its own name and
    its head cards named as unreadable, as before: the counts are now read a lane at a time
    (SQLite), and the empty lane sorts before any other."""
    odd = ("", "Backlog", "zz not a lane")
    for n, lane in enumerate(odd, start=1):
        raw(store, f"UPDATE cards SET lane = '{lane}' WHERE seq % 50 = {n}")
    plain = rows_of(
        store,
        "SELECT lane, COUNT(*), SUM(CASE WHEN blocked_class IS NULL OR blocked_class = '' "
        "THEN 0 ELSE 1 END) FROM cards GROUP BY lane",
    )
    want = {lane: (total, int(blocked)) for lane, total, blocked in plain}
    assert set(odd) <= want.keys(), want
    unreadable: list[CorruptCard] = []
    heads = store.lane_heads(3, unreadable=unreadable)
    assert {lane: (heads.totals[lane], heads.blocked[lane]) for lane in heads.totals} == want, (
        "the lanes' counts are not the table's"
    )
    edited = dict(rows_of(store, "SELECT id, lane FROM cards WHERE seq % 50 IN (1, 2, 3)"))
    named = {c.card for c in unreadable}
    assert named <= edited.keys() and {edited[c] for c in named} == set(odd), named


def test_the_interface_default_agrees_with_the_stores_own_query(store: Store) -> None:
    """A store without its own query (the interface's default) gives the same answer."""
    for limit in (0, 4, 1000):
        assert Store.lane_heads(store, limit) == store.lane_heads(limit), limit


def test_a_negative_limit_is_a_one_line_error(store: Store) -> None:
    with pytest.raises(StoreError, match="limit must be 0 or more"):
        store.lane_heads(-1)


# -- the board paints from the heads, then reads every card -------------------------------


async def test_the_board_paints_the_heads_then_loads_every_card_and_gc_is_back_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_url: str
) -> None:
    """The first paint shows the lane's real top rows (as many as the terminal has lines)
    and real counts; the whole lane is read only after that paint (a read racing the
    paint would slow it) and then replaces the heads; the collector paused for start-up
    is running again."""
    import gc

    import board.tui.board as board_screen

    from tests.support.boards import make_board
    from tests.support.tui import loaded, make_app, run_pilot

    events: list[str] = []
    read_board = board_screen.read_board

    def recorded_read(store, *args):  # type: ignore[no-untyped-def]
        events.append("full read")
        return read_board(store, *args)

    monkeypatch.setattr(board_screen, "read_board", recorded_read)

    lines = 48
    monkeypatch.setenv("LINES", str(lines))  # what a terminal of 48 lines says
    board = make_board(tmp_path, store_url=store_url)
    with board.store.transaction() as tx:
        for i in range(lines + 50):
            tx.create(CardDraft(title=f"c{i}", spec="s", priority=i % 3, lane="ready"), "c", "t")
    app = make_app(board, poll=0)
    heads_seen: list[tuple[int, str]] = []
    original = app.board_painted

    def painted() -> None:
        screen = app.screen
        view = screen.lane_view("ready")  # type: ignore[attr-defined]
        header = screen.lane_view("ready").heading  # type: ignore[attr-defined]
        heads_seen.append((len(view.rows), header))
        events.append("painted")
        original()

    app.board_painted = painted  # type: ignore[method-assign]
    async with run_pilot(app, size=(160, 48)) as pilot:
        screen = await loaded(pilot)
        rows = screen.lane_view("ready").rows
        assert len(rows) == lines + 50, "the whole lane never replaced the heads"
        assert heads_seen, "the first paint was never reported"
        first_rows, first_header = heads_seen[0]
        assert first_rows == lines, f"the first paint held {first_rows} rows, not the heads"
        assert str(lines + 50) in first_header, (
            f"the first paint's count was not the lane's real count: {first_header!r}"
        )
        assert gc.isenabled(), "the garbage collector was left off after the first paint"
        assert events[:2] == ["painted", "full read"], f"the whole board was read early: {events}"
    board.store.close()


def test_the_first_read_is_as_tall_as_the_terminal_or_head_rows_without_one(
    tmp_path: Path,
) -> None:
    """LINES (or the terminal) sizes the first read; with neither, HEAD_ROWS rows."""
    import sys

    from board.core import proc
    from board.tui.boarddata import HEAD_ROWS

    code = "from board.tui.boarddata import head_rows; print(head_rows())"
    env = {"LINES": "", "COLUMNS": ""}  # empty: unset, for shutil.get_terminal_size
    # stdout is a pipe here, so there is no terminal to ask
    res = proc.run((sys.executable, "-c", code), timeout=60, env=env)
    assert res.returncode == 0, res.stderr
    assert int(res.stdout) == HEAD_ROWS
    res = proc.run((sys.executable, "-c", code), timeout=60, env={**env, "LINES": "37"})
    assert int(res.stdout) == 37


def test_the_first_read_of_a_file_store_ends_before_textual_loads_a_servers_runs_beside(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Preload` waits for a read of the SQLite file (its rows, read beside Textual's import,
    would each wait on it for the GIL) and returns at once for a server's, whose read waits
    on the network. The read is held on the header's clock, which the test lets go."""
    import threading
    import time

    from board.core import config
    from board.tui import boarddata
    from board.tui.health import utc_now

    config.write_default(tmp_path)
    cfg = config.load(tmp_path)
    monkeypatch.setattr(boarddata, "SETTLE_S", 30.0)  # long enough that only the read can end it
    go = threading.Event()

    def held_clock():
        assert go.wait(60), "the test never let the read go"
        return utc_now()

    in_file = isinstance(store, SQLiteStore)
    assert store.reads_in_process is in_file
    if in_file:  # the wait ends when the read does: let it go from elsewhere, soon
        threading.Timer(0.2, go.set).start()
    began = time.monotonic()
    preload = boarddata.Preload(store, rows=5, cfg=cfg, clock=held_clock)
    took = time.monotonic() - began
    try:
        if in_file:
            lanes, count = preload.result(timeout=0)  # read, before the constructor returned
        else:  # still held, and the constructor did not sit out its 30 s
            with pytest.raises(TimeoutError):
                preload.result(timeout=0)
            assert took < 15, f"the constructor waited {took:.1f} s for a server's read"
            go.set()
            lanes, count = preload.result(timeout=30)
    finally:
        go.set()
    assert count == store.change_count() and preload.health is not None
    assert preload.totals is not None and sum(n for n, _ in preload.totals.values()) == 700
    assert [r.card.id for r in lanes["done"]] == [c.id for c in full_board(store)["done"][:5]]


# -- the board-order indexes, on a store made before they existed ----------------------------

ORDER_INDEXES = ("cards_open_order", "cards_closed_order")


def _indexes(path: Path) -> set[str]:
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    finally:
        conn.close()


def _make_older_store(new_store: Callable[..., Store]) -> Path:
    """A store file as made before the board-order indexes: the same, without them."""
    import sqlite3

    store = make_store(new_store, 40)
    assert isinstance(store, SQLiteStore)
    path = store.path
    store.close()
    conn = sqlite3.connect(path)
    for name in ORDER_INDEXES:
        conn.execute(f"DROP INDEX {name}")
    conn.commit()
    conn.close()
    return path


@pytest.mark.backends("sqlite", why="the SQLite file's own indexes, made when it is opened")
def test_an_older_store_gets_the_board_order_indexes_when_opened(
    new_store: Callable[..., Store],
) -> None:
    path = _make_older_store(new_store)
    assert not _indexes(path) & set(ORDER_INDEXES)
    store = SQLiteStore(path)
    try:
        assert set(ORDER_INDEXES) <= _indexes(path), "opening did not add the indexes"
        heads = store.lane_heads(3)
        assert heads == Store.lane_heads(store, 3), "the heads differ from board order"
        for lane, order in (("ready", "priority, seq"), ("done", "updated_at DESC, seq DESC")):
            from board.core.store.schema import IS_BLOCKED as _IS_BLOCKED

            plan = store.conn.execute(
                f"EXPLAIN QUERY PLAN SELECT id FROM cards WHERE lane = ? "
                f"ORDER BY {_IS_BLOCKED} DESC, {order} LIMIT 3",
                (lane,),
            ).fetchall()
            assert "USING INDEX cards_" in str(plan) and "TEMP B-TREE" not in str(plan), plan
    finally:
        store.close()


@pytest.mark.backends("sqlite", why="the SQLite file's write lock and busy_timeout pragma")
def test_a_busy_older_store_opens_at_once_and_keeps_its_busy_timeout(
    new_store: Callable[..., Store],
) -> None:
    """Another process is writing: the index waits for a later open, the open does not."""
    import subprocess
    import sys
    import time

    path = _make_older_store(new_store)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sqlite3,sys,time\n"
         f"c=sqlite3.connect({str(path)!r}, isolation_level=None)\n"
         "c.execute('BEGIN IMMEDIATE')\nprint('locked', flush=True)\ntime.sleep(30)\n"],
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
        start = time.monotonic()
        store = SQLiteStore(path)
        waited = time.monotonic() - start
        try:
            assert waited < 3, f"the open waited {waited:.1f} s on the busy store"
            assert not _indexes(path) & set(ORDER_INDEXES)
            assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
            assert store.lane_heads(3) == Store.lane_heads(store, 3)
        finally:
            store.close()
    finally:
        holder.kill()
        holder.wait(timeout=10)
    store = SQLiteStore(path)  # free now: the next open adds them
    store.close()
    assert set(ORDER_INDEXES) <= _indexes(path)


def test_a_listing_as_json_is_json_dumps_of_the_listing(store: Store) -> None:
    """`board card list --json` is written by the store from its rows (`list_cards_json`):
    the same text as json.dumps of `list_cards`, per lane, and as the interface's default
    writes it; a hand-edited row is left out of both and named alike."""
    raw(store, "UPDATE cards SET blocked_class = '' WHERE seq % 8 = 0")
    raw(
        store,
        'UPDATE cards SET labels = \'["a", "b"]\', surface = \'["src/**"]\' WHERE seq % 3 = 0',
    )
    raw(store, "UPDATE cards SET not_before = '2026-02-01T00:00:00Z' WHERE seq % 11 = 0")
    raw(store, "UPDATE cards SET kind = 'epic' WHERE seq = 42")
    raw(store, "INSERT INTO deps (card, dep) VALUES ('c-10', 'c-2'), ('c-10', 'c-9')")
    for lane in (None, "backlog", "ready", "working", "review", "done", "cancelled", "nowhere"):
        want_bad: list[CorruptCard] = []
        cards = store.list_cards(lane, unreadable=want_bad)
        want = json.dumps([c.to_json() for c in cards], indent=2, ensure_ascii=False)
        bad: list[CorruptCard] = []
        assert store.list_cards_json(lane, unreadable=bad) == want, lane
        assert [e.line() for e in bad] == [e.line() for e in want_bad], lane
        default_bad: list[CorruptCard] = []
        assert Store.list_cards_json(store, lane, unreadable=default_bad) == want, lane
        if lane is None:
            assert (
                len(cards) == 699
                and [e.line() for e in bad] == [e.line() for e in default_bad]
                and "c-42" in bad[0].line()
            )
    with pytest.raises(CorruptCard, match="c-42"):
        store.list_cards_json()

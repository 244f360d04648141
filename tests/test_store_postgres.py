"""The Store contract, against both stores: the SQLite file and a real PostgreSQL server.

Every test that takes `store` runs twice, once per backend, with the same assertions: the
engine above the store must not be able to tell them apart (the same refusals, word for
word; the same timeline; the same counts). Then what only a shared server has: two
connections racing a claim, LISTEN/NOTIFY reaching a waiter, a server that is locked,
unreachable or gone, and the schema's shape and migrations. The PostgreSQL server is the
session's throwaway cluster (tests/support/pg_cluster.py).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from board.core import config
from board.core.drive.claim import claim
from board.core.errors import Conflict, CorruptCard, NotFound, Refused, StoreError
from board.core.model import Blocked, CardDraft, Pause
from board.core.store import SCHEMA_VERSION, Expect, SQLiteStore, Store, open_store
from board.core.store.postgres import _WRITE_LOCK, PostgresStore

from tests.support.pg_cluster import Cluster

BACKENDS = ["sqlite", "postgres"]


def make(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if backend == "sqlite":
        return SQLiteStore(tmp_path / "board.db", create=True)
    return PostgresStore(request.getfixturevalue("pg_url"), create=True)


def reopen(store: Store, **kw: int) -> Store:
    """A second connection to the same store: what another process (or machine) has."""
    if isinstance(store, SQLiteStore):
        return SQLiteStore(store.path, **kw)
    assert isinstance(store, PostgresStore)
    return PostgresStore(store.url, **kw)


def raw(store: Store, sql: str) -> None:
    """A hand edit, bypassing the store (what a corrupt row or an old board looks like)."""
    if isinstance(store, SQLiteStore):
        store.conn.execute(sql)
        return
    assert isinstance(store, PostgresStore)
    with psycopg.connect(store.url, autocommit=True) as conn:
        conn.execute(sql)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    st = make(request.param, request, tmp_path)
    yield st
    st.close()


def add(store: Store, title: str = "t", lane: str = "ready", deps: tuple[str, ...] = ()) -> str:
    return store.create(CardDraft(title=title, spec="s", lane=lane, deps=list(deps))).id


# -- cards: create, get, update, and refusals that say what they found ------------------------


def test_create_get_and_update_with_expect(store: Store) -> None:
    cid = add(store, "first")
    card = store.get(cid)
    assert (card.id, card.seq, card.version, card.lane) == ("c-1", 1, 1, "ready")
    assert store.find("c-99") is None
    with pytest.raises(NotFound, match="no card 'c-99'"):
        store.get("c-99")
    card = store.update(
        cid,
        Expect(lane="ready", version=1),
        {"lane": "working", "labels": ("a", "b"), "blocked": Blocked("held", "why")},
    )
    assert (card.lane, card.labels, card.version) == ("working", ("a", "b"), 2)
    assert card.blocked == Blocked("held", "why")
    assert store.get(cid) == card


@pytest.mark.parametrize(
    "expect, found",
    [
        (Expect(lane="working"), "c-1: expects working, got ready"),
        (Expect(lane=("review", "done")), "c-1: expects review or done, got ready"),
        (Expect(version=7), "c-1: expects version 7, got 1 (changed meanwhile)"),
        (Expect(drive="d-x"), "c-1: expects drive d-x, got no drive"),
    ],
)
def test_a_refused_write_says_what_it_found_and_changes_nothing(
    store: Store, expect: Expect, found: str
) -> None:
    cid = add(store)
    before = (store.get(cid), store.timeline(cid), store.change_count())
    with pytest.raises(Conflict) as exc:
        store.update(cid, expect, {"lane": "working"}, who="tui")
    assert exc.value.line() == found
    assert (store.get(cid), store.timeline(cid), store.change_count()) == before


def test_a_stale_writer_is_refused_while_the_fresh_one_lands(store: Store) -> None:
    cid = add(store)
    other = reopen(store)
    try:
        seen = store.get(cid)
        other.update(cid, Expect(version=seen.version), {"priority": 0}, who="loop")
        with pytest.raises(Conflict, match=r"expects version 1, got 2 \(changed meanwhile\)"):
            store.update(cid, Expect(version=seen.version), {"priority": 4}, who="tui")
        assert store.get(cid).priority == 0
    finally:
        other.close()


def test_unknown_fields_and_reasonless_blocks_are_refused(store: Store) -> None:
    cid = add(store)
    with pytest.raises(Refused, match="unknown card fields: colour"):
        store.update(cid, Expect(), {"colour": "red"})
    with pytest.raises(Refused, match="c-1: a block needs a reason"):
        store.update(cid, Expect(), {"blocked": Blocked("held", "  ")})
    assert store.get(cid).version == 1


def test_a_transaction_that_raises_writes_nothing(store: Store) -> None:
    cid = add(store)
    count = store.change_count()
    with pytest.raises(RuntimeError):
        with store.transaction() as tx:
            tx.update(cid, Expect(), {"priority": 0}, "t")
            tx.create(CardDraft(title="never", spec="s"), "c", "t")
            raise RuntimeError("changed my mind")
    assert store.get(cid).priority == 2 and len(store.list_cards()) == 1
    assert store.change_count() == count
    assert add(store) == "c-2", "a rolled-back create used up a number"


def test_hostile_text_goes_in_and_out_byte_for_byte(store: Store) -> None:
    """NUL included: PostgreSQL text cannot hold it, the store escapes it (U+FFFF too)."""
    title = "[b]x[/] \x1b]52;c;aGk=\x07 \x00\x01\x7f ünï \uffff0 \uffff\uffff end\x00"
    cid = store.create(CardDraft(title=title, spec="s" * 100_000 + "\x00")).id
    store.add_comment(cid, title, "alice")
    store.update(cid, Expect(), {"blocked": Blocked("held", title)}, who=title)
    card = store.get(cid)
    assert card.title == title and card.spec.endswith("s\x00") and card.blocked.reason == title
    assert store.list_cards()[0].title == title
    assert [e.text for e in store.timeline(cid) if e.kind == "comment"] == [title]
    assert store.timeline(cid)[-1].who == title


# -- the timeline, deps and dependents ----------------------------------------------------------


def test_every_write_appends_to_the_timeline_in_order(store: Store) -> None:
    cid = add(store)
    store.update(cid, Expect(), {"lane": "working", "drive": "d-1"}, who="loop", note="claimed")
    store.add_comment(cid, "looks good", "alice")
    store.add_event(cid, "fetched", "board", kind="event")
    events = store.timeline(cid)
    assert [(e.kind, e.who, e.text) for e in events] == [
        ("event", "operator", "created in ready"),
        ("event", "loop", "lane ready → working; drive d-1; claimed"),
        ("comment", "alice", "looks good"),
        ("event", "board", "fetched"),
    ]
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    with pytest.raises(NotFound):
        store.add_comment("c-9", "nobody")


def test_deps_and_dependents(store: Store) -> None:
    for _ in range(10):
        add(store)
    a = add(store, deps=("c-1",))  # c-11
    b = add(store, deps=("c-1", "c-2"))  # c-12
    add(store, deps=("c-10", "c-2"))  # c-13
    assert store.dependents("c-1") == [a, b]
    assert store.dependents("c-2") == ["c-12", "c-13"]
    assert store.get("c-13").deps == ("c-2", "c-10")  # id order, not text order
    store.update(b, Expect(), {"deps": ("c-3",)})
    assert store.get(b).deps == ("c-3",) and store.dependents("c-2") == ["c-13"]
    with store.transaction() as tx:
        assert tx.dependents("c-3") == [b]
        assert [c.id for c in tx.all_cards()][:2] == ["c-1", "c-2"]
        assert tx.get(b).deps == ("c-3",)


# -- drives, pauses, loops ----------------------------------------------------------------------


def test_drives(store: Store) -> None:
    cid = add(store)
    assert store.next_attempt(cid) == 1
    first = store.start_drive(cid, "default", 1, ".board/logs/c-1/1.log", 4242)
    assert first.owner_pid == 4242 and first.status == "running" and first.live
    assert store.get_drive(first.id) == first
    ended = store.update_drive(first.id, status="failed", result="gate red", pgid=0)
    assert ended.status == "failed" and ended.ended_at and not ended.live
    second = store.start_drive(cid, "strong", 2, "log2", 0)
    assert store.next_attempt(cid) == 3
    assert [d.id for d in store.live_drives()] == [second.id]
    assert [d.id for d in store.list_drives(cid)] == [second.id, first.id]  # live first
    assert store.list_drives("c-9") == []
    with pytest.raises(Refused, match="unknown drive fields: colour"):
        store.update_drive(second.id, colour="red")  # a misspelt field
    with pytest.raises(NotFound, match="no drive 'd-none'"):
        store.get_drive("d-none")


def test_pauses(store: Store) -> None:
    assert store.pauses() == []
    store.pause_tier(Pause("default", "rate-limit", "429", "2030-01-01T00:00:00.000Z", "s1"))
    store.pause_tier(Pause("default", "auth", "401", "", "s2", "c-3"))  # replaces it
    store.pause_tier(Pause("alpha", "rate-limit", "quota", "", "s3"))
    assert [(p.tier, p.cls, p.card) for p in store.pauses()] == [
        ("alpha", "rate-limit", ""),
        ("default", "auth", "c-3"),
    ]
    assert store.resume_tier("default", "rate-limit") is False  # not of that class
    assert store.resume_tier("default", "auth") is True
    assert store.resume_tier("alpha") is True and store.resume_tier("alpha") is False
    assert store.pauses() == []


def test_loops_heartbeats(store: Store) -> None:
    store.beat("hostA", 10, "2026-01-01T00:00:00.000Z")
    time.sleep(0.01)
    store.beat("hostB", 20, "2026-01-01T00:00:01.000Z")
    assert [(b.host, b.pid) for b in store.loops()] == [("hostB", 20), ("hostA", 10)]
    time.sleep(0.01)
    store.beat("hostA", 10, "ignored: started_at is kept")
    beats = store.loops()
    assert [(b.host, b.started_at) for b in beats][0] == ("hostA", "2026-01-01T00:00:00.000Z")
    store.end_loop("hostA", 10)
    assert [b.host for b in store.loops()] == ["hostB"]


# -- the change count ---------------------------------------------------------------------------


def test_every_committed_write_moves_the_change_count_and_nothing_else_does(store: Store) -> None:
    seen = [store.change_count()]

    def moved() -> bool:
        now = store.change_count()
        went = now > seen[-1]
        seen.append(now)
        return went

    cid = add(store)
    assert moved()
    store.update(cid, Expect(), {"priority": 0})
    assert moved()
    store.add_comment(cid, "c")
    assert moved()
    drive = store.start_drive(cid, "default", 1, "log", 0)
    assert moved()
    store.update_drive(drive.id, pgid=7)
    assert moved()
    store.pause_tier(Pause("default", "auth", "401", "", "s"))
    assert moved()
    assert store.resume_tier("default") and moved()
    assert not store.resume_tier("default") and not moved(), "nothing deleted, nothing changed"
    store.beat("h", 1, "s")
    assert moved()
    with store.transaction() as tx:  # reads only
        tx.get(cid)
    assert not moved()
    with pytest.raises(Conflict):
        store.update(cid, Expect(version=1), {"priority": 1})
    assert not moved()
    store.get(cid), store.list_cards(), store.lane_heads(5), store.timeline(cid)
    assert not moved()


# -- lane heads, and rows that cannot be read ---------------------------------------------------


def test_lane_heads_agree_with_the_interface_default(store: Store) -> None:
    for i in range(30):
        cid = add(store, f"card {i}", lane="ready" if i % 2 else "backlog")
        changes: dict = {"priority": i % 4}
        if i % 5 == 0:
            changes["blocked"] = Blocked("held", f"r{i}")
        if i % 7 == 0:
            changes["lane"] = "done"
        store.update(cid, Expect(), changes)
    for limit in (0, 3, 100):
        heads = store.lane_heads(limit)
        default = Store.lane_heads(store, limit)
        assert heads == default, limit
        assert heads.complete is (limit == 100)
    heads = store.lane_heads(3)
    assert heads.totals == {"backlog": 12, "ready": 13, "done": 5}
    assert heads.changes == store.change_count()
    first = heads.cards["ready"][0]
    assert first.blocked is not None, "blocked cards come first"
    with pytest.raises(StoreError, match="limit must be 0 or more"):
        store.lane_heads(-1)


@pytest.mark.parametrize(
    "sql, field",
    [
        ("UPDATE cards SET labels = 'not json' WHERE id = 'c-2'", "labels"),
        ("UPDATE cards SET lane = 'limbo' WHERE id = 'c-2'", "lane"),
        ("UPDATE cards SET blocked_class = 'gremlins', blocked_reason = 'x' WHERE id = 'c-2'",
         "blocked_class"),
    ],
)  # fmt: skip
def test_a_corrupt_row_is_named_and_every_other_card_still_shows(
    store: Store, sql: str, field: str
) -> None:
    for _ in range(3):
        add(store)
    raw(store, sql)
    with pytest.raises(CorruptCard) as exc:
        store.get("c-2")
    assert exc.value.card == "c-2" and exc.value.field == field
    assert exc.value.line().startswith(f"card c-2 cannot be read: its field {field} in the store")
    with pytest.raises(CorruptCard):
        store.list_cards()
    unreadable: list[CorruptCard] = []
    assert [c.id for c in store.list_cards(unreadable=unreadable)] == ["c-1", "c-3"]
    assert [u.card for u in unreadable] == ["c-2"]
    more: list[CorruptCard] = []
    heads = store.lane_heads(10, unreadable=more)
    assert sum(len(v) for v in heads.cards.values()) == 2 and [u.card for u in more] == ["c-2"]
    with pytest.raises(CorruptCard):
        store.update("c-2", Expect(), {"priority": 0})


# -- waiting for a change -----------------------------------------------------------------------


def test_wait_change_wakes_within_a_second_of_another_connections_write(store: Store) -> None:
    cid = add(store)
    assert store.wait_change(0.2) is False, "no write, no wake"
    other = reopen(store)
    wrote: list[float] = []

    def write_later() -> None:
        time.sleep(0.4)
        other.add_comment(cid, "from the other machine")
        wrote.append(time.monotonic())

    writer = threading.Thread(target=write_later)
    writer.start()
    try:
        assert store.wait_change(5.0) is True
        woke = time.monotonic()
    finally:
        writer.join()
        other.close()
    assert woke - wrote[0] < 1.0, f"woke {woke - wrote[0]:.2f}s after the write"


def test_wait_change_since_a_count_misses_no_write_made_before_the_wait(store: Store) -> None:
    seen = store.change_count()
    add(store)  # lands between the reload and the wait
    start = time.monotonic()
    assert store.wait_change(5.0, since=seen) is True
    assert time.monotonic() - start < 0.5, "a write already made must not be waited for"
    assert store.wait_change(0.3, since=store.change_count()) is False


# -- claims: one card, one loop -----------------------------------------------------------------


@pytest.mark.parametrize("shared", [True, False], ids=["one-store", "two-connections"])
def test_claims_racing_from_two_threads_never_hand_a_card_to_both(
    store: Store, tmp_path: Path, shared: bool
) -> None:
    """Two loops (or the drive threads of one) claim the same 12 cards at the same moment:
    each card is claimed exactly once, and the loser's drive row stands aside."""
    cfg = config.Config(root=tmp_path)
    for _ in range(12):
        add(store)
    stores = [store, store] if shared else [store, reopen(store)]
    cards = store.list_cards()
    won: dict[str, list[str]] = {"a": [], "b": []}
    barrier = threading.Barrier(2)
    failures: list[BaseException] = []

    def race(name: str, st: Store) -> None:
        try:
            for card in cards:
                barrier.wait(timeout=30)
                if claim(cfg, st, card, owner_pid=1 if name == "a" else 2) is not None:
                    won[name].append(card.id)
        except BaseException as exc:  # reported below, after the join
            failures.append(exc)
            barrier.abort()

    threads = [
        threading.Thread(target=race, args=(n, s)) for n, s in zip("ab", stores, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    if not shared:
        stores[1].close()
    assert not failures, failures
    claimed = won["a"] + won["b"]
    assert sorted(claimed) == sorted(c.id for c in cards), "every card once, none twice"
    for card in store.list_cards():
        assert card.lane == "working" and card.drive
        owner = store.get_drive(card.drive)
        assert owner.card == card.id and owner.live
    standing = [d for d in store.list_drives() if d.status == "stood-aside"]
    assert len(standing) == 12, "each lost claim ends its drive row stood-aside"
    assert all(d.result.startswith("claim lost:") for d in standing)


# -- the schema: one shape, migrated from older boards ------------------------------------------

TABLES = (
    "board_shape", "card_state", "cards", "deps", "drives", "events", "lane_moves", "loops", "meta",
    "notices", "pauses", "tombstones",
)  # fmt: skip


def columns(store: Store) -> dict[str, list[str]]:
    if isinstance(store, SQLiteStore):
        return {t: [r[1] for r in store.conn.execute(f"PRAGMA table_info({t})")] for t in TABLES}
    assert isinstance(store, PostgresStore)
    with psycopg.connect(store.url) as conn:
        rows = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
        ).fetchall()
    out: dict[str, list[str]] = {}
    for table, column in rows:
        out.setdefault(table, []).append(column)
    return out


def test_both_stores_have_the_same_tables_and_columns(tmp_path: Path, pg_url: str) -> None:
    lite = SQLiteStore(tmp_path / "board.db", create=True)
    pg = PostgresStore(pg_url, create=True)
    try:
        assert sorted(columns(pg)) == list(TABLES)
        assert columns(pg) == columns(lite)
    finally:
        lite.close()
        pg.close()


# A board made by schema version 1: no not_before, no PR state, no pauses, no heartbeats.
V1 = [
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE cards (id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, title TEXT NOT NULL,
        spec TEXT NOT NULL DEFAULT '', acceptance TEXT NOT NULL DEFAULT '',
        kind TEXT NOT NULL DEFAULT 'feature', lane TEXT NOT NULL,
        priority INTEGER NOT NULL DEFAULT 2, assignee TEXT NOT NULL DEFAULT '',
        branch TEXT NOT NULL DEFAULT '', pr_url TEXT NOT NULL DEFAULT '', blocked_class TEXT,
        blocked_reason TEXT, labels TEXT NOT NULL DEFAULT '[]',
        surface TEXT NOT NULL DEFAULT '[]', drive TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL, version INTEGER NOT NULL DEFAULT 1)""",
    "CREATE TABLE deps (card TEXT NOT NULL, dep TEXT NOT NULL, PRIMARY KEY (card, dep))",
    """CREATE TABLE events (seq {serial}, card TEXT NOT NULL, at TEXT NOT NULL,
        who TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL)""",
    """CREATE TABLE drives (id TEXT PRIMARY KEY, card TEXT NOT NULL, attempt INTEGER NOT NULL,
        tier TEXT NOT NULL, status TEXT NOT NULL, started_at TEXT NOT NULL,
        ended_at TEXT NOT NULL DEFAULT '', pgid INTEGER NOT NULL DEFAULT 0,
        host TEXT NOT NULL DEFAULT '', owner_pid INTEGER NOT NULL DEFAULT 0,
        log TEXT NOT NULL DEFAULT '', result TEXT NOT NULL DEFAULT '')""",
    "INSERT INTO meta VALUES ('schema', '{version}'), ('next_seq', '2'), ('changes', '5')",
    """INSERT INTO cards (id, seq, title, lane, created_at, updated_at)
        VALUES ('c-1', 1, 'from an old board', 'ready', 'then', 'then')""",
]


def old_board(backend: str, request: pytest.FixtureRequest, tmp_path: Path, version: str) -> str:
    """A version-1 board made by hand; returns where it is."""
    if backend == "sqlite":
        path = tmp_path / "old.db"
        conn = sqlite3.connect(path)
        for sql in V1:
            conn.execute(sql.format(serial="INTEGER PRIMARY KEY AUTOINCREMENT", version=version))
        conn.commit()
        conn.close()
        return str(path)
    url: str = request.getfixturevalue("pg_url")
    with psycopg.connect(url, autocommit=True) as pg:
        for sql in V1:
            pg.execute(sql.format(serial="BIGSERIAL PRIMARY KEY", version=version))
    return url


def open_at(backend: str, where: str) -> Store:
    return SQLiteStore(where) if backend == "sqlite" else PostgresStore(where)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_version_1_board_is_migrated_when_opened(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    where = old_board(backend, request, tmp_path, "1")
    store = open_at(backend, where)
    try:
        card = store.get("c-1")
        assert (card.title, card.not_before, card.pr_state) == ("from an old board", "", "")
        assert store.pauses() == [] and store.loops() == []
        store.pause_tier(Pause("default", "auth", "401", "", "s"))
        store.update("c-1", Expect(version=1), {"pr_state": "OPEN", "not_before": "later"})
        assert store.change_count() == 7 and add(store) == "c-2"
        if isinstance(store, PostgresStore):
            assert sorted(columns(store)) == list(TABLES)
    finally:
        store.close()
    again = open_at(backend, where)  # the second open finds it current
    try:
        assert again.get("c-1").pr_state == "OPEN"
    finally:
        again.close()
    if backend == "postgres":
        with psycopg.connect(where) as pg:
            got = pg.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            indexes = {r[0] for r in pg.execute("SELECT indexname FROM pg_indexes")}
        assert got == (str(SCHEMA_VERSION),)
        assert {"cards_open_order", "cards_closed_order"} <= indexes


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_board_from_a_newer_version_is_refused_in_one_line(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    where = old_board(backend, request, tmp_path, "99")
    with pytest.raises(StoreError) as exc:
        open_at(backend, where)
    assert f"has an unknown schema version '99' (this board reads version {SCHEMA_VERSION})" in (
        exc.value.line()
    )


# -- what only a server has: locks, reachability, a dropped connection --------------------------


def test_a_locked_database_says_so_in_one_line(pg_url: str) -> None:
    store = PostgresStore(pg_url, create=True, busy_timeout_ms=300)
    holder = psycopg.connect(pg_url, autocommit=True)
    try:
        cid = add(store)
        holder.execute("SELECT pg_advisory_lock(%s)", (_WRITE_LOCK,))
        start = time.monotonic()
        with pytest.raises(StoreError) as exc:
            store.update(cid, Expect(), {"priority": 0})
        assert time.monotonic() - start < 3
        assert exc.value.line() == (
            f"store {pg_url} is locked by another writer (waited 0.3s); try again"
        )
        assert store.get(cid).priority == 2, "reads never wait for a writer"
        holder.execute("SELECT pg_advisory_unlock(%s)", (_WRITE_LOCK,))
        assert store.update(cid, Expect(), {"priority": 0}).priority == 0
    finally:
        holder.close()
        store.close()


def test_an_unreachable_or_missing_database_says_so_in_one_line(pg_cluster: Cluster) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://postgres@127.0.0.1:{port}/nowhere"
    with pytest.raises(StoreError) as exc:
        PostgresStore(url)
    line = exc.value.line()
    assert line.startswith(f"store {url} is unreachable: ") and "\n" not in str(exc.value)
    missing = pg_cluster.url("no_such_db")
    with pytest.raises(StoreError) as exc:
        PostgresStore(missing)
    assert 'database "no_such_db" does not exist' in exc.value.line()
    assert "createdb" in exc.value.line()


def test_a_password_in_a_url_is_never_shown(pg_cluster: Cluster) -> None:
    url = pg_cluster.url("no_such_db").replace("postgres@", "postgres:s3cret@")
    with pytest.raises(StoreError) as exc:
        PostgresStore(url)
    assert "s3cret" not in str(exc.value) and "postgres:***@" in str(exc.value)


def test_a_connection_the_server_dropped_is_made_again(pg_url: str) -> None:
    store = PostgresStore(pg_url, create=True)
    try:
        cid = add(store)
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        time.sleep(0.2)
        assert store.get(cid).id == cid  # the read notices, reconnects, reads
        assert store.update(cid, Expect(version=1), {"priority": 0}).version == 2
    finally:
        store.close()


def test_open_store_follows_board_toml(tmp_path: Path, pg_url: str) -> None:
    (tmp_path / ".board").mkdir()
    lite = open_store(config.Config(root=tmp_path), create=True)
    pg = open_store(
        config.Config(tmp_path, store=config.StoreSection(url=pg_url))
    )  # any open makes the tables
    try:
        assert isinstance(lite, SQLiteStore) and lite.where == str(tmp_path / ".board/board.db")
        assert isinstance(pg, PostgresStore) and pg.where == pg_url and pg.created
        assert pg.pushes_changes and not lite.pushes_changes
    finally:
        lite.close()
        pg.close()
    with pytest.raises(StoreError, match="run `board init` first"):
        open_store(config.Config(root=tmp_path / "elsewhere"))

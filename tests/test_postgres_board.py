"""One board in PostgreSQL, shared by clones: init, the CLI, the TUI and racing processes.

What a team sees when `[store] url` is set: `board init --store URL` writes the key and
makes the tables, every clone that names the URL works the same cards, a TUI on one clone
follows a CLI change made on another within a second (LISTEN/NOTIFY, not polling), two OS
processes racing on the same cards lose no update, and a password never lands in (or is
read from) board.toml. Against the session's throwaway server (tests/support/pg_cluster.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from board.core import config, storeurl
from board.core.cards import actions
from board.core.model import CardDraft
from board.core.store import open_store
from board.core.store.postgres import PostgresStore

from tests.support.race import WORKER
from tests.support.repos import git, make_repo, run_cli

ROOT = Path(__file__).resolve().parent.parent
SECRET = "s3cret-pw"


def clone_of(first: Path, name: str) -> Path:
    """Another clone of the same origin: a teammate's checkout, or another machine."""
    other = first.parent / name
    git(first.parent, "clone", "-q", str(first.parent / "origin.git"), str(other))
    return other


def ok(res: subprocess.CompletedProcess[str]) -> str:
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"postgresql://postgres@127.0.0.1:{port}/board"


# -- board init --store, and the CLI on two clones ---------------------------------------------


def test_init_store_writes_the_url_and_two_clones_work_one_board(
    tmp_path: Path, pg_url: str
) -> None:
    first = make_repo(tmp_path, init="").root
    out = ok(run_cli(first, "init", "--store", pg_url))
    assert f"store: PostgreSQL at {pg_url} ([store] url in board.toml)" in out
    assert f"created store {pg_url}" in out
    assert config.load(first).store.url == pg_url
    assert (first / ".board").is_dir() and not (first / ".board" / "board.db").exists()
    assert "c-1" in ok(run_cli(first, "card", "add", "Shared card", "--spec", "s", "--ready"))

    second = clone_of(first, "second")
    out = ok(run_cli(second, "init", "--store", pg_url))
    assert f"kept store {pg_url}" in out, out
    cards = json.loads(ok(run_cli(second, "card", "list", "--json")))
    assert [(c["id"], c["title"], c["lane"]) for c in cards] == [("c-1", "Shared card", "ready")]
    ok(run_cli(second, "hold", "c-1", "--reason", "from the second clone"))
    shown = json.loads(ok(run_cli(first, "card", "show", "c-1", "--json")))
    assert shown["blocked"] == {"class": "held", "reason": "from the second clone"}
    status = json.loads(ok(run_cli(first, "status", "--json")))
    assert status["lanes"]["ready"] == 1 and status["blocked"] == {"held": 1}
    assert "ready" in ok(run_cli(second, "card", "list"))

    out = ok(run_cli(first, "init"))  # the url in board.toml is kept, the schema found current
    assert f"kept store {pg_url}" in out and config.load(first).store.url == pg_url


def test_init_store_on_an_existing_board_toml_adds_the_url_or_refuses_another(
    tmp_path: Path, pg_url: str
) -> None:
    repo = make_repo(tmp_path, init="cli").root  # a plain SQLite board first
    path = repo / config.CONFIG_NAME
    before = path.read_text()
    out = ok(run_cli(repo, "init", "--store", pg_url))
    assert f"added [store] url = {pg_url} to {path}" in out
    assert f"note: {repo / '.board' / 'board.db'} is left as it was and its cards are not" in out
    assert f"created store {pg_url}" in out
    after = path.read_text()
    changed = [
        (a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b
    ]
    assert changed == [('url = ""', f'url = "{pg_url}"')], "only the url line changed"
    assert f"kept [store] url: board.toml already names {pg_url}" in ok(
        run_cli(repo, "init", "--store", pg_url)
    )
    other = pg_url.rsplit("/", 1)[0] + "/another"
    res = run_cli(repo, "init", "--store", other)
    assert res.returncode == 1
    assert res.stderr.strip() == (
        f"board: {path} already has [store] url = {pg_url}, not {other}: edit it by hand if "
        "the board moves; nothing changed"
    )
    assert path.read_text() == after


def test_init_store_adds_a_store_table_to_an_older_board_toml(tmp_path: Path, pg_url: str) -> None:
    repo = make_repo(tmp_path, init="cli").root
    path = repo / config.CONFIG_NAME
    path.write_text('[board]\nbase = "main"\n')  # written before [store] existed
    ok(run_cli(repo, "init", "--store", pg_url))
    assert path.read_text() == f'[board]\nbase = "main"\n\n[store]\nurl = "{pg_url}"\n'


def test_a_password_in_board_toml_is_refused_naming_the_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, init="cli").root
    path = repo / config.CONFIG_NAME
    text = storeurl.with_store_url(path.read_text(), f"postgresql://bob:{SECRET}@db.example/board")
    path.write_text(text)
    line = text.splitlines().index(f'url = "postgresql://bob:{SECRET}@db.example/board"') + 1
    for verb in (("card", "list"), ("status",), ("init",)):
        res = run_cli(repo, *verb)
        assert res.returncode == 2, (verb, res.stderr)
        assert res.stderr.strip() == (
            f"board: {path}:{line}: store.url: carries a password: keep it out of board.toml "
            "and give it in PGPASSWORD or ~/.pgpass (libpq reads both)"
        )
        assert SECRET not in res.stderr + res.stdout
    query = text.replace(f"bob:{SECRET}@", "bob@").replace('/board"', f'/board?password={SECRET}"')
    with pytest.raises(config.ConfigError, match=f"{path}:{line}: store.url: carries a password"):
        config.parse(path, query)
    with pytest.raises(config.ConfigError, match=rf"{path}:{line}: store.url: must be a post"):
        config.parse(path, text.replace(f"postgresql://bob:{SECRET}@", "mysql://"))


def test_the_password_comes_from_pgpass_or_pgpassword_and_a_refused_login_says_where(
    tmp_path: Path, pg_cluster: Any
) -> None:
    """What docs/teams.md promises for a server that asks for a password: libpq reads it from
    ~/.pgpass (mode 600) or PGPASSWORD, never board.toml. A role on the session's server
    that must give a password (scram-sha-256, its own pg_hba line; every other role keeps
    trust) and a database it owns; the CLI run with a HOME of the test's own."""
    import uuid

    role, db = f"pw_{uuid.uuid4().hex[:10]}", f"t_{uuid.uuid4().hex[:12]}"
    hba = pg_cluster.data / "pg_hba.conf"
    rule = f"host {db} {role} 127.0.0.1/32 scram-sha-256\n"
    hba.write_text(rule + hba.read_text())  # first match wins: only this role, only here
    pg_cluster.admin(f"CREATE ROLE {role} LOGIN PASSWORD '{SECRET}'")  # test-made names
    pg_cluster.admin(f"CREATE DATABASE {db} OWNER {role}")
    pg_cluster.admin("SELECT pg_reload_conf()")
    home = tmp_path / "home"
    home.mkdir()
    pgpass = home / ".pgpass"
    url = f"postgresql://{role}@127.0.0.1:{pg_cluster.port}/{db}"
    repo = make_repo(tmp_path, init="").root
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=os.devnull)

    def board(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return run_cli(repo, *args, env={**env, **extra})

    try:
        # no password anywhere: refused, in one line that says where it is looked for
        res = board("init", "--store", url)
        assert res.returncode == 1, res.stdout + res.stderr
        assert "refused the login" in res.stderr and "PGPASSWORD or ~/.pgpass" in res.stderr
        assert res.stderr.count("\n") == 1 and not (repo / config.CONFIG_NAME).exists()
        # ~/.pgpass readable by others: libpq ignores it, so still refused
        pgpass.write_text(f"127.0.0.1:{pg_cluster.port}:{db}:{role}:{SECRET}\n")
        pgpass.chmod(0o644)
        res = board("init", "--store", url)
        assert res.returncode == 1 and "refused the login" in res.stderr, res.stderr
        # mode 600: the board is made, and the cards go to and come from that server
        pgpass.chmod(0o600)
        out = ok(board("init", "--store", url))
        assert f"created store {url}" in out, out
        assert "c-1" in ok(board("card", "add", "Behind a password", "--spec", "s"))
        # PGPASSWORD alone does as well
        pgpass.unlink()
        listed = json.loads(ok(board("card", "list", "--json", PGPASSWORD=SECRET)))
        assert [c["title"] for c in listed] == ["Behind a password"]
        res = board("card", "list")
        assert res.returncode != 0 and "refused the login" in res.stderr, res.stderr
        text = (repo / config.CONFIG_NAME).read_text()
        assert SECRET not in text and f'url = "{url}"' in text
        assert SECRET not in res.stderr + res.stdout
    finally:
        hba.write_text(hba.read_text().replace(rule, "", 1))
        pg_cluster.admin("SELECT pg_reload_conf()")
        pg_cluster.drop_db(db)
        pg_cluster.admin(f"DROP ROLE IF EXISTS {role}")


def test_init_store_refuses_a_password_or_an_unreachable_server_writing_nothing(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path, init="").root
    res = run_cli(repo, "init", "--store", f"postgresql://bob:{SECRET}@127.0.0.1/board")
    assert res.returncode == 1 and SECRET not in res.stderr + res.stdout
    assert res.stderr.startswith("board: --store carries a password: keep it out of board.toml")
    url = closed_port_url()
    res = run_cli(repo, "init", "--store", url)
    assert res.returncode == 1
    assert res.stderr.startswith(f"board: store {url} is unreachable: "), res.stderr
    assert res.stderr.strip().endswith("; nothing written") and res.stderr.count("\n") == 1
    assert not (repo / config.CONFIG_NAME).exists()


def test_a_verb_on_an_unreachable_server_says_so_in_one_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, init="cli").root
    path = repo / config.CONFIG_NAME
    url = closed_port_url()
    path.write_text(storeurl.with_store_url(path.read_text(), url))
    res = run_cli(repo, "card", "list")
    assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(f"board: store {url} is unreachable: connection")


# -- the TUI on one clone follows the CLI on another ----------------------------------------------


async def test_a_tui_on_another_clone_follows_a_cli_change_within_a_second(
    tmp_path: Path, pg_url: str
) -> None:
    from board.tui.app import BoardApp

    from tests.support.tui import run_pilot

    first = make_repo(tmp_path, init="").root
    ok(run_cli(first, "init", "--store", pg_url))
    ok(run_cli(first, "card", "add", "Already here", "--spec", "s", "--ready"))
    second = clone_of(first, "second")
    ok(run_cli(second, "init", "--store", pg_url))
    cfg = config.load(second)
    store = open_store(cfg)
    assert isinstance(store, PostgresStore)
    app = BoardApp(cfg, store, poll_interval=0.5)
    app.animation_level = "none"

    def ready_ids() -> list[str]:
        lanes = getattr(app.screen, "lanes", None) or {}
        return [row.card.id for row in lanes.get("ready", [])]

    async def until(predicate: Any, timeout: float, what: str) -> float:
        loop = asyncio.get_running_loop()
        start = loop.time()
        while not predicate():
            if loop.time() - start > timeout:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}")
            await asyncio.sleep(0.02)
        return loop.time() - start

    try:
        async with run_pilot(app):
            await until(lambda: ready_ids() == ["c-1"], 10, "the first board")
            watchers = [t for t in threading.enumerate() if t.name == "store-watch"]
            assert watchers, "the TUI waits on NOTIFY instead of polling"
            for title, cid in (("Made on the first clone", "c-2"), ("And another", "c-3")):
                res = await asyncio.to_thread(
                    run_cli, first, "card", "add", title, "--spec", "s", "--ready"
                )
                ok(res)
                took = await until(lambda cid=cid: cid in ready_ids(), 5, f"{cid} on screen")
                assert took < 1.0, f"{cid} reached the other clone's TUI after {took:.2f}s"
    finally:
        store.close()


# -- two OS processes racing on 20 cards ----------------------------------------------------------


def race(url: str, n: int = 500, planted: bool = False) -> list[str]:
    """Two processes, n read-modify-writes each on 20 cards; every way an update was lost
    or a refusal went unexplained, as lines (none when the store keeps its promise)."""
    st = PostgresStore(url, create=True)
    for _ in range(20):
        actions.add_card(st, CardDraft(title="t", spec="s", lane="ready"))
    env = {**os.environ, "BOARD_TEST_NO_CAS": "1" if planted else ""}
    gate = tempfile.mkdtemp(prefix="board-race-gate-")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, url, name, str(n), gate],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            start_new_session=True,
        )
        for name in ("loop", "tui")
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    for marker in os.listdir(gate):
        os.unlink(os.path.join(gate, marker))
    os.rmdir(gate)
    problems = []
    for r in results:
        if sum(r["accepted"].values()) + len(r["refused"]) != n:
            problems.append("a write was neither accepted nor refused")
        for line in r["refused"]:
            if not ("expects version" in line and "got" in line):
                problems.append(f"unexplained refusal: {line}")
    for card in st.list_cards():
        accepted = sum(r["accepted"].get(card.id, 0) for r in results)
        events = [e for e in st.timeline(card.id) if e.who in ("loop", "tui")]
        if len(events) != accepted:
            problems.append(f"{card.id}: {accepted} accepted writes, {len(events)} events")
        if card.version != 1 + accepted:
            problems.append(f"{card.id}: version {card.version} does not count every write")
        counted = int(card.labels[0].split("=")[1]) if card.labels else 0
        if counted != accepted:
            problems.append(f"{card.id}: {accepted} increments accepted, {counted} kept (lost)")
    if not any(r["refused"] for r in results) and not planted:
        problems.append("the writers never raced: nothing was refused")
    st.close()
    return problems


def test_two_processes_500_transitions_each_lose_no_update(pg_url: str) -> None:
    assert race(pg_url) == []


def test_the_race_sees_lost_updates_when_the_version_check_is_off(pg_url: str) -> None:
    """The red check of the test above: with compare-and-set planted out, it must fail."""
    problems = race(pg_url, n=200, planted=True)
    assert any("kept (lost)" in p for p in problems), problems


# -- a missing server fails under CI, and is skipped elsewhere ------------------------------------


def test_a_missing_server_fails_under_ci_and_is_skipped_elsewhere(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(
        "from tests.support.pg_cluster import pg_cluster, pg_url  # noqa: F401\n"
    )
    (tmp_path / "test_needs_pg.py").write_text("def test_it(pg_url):\n    assert pg_url\n")
    env = {
        **os.environ,
        "BOARD_PG_BINDIR": str(tmp_path / "no-server-here"),
        "PYTHONPATH": str(ROOT),
    }
    got = {}
    for ci in ("true", ""):
        res = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "."],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            timeout=120,
            env={**env, "CI": ci},
        )
        got[ci] = (res.returncode, res.stdout)
    code, out = got["true"]
    assert code == 1 and "1 error" in out, out
    assert "PostgreSQL is required under CI=true: no PostgreSQL server binaries" in out
    code, out = got[""]
    assert code == 0 and "1 skipped" in out, out
    assert "no PostgreSQL to test against: no PostgreSQL server binaries" in out


def test_the_cluster_is_reachable_and_stops_cleanly(pg_url: str) -> None:
    """The fixture's own promise: a server on loopback, trust auth, a database per test."""
    store = PostgresStore(pg_url, create=True)
    try:
        assert "@127.0.0.1:" in pg_url and store.change_count() == 0
        start = time.monotonic()
        assert store.wait_change(0.3) is False
        assert 0.25 < time.monotonic() - start < 2
    finally:
        store.close()

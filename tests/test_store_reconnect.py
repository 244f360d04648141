"""The loop outlives its database: a PostgreSQL server that restarts, or is away for a while,
does not end `board run`, and nothing a drive did is lost or written twice.

A routine one-second `pg_ctl restart` used to end an unattended night: the loop's next call
failed and `board run` exited. Now the store waits out a lost server for `[store]
reconnect_s` (core/store/outage.py): the drives run on, each records its end once the
server answers again, and only past reconnect_s does the loop stop, in one line, leaving
every tree for the next `board run` to save. A write transaction cut mid-way is run again on
a new connection, once (core/store/pgtx.py). The TUI's header says the store is unreachable
and follows it back. All of it on the suite's own throwaway cluster, restarted and stopped
for real (`pg_ctl`, as the `postgres` user), with real `board run` processes and real coders.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from pathlib import Path

import psycopg
import pytest
from board.core import config, hosts
from board.core.cards import actions
from board.core.drive import drive
from board.core.errors import BoardError, Conflict
from board.core.git import naming
from board.core.model import CardDraft
from board.core.proc import pid_alive
from board.core.store import Expect, open_store
from board.core.store.postgres import PostgresStore

from tests.support.loop import (
    board_run,
    edit_tier,
    loop_log,
    read_pids,
    run_branch_log,
    show,
    stranded_branches,
    write_config,
)
from tests.support.pg_cluster import Cluster
from tests.support.repos import make_repo
from tests.support.waiting import wait_for


def kill_connections(url: str, who: str = "board %") -> None:
    """End the board's sessions on the server (the server stays up): a connection cut."""
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name LIKE %s AND pid <> pg_backend_pid()",
            (who,),
        )


# -- a write transaction cut mid-way ----------------------------------------------------------


def test_a_write_cut_mid_transaction_is_run_again_on_a_new_connection_and_lands_once(
    pg_url: str,
) -> None:
    store = PostgresStore(pg_url, create=True)
    try:
        card = store.create(CardDraft(title="t", spec="s", lane="ready"))
        changes = store.change_count()
        with store.transaction() as tx:
            got = tx.get(card.id)
            tx.update(card.id, Expect(version=got.version), {"title": "renamed"}, "test")
            kill_connections(pg_url)  # the server rolls back what the body did so far
            tx.add_event(card.id, "after the cut", "test")
        after = store.get(card.id)
        assert (after.title, after.version) == ("renamed", card.version + 1)
        texts = [e.text for e in store.timeline(card.id)]
        assert texts.count("after the cut") == 1
        assert sum("title" in t for t in texts) == 1, texts
        assert store.change_count() == changes + 1
    finally:
        store.close()


def test_a_write_cut_mid_transaction_while_another_wrote_is_refused_and_writes_nothing(
    pg_url: str,
) -> None:
    """Run again, the transaction's first read answers otherwise (another writer got in
    while the connection was down): the body, which decided on that read, is refused as a
    compare-and-set that lost, and nothing of it is written."""
    store = PostgresStore(pg_url, create=True)
    try:
        card = store.create(CardDraft(title="t", spec="s", lane="ready"))
        with pytest.raises(Conflict, match="another writer got in meanwhile"):
            with store.transaction() as tx:
                got = tx.get(card.id)
                kill_connections(pg_url)
                other = PostgresStore(pg_url)  # its connection made after the cut
                try:
                    other.update(card.id, Expect(version=got.version), {"title": "theirs"}, "them")
                finally:
                    other.close()
                # a write decided on what was read, with no version check of its own
                tx.add_event(card.id, f"mine, seen as {got.title!r}", "test")
        assert store.get(card.id).title == "theirs"
        assert not any("mine" in e.text for e in store.timeline(card.id))
    finally:
        store.close()


def test_a_connection_lost_at_commit_asks_the_server_and_the_write_lands_once(
    pg_url: str,
) -> None:
    """The server ends the session while it runs COMMIT (a deferred trigger terminates its
    own backend, once): the store cannot know whether it committed, asks (`txid_status`:
    aborted), runs the transaction again and commits it: one event, one change."""
    store = PostgresStore(pg_url, create=True)
    try:
        card = store.create(CardDraft(title="t", spec="s", lane="ready"))
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("CREATE SEQUENCE cut_once")
            admin.execute(
                "CREATE FUNCTION cut() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "IF nextval('cut_once') = 1 THEN PERFORM pg_terminate_backend(pg_backend_pid()); "
                "END IF; RETURN NULL; END $$"
            )
            admin.execute(
                "CREATE CONSTRAINT TRIGGER cut_at_commit AFTER INSERT ON events "
                "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION cut()"
            )
        changes = store.change_count()
        store.add_comment(card.id, "written at a cut commit", "test")
        texts = [e.text for e in store.timeline(card.id)]
        assert texts.count("written at a cut commit") == 1
        assert store.change_count() == changes + 1
        with psycopg.connect(pg_url, autocommit=True) as admin:
            (n,) = admin.execute("SELECT last_value FROM cut_once").fetchone() or (0,)
        assert n == 2, "premise: the first commit was cut, the second went through"
    finally:
        store.close()


def pg_board(tmp_path: Path, url: str, reconnect_s: float = 300) -> tuple[config.Config, Path]:
    """A board on the database `url` (`board init --store`), three drives at once, coders
    that edit `work/<card>.txt`, sleep $CODER_SLEEP and note their pid; and its pid file."""
    repo = make_repo(tmp_path, init="cli", store_url=url).root
    pids = tmp_path / "coder.pids"
    cfg = write_config(
        repo,
        tiers={"default": edit_tier(pids)},
        board={"max_concurrent": 3},
        coder={"timeout_s": 120, "first_output_timeout_s": 60},
        store={"url": url, "reconnect_s": reconnect_s},
    )
    return cfg, pids


def add_cards(cfg: config.Config, n: int) -> list[str]:
    """n ready cards, each with its own surface (so three run at once)."""
    store = open_store(cfg)
    try:
        ids = []
        for i in range(1, n + 1):
            draft = CardDraft(
                title=f"feature {i}", spec="build it", lane="ready", surface=[f"work/c-{i}.txt"]
            )
            ids.append(actions.add_card(store, draft).id)
        return ids
    finally:
        store.close()


def store_states(cfg: config.Config) -> list[str]:
    """What the loop log says of the store, in order."""
    return [x["state"] for x in loop_log(cfg) if x["event"] == "store"]


def coders_running(pids: Path, n: int) -> bool:
    return len(read_pids(pids)) >= n


def coders_heard(cfg: config.Config, ids: list[str]) -> bool:
    """Each card's drive has read its coder's first line (so it has recorded the coder's
    group and is streaming what it prints)."""
    for card_id in ids:
        log = cfg.board_dir / "logs" / card_id / "1.log"
        if not log.exists() or f"edited work/{card_id}.txt" not in log.read_text():
            return False
    return True


# -- board run across a restart ---------------------------------------------------------------


@pytest.mark.parametrize("outage", ["restart", "down"])
def test_the_loop_outlives_a_server_restart_and_every_card_ends_done_once(
    tmp_path: Path,
    pg_cluster: Cluster,
    pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
    outage: str,
) -> None:
    """Four cards, three coders at a time taking a few seconds each; while the first three
    run, the server is restarted (`pg_ctl restart`: away for a moment), or stopped for 5 s
    while their coders end and started again. The same `board run` (one pid, one start in
    its log) drains the board: every card done, built once, folded once, its drive row
    passed, no drive left live, nothing saved aside as a failed attempt, nothing blocked."""
    monkeypatch.setenv("CODER_SLEEP", "3" if outage == "restart" else "2")
    cfg, pids = pg_board(tmp_path, pg_url)
    ids = add_cards(cfg, 4)
    run = board_run(cfg.root, "--until-idle")
    try:
        wait_for(lambda: coders_heard(cfg, ids[:3]), what="three coders at work")
        if outage == "restart":
            pg_cluster.restart()
        else:
            pg_cluster.down()
            try:
                began = time.monotonic()
                coders = read_pids(pids)
                wait_for(  # their drives must record that once the server is back
                    lambda: not any(pid_alive(p) for p in coders),
                    timeout=4,
                    what="the three coders to end while the server is down",
                )
                time.sleep(max(0.0, 5 - (time.monotonic() - began)))
            finally:
                pg_cluster.up()
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 0, f"board run ended {run.returncode}: {err}\n{out}"
    assert err == ""
    log = loop_log(cfg)
    starts = [x for x in log if x["event"] == "start"]
    assert [x["pid"] for x in starts] == [run.pid], "one loop throughout"
    assert [x["pid"] for x in log if x["event"] == "stop"] == [run.pid]
    states = store_states(cfg)
    assert "gave up, stopping" not in states
    if outage == "down":
        assert states == ["unreachable, retrying", "back"], states
    store = open_store(cfg)
    try:
        assert {c.id: c.lane for c in store.list_cards()} == dict.fromkeys(ids, "done")
        assert store.live_drives() == []
        for card_id in ids:
            rows = store.list_drives(card_id)
            assert [r.status for r in rows] == ["passed"], (card_id, rows)
            timeline = "\n".join(e.text for e in store.timeline(card_id))
            for word in ("internal error", "transient", "stood aside", "blocked"):
                assert word not in timeline, (card_id, timeline)
            assert show(cfg, cfg.board.run_branch, f"work/{card_id}.txt") == f"work of {card_id}"
    finally:
        store.close()
    folds = [s for s in run_branch_log(cfg) if s.split(":")[0] in ids]
    assert sorted(folds) == sorted(f"{c}: feature {c[2:]}" for c in ids), "each folded once"
    assert stranded_branches(cfg) == []


def test_past_reconnect_s_the_loop_stops_in_one_line_and_the_next_run_loses_nothing(
    tmp_path: Path, pg_cluster: Cluster, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server stays away past reconnect_s (2 s here): `board run` stops, in one line on
    stderr, killing its coders and leaving their trees exactly as they are (nothing could be
    recorded). Once the server is back the next `board run` finds the cards working under
    a dead loop, saves their trees and builds them to done: the work of the first coders
    is on the run branch."""
    monkeypatch.setenv("CODER_SLEEP", "60")
    cfg, pids = pg_board(tmp_path, pg_url, reconnect_s=2)
    ids = add_cards(cfg, 2)
    run = board_run(cfg.root)
    try:
        wait_for(lambda: coders_running(pids, 2), what="two coders at work")
        began = time.monotonic()
        pg_cluster.down()
        try:
            out, err = run.communicate(timeout=60)
            took = time.monotonic() - began
            coders = read_pids(pids)
            wait_for(lambda: not any(pid_alive(p) for p in coders), what="the coders killed")
        finally:
            pg_cluster.up()
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 1, out
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(
        f"board: stopped, the store stayed unreachable: store {pg_url} is unreachable: "
    ), lines[0]
    assert "reconnect_s = 2" in lines[0] and lines[0].endswith(
        "left its tree as it is, for the next board run to save"
    )
    assert 2 <= took < 20, f"stopped after {took:.1f}s"
    assert store_states(cfg) == ["unreachable, retrying", "gave up, stopping"]
    assert loop_log(cfg)[-1]["event"] == "stop"
    ends = {x["card"]: x for x in loop_log(cfg) if x["event"] == "end"}
    for card_id in ids:
        assert ends[card_id]["outcome"] == "stopped"
        assert ends[card_id]["reason"].startswith("nothing recorded, its tree is kept at ")
    for card_id in ids:  # nothing could be recorded: the trees are as the coders left them
        (tree,) = naming.card_trees(cfg, card_id)
        assert (tree / "work" / f"{card_id}.txt").read_text() == f"work of {card_id}\n"

    store = open_store(cfg)
    try:
        assert [c.lane for c in store.list_cards()] == ["working", "working"]
    finally:
        store.close()
    monkeypatch.setenv("CODER_SLEEP", "0")
    again = board_run(cfg.root, "--until-idle", "--quiet")
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    store = open_store(cfg)
    try:
        assert [c.lane for c in store.list_cards()] == ["done", "done"]
    finally:
        store.close()
    for card_id in ids:
        # the first coder's line, saved at boot and resumed from, then the second's
        work = show(cfg, cfg.board.run_branch, f"work/{card_id}.txt")
        assert work == f"work of {card_id}\nwork of {card_id}", work
        assert naming.card_trees(cfg, card_id) == []


def test_a_stop_asked_for_while_the_server_is_away_is_prompt(
    tmp_path: Path, pg_cluster: Cluster, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM while the loop waits out the server (reconnect_s 300): the operator asked
    for a stop, so the store is waited for no more. `board run` ends within seconds, in
    one line, its coder killed and its tree left as it is for the next run."""
    monkeypatch.setenv("CODER_SLEEP", "60")
    cfg, pids = pg_board(tmp_path, pg_url, reconnect_s=300)
    (card_id,) = add_cards(cfg, 1)
    run = board_run(cfg.root)
    try:
        wait_for(lambda: coders_running(pids, 1), what="the coder at work")
        pg_cluster.down()
        try:
            wait_for(
                lambda: "unreachable, retrying" in store_states(cfg), what="the outage noticed"
            )
            run.terminate()
            began = time.monotonic()
            out, err = run.communicate(timeout=30)
            took = time.monotonic() - began
        finally:
            pg_cluster.up()
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert took < 10, f"stopped after {took:.1f}s"
    assert run.returncode == 1 and len(err.splitlines()) == 1, err
    assert err.startswith("board: stopped, the store stayed unreachable: "), err
    assert not any(pid_alive(p) for p in read_pids(pids))
    (tree,) = naming.card_trees(cfg, card_id)
    assert (tree / "work" / f"{card_id}.txt").read_text() == f"work of {card_id}\n"


def test_after_an_outage_no_host_is_judged_lost_before_it_could_beat_again(
    tmp_path: Path, pg_cluster: Cluster, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server is away longer than board.host_lease_s, so no host could beat meanwhile.
    Once it is back the loop gives every other host a lease's time to beat again before
    judging it: a peer whose heartbeat resumes a moment later keeps its card (judged at
    once, its card would go back to ready while its coder still works on it)."""
    cfg, _ = pg_board(tmp_path, pg_url)
    cfg = write_config(  # push: two hosts may run a board that does not fold locally
        cfg.root,
        board={"max_concurrent": 3, "host_lease_s": 1.5},
        publish={"mode": "push"},
        store={"url": pg_url, "reconnect_s": 60},
    )
    (card_id,) = add_cards(cfg, 1)
    peer = PostgresStore(pg_url)
    monkeypatch.setenv(hosts.ENV, "peer")
    token = drive.claim(cfg, peer, peer.get(card_id))
    monkeypatch.delenv(hosts.ENV)
    assert token is not None
    beating, done = threading.Event(), threading.Event()

    def beat() -> None:  # the peer's loop, beating while the server answers
        while not done.wait(0.2):
            if beating.is_set():
                with contextlib.suppress(BoardError):
                    peer.beat("peer", 4242, "2026-01-01T00:00:00.000Z")

    beating.set()
    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    run = board_run(cfg.root, "--host", "here")
    try:
        wait_for(lambda: any(x["event"] == "start" for x in loop_log(cfg)), what="the loop")
        time.sleep(0.5)
        beating.clear()
        pg_cluster.down()
        try:
            time.sleep(2.5)
        finally:
            pg_cluster.up()
        time.sleep(0.7)  # the peer's first beat comes a moment after the server's return
        beating.set()
        time.sleep(2.5)
        assert store_states(cfg) == ["unreachable, retrying", "back"]
        assert [x for x in loop_log(cfg) if x["event"] == "lost-host"] == []
        after = peer.get(card_id)
        assert (after.lane, after.drive) == ("working", token)
    finally:
        done.set()
        thread.join()
        run.terminate()
        run.communicate(timeout=60)
        peer.close()


# -- the TUI --------------------------------------------------------------------------------


async def test_the_tui_says_store_unreachable_retrying_and_follows_it_back(
    tmp_path: Path, pg_cluster: Cluster, pg_url: str
) -> None:
    """The server stops under an open TUI: its header says "store unreachable, retrying" on
    the warning colour, and the app keeps running and asking; once the server is back the
    header shows the loop's health again, and no status line is left saying it is away."""
    from board.tui.app import BoardApp
    from board.tui.widgets import HealthBar, StatusLine

    from tests.support.tui import run_pilot

    cfg, _ = pg_board(tmp_path, pg_url)
    add_cards(cfg, 1)
    store = open_store(cfg)
    app = BoardApp(cfg, store, poll_interval=0.5, live_interval=0.3)
    app.animation_level = "none"
    try:
        async with run_pilot(app, size=(120, 20)) as pilot:
            bar = app.screen.query_one(HealthBar)
            await wait_for(pilot, lambda: "loop not running" in bar.text, what="a first reading")
            pg_cluster.down()
            try:
                await wait_for(
                    pilot,
                    lambda: bar.text.startswith("▲ store unreachable, retrying"),
                    what="the header to say the store is unreachable",
                )
                assert bar.has_class("-down")
                await asyncio.sleep(1)  # it keeps retrying, and keeps running
                assert app.is_running and bar.text.startswith("▲ store unreachable, retrying")
            finally:
                pg_cluster.up()
            await wait_for(
                pilot, lambda: "loop not running" in bar.text, what="the header to come back"
            )
            assert "unreachable" not in bar.text
            assert app.is_running
            status = str(app.screen.query_one(StatusLine).render())
            assert "unreachable" not in status, "the status line still says the store is away"
    finally:
        store.close()

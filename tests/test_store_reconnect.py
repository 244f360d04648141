"""A PostgreSQL store that outlives its server: a write transaction whose connection is cut
mid-way is run again on a new connection, once, and refused if another writer got in.

A routine `pg_ctl restart` ends every session, so a write the store was in the middle of is
rolled back by the server. The store remembers each call of the transaction's body with its
answer and, on a new connection, makes them again (core/store/pgtx.py): the same answers
mean the body goes on; other answers mean someone wrote meanwhile, and it is refused. A
connection lost while COMMIT was on the wire asks the server (`txid_status`) first. All of
it on the suite's own throwaway cluster, the sessions ended for real.
"""

from __future__ import annotations

import psycopg
import pytest
from board.core.errors import Conflict
from board.core.model import CardDraft
from board.core.store import Expect
from board.core.store.postgres import PostgresStore


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

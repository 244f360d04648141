"""Many hosts on one board: a host is its name (`board run --host`), a drive row names its
host, and a host that stops beating for `board.host_lease_s` loses its cards to the others
without anyone touching its trees; when it boots again it saves them itself.

Two hosts share one store here (the SQLite file; the PostgreSQL store is the same
interface): the second host is this process under another BOARD_HOST, with its heartbeat
written by a store whose clock is set back, as a dead machine's would be.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from board.core import hosts
from board.core.drive import drive
from board.core.git import naming, worktrees
from board.core.loop import LEASE_LOST, Loop
from board.core.store import SQLiteStore

from tests.support.boards import make_board
from tests.support.loop import add_card, events, stranded_branches
from tests.support.repos import run_cli

OLD = "2020-01-01T00:00:00.000Z"


def test_a_lost_host_gives_its_cards_back_and_saves_its_trees_when_it_boots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg, store = make_board(tmp_path, origin=True, board={"host_lease_s": 30})
    card = add_card(store, "driven on h2", surface=["work/**"])
    # host h2 claims it, makes a tree with work in it, then dies: its heartbeat stops
    monkeypatch.setenv(hosts.ENV, "h2")
    token = drive.claim(cfg, store, card)
    assert token is not None and store.get_drive(token).host == "h2"
    tree = Path(worktrees.create_worktree(cfg, card.id, store=store))
    (tree / "work").mkdir()
    (tree / "work" / "half.txt").write_text("an hour of h2's work\n")
    SQLiteStore(cfg.db_path, clock=lambda: OLD).beat("h2", 4242, OLD)
    # host h1 sweeps
    monkeypatch.setenv(hosts.ENV, "h1")
    loop = Loop(cfg, store)
    assert loop.lost_hosts() == {"h2": OLD}
    loop.sweep()
    after = store.get(card.id)
    assert after.lane == "ready" and after.drive == ""
    assert any("host h2 stopped beating" in e for e in events(store, card.id))
    assert store.get_drive(token).result.startswith(LEASE_LOST)
    assert (tree / "work" / "half.txt").exists(), "a host removed a tree it does not own"
    # h2 boots again: the tree of the card it lost is saved, then removed
    monkeypatch.setenv(hosts.ENV, "h2")
    Loop(cfg, store).boot()
    assert not naming.card_trees(cfg, card.id), "h2 kept a tree of a card it lost"
    saved = [b for b in stranded_branches(cfg) if card.id in b]
    assert saved, "h2's work was not saved"
    assert "an hour of h2's work" in run_git_show(cfg, saved[0], "work/half.txt")
    store.close()


def run_git_show(cfg, ref: str, path: str) -> str:
    from tests.support.repos import git

    return git(cfg.root, "show", f"{ref}:{path}")


def test_a_host_with_a_fresh_heartbeat_is_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "driven on h2", surface=["work/**"])
    monkeypatch.setenv(hosts.ENV, "h2")
    token = drive.claim(cfg, store, card)
    store.beat("h2", 4242, OLD)  # started long ago, beating now
    monkeypatch.setenv(hosts.ENV, "h1")
    loop = Loop(cfg, store)
    assert loop.lost_hosts() == {}
    loop.sweep()
    assert store.get(card.id).lane == "working" and store.get(card.id).drive == token
    status = json.loads(run_cli(cfg.root, "status", "--json").stdout)
    assert [(h["host"], h["lost"], h["drives"]) for h in status["hosts"]] == [("h2", False, 1)]
    store.close()


def test_board_run_refuses_a_bad_host_name(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    res = run_cli(cfg.root, "run", "--once", "--host", "bad name;")
    assert res.returncode != 0 and "host name 'bad name;'" in res.stderr
    assert store.loops() == []
    store.close()


def _second_host(tmp_path: Path, cfg) -> tuple:
    """Another machine's clone of the same origin, its own board on the same settings."""
    from board.core import config as config_mod

    from tests.support.repos import git

    other = tmp_path / "host2"
    git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), str(other))
    (other / "board.toml").write_text((cfg.root / "board.toml").read_text())
    res = run_cli(other, "init")
    assert res.returncode == 0, res.stderr
    cfg2 = config_mod.load(other)
    return cfg2, SQLiteStore(cfg2.db_path)


def test_two_hosts_folding_at_once_onto_the_remote_run_branch_both_land(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """h1 has rebased onto the remote tip and is about to push when h2 folds: the lease
    refuses h1's push, h1 fetches, rebases and pushes again. Nothing is overwritten."""
    from board.core.git import runbranch

    from tests.support.loop import drive_one
    from tests.support.repos import git

    cfg, store = make_board(tmp_path, origin=True, publish={"run_on_remote": True})
    cfg2, store2 = _second_host(tmp_path, cfg)
    one = add_card(store, "on h1", surface=["work/**"])
    two = add_card(store2, "on h2", surface=["work/**"])
    real_push = runbranch.push_run
    raced = []

    def h2_folds_first(cfg_: Any, new: str, expected: str | None) -> bool:
        if cfg_ is cfg and not raced:
            raced.append(True)
            assert drive_one(cfg2, store2, two).outcome == "done"  # h2, in between
        return real_push(cfg_, new, expected)

    monkeypatch.setattr(runbranch, "push_run", h2_folds_first)
    assert drive_one(cfg, store, one).outcome == "done"
    assert raced, "the race was not staged"
    origin = tmp_path / "origin.git"
    subjects = git(origin, "log", "--format=%s", cfg.board.run_branch).splitlines()
    assert any(s.startswith(f"{one.id}: on h1") for s in subjects), subjects
    assert any(s.startswith(f"{two.id}: on h2") for s in subjects), (
        f"h2's fold was overwritten: {subjects}"
    )
    assert git(cfg.root, "rev-parse", cfg.board.run_branch) == git(
        origin, "rev-parse", cfg.board.run_branch
    )
    store.close()
    store2.close()


def test_work_saved_on_one_host_is_listed_and_picked_on_another(tmp_path: Path) -> None:
    """h2 saves a tree; its loop pushes the stranded branch and says so on the card; h1's
    loop fetches it, lists it, picks it onto the remote run branch, and a discard removes
    the remote copy too (so no fetch brings it back)."""
    from tests.support.repos import git

    cfg, store = make_board(tmp_path, origin=True, publish={"run_on_remote": True, "poll_s": 0.05})
    cfg2, store2 = _second_host(tmp_path, cfg)
    card = add_card(store2, "half done on h2", surface=["work/**"])
    tree = Path(worktrees.create_worktree(cfg2, card.id, store=store2))
    (tree / "work").mkdir()
    (tree / "work" / "half.txt").write_text("h2's work\n")
    saved = worktrees.discard_worktree(cfg2, tree, store=store2, card_id=card.id, why="test")
    assert saved.saved is not None
    branch = saved.saved.branch
    Loop(cfg2, store2).sweep()
    origin = tmp_path / "origin.git"
    assert git(origin, "rev-parse", branch), "h2's save is not on the remote"
    assert any(f"saved work {branch} is on origin too" in e for e in events(store2, card.id))
    Loop(cfg, store).sweep()
    listed = json.loads(run_cli(cfg.root, "stranded", "list", "--json").stdout)
    assert branch in json.dumps(listed), f"h1 does not list h2's save: {listed}"
    res = run_cli(cfg.root, "stranded", "pick", branch)
    assert res.returncode == 0, res.stderr
    assert "h2's work" in git(origin, "show", f"{cfg.board.run_branch}:work/half.txt")
    res = run_cli(cfg.root, "stranded", "discard", branch, "--yes")
    assert res.returncode == 0, res.stderr
    assert branch not in git(origin, "for-each-ref", "--format=%(refname)"), "remote copy kept"
    Loop(cfg, store).sweep()
    assert branch not in git(cfg.root, "for-each-ref", "--format=%(refname)"), "fetched back"
    store.close()
    store2.close()

"""One board, one truth, across hosts (issue 39, item 7).

A discard on one host did not stick: another host's next sweep pushed its fetched copy
back, so the branch was back on the remote and on every host. The store now keeps a
tombstone (branch and commit) that every host's sweep obeys.

Real parts: a bare origin, two clones as two hosts (the loop's sweep in-process under
BOARD_HOST, as tests/test_hosts.py does), one throwaway PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from board.core import config, hosts
from board.core.git import worktrees
from board.core.loop import Loop
from board.core.store import Store, open_store

from tests.support.loop import add_card
from tests.support.repos import git, make_repo, run_cli


def ok(res: Any) -> str:
    assert res.returncode == 0, res.stderr
    return str(res.stdout)


def _settings(store_url: str, publish: dict[str, Any], board: dict[str, Any]) -> dict[str, Any]:
    return {
        "board": {"loop_interval_s": 0.05, **board},
        "publish": {"poll_s": 0.05, **publish},
        "store": {"url": store_url},
    }


def two_hosts(
    tmp_path: Path,
    pg_url: str,
    publish: dict[str, Any] | None = None,
    second_board: dict[str, Any] | None = None,
) -> tuple[Path, Path]:
    """Two clones of one origin on one PostgreSQL board, `board init` done in each; the
    second's board.toml may differ in `second_board`."""
    first = make_repo(tmp_path, init="cli", store_url=pg_url).root
    config.write_default(first, _settings(pg_url, publish or {}, {}))
    second = tmp_path / "host2"
    git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), str(second))
    config.write_default(second, _settings(pg_url, publish or {}, second_board or {}))
    ok(run_cli(second, "init"))
    return first, second


def _refs(where: Path, branch: str) -> str:
    """Where `branch` is in a clone or the origin: its commit, or ''."""
    found = git(where, "for-each-ref", "--format=%(objectname)", f"refs/heads/{branch}")
    return found.strip()


def _sweep(monkeypatch: pytest.MonkeyPatch, host: str, clone: Path, store: Store) -> None:
    monkeypatch.setenv(hosts.ENV, host)
    Loop(config.load(clone), store).sweep()


def _shared_save(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path, Store, Store, str, str]:
    """Two hosts with the run branch on the remote; h2 saved a tree, its sweep pushed the
    save and h1's fetched it: the save is on the remote and both hosts. Returns the clones,
    their stores, the save's branch and its commit."""
    first, second = two_hosts(tmp_path, pg_url, publish={"run_on_remote": True})
    cfg2 = config.load(second)
    s1, s2 = open_store(config.load(first)), open_store(cfg2)
    card = add_card(s2, "half done on h2", surface=["work/**"])
    tree = Path(worktrees.create_worktree(cfg2, card.id, store=s2))
    (tree / "work").mkdir()
    (tree / "work" / "half.txt").write_text("h2's work\n")
    saved = worktrees.discard_worktree(cfg2, tree, store=s2, card_id=card.id, why="test")
    assert saved.saved is not None
    branch = saved.saved.branch
    commit = _refs(second, branch)
    _sweep(monkeypatch, "h2", second, s2)  # pushed
    _sweep(monkeypatch, "h1", first, s1)  # fetched
    assert _refs(tmp_path / "origin.git", branch) == _refs(first, branch) == commit
    return first, second, s1, s2, branch, commit


def test_a_discard_on_one_host_stays_gone_on_the_remote_and_every_host(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second, s1, s2, branch, commit = _shared_save(tmp_path, pg_url, monkeypatch)
    origin = tmp_path / "origin.git"
    try:
        ok(run_cli(first, "stranded", "discard", branch, "--yes"))
        for _ in range(2):  # h2 still holds its copy; each host sweeps twice
            _sweep(monkeypatch, "h2", second, s2)
            _sweep(monkeypatch, "h1", first, s1)
        assert not _refs(origin, branch), "another host's sweep pushed the discarded save back"
        assert not _refs(first, branch), "the discarded save was fetched back"
        assert not _refs(second, branch), "h2 kept its copy of a save discarded on h1"
        assert s2.tombstones() == {(branch, commit)}
        # a host that had not heard pushes it back: the next sweep deletes it from the remote
        git(second, "push", "-q", "origin", f"{commit}:refs/heads/{branch}")
        _sweep(monkeypatch, "h1", first, s1)
        assert not _refs(origin, branch) and not _refs(first, branch)
        # a new save at the same name with another commit is not buried
        other = git(second, "rev-parse", "main").strip()
        git(second, "update-ref", f"refs/heads/{branch}", other)
        _sweep(monkeypatch, "h2", second, s2)
        _sweep(monkeypatch, "h1", first, s1)
        assert _refs(origin, branch) == _refs(first, branch) == other
    finally:
        s1.close()
        s2.close()


def test_a_discard_between_another_hosts_fetch_and_its_push_is_not_pushed_back(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """h1 discards while h2's sweep is between its fetch and its push: h2 reads the
    tombstones after its fetch, so the fetch that no longer sees the save sees its
    tombstone, and not one push brings it back."""
    from board.core.git import shared

    first, second, s1, s2, branch, _ = _shared_save(tmp_path, pg_url, monkeypatch)
    real_fetch = shared.fetch_stranded

    def discard_on_h1_first(cfg: config.Config) -> bool:
        if cfg.root == second:
            ok(run_cli(first, "stranded", "discard", branch, "--yes"))
        return real_fetch(cfg)

    try:
        monkeypatch.setattr(shared, "fetch_stranded", discard_on_h1_first)
        _sweep(monkeypatch, "h2", second, s2)
        assert not _refs(tmp_path / "origin.git", branch), "h2 pushed the discarded save back"
        assert not _refs(second, branch), "h2 kept its copy of a save discarded on h1"
    finally:
        s1.close()
        s2.close()

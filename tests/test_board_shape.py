"""One board, one truth, across hosts (issue 39, items 6 and 7).

Two hosts on one PostgreSQL board without `publish.run_on_remote` each folded onto their own
local run branch and nothing said so; hosts whose board.toml files disagreed published each
their own way. The store now records the board's publishing shape at its first `board run`,
and a host that disagrees, or a second host on a board with a local run branch, refuses in one
line. A discard on one host did not stick: another host's next sweep pushed its fetched copy
back. The store now keeps a tombstone (branch and commit) that every host's sweep obeys.

Real parts: a bare origin, two clones as two hosts (`board run --host NAME`, or the loop's
sweep in-process under BOARD_HOST, as tests/test_hosts.py does), one throwaway PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from board.core import config, hosts
from board.core.errors import Refused
from board.core.git import worktrees
from board.core.loop import Loop
from board.core.store import Store, open_store

from tests.support.loop import add_card
from tests.support.repos import git, make_repo, run_cli

RUN = ("run", "--once", "--quiet")


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


def starts(clone: Path) -> int:
    """How many loops started in this clone (its loop.log's start lines)."""
    log = clone / ".board" / "loop.log"
    return log.read_text().count('"event": "start"') if log.exists() else 0


def test_a_second_host_without_run_on_remote_refuses_naming_the_setting(
    tmp_path: Path, pg_url: str
) -> None:
    first, second = two_hosts(tmp_path, pg_url)
    ok(run_cli(first, *RUN, "--host", "h1"))
    res = run_cli(second, *RUN, "--host", "h2")
    assert res.returncode == 1, "a second host ran a board whose run branch is h1's, local"
    assert res.stderr == (
        "board: host h1 runs this board folding onto its own local board/run ([publish] "
        "run_on_remote = false), so host h2 would fold onto another and split the board's "
        "work; set [publish] run_on_remote = true in board.toml on every host (after pushing "
        "h1's board/run to origin), then run `board run --reshape` once\n"
    )
    store = open_store(config.load(first))
    try:
        shape = store.shape()
        assert shape is not None and (shape.host, shape.run_on_remote) == ("h1", False)
        assert starts(second) == 0 and "h2" not in {b.host for b in store.loops()}
        ok(run_cli(first, *RUN, "--host", "h1"))  # the board's own host runs on as before
        # the way out the line names: run_on_remote on every host, one reshape
        for clone in (first, second):
            text = (clone / "board.toml").read_text()
            (clone / "board.toml").write_text(
                text.replace("run_on_remote = false", "run_on_remote = true")
            )
        assert "run_on_remote = true here, false on the board" in (
            run_cli(second, *RUN, "--host", "h2").stderr
        )
        ok(run_cli(second, *RUN, "--host", "h2", "--reshape"))
        ok(run_cli(first, *RUN, "--host", "h1"))
        shape = store.shape()
        assert shape is not None and (shape.host, shape.run_on_remote) == ("h2", True)
    finally:
        store.close()


def test_a_host_is_refused_while_another_runs_a_board_with_no_shape_yet(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A board made before shapes were recorded, with h1's loop beating right now: h2's
    first run would record a local run branch of its own; it refuses instead."""
    first, second = two_hosts(tmp_path, pg_url)
    store = open_store(config.load(second))
    try:
        store.beat("h1", 4242, "2020-01-01T00:00:00.000Z")  # beating now
        monkeypatch.setenv(hosts.ENV, "h2")
        with pytest.raises(Refused) as exc:
            Loop(config.load(second), store).run(once=True)
        assert "host h1 is running this board folding onto its own local board/run" in str(
            exc.value
        )
        assert store.shape() is None, "a refused run (or board init) recorded a shape"
    finally:
        store.close()


def test_a_host_whose_board_toml_disagrees_refuses_naming_the_difference(
    tmp_path: Path, pg_url: str
) -> None:
    first, second = two_hosts(
        tmp_path, pg_url, publish={"run_on_remote": True}, second_board={"run_branch": "b/other"}
    )
    ok(run_cli(first, *RUN, "--host", "h1"))
    res = run_cli(second, *RUN, "--host", "h2")
    assert res.returncode == 1, "a host folded onto a run branch of its own"
    line = res.stderr
    assert line.count("\n") == 1 and line.startswith(
        "board: board.toml disagrees with the board's recorded shape (by host h1 at "
    ), line
    assert (
        '[board] run_branch = "b/other" here, "board/run" on the board; edit '
        f"{second / 'board.toml'} to match, or run `board run --reshape` to make this "
        "board.toml's shape the board's\n"
    ) in line
    assert starts(second) == 0


def test_one_host_records_its_shape_at_its_first_run_and_a_changed_board_toml_is_refused(
    tmp_path: Path,
) -> None:
    """A single host on the SQLite file: its first run records the shape (`board init` does
    not: board.toml is still being edited then); the file is one clone's, so a new host name
    is the same host; a board.toml edited since refuses until `--reshape` makes it the
    board's."""
    repo = make_repo(tmp_path, init="cli").root
    ok(run_cli(repo, *RUN))
    ok(run_cli(repo, *RUN, "--host", "renamed"))
    text = (repo / "board.toml").read_text()
    (repo / "board.toml").write_text(text.replace('mode = "fold"', 'mode = "push"'))
    res = run_cli(repo, *RUN)
    assert res.returncode == 1, "a board.toml changed since the board's first run was run"
    assert res.stderr.count("\n") == 1 and (
        '[publish] mode = "push" here, "fold" on the board' in res.stderr
    ), res.stderr
    assert starts(repo) == 2, "a refused run started a loop"
    store = open_store(config.load(repo))
    try:
        shape = store.shape()
        assert shape is not None
        assert (shape.mode, shape.base, shape.run_branch, shape.run_on_remote) == (
            "fold", "main", "board/run", False,
        )  # fmt: skip
        ok(run_cli(repo, *RUN, "--reshape"))
        after = store.shape()
        assert after is not None and after.mode == "push"
        ok(run_cli(repo, *RUN))
    finally:
        store.close()


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

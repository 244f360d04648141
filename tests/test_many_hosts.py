"""Three hosts, one board: three clones, three `board run --host hN` processes, one
throwaway PostgreSQL (tests/support/pg_cluster.py), one bare remote. Every card ends done, the
remote run branch holds every card's marker in one serial line, and no card is driven by
two hosts at once. Then one host is killed with SIGKILL mid-drive: the others take its
cards after the lease; when it comes back, it saves its old trees and they reach the
remote. No marker is lost.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from board.core import config
from board.core.store import open_store

from tests.support.repos import GIT_ENV, git, make_repo, run_cli
from tests.support.waiting import wait_for

CODER = """\
import os, sys, time
wt, card, slow = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(os.path.join(wt, "work"), exist_ok=True)
with open(os.path.join(wt, "work", card + ".txt"), "w") as fh:
    fh.write("marker " + card + "\\n")
time.sleep(30 if os.path.exists(slow) else 0.2)
print("wrote the marker of", card)
"""


def _host(repo: Path, name: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "board.cli", "run", "--quiet", "--host", name],
        cwd=repo,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **GIT_ENV},
        start_new_session=True,
    )


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def _markers(origin: Path, run: str) -> set[str]:
    names = git(origin, "ls-tree", "--name-only", f"{run}:work").splitlines()
    return {n.removesuffix(".txt") for n in names if n.endswith(".txt")}


def test_three_hosts_drain_one_board_and_a_killed_host_loses_nothing(
    tmp_path: Path, pg_url: str
) -> None:
    first = make_repo(tmp_path, init="").root
    assert run_cli(first, "init", "--store", pg_url).returncode == 0
    coder = tmp_path / "coder.py"
    coder.write_text(CODER)
    slow = tmp_path / "slow"
    text = (first / "board.toml").read_text()
    text = text.replace("run_on_remote = false", "run_on_remote = true")
    text = text.replace("loop_interval_s = 5", "loop_interval_s = 0.2")
    text = text.replace("host_lease_s = 60", "host_lease_s = 4")
    text = text.replace("poll_s = 60", "poll_s = 0.5")
    argv = f'argv = ["{sys.executable}", "{coder}", "{{worktree}}", "{{card}}", "{slow}"]'
    text = text.replace('argv = [\n    "my-agent",\n    "--brief",\n    "{brief}",\n]', argv, 1)
    (first / "board.toml").write_text(text)
    cfg = config.load(first)
    assert cfg.publish.run_on_remote and cfg.coder.tiers["default"].argv[1] == str(coder)
    clones = [first]
    for name in ("h2", "h3"):
        other = tmp_path / name
        git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), str(other))
        (other / "board.toml").write_text(text)
        assert run_cli(other, "init").returncode == 0
        clones.append(other)
    store = open_store(cfg)
    for n in range(1, 31):
        res = run_cli(first, "card", "add", f"card {n}", "--spec", "write the marker",
                      "--surface", f"work/c-{n}.txt", "--ready")  # fmt: skip
        assert res.returncode == 0, res.stderr
    hosts = {f"h{i + 1}": _host(repo, f"h{i + 1}") for i, repo in enumerate(clones)}
    try:
        wait_for(lambda: all(c.lane == "done" for c in store.list_cards()), 300, "30 cards done")
        origin = tmp_path / "origin.git"
        assert _markers(origin, cfg.board.run_branch) == {f"c-{n}" for n in range(1, 31)}
        line = git(origin, "rev-list", "--first-parent", "--count", cfg.board.run_branch)
        total = git(origin, "rev-list", "--count", cfg.board.run_branch)
        assert line == total, "the run branch is not one serial line"
        drives = [d for d in store.list_drives(limit=1000) if d.status == "passed"]
        by_host = {d.host for d in drives}
        assert len(by_host) >= 2, f"the work was not shared between hosts: {by_host}"
        for card in store.list_cards():
            rows = sorted(
                (d for d in store.list_drives(card.id) if not d.result.startswith("claim lost")),
                key=lambda d: d.started_at,
            )
            for a, b in zip(rows, rows[1:], strict=False):
                assert a.ended_at and a.ended_at <= b.started_at, (
                    f"{card.id} was driven twice at once: {a} {b}"
                )
        # kill h3 mid-drive
        slow.write_text("slow")
        for n in range(31, 37):
            run_cli(first, "card", "add", f"card {n}", "--spec", "write the marker",
                    "--surface", f"work/c-{n}.txt", "--ready")  # fmt: skip
        trees = clones[2] / ".worktrees"

        def h3_wrote() -> bool:
            """h3 has a live drive whose coder has written its marker (work to save)."""
            live = {d.card for d in store.live_drives() if d.host == "h3"}
            return any((trees / f"feat-{c}" / "work" / f"{c}.txt").exists() for c in live)

        wait_for(h3_wrote, 60, "h3 mid-drive with a marker written")
        lost = {d.card for d in store.live_drives() if d.host == "h3"}
        os.killpg(hosts["h3"].pid, signal.SIGKILL)
        hosts["h3"].wait(10)
        # the trees h3 left holding work; a tree killed before its coder wrote has nothing to
        # save and is only removed
        named = {p.name.removeprefix("feat-"): p for p in trees.glob("feat-*")}
        left = {c for c, p in named.items() if (p / "work" / f"{c}.txt").exists()}
        assert left, "h3 was killed with no work in its trees"
        slow.unlink()
        wait_for(
            lambda: all(store.get(c).lane != "working" or store.get(c).drive not in {
                d.id for d in store.live_drives() if d.host == "h3"} for c in lost),
            30, "h3's cards given back after the lease",
        )  # fmt: skip
        wait_for(lambda: all(c.lane == "done" for c in store.list_cards()), 240, "36 cards done")
        assert _markers(origin, cfg.board.run_branch) == {f"c-{n}" for n in range(1, 37)}
        # h3 comes back: its old trees are saved and reach the remote
        hosts["h3"] = _host(clones[2], "h3")

        def saved_on_remote() -> bool:
            refs = git(origin, "for-each-ref", "--format=%(refname)", "refs/heads/stranded/")
            return all(any(f"feat-{c}" in r for r in refs.splitlines()) for c in left)

        wait_for(saved_on_remote, 60, "h3's saved trees on the remote")
        assert not list((clones[2] / ".worktrees").glob("feat-*")), "h3 kept its old trees"
    finally:
        for proc in hosts.values():
            _stop(proc)
        store.close()

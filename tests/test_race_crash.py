"""Best of N (issue 42) when things go wrong around a running race: `kill -9` of `board run`
while three candidates run, then the restart's boot. Real git (a bare origin and a clone),
the real coder script (tests/scripts/coder_candidate.sh: writes its work, then sleeps), the
real SQLite store, and `board run` as its own process."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from board.core import proc
from board.core.loop import Loop

from tests.support.boards import make_board
from tests.support.loop import add_card, board_run, events, stranded_branches
from tests.support.paths import script
from tests.support.procs import group_members
from tests.support.repos import git, run_cli
from tests.support.waiting import wait_for

N = 3


def _race_board(tmp_path: Path, log: Path, **opts: object):
    """A board racing three candidates that each write their lines, then sleep ten minutes
    (silent: no time limit but the test's may stop them)."""
    tier = [script("coder_candidate.sh"), "{worktree}", "{card}", "1~600,2~600,3~600"]
    return make_board(
        tmp_path,
        origin=True,
        tiers={"default": [*tier, str(log), "{brief}"]},
        gate=[script("gate_candidate.sh"), "{worktree}"],
        coder={"best_of": N, "timeout_s": 900, "first_output_timeout_s": 0},
        board={"max_concurrent": N},
        gate_opts={"retries": 0},
        **opts,  # type: ignore[arg-type]
    )


def _wrote(log: Path) -> list[int]:
    """The candidates whose files are written, as the coder logged them."""
    if not log.exists():
        return []
    return sorted(int(x.split()[1]) for x in log.read_text().splitlines() if x.startswith("wrote"))


def _groups(log: Path) -> dict[int, int]:
    """Each candidate's process group, as its coder logged it (the coder leads its group)."""
    pids = Path(f"{log}.pids")
    if not pids.exists():
        return {}
    return {int(k): int(g) for k, g in (line.split() for line in pids.read_text().splitlines())}


def _alive(groups: dict[int, int]) -> dict[int, list[int]]:
    """The candidates whose process group still has a member, with its members."""
    return {k: members for k, g in groups.items() if (members := group_members(g))}


def _markers(card_id: str, k: int) -> set[str]:
    """The lines candidate k wrote into its tree's work/<card>.txt (k lines)."""
    return {f"candidate {k} line {i}" for i in range(1, k + 1)}


def _in_refs(root: Path, card_id: str) -> set[str]:
    """Every line of work/<card>.txt in any commit reachable from any ref."""
    commits = git(root, "rev-list", "--all").split()
    found: set[str] = set()
    for sha in commits:
        text = git(root, "show", f"{sha}:work/{card_id}.txt", check=False)
        found.update(text.splitlines())
    return found


def test_kill_9_of_board_run_while_three_candidates_run_loses_no_marker(tmp_path: Path) -> None:
    """`board run` is killed (SIGKILL) once all three candidates have written their work
    and sleep: the candidates outlive it (each in its own session). The restart's boot
    kills every candidate's group, saves every candidate's tree, and puts the card back in
    ready: every line any candidate wrote is in some ref."""
    log = tmp_path / "coders.log"
    cfg, store = _race_board(tmp_path, log)
    card = add_card(store, "raced, then crashed", surface=["work/**"])

    run = board_run(cfg.root)
    groups: dict[int, int] = {}
    try:
        wait_for(lambda: _wrote(log) == [1, 2, 3], 60, "all three candidates' work")
        groups = _groups(log)
        run.send_signal(signal.SIGKILL)
        run.communicate(timeout=30)
        assert sorted(groups) == [1, 2, 3], groups
        assert all(group_members(g) for g in groups.values()), (
            "premise: the candidates outlive a killed loop (each in its own session)"
        )
        assert store.get(card.id).lane == "working", "premise: the card was mid-race"
        live = [r for r in store.list_drives(card.id, limit=10) if r.live]
        assert len(live) == N + 1, f"premise: the race's row and three candidates' {live}"

        recovered = Loop(cfg, store).boot()
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        left = {k: g for k, g in groups.items() if group_members(g)}
        for g in left.values():
            proc.kill_group(g)

    assert recovered == [card.id]
    assert left == {}, f"candidates' process groups still run after boot: {left}"
    after = store.get(card.id)
    assert after.lane == "ready" and after.drive == "" and after.blocked is None, after
    kept = _in_refs(cfg.root, card.id)
    lost = {k: sorted(_markers(card.id, k) - kept) for k in range(1, N + 1)}
    assert not any(lost.values()), f"lines the candidates wrote are in no ref: {lost}"
    saved = stranded_branches(cfg)
    assert len(saved) == N, f"not every candidate's tree was saved once: {saved}"
    assert not [p for p in cfg.worktrees_dir.iterdir() if not p.name.startswith(".")], (
        "a candidate's tree was left behind"
    )
    rows = store.list_drives(card.id, limit=10)
    assert {r.status for r in rows} == {"crashed"}, rows
    assert all(r.pgid == 0 for r in rows), rows
    assert any("recovered at boot" in e for e in events(store, card.id))
    store.close()


# where each verb leaves the card: (lane, block class or None)
VERBS = {
    "stop": ("ready", "held"),
    "cancel": ("cancelled", None),
    "hold": ("ready", "held"),
    "requeue": ("ready", None),
}


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_verb_on_a_racing_card_stops_and_saves_every_candidate(tmp_path: Path, verb: str) -> None:
    """`board VERB ID` while three candidates run (each has written its lines and sleeps):
    every candidate's process group ends, every candidate's work is in a ref, no tree is
    left, and the card is where the verb says. `board run --once` then ends by itself: the
    race did not wait for its sleeping candidates."""
    log = tmp_path / "coders.log"
    cfg, store = _race_board(tmp_path, log)
    card = add_card(store, f"raced, then {verb}", surface=["work/**"])

    run = board_run(cfg.root, "--once")
    groups: dict[int, int] = {}
    try:
        wait_for(lambda: _wrote(log) == [1, 2, 3], 60, "all three candidates' work")
        groups = _groups(log)
        assert sorted(groups) == [1, 2, 3] and all(group_members(g) for g in groups.values())
        said = run_cli(cfg.root, verb, card.id, "--reason", f"the test's {verb}")
        assert said.returncode == 0, said.stderr
        wait_for(lambda: not _alive(groups), 20, f"the candidates to end after `board {verb}`")
        out, err = run.communicate(timeout=60)
        assert run.returncode == 0, err
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        left = {k: g for k, g in groups.items() if group_members(g)}
        for g in left.values():
            proc.kill_group(g)

    assert left == {}, f"candidates still ran after `board {verb}`: {left}"
    after = store.get(card.id)
    lane, cls = VERBS[verb]
    assert after.lane == lane and after.drive == "", after
    assert (after.blocked.cls if after.blocked else None) == cls, after.blocked
    kept = _in_refs(cfg.root, card.id)
    lost = {k: sorted(_markers(card.id, k) - kept) for k in range(1, N + 1)}
    assert not any(lost.values()), f"lines the candidates wrote are in no ref: {lost}"
    saved = stranded_branches(cfg)
    assert len(saved) == N, f"not every candidate's tree was saved once: {saved}"
    assert not [p for p in cfg.worktrees_dir.iterdir() if not p.name.startswith(".")], (
        "a candidate's tree was left behind"
    )
    rows = store.list_drives(card.id, limit=10)
    assert not [r for r in rows if r.live or r.pgid], rows
    store.close()

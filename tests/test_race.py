"""Best of N (issue 42): several candidates of one card at once, the gate as the judge, every
other candidate kept. Real git (a bare origin and a clone), real coder and gate scripts
(tests/scripts/coder_candidate.sh, gate_candidate.sh), the real SQLite store, and the loop
run in-process as `board run --until-idle` runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from board.core import config, proc
from board.core.drive.race import RULE_FIRST_GREEN
from board.core.errors import ConfigError
from board.core.git import naming
from board.core.loop import Loop

from tests.support.boards import make_board
from tests.support.loop import add_card, comments, run_branch_log, show
from tests.support.paths import script
from tests.support.repos import GIT_ENV, git


def _tier(sizes: str, log: Path) -> list[str]:
    return [script("coder_candidate.sh"), "{worktree}", "{card}", sizes, str(log), "{brief}"]


def _board(tmp_path: Path, tiers: dict[str, list[str]], best_of: int, max_concurrent: int):
    return make_board(
        tmp_path,
        origin=True,
        tiers=tiers,
        gate=[script("gate_candidate.sh"), "{worktree}"],
        coder={"best_of": best_of},
        board={"max_concurrent": max_concurrent},
        gate_opts={"retries": 0},
    )


def _stranded_json(cfg: config.Config) -> list[dict]:
    """`board stranded list --json`, as an operator runs it."""
    res = subprocess.run(
        [sys.executable, "-m", "board.cli", "stranded", "list", "--json"],
        cwd=cfg.root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **GIT_ENV},
        timeout=60,
        check=True,
    )
    return json.loads(res.stdout)


def _spans(log: Path) -> dict[int, tuple[float, float]]:
    """Each candidate's (start, end) times, as the coder logged them."""
    seen: dict[int, list[float]] = {}
    for line in log.read_text().splitlines():
        what, k, at = line.split()
        seen.setdefault(int(k), []).append(float(at))
    return {k: (v[0], v[-1]) for k, v in seen.items()}


def test_the_smallest_green_candidate_folds_and_the_other_two_are_kept_as_candidates(
    tmp_path: Path,
) -> None:
    """Three candidates write 3, 1 (red) and 2 lines: candidate 3 (the smallest green, and
    the last to finish) folds; candidates 1 and 2 are on `candidate` saves holding exactly
    what each wrote."""
    log = tmp_path / "coders.log"
    tier = _tier("3,1r,2@1", log)
    cfg, store = _board(tmp_path, {"default": tier}, best_of=3, max_concurrent=3)
    card = add_card(store, "a raced feature", surface=["work/**"])
    loop = Loop(cfg, store)
    assert loop.run(until_idle=True) == 0

    assert store.get(card.id).lane == "done", [e.text for e in store.timeline(card.id)]
    folded = show(cfg, cfg.board.run_branch, f"work/{card.id}.txt")
    assert folded == "candidate 3 line 1\ncandidate 3 line 2", (
        f"the run branch holds {folded!r}, not the smallest green candidate's work"
    )
    assert show(cfg, cfg.board.run_branch, "work/RED") is None
    assert run_branch_log(cfg)[-1].startswith(f"{card.id}: a raced feature")

    saves = [s for s in _stranded_json(cfg) if s["card"] == card.id]
    kinds = sorted((s["tree"], s["kind"]) for s in saves)
    assert kinds == [
        (f"feat-{card.id}-1", naming.KIND_CANDIDATE),
        (f"feat-{card.id}-2", naming.KIND_CANDIDATE),
    ], f"the other candidates were not saved as candidates: {saves}"
    by_tree = {s["tree"]: s["branch"] for s in saves}
    one = show(cfg, by_tree[f"feat-{card.id}-1"], f"work/{card.id}.txt")
    assert one == "candidate 1 line 1\ncandidate 1 line 2\ncandidate 1 line 3"
    two = by_tree[f"feat-{card.id}-2"]
    assert show(cfg, two, f"work/{card.id}.txt") == "candidate 2 line 1"
    assert show(cfg, two, "work/RED") == "red", "the red candidate's work was not kept whole"

    spans = _spans(log)
    assert sorted(spans) == [1, 2, 3]
    assert not [p for p in cfg.worktrees_dir.iterdir() if not p.name.startswith(".")], (
        "a candidate's tree was left behind"
    )
    said = "\n".join(comments(store, card.id))
    assert "candidate 3 chosen" in said
    # every candidate was its own drive: a row each, besides the race's own
    rows = store.list_drives(card.id, limit=10)
    assert sorted(r.status for r in rows) == ["failed", "passed", "passed", "passed"], rows
    assert git(cfg.root, "branch", "--list", f"feat/{card.id}*").strip() == "", (
        "candidate branches were left behind after the fold"
    )
    store.close()


def test_candidates_count_against_max_concurrent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """best_of = 3 under max_concurrent = 2: never more than two coders at once, and the
    third candidate starts once one of the first two ends."""
    log = tmp_path / "coders.log"
    cfg, store = _board(tmp_path, {"default": _tier("1,2,3", log)}, best_of=3, max_concurrent=2)
    card = add_card(store, "raced under a limit", surface=["work/**"])
    monkeypatch.setenv("CODER_SLEEP", "0.6")  # slow enough that the candidates overlap
    assert Loop(cfg, store).run(until_idle=True) == 0
    assert store.get(card.id).lane == "done"
    spans = _spans(log)
    assert sorted(spans) == [1, 2, 3]
    times = sorted([(s, 1) for s, _ in spans.values()] + [(e, -1) for _, e in spans.values()])
    now = peak = 0
    for _, step in times:
        now += step
        peak = max(peak, now)
    assert peak == 2, f"{peak} candidates ran at once under max_concurrent = 2: {spans}"
    assert show(cfg, cfg.board.run_branch, f"work/{card.id}.txt") == "candidate 1 line 1"
    store.close()


def test_no_green_candidate_climbs_then_blocks_and_every_candidate_is_saved(
    tmp_path: Path,
) -> None:
    """Both rungs' two candidates are red: the card climbs once, then blocks gate-red at the
    top; all four candidates' work is on `attempt` saves, and the second rung's brief named
    the first rung's branches."""
    log = tmp_path / "coders.log"
    tiers = {"quick": _tier("1r,2r", log), "careful": _tier("3r,4r", log)}
    cfg, store = _board(tmp_path, tiers, best_of=2, max_concurrent=2)
    card = add_card(store, "nobody gets it right", surface=["work/**"])
    assert Loop(cfg, store).run(until_idle=True) == 0

    now = store.get(card.id)
    assert now.lane == "ready" and now.blocked is not None and now.blocked.cls == "gate-red"
    assert "none of 2 candidate(s) was green" in now.blocked.reason
    saves = [s for s in _stranded_json(cfg) if s["card"] == card.id]
    assert sorted(s["kind"] for s in saves) == [naming.KIND_ATTEMPT] * 4, saves
    contents = [show(cfg, s["branch"], f"work/{card.id}.txt") or "" for s in saves]
    assert sorted(c.count("\n") + 1 for c in contents) == [1, 2, 3, 4], contents
    said = "\n".join(comments(store, card.id))
    assert "climbing to tier careful" in said
    assert not [p for p in cfg.worktrees_dir.iterdir() if not p.name.startswith(".")]
    store.close()


def test_best_of_one_is_a_single_drive(tmp_path: Path) -> None:
    """The default runs no race: one drive, the card's own tree and branch, no candidate."""
    log = tmp_path / "coders.log"
    cfg, store = make_board(
        tmp_path, origin=True, tiers={"default": [script("coder_edit.sh"), "{worktree}", "{card}"]}
    )
    assert cfg.coder.best_of == 1
    card = add_card(store, "one drive", surface=["work/**"])
    assert Loop(cfg, store).run(until_idle=True) == 0
    assert store.get(card.id).lane == "done"
    assert len(store.list_drives(card.id, limit=10)) == 1
    assert not log.exists()
    store.close()


@pytest.mark.parametrize("value", ["0", "17", "-1", '"3"'])
def test_a_best_of_out_of_bounds_is_refused_naming_the_key(tmp_path: Path, value: str) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    store.close()
    path = cfg.root / "board.toml"
    text = path.read_text()
    assert "\nbest_of = 1\n" in text
    path.write_text(text.replace("\nbest_of = 1\n", f"\nbest_of = {value}\n", 1))
    with pytest.raises(ConfigError, match=r"best_of.*(from 1 to 16|negative|integer)"):
        config.load(cfg.root)


def _first_green_board(tmp_path: Path, sizes: str, log: Path, best_of: int, max_concurrent: int):
    return make_board(
        tmp_path,
        origin=True,
        tiers={"default": _tier(sizes, log)},
        gate=[script("gate_candidate.sh"), "{worktree}"],
        # a slow candidate is silent for a minute: no time limit may stop it but the race
        coder={
            "best_of": best_of,
            "best_of_rule": RULE_FIRST_GREEN,
            "timeout_s": 300,
            "first_output_timeout_s": 0,
        },
        board={"max_concurrent": max_concurrent},
        gate_opts={"retries": 0},
    )


def _groups(log: Path) -> dict[int, int]:
    """Each candidate's process group, as its coder logged it (the coder leads its group)."""
    pids = Path(f"{log}.pids")
    if not pids.exists():
        return {}
    return {int(k): int(g) for k, g in (line.split() for line in pids.read_text().splitlines())}


def test_first_green_folds_the_first_green_and_stops_and_saves_the_slow_candidates(
    tmp_path: Path,
) -> None:
    """best_of_rule = "first-green": candidate 1 finishes green once the other two have
    written their files and gone to sleep for a minute; it folds at once, the two slow
    ones are stopped (their process groups gone, their rows `stopped`) and each one's
    files are on a `candidate` save. The race did not wait for them."""
    log = tmp_path / "coders.log"
    cfg, store = _first_green_board(tmp_path, "1=2,2~60,3~60", log, best_of=3, max_concurrent=3)
    assert cfg.coder.best_of_rule == RULE_FIRST_GREEN
    card = add_card(store, "first past the gate", surface=["work/**"])
    began = time.monotonic()
    assert Loop(cfg, store).run(until_idle=True) == 0
    took = time.monotonic() - began

    assert store.get(card.id).lane == "done", [e.text for e in store.timeline(card.id)]
    assert took < 30, f"the race waited {took:.0f}s for the slow candidates to finish"
    assert show(cfg, cfg.board.run_branch, f"work/{card.id}.txt") == "candidate 1 line 1"
    said = log.read_text()
    assert "end 2" not in said and "end 3" not in said, f"a slow candidate ran to its end: {said}"

    saves = [s for s in _stranded_json(cfg) if s["card"] == card.id]
    kinds = sorted((s["tree"], s["kind"]) for s in saves)
    assert kinds == [
        (f"feat-{card.id}-2", naming.KIND_CANDIDATE),
        (f"feat-{card.id}-3", naming.KIND_CANDIDATE),
    ], f"the stopped candidates were not saved as candidates: {saves}"
    by_tree = {s["tree"]: s["branch"] for s in saves}
    two = show(cfg, by_tree[f"feat-{card.id}-2"], f"work/{card.id}.txt")
    assert two == "candidate 2 line 1\ncandidate 2 line 2", "candidate 2's work was lost"
    three = show(cfg, by_tree[f"feat-{card.id}-3"], f"work/{card.id}.txt")
    assert three == "candidate 3 line 1\ncandidate 3 line 2\ncandidate 3 line 3"

    groups = _groups(log)
    assert sorted(groups) == [1, 2, 3], groups
    alive = {k: g for k, g in groups.items() if proc.group_alive(g)}
    assert not alive, f"candidates' process groups still run after the race: {alive}"
    rows = store.list_drives(card.id, limit=10)
    assert sorted(r.status for r in rows) == ["passed", "passed", "stopped", "stopped"], rows
    assert all(r.pgid == 0 for r in rows), "a row still names a process group"
    assert not [p for p in cfg.worktrees_dir.iterdir() if not p.name.startswith(".")], (
        "a candidate's tree was left behind"
    )
    assert git(cfg.root, "branch", "--list", f"feat/{card.id}*").strip() == ""
    said = "\n".join(comments(store, card.id))
    assert "candidate 1 chosen" in said and "the first green one" in said, said
    assert "2 stopped: candidate 1 was green first (first-green)" in said, said
    store.close()


def test_first_green_starts_no_further_candidate_once_one_is_green(tmp_path: Path) -> None:
    """best_of = 3 under max_concurrent = 2: candidate 1 is green while candidate 2 sleeps,
    so candidate 3, waiting for a slot, never starts; candidate 2 is stopped and saved."""
    log = tmp_path / "coders.log"
    cfg, store = _first_green_board(tmp_path, "1=1,2~60,3", log, best_of=3, max_concurrent=2)
    card = add_card(store, "no third try", surface=["work/**"])
    assert Loop(cfg, store).run(until_idle=True) == 0
    assert store.get(card.id).lane == "done"
    assert show(cfg, cfg.board.run_branch, f"work/{card.id}.txt") == "candidate 1 line 1"
    assert sorted(_spans(log)) == [1, 2], f"a candidate started after the first green: {log}"
    rows = store.list_drives(card.id, limit=10)
    assert sorted(r.status for r in rows) == ["passed", "passed", "stopped"], rows
    saves = [s for s in _stranded_json(cfg) if s["card"] == card.id]
    assert [(s["tree"], s["kind"]) for s in saves] == [
        (f"feat-{card.id}-2", naming.KIND_CANDIDATE)
    ], saves
    assert not [g for g in _groups(log).values() if proc.group_alive(g)]
    store.close()


@pytest.mark.parametrize("value", ['"first-green"', '"smallest-green"', '"fastest"', "1"])
def test_best_of_rule_takes_first_green_and_refuses_what_it_does_not_know(
    tmp_path: Path, value: str
) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    store.close()
    path = cfg.root / "board.toml"
    text = path.read_text()
    line = '\nbest_of_rule = "smallest-green"\n'
    assert line in text
    before = text.replace(line, f"\nbest_of_rule = {value}\n", 1)
    path.write_text(before)
    if value in ('"first-green"', '"smallest-green"'):
        assert config.load(cfg.root).coder.best_of_rule == value.strip('"')
        return
    with pytest.raises(ConfigError, match=r"best_of_rule.*(must be one of|string)"):
        config.load(cfg.root)
    assert path.read_text() == before, "a refused board.toml was changed"

"""A card's race of tiers (issue 42): `board card add|edit --race TIER,TIER,…` runs one
candidate per named tier instead of N of the card's rung, and `--no-race` / `--no-best-of`
take a card's own count away. Real git (a bare origin and a clone), real coder and gate
scripts (tests/scripts/coder_candidate.sh, gate_candidate.sh), each tier its own argv (its
own sizes and its own log), the real SQLite store, the real `board` command line in a
child process, and the loop run in-process as `board run --until-idle` runs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from board.core import config
from board.core.git import naming
from board.core.loop import Loop
from board.core.store import Store

from tests.support.boards import make_board
from tests.support.loop import add_card, show, write_config
from tests.support.paths import script
from tests.support.repos import run_cli


def _tier(sizes: str, log: Path) -> list[str]:
    return [script("coder_candidate.sh"), "{worktree}", "{card}", sizes, str(log), "{brief}"]


def _board(tmp_path: Path, tiers: dict[str, list[str]], ladder: list[str] | None = None):
    return make_board(
        tmp_path,
        origin=True,
        tiers=tiers,
        ladder=ladder,
        gate=[script("gate_candidate.sh"), "{worktree}"],
        board={"max_concurrent": 2},
        gate_opts={"retries": 0},
    )


def _cli(cfg: config.Config, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(cfg.root, *args)


def _started(log: Path) -> list[int]:
    """The candidates whose coder this tier's log says started, in order."""
    if not log.exists():
        return []
    return [int(line.split()[1]) for line in log.read_text().splitlines() if line[:6] == "start "]


def _stranded(cfg: config.Config, card_id: str) -> list[dict]:
    res = _cli(cfg, "stranded", "list", "--json")
    assert res.returncode == 0, res.stderr
    return [s for s in json.loads(res.stdout) if s["card"] == card_id]


def _state(store: Store, card_id: str) -> tuple[object, ...]:
    return (store.get(card_id), store.timeline(card_id))


def test_a_race_of_two_tiers_runs_one_candidate_of_each_and_the_smallest_green_folds(
    tmp_path: Path,
) -> None:
    """`--race a,b` on a ladder [a, b]: candidate 1 runs tier a's argv (3 lines, its own
    log), candidate 2 tier b's (1 line, its own log), each drive row saying its tier; the
    smaller green one (b's) folds and a's is kept on a `candidate` save with its work."""
    logs = {"a": tmp_path / "a.log", "b": tmp_path / "b.log"}
    cfg, store = _board(tmp_path, {"a": _tier("3,3", logs["a"]), "b": _tier("1,1", logs["b"])})
    assert list(cfg.coder.ladder) == ["a", "b"] and cfg.coder.best_of == 1
    res = _cli(
        cfg, "card", "add", "raced by tier", "--spec", "s", "--ready", "--surface", "work/**",
        "--race", "a, b", "--json",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    card = json.loads(res.stdout)
    assert (card["race"], card["best_of"]) == (["a", "b"], None)
    assert Loop(cfg, store).run(until_idle=True) == 0

    cid = card["id"]
    assert store.get(cid).lane == "done", [e.text for e in store.timeline(cid)]
    assert (_started(logs["a"]), _started(logs["b"])) == ([1], [2]), "not one per tier"
    rows = {d.candidate: d for d in store.list_drives(cid, limit=10) if d.candidate}
    assert {k: (d.tier, d.status, d.lines_changed) for k, d in rows.items()} == {
        1: ("a", "passed", 3),
        2: ("b", "passed", 1),
    }
    assert show(cfg, cfg.board.run_branch, f"work/{cid}.txt") == "candidate 2 line 1"
    saves = _stranded(cfg, cid)
    assert [(s["tree"], s["kind"]) for s in saves] == [(f"feat-{cid}-1", naming.KIND_CANDIDATE)]
    kept = show(cfg, saves[0]["branch"], f"work/{cid}.txt")
    assert kept == "candidate 1 line 1\ncandidate 1 line 2\ncandidate 1 line 3"

    shown = json.loads(_cli(cfg, "card", "show", cid, "--json").stdout)
    assert shown["race"] == ["a", "b"]
    assert [(c["index"], c["tier"], c["state"]) for c in shown["candidates"]] == [
        (1, "a", "green"),
        (2, "b", "green"),
    ]
    text = _cli(cfg, "card", "show", cid).stdout.splitlines()
    assert "race: a,b" in text
    assert "best of: 2, one candidate per tier of its race (the board's is 1)" in text
    store.close()


def test_a_race_of_one_tier_off_the_ladder_runs_that_tier(tmp_path: Path) -> None:
    """`--race extra`, a tier of [coder.tiers] the ladder does not name: one candidate, of
    that tier, not a single drive of the card's rung."""
    logs = {"a": tmp_path / "a.log", "extra": tmp_path / "extra.log"}
    tiers = {"a": _tier("3", logs["a"]), "extra": _tier("2", logs["extra"])}
    cfg, store = _board(tmp_path, tiers, ladder=["a"])
    card = add_card(store, "one tier", surface=["work/**"])
    res = _cli(cfg, "card", "edit", card.id, "--race", "extra", "--json")
    assert res.returncode == 0, res.stderr
    assert Loop(cfg, store).run(until_idle=True) == 0
    assert store.get(card.id).lane == "done"
    assert (_started(logs["a"]), _started(logs["extra"])) == ([], [1])
    rows = [d for d in store.list_drives(card.id, limit=10) if d.candidate]
    assert [(d.candidate, d.tier) for d in rows] == [(1, "extra")]
    assert show(cfg, cfg.board.run_branch, f"work/{card.id}.txt") == (
        "candidate 1 line 1\ncandidate 1 line 2"
    )
    store.close()


def test_a_race_with_none_green_climbs_its_rung_then_blocks_running_the_same_tiers(
    tmp_path: Path,
) -> None:
    """`--race b,a` on a ladder [a, b], every candidate red: the first race (rung a) climbs
    as one failed attempt would, the second (rung b) runs b then a again and blocks at the
    top; every candidate's work is kept on an attempt save."""
    logs = {"a": tmp_path / "a.log", "b": tmp_path / "b.log"}
    cfg, store = _board(tmp_path, {"a": _tier("1r,2r", logs["a"]), "b": _tier("3r,4r", logs["b"])})
    card = add_card(store, "nobody gets it right", surface=["work/**"])
    assert _cli(cfg, "card", "edit", card.id, "--race", "b,a").returncode == 0
    assert Loop(cfg, store).run(until_idle=True) == 0

    now = store.get(card.id)
    assert now.blocked is not None and now.blocked.cls == "gate-red", now.blocked
    rows = sorted((d for d in store.list_drives(card.id, limit=20)), key=lambda d: d.attempt)
    own = [d.tier for d in rows if d.candidate is None]
    assert own == ["a", "b"], "the race's own rows did not climb the ladder"
    assert [(d.candidate, d.tier, d.gate) for d in rows if d.candidate] == [
        (1, "b", "red"), (2, "a", "red"), (1, "b", "red"), (2, "a", "red"),
    ]  # fmt: skip
    assert (_started(logs["b"]), _started(logs["a"])) == ([1, 1], [2, 2])
    # each race's two trees saved as attempts; the second race's coders wrote what the
    # first's did (the same tiers, the same scripts), so its saves are the first's, verified
    said = [e.text for e in store.timeline(card.id) if "(a failed attempt)" in e.text]
    assert len(said) == 4, said
    assert sum("an earlier save of exactly this state, verified" in t for t in said) == 2
    saves = _stranded(cfg, card.id)
    assert sorted(s["tree"] for s in saves) == [f"feat-{card.id}-1", f"feat-{card.id}-2"]
    assert {s["kind"] for s in saves} == {naming.KIND_ATTEMPT}
    for s in saves:
        k = int(s["tree"].rsplit("-", 1)[1])
        lines = show(cfg, s["branch"], f"work/{card.id}.txt")
        assert lines is not None and lines.startswith(f"candidate {k} line 1"), (s, lines)
        assert show(cfg, s["branch"], "work/RED") == "red"
    store.close()


def test_a_race_naming_a_tier_board_toml_no_longer_has_blocks_before_any_coder(
    tmp_path: Path,
) -> None:
    log = tmp_path / "a.log"
    cfg, store = _board(tmp_path, {"a": _tier("1,1", log), "b": _tier("1,1", log)})
    card = add_card(store, "its tier went away", surface=["work/**"])
    assert _cli(cfg, "card", "edit", card.id, "--race", "a,b").returncode == 0
    cfg = write_config(
        cfg.root, tiers={"a": _tier("1,1", log)}, gate=[script("gate_candidate.sh"), "{worktree}"],
        gate_opts={"retries": 0}, board={"max_concurrent": 2},
    )  # fmt: skip
    assert Loop(cfg, store).run(until_idle=True) == 0
    now = store.get(card.id)
    assert now.blocked is not None and now.blocked.cls == "dispatch-infra"
    assert "its race names tier 'b', which [coder.tiers] no longer has" in now.blocked.reason
    assert not log.exists(), "a candidate ran"
    assert [d for d in store.list_drives(card.id, limit=10) if d.candidate] == []
    store.close()


REFUSED = [
    (("--race", "a,nope"), "--race names tier 'nope', which [coder.tiers] does not have (a, b)"),
    (("--race", "a,,b"), "--race has an empty tier name (give TIER,TIER,…)"),
    (("--race", ""), "--race has an empty tier name (give TIER,TIER,…)"),
    (("--race", ",".join(["a"] * 17)), "--race names 1 to 16 tiers (one candidate each), not 17"),
    (
        ("--race", "a,b", "--best-of", "2"),
        "--race and --best-of both say how many candidates build the card: give one of them",
    ),
]


@pytest.mark.parametrize(("flags", "line"), REFUSED, ids=lambda v: repr(v)[:40])
def test_a_bad_race_is_refused_in_one_line_and_nothing_is_written(
    tmp_path: Path, flags: tuple[str, ...], line: str
) -> None:
    log = tmp_path / "log"
    cfg, store = _board(tmp_path, {"a": _tier("1", log), "b": _tier("1", log)})
    res = _cli(cfg, "card", "add", "raced", "--spec", "s", *flags)
    assert (res.returncode, res.stdout, res.stderr) == (1, "", f"board: {line}\n")
    assert store.list_cards() == [], "a refused card was written"

    card = add_card(store, "kept as it is", surface=["work/**"])
    before = _state(store, card.id)
    res = _cli(cfg, "card", "edit", card.id, "--title", "changed", *flags)
    assert (res.returncode, res.stdout, res.stderr) == (1, "", f"board: {line}\n")
    assert _state(store, card.id) == before, "a refused edit wrote"
    store.close()


def test_a_race_and_an_own_best_of_replace_each_other_and_each_is_dropped_by_its_no_flag(
    tmp_path: Path,
) -> None:
    """A card has a race or its own best of, never both: the one given replaces the other.
    `--no-race` and `--no-best-of` drop them (the board's `[coder] best_of` counts again);
    dropping what the card has not, or a flag with its `--no-` twin, is refused, nothing
    written."""
    log = tmp_path / "log"
    cfg, store = _board(tmp_path, {"a": _tier("1", log), "b": _tier("1", log)})
    card = add_card(store, "counted", surface=["work/**"])

    def edit(*flags: str) -> dict:
        res = _cli(cfg, "card", "edit", card.id, *flags, "--json")
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout)

    def refused(line: str, *flags: str) -> None:
        before = _state(store, card.id)
        res = _cli(cfg, "card", "edit", card.id, *flags)
        assert (res.returncode, res.stderr) == (1, f"board: {line}\n"), res
        assert _state(store, card.id) == before, "a refused edit wrote"

    refused(f"{card.id} has no best of of its own to drop (the board's counts)", "--no-best-of")
    refused(f"{card.id} has no race to drop", "--no-race")
    got = edit("--best-of", "3")
    assert (got["best_of"], got["race"]) == (3, [])
    refused("--best-of and --no-best-of together: give one of them", "--best-of", "2",
            "--no-best-of")  # fmt: skip
    got = edit("--race", "b,a")
    assert (got["best_of"], got["race"]) == (None, ["b", "a"])
    assert "best_of 3 → ∅" in store.timeline(card.id)[-1].text
    refused("--race and --no-race together: give one of them", "--race", "a", "--no-race")
    got = edit("--no-race")
    assert (got["best_of"], got["race"]) == (None, [])
    assert "race b,a → ∅" in store.timeline(card.id)[-1].text
    got = edit("--best-of", "4")
    got = edit("--no-best-of")
    assert (got["best_of"], got["race"]) == (None, [])
    assert store.get(card.id).best_of == 0
    text = _cli(cfg, "card", "show", card.id).stdout
    assert "best of" not in text and "race:" not in text, "the board's single drive is said"
    got = edit("--race", "a", "--title", "raced")
    got = edit("--no-race", "--best-of", "2")  # from a race to a best of in one edit
    assert (got["best_of"], got["race"]) == (2, [])
    store.close()


def test_a_race_whose_candidates_all_hit_a_rate_limit_pauses_their_tier_not_the_rung_s(
    tmp_path: Path,
) -> None:
    """Every candidate of `--race x,x` (x off the ladder [a]) hits a 429: the race backs off
    as its first candidate would, so the pause is on tier x, the one that hit the limit; the
    card stays on its own rung (a) and is back in ready."""
    from board.core.drive import drive, race

    from tests.test_backoff import RATE_429, scripted

    rate = {"print": RATE_429, "exit": 1}
    cfg, store = _board(
        tmp_path, {"a": _tier("1,1", tmp_path / "a.log"), "x": scripted(tmp_path, [rate, rate])}
    )
    card = add_card(store, "raced into a limit", surface=["work/**"])
    res = _cli(cfg, "card", "edit", card.id, "--race", "x,x")
    assert res.returncode == 0, res.stderr
    token = drive.claim(cfg, store, store.get(card.id))
    assert token
    end = race.drive_for(cfg, store, card.id, token, 2, race=("x", "x")).run()
    assert (end.outcome, end.cls) == ("backed-off", "rate-limit"), end
    (pause,) = store.pauses()
    assert (pause.tier, pause.cls) == ("x", "rate-limit")
    after = store.get(card.id)
    assert after.lane == "ready" and after.rung in ("", "a"), after

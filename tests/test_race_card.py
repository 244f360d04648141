"""Best of N, a card's own (issue 42): `board card add|edit --best-of N` over the board's
`[coder] best_of`, and what `board card show` says of it and of the card's latest race. Real
git (a bare origin and a clone), real coder and gate scripts (tests/scripts/
coder_candidate.sh, gate_candidate.sh), the real SQLite store, the real `board` command line
in a child process, and the loop run in-process as `board run --until-idle` runs it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from board.core import config
from board.core.loop import Loop

from tests.support.boards import make_board
from tests.support.loop import add_card, show, write_config
from tests.support.paths import script
from tests.support.repos import run_cli


def _tier(sizes: str, log: Path) -> list[str]:
    return [script("coder_candidate.sh"), "{worktree}", "{card}", sizes, str(log), "{brief}"]


def _board(tmp_path: Path, tiers: dict[str, list[str]], best_of: int, max_concurrent: int = 2):
    return make_board(
        tmp_path,
        origin=True,
        tiers=tiers,
        gate=[script("gate_candidate.sh"), "{worktree}"],
        coder={"best_of": best_of},
        board={"max_concurrent": max_concurrent},
        gate_opts={"retries": 0},
    )


def _board_cli(cfg: config.Config, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(cfg.root, *args)


def _ran(log: Path) -> list[int]:
    """The candidates whose coder started, as the coder logged them."""
    return sorted({int(line.split()[1]) for line in log.read_text().splitlines()})


def test_a_card_s_best_of_2_on_a_board_of_single_drives_runs_two_candidates(
    tmp_path: Path,
) -> None:
    """`card add --best-of 2` on a board whose best_of is 1: two candidates run (the
    smaller green one folds), and card show says whose count it is."""
    log = tmp_path / "coders.log"
    cfg, store = _board(tmp_path, {"default": _tier("2,1", log)}, best_of=1)
    assert cfg.coder.best_of == 1
    res = _board_cli(
        cfg, "card", "add", "raced by its own word", "--spec", "s", "--ready",
        "--surface", "work/**", "--best-of", "2", "--json",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    card = json.loads(res.stdout)
    assert card["best_of"] == 2
    assert Loop(cfg, store).run(until_idle=True) == 0

    assert store.get(card["id"]).lane == "done"
    assert _ran(log) == [1, 2], "the card's own best_of did not run two candidates"
    assert show(cfg, cfg.board.run_branch, f"work/{card['id']}.txt") == "candidate 2 line 1"
    assert len(store.list_drives(card["id"], limit=10)) == 3  # the race's row and two
    text = _board_cli(cfg, "card", "show", card["id"]).stdout
    assert "best of: 2 (its own; the board's [coder] best_of is 1)" in text.splitlines()
    store.close()


def test_a_card_s_best_of_1_on_a_racing_board_is_a_single_drive(tmp_path: Path) -> None:
    """The card's word wins both ways: `--best-of 1` on a board of best_of = 3 is one
    drive on the card's own tree; a card with none on that board shows the board's."""
    tier = [script("coder_edit.sh"), "{worktree}", "{card}"]
    cfg, store = _board(tmp_path, {"default": tier}, best_of=3, max_concurrent=3)
    res = _board_cli(
        cfg, "card", "add", "one drive", "--spec", "s", "--ready", "--surface", "work/**",
        "--best-of", "1", "--json",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    one = json.loads(res.stdout)["id"]
    assert Loop(cfg, store).run(until_idle=True) == 0
    assert store.get(one).lane == "done"
    rows = store.list_drives(one, limit=10)
    assert len(rows) == 1, f"a card of best_of 1 ran a race: {rows}"
    assert show(cfg, cfg.board.run_branch, f"work/{one}.txt") == f"work of {one}"
    other = add_card(store, "the board's", surface=["work/**"])
    text = _board_cli(cfg, "card", "show", other.id).stdout
    assert "best of: 3 (the board's [coder] best_of)" in text.splitlines()
    assert json.loads(_board_cli(cfg, "card", "show", other.id, "--json").stdout)["best_of"] is None
    store.close()


@pytest.mark.parametrize("value", ["0", "17", "-1"])
def test_a_best_of_out_of_bounds_is_refused_in_one_line_and_nothing_is_written(
    tmp_path: Path, value: str
) -> None:
    cfg, store = _board(tmp_path, {"default": _tier("1", tmp_path / "log")}, best_of=1)
    res = _board_cli(cfg, "card", "add", "too many", "--spec", "s", "--best-of", value)
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr == f"board: --best-of must be a whole number from 1 to 16, not {value}\n"
    assert store.list_cards() == [], "a refused card was written"

    card = add_card(store, "kept as it is", surface=["work/**"])
    before = (store.get(card.id), store.timeline(card.id))
    res = _board_cli(cfg, "card", "edit", card.id, "--best-of", value, "--title", "changed")
    assert res.returncode == 1
    assert res.stderr == f"board: --best-of must be a whole number from 1 to 16, not {value}\n"
    assert (store.get(card.id), store.timeline(card.id)) == before, "a refused edit wrote"
    res = _board_cli(cfg, "card", "edit", card.id, "--best-of", "5", "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["best_of"] == 5
    assert store.get(card.id).best_of == 5
    store.close()


def _cost_tier(sizes: str, log: Path) -> list[str]:
    return [script("coder_candidate_cost.sh"), "{worktree}", "{card}", sizes, str(log), "{brief}"]


def _spans(log: Path) -> dict[int, float]:
    """Each candidate's coder's run time, as the coder logged its start and end."""
    seen: dict[int, list[float]] = {}
    for line in log.read_text().splitlines():
        _what, k, at = line.split()
        seen.setdefault(int(k), []).append(float(at))
    return {k: v[-1] - v[0] for k, v in seen.items()}


def test_card_show_lists_the_candidates_of_the_race_that_ran(tmp_path: Path) -> None:
    """A card of --best-of 3 on a board of best_of 1, its candidates writing 3, 1 (red) and
    2 lines, each saying its cost in aider's words: `card show --json`'s candidates are the
    three that ran, each with its state, gate, lines, time and cost, and the text lists them."""
    log = tmp_path / "coders.log"
    cfg, store = _board(tmp_path, {"default": _cost_tier("3,1r,2", log)}, 1, max_concurrent=3)
    cfg = write_config(
        cfg.root, tiers={"default": _cost_tier("3,1r,2", log)}, usage={"default": "aider"},
        gate=[script("gate_candidate.sh"), "{worktree}"], gate_opts={"retries": 0},
        board={"max_concurrent": 3},
    )  # fmt: skip
    res = _board_cli(
        cfg, "card", "add", "shown", "--spec", "s", "--ready", "--surface", "work/**",
        "--best-of", "3", "--json",
    )  # fmt: skip
    card = json.loads(res.stdout)["id"]
    assert Loop(cfg, store).run(until_idle=True) == 0
    assert store.get(card).lane == "done"

    shown = json.loads(_board_cli(cfg, "card", "show", card, "--json").stdout)
    got = shown["candidates"]
    rows = {d.candidate: d for d in store.list_drives(card, limit=10) if d.candidate}
    assert sorted(rows) == [1, 2, 3] == sorted(_spans(log)), "not the three that ran"
    assert [(c["index"], c["drive"], c["attempt"]) for c in got] == [
        (k, rows[k].id, rows[k].attempt) for k in (1, 2, 3)
    ]
    assert [
        (c["tier"], c["tree"], c["state"], c["gate"], c["lines_changed"], c["cost_usd"])
        for c in got
    ] == [
        ("default", f"feat-{card}-1", "green", "green", 3, 0.01),
        ("default", f"feat-{card}-2", "red", "red", 2, 0.02),  # work/RED is a line too
        ("default", f"feat-{card}-3", "green", "green", 2, 0.03),
    ]
    assert got[1]["result"] == "the gate exited 1, and stayed red after 0 retries"
    spans = _spans(log)
    for c in got:
        assert spans[c["index"]] <= c["seconds"] < 60, (c, spans)
    text = _board_cli(cfg, "card", "show", card).stdout.splitlines()
    at = text.index("candidates (the latest race, 3):")
    listed = text[at + 1 : at + 4]
    for c, line in zip(got, listed, strict=True):
        words = line.split()
        assert words[:4] == [str(c["index"]), c["state"], "gate", c["gate"]], line
        assert words[4] == str(c["lines_changed"]) and words[-1] == c["tree"], line
        assert f"${c['cost_usd']:.2f}" in words, line
    store.close()


def test_card_show_lists_the_latest_race_only_and_none_for_a_single_drive(
    tmp_path: Path,
) -> None:
    """No candidate green at either rung: the card climbs then blocks, and `card show`'s
    candidates are the top rung's race; a card built by one drive has none."""
    log = tmp_path / "coders.log"
    tiers = {"quick": _tier("1r,2r", log), "careful": _tier("3r,4r", log)}
    cfg, store = _board(tmp_path, tiers, best_of=1)
    res = _board_cli(
        cfg, "card", "add", "nobody gets it right", "--spec", "s", "--ready",
        "--surface", "work/**", "--best-of", "2", "--json",
    )  # fmt: skip
    card = json.loads(res.stdout)["id"]
    assert Loop(cfg, store).run(until_idle=True) == 0
    assert store.get(card).blocked is not None
    assert len([d for d in store.list_drives(card, limit=20) if d.candidate]) == 4
    got = json.loads(_board_cli(cfg, "card", "show", card, "--json").stdout)["candidates"]
    assert [(c["index"], c["tier"], c["state"], c["gate"], c["lines_changed"]) for c in got] == [
        (1, "careful", "red", "red", 4),
        (2, "careful", "red", "red", 5),
    ]
    assert all(c["cost_usd"] is None for c in got)  # its coder said nothing of a cost
    assert "candidates (the latest race, 2):" in _board_cli(cfg, "card", "show", card).stdout

    single = add_card(store, "plain", surface=["work/**"])
    assert (
        json.loads(_board_cli(cfg, "card", "show", single.id, "--json").stdout)["candidates"] == []
    )
    assert "candidates" not in _board_cli(cfg, "card", "show", single.id).stdout
    store.close()

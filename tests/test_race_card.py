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
from tests.support.loop import add_card, show
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

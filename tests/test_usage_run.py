"""What a card cost, end to end: the real `board` command line drives the Claude Code
preset's argv against its stand-in (tests/standins/claude, first on PATH under the real
program's name), attempt after attempt, and the store, `board card show --json` and
`board usage --json` say exactly what the stand-in printed, summed over every attempt,
failed ones included; and `[budget] card_usd` blocks the card once its attempts together
passed it, before it spends more.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.paths import STANDINS
from tests.support.repos import make_repo, run_cli

IN, OUT, CACHED, CACHE_WRITE, COST = 2100, 250, 300, 100, 0.02


@pytest.fixture
def standin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "standin-state"
    state.mkdir()
    monkeypatch.setenv("PATH", f"{STANDINS}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STANDIN_DIR", str(state))  # the calls counted across runs
    monkeypatch.delenv("STANDIN_FLAGS_DIR", raising=False)
    spend = {"IN": IN, "OUT": OUT, "CACHED": CACHED, "CACHE_WRITE": CACHE_WRITE, "COST": COST}
    for key, value in spend.items():
        monkeypatch.setenv(f"STANDIN_{key}", str(value))


def _board(tmp_path: Path, budget: str = "") -> Path:
    repo = make_repo(tmp_path, init="").root
    assert run_cli(repo, "init", "--coder", "claude").returncode == 0
    if budget:
        toml = repo / "board.toml"  # init writes every key: its [budget] card_usd is 0.0
        text = toml.read_text()
        assert "\ncard_usd = 0.0\n" in text
        toml.write_text(text.replace("\ncard_usd = 0.0\n", f"\n{budget}\n"))
    res = run_cli(repo, "card", "add", "a task", "--spec", "do it", "--surface", "work/**")
    assert res.returncode == 0, res.stderr
    assert run_cli(repo, "ready", "c-1").returncode == 0
    return repo


def _run(repo: Path) -> dict:
    res = run_cli(repo, "run", "--until-idle", "--quiet", timeout=180)
    assert res.returncode in (0, 1), res.stderr
    return json.loads(run_cli(repo, "card", "show", "c-1", "--json").stdout)


def test_a_card_built_in_three_attempts_costs_what_the_agent_said_three_times(
    tmp_path: Path, standin: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STANDIN_MODE", "fail,fail,ok")
    repo = _board(tmp_path)
    for _ in range(2):  # one tier: each failed attempt blocks; the operator tries again
        shown = _run(repo)
        assert shown["blocked"] and shown["lane"] == "ready", shown
        assert run_cli(repo, "unblock", "c-1").returncode == 0
    shown = _run(repo)
    assert shown["lane"] == "done", shown
    want = {
        "input_tokens": 3 * (IN + CACHE_WRITE),  # cache writes are input sent
        "output_tokens": 3 * OUT,
        "cached_tokens": 3 * CACHED,
        "drives": 3,
    }
    spent = shown["usage"]
    assert {k: spent[k] for k in want} == want, spent
    assert spent["cost_usd"] == pytest.approx(3 * COST)
    rows = json.loads(run_cli(repo, "usage", "--by", "card", "--json").stdout)["rows"]
    assert [(r["key"], r["drives"], r["input_tokens"]) for r in rows] == [
        ("c-1", 3, want["input_tokens"])
    ]
    assert rows[0]["cost_usd"] == pytest.approx(3 * COST)
    text = run_cli(repo, "card", "show", "c-1").stdout
    assert "$0.06" in text, text


def test_card_usd_blocks_the_card_once_its_attempts_passed_it(
    tmp_path: Path, standin: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STANDIN_MODE", "fail")
    repo = _board(tmp_path, budget="card_usd = 0.05")
    for attempt in (1, 2, 3):  # 0.02, 0.04, 0.06: the third passes 0.05
        shown = _run(repo)
        assert shown["blocked"]["class"] == "terminal", (attempt, shown)
        assert run_cli(repo, "unblock", "c-1").returncode == 0
    shown = _run(repo)
    assert shown["blocked"]["class"] == "over-budget", shown
    assert shown["usage"]["cost_usd"] == pytest.approx(3 * COST)  # no fourth coder ran
    # the sweep leaves it for the operator: another run spends nothing more
    again = _run(repo)
    assert again["blocked"]["class"] == "over-budget"
    assert again["usage"]["cost_usd"] == pytest.approx(3 * COST)

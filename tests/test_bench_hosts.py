"""The figures bench_hosts derives for issue 45's hosts that add up: each fold's own time read
from real drive logs (less its wait for the fold before it on the host), and the simulation
of when the remote's one-at-a-time fold, not the coders, bounds a drain."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from board.core.logs import LogWriter

from tests.bench.bench_hosts import fold_seconds, simulate

T0 = datetime(2026, 12, 3, 12, 0, 0, tzinfo=UTC)


def _log(path: Path, lines: list[tuple[float, str]]) -> None:
    for at, text in lines:
        writer = LogWriter(path, clock=lambda at=at: T0 + timedelta(seconds=at))
        writer.write_line(text)
        writer.close()


def test_a_fold_is_timed_from_its_commit_or_the_fold_it_waited_for(tmp_path: Path) -> None:
    # two drives of one host commit at 10.0 s and 10.1 s; the second waits for the first's
    # run lock, so its own fold runs from 10.5 s (the first's end) to 10.8 s
    _log(tmp_path / "c-1" / "0.log", [(0, "coder line"), (10.0, "board: commit: 1 file"),
                                      (10.5, "board: folded onto run at abc")])  # fmt: skip
    _log(tmp_path / "c-2" / "0.log", [(10.1, "board: commit: 1 file"),
                                      (10.8, "board: folded onto run at def")])  # fmt: skip
    _log(tmp_path / "c-3" / "0.log", [(11.0, "board: commit: 1 file")])  # not folded: no span
    assert fold_seconds(tmp_path) == pytest.approx([0.5, 0.3])


def test_one_host_is_bound_by_its_coders_and_many_by_the_folds() -> None:
    # one host: ten waves of 10 s cards, the fold (0.1 s) inside each card's cycle
    assert simulate(1, 2, 10.0, 0.1) == pytest.approx(100.0, rel=0.02)
    # 200 hosts ask 2,400 folds a minute of a board that takes 600: their 4,000 cards take
    # at least 4,000 folds of 0.1 s, four times the coders' 100 s
    drain = simulate(200, 2, 10.0, 0.1)
    assert drain >= 4000 * 0.1
    assert 4000 / drain * 60 <= 600 * 1.001

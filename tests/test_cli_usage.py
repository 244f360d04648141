"""What the drives spent, through the real command line (issue 41), on the SQLite file and
on PostgreSQL (the `backends` mark): `board card show` per attempt and in total, `board
status` today's spend, and `board usage`, whose JSON is the drive rows' own sums and whose
bad arguments are refused in one line, changing nothing.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from board.core.model import CardDraft, Usage
from board.core.store import Store

from tests.support.repos import run_cli

pytestmark = pytest.mark.backends()


def drive_on(store: Store, card: str, tier: str, at: str, usage: Usage | None,
             status: str = "failed") -> str:  # fmt: skip
    """A drive of `card` that started and ended at `at` (an ISO UTC time), spent `usage`."""
    store.clock = lambda: at  # type: ignore[method-assign]
    row = store.start_drive(card, tier, store.next_attempt(card), "", 4242)
    store.update_drive(row.id, status=status, result=status)
    if usage is not None:
        store.record_usage(row.id, usage)
    return row.id


def spent_board(store: Store) -> tuple[str, str]:
    """c-1: three attempts over two days and two tiers (one unpriced, failed ones first);
    c-2: one attempt that said nothing."""
    one = store.create(CardDraft(title="three attempts", spec="s")).id
    two = store.create(CardDraft(title="said nothing", spec="s")).id
    drive_on(store, one, "cheap", "2026-03-01T10:00:00.000Z", Usage(1000, 100, 50, 0.02, "m1", 2))
    drive_on(store, one, "cheap", "2026-03-02T10:00:00.000Z", Usage(700, 70, None, None, "m3"))
    drive_on(store, one, "smart", "2026-03-02T11:00:00.000Z",
             Usage(500, 50, 10, 0.04, "\x1b[31mm2", 1), "passed")  # fmt: skip
    drive_on(store, two, "cheap", "2026-03-02T12:00:00.000Z", None, "crashed")
    return one, two


def test_card_show_gives_each_attempts_usage_and_the_total(repo: Path, store: Store) -> None:
    one, two = spent_board(store)
    data = json.loads(run_cli(repo, "card", "show", one, "--json").stdout)
    usage = data["usage"]
    assert {k: usage[k] for k in ("input_tokens", "output_tokens", "cached_tokens", "drives")} == {
        "input_tokens": 2200, "output_tokens": 220, "cached_tokens": 60, "drives": 3,
    }  # fmt: skip
    assert math.isclose(usage["cost_usd"], 0.06) and usage["unpriced"] == 1
    attempts = usage["attempts"]
    assert [(a["attempt"], a["tier"], a["status"]) for a in attempts] == [
        (1, "cheap", "failed"), (2, "cheap", "failed"), (3, "smart", "passed"),
    ]  # fmt: skip
    assert attempts[1]["cost_usd"] is None and attempts[1]["cached_tokens"] is None
    assert attempts[0]["cost_usd"] == 0.02 and attempts[2]["model"] == "\x1b[31mm2"
    nothing = json.loads(run_cli(repo, "card", "show", two, "--json").stdout)["usage"]
    assert nothing["cost_usd"] is None and nothing["drives"] == 1, "an unknown cost became $0"

    text = run_cli(repo, "card", "show", one).stdout
    assert "usage: 3 attempt(s), $0.06 + 1 unpriced, 2,200 in · 220 out · 60 cached" in text
    lines = [x for x in text.splitlines() if x.startswith("  attempt ")]
    assert len(lines) == 3, text
    assert "$0.02" in lines[0] and "1,000 in · 100 out · 50 cached" in lines[0]
    assert "—" in lines[1] and "700 in · 70 out · — cached" in lines[1]
    assert "\x1b" not in text and "␛[31mm2" in lines[2], "the agent's text drove the terminal"
    assert "usage: 1 attempt(s), —" in run_cli(repo, "card", "show", two).stdout


def test_board_usage_json_is_the_drive_rows_sums(repo: Path, store: Store) -> None:
    one, two = spent_board(store)
    for by in ("card", "tier", "day"):
        res = run_cli(repo, "usage", "--by", by, "--json")
        assert res.returncode == 0, res.stderr
        got = json.loads(res.stdout)
        assert got["rows"] == [s.to_json() for s in store.usage_sums(by)], by
        total = got["total"]
        assert total["drives"] == 4 and total["unpriced"] == 1 and total["key"] == "total"
        assert math.isclose(total["cost_usd"], 0.06) and total["input_tokens"] == 2200
    by_day = json.loads(run_cli(repo, "usage", "--by", "day", "--json").stdout)["rows"]
    assert [(r["key"], r["drives"]) for r in by_day] == [("2026-03-01", 1), ("2026-03-02", 3)]
    since = json.loads(run_cli(repo, "usage", "--since", "2026-03-02", "--json").stdout)
    assert since["since"] == "2026-03-02T00:00:00.000Z"
    assert since["rows"] == [s.to_json() for s in store.usage_sums("card", since["since"])]
    assert [(r["key"], r["drives"], r["cost_usd"]) for r in since["rows"]] == [
        (one, 2, 0.04), (two, 1, None),
    ]  # fmt: skip
    late = json.loads(run_cli(repo, "usage", "--since", "2026-03-02T12:30+01:00", "--json").stdout)
    assert late["since"] == "2026-03-02T11:30:00.000Z"  # only c-2's drive, which said nothing
    assert late["total"] == {
        "key": "total", "drives": 1, "input_tokens": None, "output_tokens": None,
        "cached_tokens": None, "cost_usd": None, "unpriced": 0,
    }, "what no drive said was summed as a zero"  # fmt: skip

    text = run_cli(repo, "usage", "--by", "tier").stdout.splitlines()
    assert text[0].split() == ["tier", "drives", "cost", "input", "output", "cached"]
    assert text[1].split()[:3] == ["cheap", "3", "$0.02"] and "unpriced" in text[1]
    assert text[-1].split()[:2] == ["total", "4"]
    # a year before 1000 is written in four digits, as the store's stamps are: "999-…"
    # sorted after "2026-…", and every drive was left out
    old = json.loads(run_cli(repo, "usage", "--since", "0999-01-01", "--json").stdout)
    assert old["since"] == "0999-01-01T00:00:00.000Z" and old["total"]["drives"] == 4, old
    empty = run_cli(repo, "usage", "--since", "2030-01-01")
    assert empty.returncode == 0 and empty.stdout.strip() == "no drives in that time"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--since", "yesterday"], "'yesterday' is not a date"),
        (["--since", "2026-13-01"], "'2026-13-01' is not a date"),
        (["--since", ""], "'' is not a date"),
        (["--by", "week"], "invalid choice: 'week'"),
        # UTC is past datetime's last day, or before its first: a traceback once
        (["--since", "9999-12-31T23:30-01:00"], "'9999-12-31T23:30-01:00' is out of range"),
        (["--since", "0001-01-01T00:30+01:00"], "'0001-01-01T00:30+01:00' is out of range"),
    ],
)
def test_board_usage_refuses_bad_arguments_in_one_line(
    repo: Path, store: Store, args: list[str], says: str
) -> None:
    spent_board(store)
    before = store.change_count()
    res = run_cli(repo, "usage", *args)
    assert res.returncode == 2 and res.stdout == "", res
    assert len(res.stderr.strip().splitlines()) == 1 and says in res.stderr, res.stderr
    assert store.change_count() == before


def test_status_says_todays_spend_and_the_budget(repo: Path, store: Store) -> None:
    from board.core.cards.budget import day_start
    from board.core.cards.waits import now

    card = store.create(CardDraft(title="today", spec="s")).id
    drive_on(store, card, "cheap", day_start(now()).replace("00:00:00.000", "00:00:01.000"),
             Usage(10, 1, None, 0.25, "m"))  # fmt: skip
    drive_on(store, card, "cheap", "2020-01-01T00:00:00.000Z", Usage(cost_usd=9.0))
    got = json.loads(run_cli(repo, "status", "--json").stdout)
    assert got["spend_today"] == 0.25
    assert got["budget"] == {
        "day_usd": None, "card_usd": None, "hard": False, "paused": False, "until": None,
        "reason": "", "resumed": False,
    }  # fmt: skip
    assert "spend today (UTC): $0.25" in run_cli(repo, "status").stdout

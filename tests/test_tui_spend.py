"""What the agents spent, where the operator looks (issue 41): the card screen (each
attempt and the card's total, failed attempts included), a board row's cost when the lane
is wide enough, and the header's spend today with the day budget's pause. Real SQLite
store, usage written through `Store.record_usage` as the drive writes it (tests/support/
spend.py); money is never a zero that stands for "not said", and the money budget's words
are not the timeout budget's."""

from __future__ import annotations

from datetime import datetime

from board.core.model import Pause, Usage
from board.core.store import Expect
from board.tui.card import CardScreen
from board.tui.widgets import COST_FROM, HealthBar

from tests.support.boards import make_board
from tests.support.spend import DONE_TOTAL, OVER, OVER_TOTAL, costs_board, write_attempts
from tests.support.tui import (
    TWO_TIERS,
    add,
    goto,
    lane,
    loaded,
    make_app,
    run_pilot,
    screen_lines,
    settle,
)
from tests.support.waiting import wait_for

NINE_AM = datetime.fromisoformat("2026-01-01T09:00:00+00:00")  # the header's "today"


def nine_am() -> datetime:
    return NINE_AM


def text_of(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(screen_lines(app))


async def test_the_card_screen_shows_each_attempt_and_the_total_with_unpriced_as_partial(
    tmp_path,
) -> None:
    """c-1's three attempts, the unpriced one included, each with its tokens, cost, model
    and turns, and the card's total from the store's sum: the known cost plus `1 unpriced`,
    never that attempt's cost as $0."""
    board = costs_board(tmp_path)
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(160, 48)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, CardScreen)
        text = text_of(app)
        assert f"spent       {OVER_TOTAL} over 3 attempts" in text, text
        assert "94,110 in · 6,130 out · 208,000 cached" in text, text  # the three summed
        lines = screen_lines(app)
        for attempt, tier, status, _r, _s, _e, usage in OVER:
            row = next((ln for ln in lines if ln.split()[:2] == [str(attempt), tier]), "")
            assert row, f"attempt {attempt} not listed:\n{text}"
            for word in (status, f"{usage.input_tokens:,}", f"{usage.output_tokens:,}",
                         usage.model, str(usage.turns)):  # fmt: skip
                assert word in row, f"{word!r} not in attempt {attempt}'s row: {row!r}"
            cost = "unpriced" if usage.cost_usd is None else f"${usage.cost_usd}"
            assert cost in row, f"{cost!r} not in attempt {attempt}'s row: {row!r}"
        assert "$0.00" not in text and "$0 " not in text, "an unpriced attempt read as free"
    board.close()


async def test_a_card_whose_agent_said_nothing_shows_a_dash_not_a_zero(tmp_path) -> None:
    board = costs_board(tmp_path)
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(160, 48)) as pilot:
        await loaded(pilot)
        await goto(pilot, "review", "c-4")
        await pilot.press("enter")
        await settle(pilot)
        text = text_of(app)
        assert "spent       — (its 1 attempt said nothing of what they spent)" in text, text
        assert "$" not in text, text
    board.close()


async def test_a_wide_lane_shows_each_cards_cost_read_in_one_query(tmp_path) -> None:
    """From COST_FROM cells a row ends with what its card's attempts spent (the done card's
    two, the over-budget card's partial sum); a card whose drives said nothing shows none.
    The board reads every card's sum in one query a refresh, never one a card; a narrow
    terminal leaves the column out."""
    board = costs_board(tmp_path)
    store = board.store
    calls: list[str] = []
    sums, per_card = store.usage_sums, store.card_usage

    def counted_sums(by: str, since: str | None = None):  # type: ignore[no-untyped-def]
        calls.append(f"usage_sums:{by}")
        return sums(by, since)

    def counted_card(card_id: str):  # type: ignore[no-untyped-def]
        calls.append("card_usage")
        return per_card(card_id)

    store.usage_sums = counted_sums  # type: ignore[method-assign]
    store.card_usage = counted_card  # type: ignore[method-assign]
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(COST_FROM + 20, 30)) as pilot:
        screen = await loaded(pilot)
        await wait_for(pilot, lambda: screen.spend is not None, what="the spend read")
        await settle(pilot)
        assert calls.count("usage_sums:card") == 1 and "card_usage" not in calls, calls
        ready = "\n".join(ln for ln in screen_lines(app) if "c-1 " in ln)
        assert ready.rstrip().endswith(OVER_TOTAL), ready
        await goto(pilot, "done", "c-2")
        await settle(pilot)
        row = next(ln for ln in screen_lines(app) if " c-2 " in ln)
        assert row.rstrip().endswith(DONE_TOTAL), row
        for quiet in ("c-3 ", "c-4 "):  # running, and an agent that reports nothing
            rows = [ln for ln in screen_lines(app) if f" {quiet}" in ln]
            assert rows and all("$" not in r and "—" not in r for r in rows), rows
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(80, 30)) as pilot:
        screen = await loaded(pilot)
        await wait_for(pilot, lambda: screen.spend is not None, what="the spend read")
        await settle(pilot)
        assert lane(screen, "ready").costs, "the costs were read"
        rows = [ln.rstrip() for ln in screen_lines(app)]
        costs = [r for r in rows if r.endswith((OVER_TOTAL, DONE_TOTAL))]
        assert not costs, f"a narrow lane drew the cost column: {costs}"
    board.close()


async def test_the_header_says_todays_spend_and_the_day_budgets_pause(tmp_path) -> None:
    """Today (UTC) counts the drives that ended since midnight, the unpriced one as
    partial; yesterday's are not in it. A new drive's usage shows after the store changes.
    The day budget's pause says until when; the operator's resume of the day is no pause."""
    board = costs_board(tmp_path)
    store = board.store
    today = [
        (1, "default", "failed", "gate-red: 1", "2026-01-01T02:00:00.000Z",
         "2026-01-01T03:00:00.000Z", Usage(100, 10, 0, 0.25, "claude-sonnet-4-5", 2)),
        (2, "default", "failed", "gate-red: 1", "2026-01-01T04:00:00.000Z",
         "2026-01-01T05:00:00.000Z", Usage(100, 10, None, None, "local", 1)),
    ]  # fmt: skip
    write_attempts(board, "c-5", today)
    app = make_app(board, poll=0.05, clock=nine_am)
    async with run_pilot(app, size=(200, 30)) as pilot:
        screen = await loaded(pilot)
        bar = screen.query_one(HealthBar)
        await wait_for(pilot, lambda: "today" in bar.text, what="today's spend")
        assert "spent $0.25 + 1 unpriced today" in bar.text, bar.text
        assert "budget" not in bar.text, bar.text

        write_attempts(
            board, "c-5",
            [(3, "smart", "failed", "gate-red: 2", "2026-01-01T06:00:00.000Z",
              "2026-01-01T07:00:00.000Z", Usage(100, 10, 0, 1.5, "claude-opus-4", 3))],
        )  # fmt: skip
        store.update("c-5", Expect(), {"priority": 3}, who="fixture")  # the drive's card edge
        await wait_for(pilot, lambda: "$1.75" in bar.text, what="the new spend")
        assert "spent $1.75 + 1 unpriced today" in bar.text, bar.text

        reason = "today's spend $1.75 reached the day budget of $1.50 ([budget] day_usd)"
        store.pause_tier(
            Pause(
                "budget",
                "over-budget",
                reason,
                "2026-01-02T00:00:00.000Z",
                "2026-01-01T08:00:00.000Z",
            )
        )
        await wait_for(pilot, lambda: "budget paused" in bar.text, what="the budget's pause")
        assert "budget paused until 00:00 UTC" in bar.text, bar.text
        assert "budget paused (" not in bar.text, "said as a tier's pause too"

        store.pause_tier(
            Pause("budget", "resumed", "resumed by the operator", "2026-01-02T00:00:00.000Z",
                  "2026-01-01T08:30:00.000Z")
        )  # fmt: skip
        await wait_for(pilot, lambda: "paused" not in bar.text, what="the resume")
    board.close()


async def test_the_header_reads_its_day_budget_from_board_toml(tmp_path) -> None:
    """`[budget] day_usd` in board.toml is the `of $…` the header reads today's spend
    against."""
    board = make_board(tmp_path, config_overrides={**TWO_TIERS, "budget": {"day_usd": 5.0}})
    write_attempts(
        board, add(board.store, "a card", "ready"),
        [(1, "default", "failed", "gate-red: 1", "2026-01-01T02:00:00.000Z",
          "2026-01-01T03:00:00.000Z", Usage(100, 10, 0, 0.25, "claude-sonnet-4-5", 2))],
    )  # fmt: skip
    app = make_app(board, poll=0.05, clock=nine_am)
    async with run_pilot(app, size=(200, 30)) as pilot:
        screen = await loaded(pilot)
        bar = screen.query_one(HealthBar)
        await wait_for(pilot, lambda: "today" in bar.text, what="today's spend")
        assert "spent $0.25 of $5.00 today" in bar.text, bar.text
    board.close()


async def test_money_and_the_timeout_budget_say_different_words(tmp_path) -> None:
    """The card past its money budget says `over-budget` and what it spent; the card past
    its timeout budget says `too-wide` and its timeouts, and nothing of money or budgets."""
    board = costs_board(tmp_path)
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(120, 40)) as pilot:
        await loaded(pilot)
        rows = screen_lines(app)
        over = next(ln for ln in rows if " c-1 " in ln)
        wide = next(ln for ln in rows if " c-5 " in ln)
        assert "!over-budget" in over and "$" in over, over
        assert "!too-wide" in wide and "$" not in wide and "budget" not in wide, wide
        await goto(pilot, "ready", "c-5")
        await pilot.press("enter")
        await settle(pilot)
        text = text_of(app)
        assert "timeouts 2" in text and "too-wide" in text, text
        assert "budget" not in text and "spent" not in text and "$" not in text, text
    board.close()


def test_the_headers_spend_words_with_a_day_budget_and_when_nothing_was_said() -> None:
    """With a day budget the spend reads against it (`of $5.00`), even before anything was
    spent (`$0.00 of`: a budget that counts); with none and nothing said, no spend words."""
    from board.core.model import UsageSum
    from board.tui.health import Health, header_parts

    health = Health(NINE_AM, 2)
    spent = UsageSum("2026-01-01", 3, 300, 30, 0, 1.75, 1)

    def words(spend: UsageSum | None, day_usd: float) -> str:
        return "".join(t for t, _ in header_parts(health, 0, 200, spend, day_usd))

    assert "spent $1.75 + 1 unpriced of $5.00 today" in words(spent, 5.0)
    assert "spent $0.00 of $5.00 today" in words(None, 5.0)
    assert "spent" not in words(None, 0.0) and "spent" not in words(UsageSum("x", 2), 0.0)

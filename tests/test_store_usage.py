"""What each drive's coder spent, as the store keeps and sums it (issue 41), on the SQLite
file and on PostgreSQL (the `backends` mark): a drive row records tokens, cost, model and
turns, an unknown stays unknown (never a zero in a sum), the sums per card, tier and day are
the drive rows' own, and a board made before drives recorded usage opens with its drives
intact and their usage unknown.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from board.core.errors import NotFound, Refused
from board.core.model import MOST_TOKENS, MOST_USD, CardDraft, Drive, Usage, UsageSum
from board.core.records import replace
from board.core.store import SCHEMA_VERSION, SQLiteStore, Store
from board.core.store.postgres import PostgresStore

from tests.support import old_code

pytestmark = pytest.mark.backends()

# the last commit whose drives recorded no usage (schema 5)
OLD = "7138d6b"
V5_BOARD = Path(__file__).with_name("support") / "v5_board.py"


class Clock:
    """The store's clock, set by the test."""

    def __init__(self, at: str) -> None:
        self.at = at

    def __call__(self) -> str:
        return self.at


def drive(store: Store, clock: Clock, card: str, tier: str, day: str, usage: Usage | None,
          status: str = "passed") -> Drive:  # fmt: skip
    """A drive of `card` on `tier` that ran on `day` (09:00 to 10:00 UTC) and spent `usage`."""
    clock.at = f"{day}T09:00:00.000Z"
    row = store.start_drive(card, tier, store.next_attempt(card), "", 4242)
    clock.at = f"{day}T10:00:00.000Z"
    store.update_drive(row.id, status=status, result=status)
    if usage is not None:
        store.record_usage(row.id, usage)
    return store.get_drive(row.id)


def test_a_drive_records_what_its_coder_spent_and_an_unknown_stays_unknown(
    new_store: Callable[..., Store],
) -> None:
    clock = Clock("2026-03-01T09:00:00.000Z")
    store = new_store(clock=clock)
    card = store.create(CardDraft(title="t", spec="s")).id
    row = store.start_drive(card, "cheap", 1, "", 4242)
    assert row.usage is None and store.get_drive(row.id).usage is None
    assert (row.input_tokens, row.cost_usd, row.model, row.turns) == (None, None, "", None)

    spent = Usage(1200, 340, 5000, 0.0125, "claude-sonnet-4-5", 3)
    got = store.record_usage(row.id, spent)
    assert got.usage == spent and store.get_drive(row.id).usage == spent
    assert [d.usage for d in store.live_drives()] == [spent]
    assert [d.usage for d in store.list_drives(card)] == [spent]
    assert [d.usage for d in store.drives_since("")] == [spent]
    assert json.loads(json.dumps(got.to_json()))["cost_usd"] == 0.0125

    # tokens said, cost not: the cost stays unknown, not 0
    partial = Usage(10, 2, None, None, "gpt-5-codex", None)
    assert store.record_usage(row.id, partial).usage == partial
    assert store.get_drive(row.id).cost_usd is None

    # refused, and nothing written
    for bad in (
        Usage(-1), Usage(output_tokens=True),  # type: ignore[arg-type]
        Usage(cost_usd=-0.5), Usage(cost_usd=math.nan), Usage(cost_usd=math.inf),
        Usage(cost_usd="0.1"),  # type: ignore[arg-type]
        Usage(model=None),  # type: ignore[arg-type]
        Usage(turns=1.5),  # type: ignore[arg-type]
    ):  # fmt: skip
        with pytest.raises(Refused, match="drive usage"):
            store.record_usage(row.id, bad)
        assert store.get_drive(row.id).usage == partial, bad
    with pytest.raises(Refused, match="cached_tokens"):
        store.update_drive(row.id, cached_tokens=-3, status="failed")
    assert store.get_drive(row.id).live, "a refused update wrote its other fields"
    with pytest.raises(NotFound, match="no drive 'd-nope'"):
        store.record_usage("d-nope", spent)
    # update_drive takes the same fields
    assert store.update_drive(row.id, cost_usd=0.5).cost_usd == 0.5


def python_sums(drives: list[Drive], key: Callable[[Drive], str]) -> dict[str, UsageSum]:
    """What the sums must be, added up here one drive at a time."""
    groups: dict[str, list[Drive]] = {}
    for d in drives:
        groups.setdefault(key(d), []).append(d)

    def total(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return sum(known) if known else None

    return {
        k: UsageSum(
            k,
            len(ds),
            total([d.input_tokens for d in ds]),  # type: ignore[misc]
            total([d.output_tokens for d in ds]),  # type: ignore[misc]
            total([d.cached_tokens for d in ds]),  # type: ignore[misc]
            total([d.cost_usd for d in ds]),
            sum(
                d.cost_usd is None
                and any(t is not None for t in (d.input_tokens, d.output_tokens, d.cached_tokens))
                for d in ds
            ),
        )
        for k, ds in groups.items()
    }


def same(got: list[UsageSum], want: dict[str, UsageSum]) -> None:
    assert sorted(s.key for s in got) == sorted(want), (got, want)
    for s in got:
        w = want[s.key]
        assert (s.drives, s.input_tokens, s.output_tokens, s.cached_tokens, s.unpriced) == (
            w.drives, w.input_tokens, w.output_tokens, w.cached_tokens, w.unpriced,
        ), s  # fmt: skip
        assert (s.cost_usd is None) == (w.cost_usd is None), s
        assert s.cost_usd is None or math.isclose(s.cost_usd, w.cost_usd or 0.0), s


def test_the_sums_per_card_tier_and_day_are_the_drive_rows_sums(
    new_store: Callable[..., Store],
) -> None:
    clock = Clock("2026-03-01T08:00:00.000Z")
    store = new_store(clock=clock)
    a, b, c, idle = (store.create(CardDraft(title=t, spec="s")).id for t in "abcd")
    # c-1 in three attempts over two days and two tiers, failed ones included
    drive(store, clock, a, "cheap", "2026-03-01", Usage(1000, 100, 50, 0.02, "m1", 2), "failed")
    drive(store, clock, a, "cheap", "2026-03-01", Usage(2000, 200, None, 0.03, "m1", 4), "failed")
    drive(store, clock, a, "smart", "2026-03-02", Usage(500, 50, 10, 0.04, "m2", 1))
    # c-2: tokens without a price, then a drive that said nothing at all
    drive(store, clock, b, "cheap", "2026-03-02", Usage(700, 70, None, None, "m3", None))
    drive(store, clock, b, "cheap", "2026-03-03", None, "crashed")
    # c-3: priced, on the last day
    drive(store, clock, c, "smart", "2026-03-03", Usage(None, None, None, 0.5, "m2", 9))
    # c-10 (sorted after c-3, not before it): one more, to keep the order honest
    for _ in range(6):
        store.create(CardDraft(title="more", spec="s"))
    drive(store, clock, "c-10", "smart", "2026-03-03", Usage(1, 1, 1, 0.001, "m2", 1))

    rows = store.list_drives(limit=1000)
    assert len(rows) == 7
    same(store.usage_sums("card"), python_sums(rows, lambda d: d.card))
    by_card = {s.key: s for s in store.usage_sums("card")}
    assert [*by_card] == ["c-1", "c-2", "c-3", "c-10"]
    assert by_card["c-1"] == UsageSum("c-1", 3, 3500, 350, 60, by_card["c-1"].cost_usd, 0)
    assert math.isclose(by_card["c-1"].cost_usd or 0, 0.09)
    assert by_card["c-2"] == UsageSum("c-2", 2, 700, 70, None, None, 1), "a zero was made up"
    assert by_card["c-3"] == UsageSum("c-3", 1, None, None, None, 0.5, 0)
    same(store.usage_sums("tier"), python_sums(rows, lambda d: d.tier))
    assert [s.key for s in store.usage_sums("tier")] == ["cheap", "smart"]
    same(store.usage_sums("day"), python_sums(rows, lambda d: d.ended_at[:10]))
    assert [s.key for s in store.usage_sums("day")] == ["2026-03-01", "2026-03-02", "2026-03-03"]

    since = "2026-03-02T00:00:00.000Z"
    recent = [d for d in rows if d.ended_at >= since]
    same(store.usage_sums("card", since), python_sums(recent, lambda d: d.card))
    same(store.usage_sums("day", since), python_sums(recent, lambda d: d.ended_at[:10]))
    assert store.usage_sums("tier", "2027-01-01") == []

    # a card's total: every attempt, failed ones included; a card with none has none
    assert store.card_usage(a) == by_card["c-1"]
    assert store.card_usage(idle) == UsageSum(idle, 0, None, None, None, None, 0)
    # the day's spend: known costs of the drives ended since
    assert math.isclose(store.spend_since("2026-03-03T00:00:00.000Z"), 0.501)
    assert math.isclose(store.spend_since(since), 0.541)
    assert store.spend_since("2027-01-01T00:00:00.000Z") == 0.0
    # a drive still running counts from its start, by what it has recorded
    clock.at = "2026-03-04T01:00:00.000Z"
    live = store.start_drive(idle, "cheap", 1, "", 4242)
    store.record_usage(live.id, Usage(cost_usd=0.25))
    assert math.isclose(store.spend_since("2026-03-04T00:00:00.000Z"), 0.25)
    assert [s.key for s in store.usage_sums("day")][-1] == "2026-03-04"

    with pytest.raises(Refused, match="by must be one of card, tier, day, not 'week'"):
        store.usage_sums("week")


def test_a_figure_past_what_a_drive_can_spend_is_refused_and_the_sums_hold(
    new_store: Callable[..., Store],
) -> None:
    """A count past a BIGINT failed on the SQLite file with Python's OverflowError (no
    BoardError: the drive recording it crashed) and on PostgreSQL as a StoreError; two
    costs of 1e308 summed to inf on the file and failed every sum on PostgreSQL. Past
    MOST_TOKENS or MOST_USD a figure is refused on both, nothing written, and the most a
    drive may record sums the same on both."""
    clock = Clock("2026-03-01T09:00:00.000Z")
    store = new_store(clock=clock)
    card = store.create(CardDraft(title="t", spec="s")).id
    row = drive(store, clock, card, "cheap", "2026-03-01", Usage(1, 2, 3, 0.5, "m", 1))
    for bad in (
        Usage(10**30), Usage(2**63), Usage(cached_tokens=MOST_TOKENS + 1), Usage(turns=2**64),
        Usage(cost_usd=1e308), Usage(cost_usd=MOST_USD * 1.01),
    ):  # fmt: skip
        with pytest.raises(Refused, match="drive usage: .* must be a .* from 0 to "):
            store.record_usage(row.id, bad)
        with pytest.raises(Refused, match="drive usage"):
            store.update_drive(row.id, **{k: v for k, v in bad.to_json().items() if v})
        assert store.get_drive(row.id).usage == Usage(1, 2, 3, 0.5, "m", 1), bad
    most = Usage(MOST_TOKENS, MOST_TOKENS, MOST_TOKENS, MOST_USD, "m", MOST_TOKENS)
    for _ in range(3):
        drive(store, clock, card, "cheap", "2026-03-01", most)
    total = store.card_usage(card)
    assert total == UsageSum(card, 4, 3 * MOST_TOKENS + 1, 3 * MOST_TOKENS + 2,
                             3 * MOST_TOKENS + 3, total.cost_usd, 0)  # fmt: skip
    assert total.cost_usd == 3 * MOST_USD + 0.5 == store.spend_since("2026-03-01")
    assert store.usage_sums("day")[0] == replace(total, key="2026-03-01")


def test_a_board_made_before_drives_recorded_usage_opens_with_its_drives_intact(
    tmp_path: Path, store_url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The code of commit OLD makes a schema-5 board; this code opens it: schema 6 and on
    (the current one), every drive and card as that code read them, usage unknown, and new
    usage recorded. What schema 7 adds (a card's best_of, a drive's candidate) is
    tests/test_store_best_of.py's."""
    where = store_url or str(tmp_path / "board.db")
    pkg = old_code.package_of(OLD, tmp_path_factory.mktemp("v5-code"))
    out = tmp_path / "old.json"
    old_code.run_script(V5_BOARD, pkg, tmp_path, where, str(out))
    old = json.loads(out.read_text(encoding="utf-8"))
    assert Path(old["code"]).is_relative_to(pkg) and old["schema"] == "5"
    assert len(old["drives"]) == 3 and "cost_usd" not in old["drives"][0]

    store = PostgresStore(where) if store_url else SQLiteStore(where)
    try:
        assert store._read("SELECT value FROM meta WHERE key = 'schema'") == [
            (str(SCHEMA_VERSION),)
        ]
        drives = store.list_drives()
        assert len(drives) == 3
        for before, now in zip(old["drives"], drives, strict=True):
            got = now.to_json()
            assert {k: got[k] for k in before} == before, "a drive changed in the upgrade"
            assert now.usage is None and now.model == ""
        cards = [c.to_json() for c in store.list_cards()]
        assert cards == [
            {**before, "best_of": None, "race": [], **old_code.NO_SOURCE} for before in old["cards"]
        ]
        assert store.card_usage("c-1") == UsageSum("c-1", 2, None, None, None, None, 0)
        assert store.spend_since("") == 0.0
        store.record_usage(drives[0].id, Usage(10, 5, None, 0.01, "m", 1))
        assert store.get_drive(drives[0].id).usage == Usage(10, 5, None, 0.01, "m", 1)
    finally:
        store.close()

"""A row read back as a card: the quick path a listing takes must make exactly the card the
field-by-field checks make, and leave every odd row to those checks, which name the field.

`board card list` reads thousands of rows; checking each field one by one and building the
frozen card through its __init__ cost more than the rest of the verb, so plain rows now
take a quicker path (core/store/cardrow.py `_plain_card`). These tests hold it to the checks
it skips: on good rows the same card (equal, same fields, same hash, still frozen), on each
kind of bad value the same CorruptCard.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from board.core import records
from board.core.errors import CorruptCard
from board.core.model import Blocked, Card
from board.core.store import cardrow
from board.core.store.cardrow import _card_from_row, _cards, _cards_json, _checked_card

GOOD: tuple[Any, ...] = (
    "c-7", 7, "a title", "a spec", "it works", "feature", "ready", 2, "ann", "feat-c-7",
    "", "", "", '["ui", "x"]', '["src/**"]', "", "2026-01-01T00:00:00Z",
    "2026-01-02T00:00:00Z", 3, "", "", "", None, "[]", "", "",
)  # fmt: skip

COLS = (
    "id seq title spec acceptance kind lane priority assignee branch pr_url blocked_class "
    "blocked_reason labels surface drive created_at updated_at version not_before pr_state "
    "pr_polled_at best_of race source source_url"
).split()


def row(**changes: Any) -> tuple[Any, ...]:
    values = list(GOOD)
    for name, value in changes.items():
        values[COLS.index(name)] = value
    return tuple(values)


class Text(str):
    """A str subclass: readable as text, but not the type a driver hands back."""


class Whole(int):
    """An int subclass (not bool)."""


PLAIN = [
    row(),
    row(labels="[]", surface="[]"),
    row(blocked_class="held", blocked_reason="why"),
    row(blocked_class="", blocked_reason="ignored when not blocked"),
    row(blocked_class=None, blocked_reason=None),
    row(lane="done", kind="task", priority=0, version=0),
    row(title="ünï 😀 \u2028 \x1b[2J", labels='["\\u00e9", "a\\nb"]'),
    row(labels=b'["bytes"]'),  # json.loads reads bytes too
    row(title=Text("a str subclass")),
    row(priority=Whole(3)),
    row(best_of=0),  # the board's, as NULL is
    row(best_of=1),
    row(best_of=16),
    row(best_of=Whole(4)),
    row(race='["quick", "careful"]'),
    row(race='["quick", "quick", "quick"]'),  # a tier may repeat
    row(race=json.dumps(["t"] * 16)),
    row(race='[ "spaced" ]'),  # a hand edit json reads
]

BAD = [
    row(priority="high"),
    row(priority=True),
    row(seq=1.5),
    row(version=None),
    row(title=None),
    row(spec=b"bytes"),
    row(pr_polled_at=3),
    row(lane="limbo"),
    row(kind="epic"),
    row(blocked_class="bogus", blocked_reason="r"),
    row(blocked_class="held", blocked_reason="  "),
    row(blocked_class="held", blocked_reason=None),
    row(blocked_class=5, blocked_reason="r"),
    row(labels="{nope"),
    row(labels='{"a": 1}'),
    row(labels="[1]"),
    row(surface="[1"),
    row(surface=None),
    row(surface="[" * 100_000),
    row(best_of=17),
    row(best_of=-1),
    row(best_of=True),
    row(best_of="3"),
    row(best_of=2.0),
    row(race=None),
    row(race="quick,careful"),
    row(race='[""]'),
    row(race='["  "]'),
    row(race="[1]"),
    row(race=json.dumps(["t"] * 17)),
]

DEPS = [
    (),
    ("c-2",),
    ("c-3", "c-1"),
    ("c-10", "c-9", "x-1", "c-2"),
    ("c-1", 5),
    ("c-²", "c-1", "c-٣"),  # digits to str.isdigit, not to int(): a hand edit, not a crash
]


@pytest.mark.parametrize("deps", DEPS, ids=repr)
@pytest.mark.parametrize("values", PLAIN + BAD, ids=repr)
def test_a_row_reads_as_the_field_by_field_checks_read_it(
    values: tuple[Any, ...], deps: tuple[Any, ...]
) -> None:
    try:
        want: Card | str = _checked_card(values, deps)
    except CorruptCard as exc:
        want = exc.line()
    try:
        got: Card | str = _card_from_row(values, deps)
    except CorruptCard as exc:
        got = exc.line()
    assert got == want
    if isinstance(got, Card):
        assert isinstance(want, Card)
        assert vars(got) == vars(want)
        assert [type(v) for v in vars(got).values()] == [type(v) for v in vars(want).values()]
        assert hash(got) == hash(want) and repr(got) == repr(want)


def test_a_quick_card_is_the_frozen_record_it_always_was() -> None:
    card = _card_from_row(row(blocked_class="held", blocked_reason="why"), ("c-3", "c-1"))
    assert card == Card(**{name: getattr(card, name) for name in records.fields(Card)})
    assert card.blocked == Blocked("held", "why") and card.deps == ("c-1", "c-3")
    assert card.labels == ("ui", "x") and card.surface == ("src/**",)
    with pytest.raises(AttributeError):
        card.title = "changed"  # type: ignore[misc]
    assert records.replace(card, title="t").title == "t"
    assert records.as_dict(card)["id"] == "c-7"


def test_a_card_s_own_best_of_reads_back_and_a_hand_edit_past_its_bounds_is_named() -> None:
    """NULL and 0 are the board's `[coder] best_of` (0 on the card, null in its JSON); a
    count the CLI would refuse, put there by hand, names the card and the field."""
    assert _card_from_row(row(best_of=None), ()).best_of == 0
    assert _card_from_row(row(best_of=0), ()).to_json()["best_of"] is None
    assert _card_from_row(row(best_of=3), ()).to_json()["best_of"] == 3
    assert _line(row(best_of=17)) == (
        "card c-7 cannot be read: its field best_of in the store holds 17, not a count of "
        "candidates from 1 to 16 (NULL or 0: the board's)"
    )


def test_a_card_s_race_reads_back_and_a_hand_edit_that_is_no_race_is_named() -> None:
    """'[]' is no race (an empty list in its JSON); a race reads back in its order, a tier
    repeated; a blank name or more names than a best of may count names the card and the
    field."""
    assert _card_from_row(row(), ()).race == ()
    assert _card_from_row(row(), ()).to_json()["race"] == []
    card = _card_from_row(row(race='["b", "a", "b"]'), ())
    assert card.race == ("b", "a", "b") and card.to_json()["race"] == ["b", "a", "b"]
    assert _line(row(race='["a", " "]')) == (
        'card c-7 cannot be read: its field race in the store holds \'["a", " "]\', not a '
        "list of up to 16 tier names"
    )
    assert _line(row(race="a,b")) == (
        "card c-7 cannot be read: its field race in the store holds 'a,b', not a JSON list of text"
    )


def test_a_listing_shares_parsed_lists_but_no_card_sees_another_s_change() -> None:
    """Labels parsed once per listing are tuples: shared, and nothing can change them."""
    rows = [row(id=f"c-{i}", seq=i) for i in range(1, 4)] + [row(id="c-4", labels="[1]")]
    unreadable: list[CorruptCard] = []
    cards = _cards(rows, {"c-2": ["c-1"]}, unreadable)
    assert [c.id for c in cards] == ["c-1", "c-2", "c-3"]
    assert [c.deps for c in cards] == [(), ("c-1",), ()]
    assert all(c.labels == ("ui", "x") and type(c.labels) is tuple for c in cards)
    assert [e.line() for e in unreadable] == [_line(row(id="c-4", labels="[1]"))]


def _line(values: tuple[Any, ...]) -> str:
    with pytest.raises(CorruptCard) as exc:
        _checked_card(values, ())
    return exc.value.line()


def test_a_listing_fills_each_card_s_dict_in_one_call() -> None:
    """The quick maker (one dict update per card) is in use, not the constructor it falls
    back to: its self-check passes for today's Card."""
    assert cardrow._make_card.__name__ == "make"


def _dumped(
    values: list[tuple[Any, ...]], deps: dict[str, list[str]]
) -> tuple[str, list[str]] | str:
    """What `card list --json` printed before `_cards_json`: each row's card as the
    field-by-field checks make it (a bad one left out and named), then json.dumps."""
    cards, unreadable = [], []
    for values_ in values:
        try:
            cards.append(_checked_card(values_, deps.get(values_[0], ())))
        except CorruptCard as exc:
            unreadable.append(exc.line())
    text = json.dumps([c.to_json() for c in cards], indent=2, ensure_ascii=False)
    return text, unreadable


def _written(
    values: list[tuple[Any, ...]], deps: dict[str, list[str]]
) -> tuple[str, list[str]] | str:
    unreadable: list[CorruptCard] = []
    try:
        text = _cards_json(values, deps, unreadable)
    except CorruptCard as exc:
        return exc.line()
    return text, [e.line() for e in unreadable]


@pytest.mark.parametrize("deps", DEPS, ids=repr)
@pytest.mark.parametrize("values", PLAIN + BAD, ids=repr)
def test_a_row_s_json_is_what_json_dumps_wrote_of_its_card(
    values: tuple[Any, ...], deps: tuple[Any, ...]
) -> None:
    """`card list --json` writes plain rows straight from their columns: the same text as
    json.dumps of the card, and an odd row still left out and named (or the card that the
    checks make of it, written by json.dumps)."""
    listing = [values, row(id="c-8", seq=8)]
    by_card = {"c-7": list(deps), "c-8": list(deps)}
    assert _written(listing, by_card) == _dumped(listing, by_card)
    assert _written([values], by_card) == _dumped([values], by_card)
    # without `unreadable` a bad row raises, as the checks do
    try:
        want: Any = json.dumps(_checked_card(values, deps).to_json())
    except CorruptCard as exc:
        want = exc.line()
    try:
        got: Any = json.dumps(json.loads(_cards_json([values], by_card, None))[0])
    except CorruptCard as exc:
        got = exc.line()
    assert got == want


HOSTILE = [
    "",
    'a "quoted" word',
    "back\\slash \\n not a newline",
    "line\nbreak\r\ncarriage\ttab",
    "\x00\x01\x08\x0b\x0c\x1b[31mred\x1b[0m\x1f\x7f",
    "\u2028line sep\u2029para sep\u0085next line",
    "ünïcödé, 中文, العربية, עברית, astral 😀 🏳️‍🌈",
    "lone \ud800 surrogate",
    ",\n    ",  # the layout's own separator, inside a value
    '": [',
]
TEXT_FIELDS = [
    c
    for c in COLS
    if c not in ("id", "seq", "priority", "version", "lane", "kind", "best_of", "race")
]


@pytest.mark.parametrize("text", HOSTILE, ids=repr)
def test_hostile_text_in_any_field_is_written_as_json_dumps_wrote_it(text: str) -> None:
    rows_ = []
    for i, name in enumerate(TEXT_FIELDS, start=1):
        value: Any = text
        if name in ("labels", "surface"):
            value = json.dumps([text, text, "x"])
        if name == "blocked_class":
            rows_.append(row(id=f"c-{i}", seq=i, blocked_class="held", blocked_reason="why"))
            continue
        rows_.append(row(id=f"c-{i}", seq=i, **{name: value}))
    rows_.append(row(id="c-99", seq=99, blocked_class="held", blocked_reason=f"{text} why"))
    rows_.append(row(id="c-98", seq=98, race=json.dumps([f"{text} t", "x", f"{text} t"])))
    rows_.append(row(id=f"{text}-5", seq=100))
    deps = {"c-1": [f"{text}-2", f"{text}-10", "c-3"], "c-2": [text]}
    assert _written(rows_, deps) == _dumped(rows_, deps)
    assert _written([], {}) == _dumped([], {}) == ("[]", [])


def _list_texts() -> list[str]:
    """Texts a labels or surface column may hold: the store's own (json.dumps of lists of
    awkward text) and hand edits that are close to its form but not it."""
    words = [
        "", "a", "ui", "src/**", "a b", 'say "hi"', "back\\slash", "tab\there", "new\nline",
        "\x7f", "é", "日本", "\u2028", "😀", '", "', "]", "[", ",", " ", "\ud800",
    ]  # fmt: skip
    texts = ["[]", "[ ]", '[""]', '["]', '[""', "", "[", '["a","b"]', '[ "a"]', '["a" ]']
    texts += ['["a\tb"]', '["\x01"]', '["a\x7fb"]', '["a\u2028"]', '["\\"]', '["\\u0041"]']
    texts += ['["a", 1]', '["a", null]', '{"a": 1}', '"a"', '["a"]x', '["a", "b",]', "[[]]"]
    for size in range(1, 4):
        for start in range(len(words)):
            chosen = [words[(start + i * 7) % len(words)] for i in range(size)]
            texts.append(json.dumps(chosen))
            texts.append(json.dumps(chosen, ensure_ascii=False))
            texts.append(json.dumps(chosen, separators=(",", ":")))
    return texts


@pytest.mark.parametrize("text", _list_texts())
def test_the_usual_lists_are_read_without_json_exactly_as_json_reads_them(text: str) -> None:
    """The first paint reads its cards' labels without importing json (`_usual_list`); what
    it reads must be json's reading, and anything else must be left to json."""
    got = cardrow._usual_list(text)
    try:
        value = json.loads(text)
    except ValueError:
        assert got is None, f"{text!r} is not JSON, yet read as {got!r}"
        return
    if got is not None:
        assert type(value) is list and got == tuple(value), f"{text!r}: {got!r}"


def test_the_store_s_own_lists_take_the_quick_way() -> None:
    """The usual labels (json.dumps of plain text) do not fall back to json: the quick
    way is the one taken."""
    for labels in ([], ["ui"], ["area-0", "x y"], ["é", "日本"]):
        text = json.dumps(labels, ensure_ascii=False)
        assert cardrow._usual_list(text) == tuple(labels), text

"""A card read back from its row, every field checked.

A row holds whatever a hand edit or an older board put there. Each field is checked as it is
read, and a bad one raises CorruptCard naming the card and the field, so the operator reads
one line about one card (and a listing that asks for it leaves that card out) instead of a
failure somewhere later, far from its cause. Plain tuples in, in `_CARD_COLS` order, so any
SQL store can share it; the board's own counts of a card (its tries, rung, told mark and
timeout count) come from its card_state row, in `_STATE_COLS` order, when it has one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from board.core import records
from board.core.errors import CorruptCard
from board.core.model import BEST_OF_MAX, BEST_OF_MIN, BLOCK_CLASSES, KINDS, LANES, Blocked, Card

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any

_CARD_COLS = (
    "id, seq, title, spec, acceptance, kind, lane, priority, assignee, branch, pr_url, "
    "blocked_class, blocked_reason, labels, surface, drive, created_at, updated_at, version, "
    "not_before, pr_state, pr_polled_at, best_of, race, source, source_url"
)
_STATE_COLS = "tries, rung, told, timeouts, reviews_seen"  # a card_state row, less its card
_DRIVE_COLS = (
    "id, card, attempt, tier, status, started_at, ended_at, pgid, host, owner_pid, log, result, "
    "input_tokens, output_tokens, cached_tokens, cost_usd, model, turns, candidate, gate, "
    "lines_changed"
)


def _card_from_row(
    row: tuple[Any, ...],
    deps: Iterable[str],
    lists: dict[str, tuple[str, ...]] | None = None,
    state: tuple[Any, ...] | None = None,
) -> Card:
    """A card from its row, every field checked: a value edited in by hand (a priority
    that is not a number, an unknown block class, labels that are not JSON) raises
    CorruptCard naming the card and the field, instead of failing somewhere later.

    A listing reads thousands of rows, and the checks one field at a time cost more than
    the rest of `board card list`: so a row whose every field is of its usual type (exact
    ints and text, a known lane, kind and block class) is checked in a few C-level passes and
    its card made in one step; any other row takes the checks below, which say what is
    wrong. `lists` remembers the labels and surface JSON already parsed in this listing.
    `state` is the card's card_state row (`_STATE_COLS`), None when it has none (its counts
    are all at rest)."""
    deps = tuple(deps)
    if state is None:
        card = _plain_card(row, deps, {} if lists is None else lists)
        if card is not None:
            return card
    return _checked_card(row, deps, state)


def _checked_card(
    row: tuple[Any, ...], deps: Iterable[str], state: tuple[Any, ...] | None = None
) -> Card:
    """`_card_from_row` field by field, each wrong value named."""
    (cid, seq, title, spec, acc, kind, lane, prio, assignee, branch, pr_url, bcls, breason,
     labels, surface, drive, created, updated, version, not_before, pr_state,
     pr_polled_at, best_of, race, source, source_url) = row  # fmt: skip

    def bad(field: str, why: str) -> CorruptCard:
        return CorruptCard(str(cid), field, why)

    for name, value in (("seq", seq), ("priority", prio), ("version", version)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad(name, f"holds {_shown(value)}, not a whole number")
    texts = (
        ("id", cid), ("title", title), ("spec", spec), ("acceptance", acc), ("assignee", assignee),
        ("branch", branch), ("pr_url", pr_url), ("drive", drive), ("created_at", created),
        ("updated_at", updated), ("not_before", not_before), ("pr_state", pr_state),
        ("pr_polled_at", pr_polled_at), ("source", source), ("source_url", source_url),
    )  # fmt: skip
    for name, value in texts:
        if not isinstance(value, str):
            raise bad(name, f"holds {_shown(value)}, not text")
    if lane not in LANES:
        raise bad("lane", f"holds {_shown(lane)}, not a lane ({', '.join(LANES)})")
    if kind not in KINDS:
        raise bad("kind", f"holds {_shown(kind)}, not a kind ({', '.join(KINDS)})")
    blocked = None
    if bcls:  # NULL or '' is not blocked (see _IS_BLOCKED)
        if bcls not in BLOCK_CLASSES:
            raise bad("blocked_class", f"holds {_shown(bcls)}, not a block class")
        if not isinstance(breason, str) or not breason.strip():
            raise bad("blocked_reason", f"holds {_shown(breason)}: a block needs a reason")
        blocked = Blocked(bcls, breason)
    deps = list(deps)
    if not all(isinstance(d, str) for d in deps):
        raise bad("deps", f"holds {_shown(deps)}, not card ids")
    if best_of is not None and not _is_best_of(best_of):
        raise bad(
            "best_of",
            f"holds {_shown(best_of)}, not a count of candidates from {BEST_OF_MIN} to "
            f"{BEST_OF_MAX} (NULL or 0: the board's)",
        )
    race_list = _text_list(race, "race", bad)
    if not _is_race(race_list):
        raise bad(
            "race",
            f"holds {_shown(race)}, not a list of up to {BEST_OF_MAX} tier names",
        )
    return Card(
        id=cid,
        seq=seq,
        title=title,
        spec=spec,
        acceptance=acc,
        kind=kind,
        lane=lane,
        priority=prio,
        assignee=assignee,
        branch=branch,
        pr_url=pr_url,
        blocked=blocked,
        labels=_text_list(labels, "labels", bad),
        surface=_text_list(surface, "surface", bad),
        deps=tuple(sorted(deps, key=_id_key)),
        drive=drive,
        created_at=created,
        updated_at=updated,
        version=version,
        not_before=not_before,
        pr_state=pr_state,
        pr_polled_at=pr_polled_at,
        best_of=best_of or 0,
        race=race_list,
        source=source,
        source_url=source_url,
        **_state_fields(state, bad),
    )


def _is_best_of(value: Any) -> bool:
    """A stored best_of that is not NULL: 0 (the board's) or a count the CLI accepts."""
    if isinstance(value, bool) or not isinstance(value, int):
        return False
    return value == 0 or BEST_OF_MIN <= value <= BEST_OF_MAX


def _is_race(names: tuple[str, ...]) -> bool:
    """A stored race: no more names than a best of may count, none of them blank."""
    return len(names) <= BEST_OF_MAX and all(n.strip() for n in names)


def _state_fields(
    state: tuple[Any, ...] | None, bad: Callable[[str, str], CorruptCard]
) -> dict[str, Any]:
    """A card_state row's fields, each checked (a hand edit names the field it spoilt)."""
    if state is None:
        return {}
    raw_tries, rung, told, timeouts, reviews_seen = state
    import json  # only a card with counts

    try:
        tries = json.loads(raw_tries)
    except (TypeError, ValueError, RecursionError):
        tries = None
    if not isinstance(tries, dict) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in tries.values()
    ):
        raise bad("tries", f"holds {_shown(raw_tries)}, not a JSON object of counts")
    for name, value in (("rung", rung), ("told", told)):
        if not isinstance(value, str):
            raise bad(name, f"holds {_shown(value)}, not text")
    for name, value in (("timeouts", timeouts), ("reviews_seen", reviews_seen)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise bad(name, f"holds {_shown(value)}, not a count")
    return {
        "tries": tuple(tries.items()),
        "rung": rung,
        "told": told,
        "timeouts": timeouts,
        "reviews_seen": reviews_seen,
    }


_TEXT_ONLY = {str}  # the types a list of text (labels, deps) may hold


def _card_maker() -> Callable[[dict[str, Any]], Card]:
    """Make a Card from all its fields at once: its instance dict filled in one call, which
    is all Card's __init__ does (one store per field after reading its keywords, slower on
    a listing). Only while records.py says so of Card (`records.fills_dict`: frozen, no
    __slots__, its __init__ made from its fields); else the maker is the constructor."""
    new = object.__new__

    def make(fields: dict[str, Any]) -> Card:
        card = new(Card)
        card.__dict__.update(fields)
        return card

    return make if records.fills_dict(Card) else lambda fields: Card(**fields)


_make_card = _card_maker()


def _usual_list(raw: str) -> tuple[str, ...] | None:
    """`json.loads`' reading of a list as the store writes it, `[]`, `["a"]`, `["a", "b"]`
    (json.dumps' separators, printable text with no quote or backslash: the store writes
    other text escaped), found without json; None for any other text, which json reads.
    The board's first paint reads a screenful of cards before Textual is up, and importing
    json for their labels was a two-hundredth of it."""
    if raw == "[]":
        return ()
    if len(raw) < 4 or raw[:2] != '["' or raw[-2:] != '"]' or "\\" in raw:
        return None
    if not raw.isprintable():  # no control character (json refuses them raw), nor others
        return None
    parts = raw[2:-2].split('", "')
    for part in parts:
        if '"' in part:
            return None
    return tuple(parts)


def _plain_list(raw: Any, lists: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """A JSON list of text (labels, surface), or None to leave it to `_text_list`."""
    if type(raw) is not str:
        return None
    got = lists.get(raw)
    if got is not None:
        return got
    got = _usual_list(raw)
    if got is not None:
        lists[raw] = got
        return got
    from json import loads  # here: the usual lists need no json (see _usual_list)

    try:
        value = loads(raw)
    except (TypeError, ValueError, RecursionError):
        return None
    if type(value) is not list or not (set(map(type, value)) <= _TEXT_ONLY):
        return None
    got = lists[raw] = tuple(value)
    return got


def _plain_parts(
    row: tuple[Any, ...], deps: tuple[Any, ...], lists: dict[str, tuple[str, ...]]
) -> (
    tuple[Blocked | None, tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None
):
    """A row's block, labels, surface, sorted deps and race when its every field is of its usual
    type, or None to check it field by field (which then names what is wrong).

    Each field's type is compared by name, inline: a listing checks 10,000 rows, and a set
    of the types per row (two sets, two tuples) cost three times as much."""
    (cid, seq, title, spec, acc, kind, lane, prio, assignee, branch, pr_url, bcls, breason,
     labels, surface, drive, created, updated, version, not_before, pr_state,
     pr_polled_at, best_of, race, source, source_url) = row  # fmt: skip
    if not (type(seq) is int and type(prio) is int and type(version) is int):
        return None
    if not (
        type(cid) is str and type(title) is str and type(spec) is str and type(acc) is str
        and type(assignee) is str and type(branch) is str and type(pr_url) is str
        and type(drive) is str and type(created) is str and type(updated) is str
        and type(not_before) is str and type(pr_state) is str and type(pr_polled_at) is str
        and type(source) is str and type(source_url) is str
    ):  # fmt: skip
        return None
    if lane not in LANES or kind not in KINDS:
        return None
    if best_of is not None and not (type(best_of) is int and _is_best_of(best_of)):
        return None
    blocked = None
    if bcls:
        if bcls not in BLOCK_CLASSES or type(breason) is not str or not breason.strip():
            return None
        blocked = Blocked(bcls, breason)
    if deps and not (set(map(type, deps)) <= _TEXT_ONLY):
        return None
    label_list = _plain_list(labels, lists)
    surface_list = _plain_list(surface, lists)
    race_list = _plain_list(race, lists)
    if label_list is None or surface_list is None or race_list is None:
        return None
    if race_list and not _is_race(race_list):
        return None
    return (
        blocked,
        label_list,
        surface_list,
        tuple(sorted(deps, key=_id_key)) if len(deps) > 1 else deps,
        race_list,
    )


def _plain_card(
    row: tuple[Any, ...], deps: tuple[Any, ...], lists: dict[str, tuple[str, ...]]
) -> Card | None:
    """The card of a row whose every field is of its usual type, or None to check it field
    by field (which then names what is wrong)."""
    parts = _plain_parts(row, deps, lists)
    if parts is None:
        return None
    blocked, label_list, surface_list, deps, race_list = parts
    (cid, seq, title, spec, acc, kind, lane, prio, assignee, branch, pr_url, _bcls, _breason,
     _labels, _surface, drive, created, updated, version, not_before, pr_state,
     pr_polled_at, best_of, _race, source, source_url) = row  # fmt: skip
    return _make_card(
        {
            "id": cid,
            "title": title,
            "spec": spec,
            "acceptance": acc,
            "kind": kind,
            "lane": lane,
            "priority": prio,
            "assignee": assignee,
            "branch": branch,
            "pr_url": pr_url,
            "blocked": blocked,
            "labels": label_list,
            "deps": deps,
            "surface": surface_list,
            "created_at": created,
            "updated_at": updated,
            "version": version,
            "seq": seq,
            "drive": drive,
            "not_before": not_before,
            "pr_state": pr_state,
            "pr_polled_at": pr_polled_at,
            "tries": (),
            "rung": "",
            "told": "",
            "timeouts": 0,
            "reviews_seen": 0,
            "best_of": best_of or 0,
            "race": race_list,
            "source": source,
            "source_url": source_url,
        }
    )


def _cards_json(
    rows: Iterable[tuple[Any, ...]],
    deps: Mapping[str, list[str]],
    unreadable: list[CorruptCard] | None,
    states: Mapping[str, tuple[Any, ...]] | None = None,
) -> str:
    """`json.dumps([card.to_json() for card in _cards(rows, deps, unreadable)], indent=2,
    ensure_ascii=False)`, the same text, written from the rows.

    `board card list --json` is read by scripts in loops: making a Card and then its dict for
    each row, and laying the dicts out, cost several times what reading the rows costs. A
    row whose every field is of its usual type is written straight from its columns with
    json's own C string encoder, in the layout json.dumps gives; any other row becomes its
    Card (or its CorruptCard) as in `_cards`, and is written by json.dumps itself, as is a
    card with a card_state row (`states`: few cards have one)."""
    import json  # only the cards with counts
    from json.encoder import encode_basestring as quote  # json's C encoder, ensure_ascii=False

    texts = []
    lists: dict[str, tuple[str, ...]] = {}
    shown: dict[tuple[str, ...], str] = {}
    states = states or {}
    for row in rows:
        card_deps = tuple(deps.get(row[0], ()))
        state = states.get(row[0])
        text = None if state is not None else _plain_json(row, card_deps, lists, shown, quote)
        if text is None:
            try:
                card = _checked_card(row, card_deps, state)
            except CorruptCard as exc:
                if unreadable is None:
                    raise
                unreadable.append(exc)
                continue
            # one level in: json's layout puts a newline only between tokens (text escapes its own)
            text = json.dumps(card.to_json(), indent=2, ensure_ascii=False).replace("\n", "\n  ")
        texts.append(text)
    return "[\n  " + ",\n  ".join(texts) + "\n]" if texts else "[]"


def _plain_json(
    row: tuple[Any, ...],
    deps: tuple[Any, ...],
    lists: dict[str, tuple[str, ...]],
    shown: dict[tuple[str, ...], str],
    quote: Callable[[str], str],
) -> str | None:
    """`Card.to_json()` of a plain row as json.dumps lays it out one level into a list, or
    None for a row `_plain_parts` leaves to the field-by-field checks."""
    parts = _plain_parts(row, deps, lists)
    if parts is None:
        return None
    blocked, labels, surface, deps, race = parts
    (cid, _seq, title, spec, acc, kind, lane, prio, assignee, branch, pr_url, _bcls, _breason,
     _labels, _surface, _drive, created, updated, version, not_before, pr_state,
     pr_polled_at, best_of, _race, source, source_url) = row  # fmt: skip
    block = (
        "null"
        if blocked is None
        else f'{{\n      "class": {quote(blocked.cls)},\n      "reason": '
        f"{quote(blocked.reason)}\n    }}"
    )
    return (
        f'{{\n    "id": {quote(cid)},\n    "title": {quote(title)},\n    "spec": {quote(spec)},'
        f'\n    "acceptance": {quote(acc)},\n    "kind": {quote(kind)},'
        f'\n    "lane": {quote(lane)},\n    "priority": {int.__repr__(prio)},'
        f'\n    "assignee": {quote(assignee)},\n    "blocked": {block},'
        f'\n    "labels": {_json_list(labels, shown, quote)},'
        f'\n    "deps": {_json_list(deps, shown, quote)},'
        f'\n    "surface": {_json_list(surface, shown, quote)},\n    "branch": {quote(branch)},'
        f'\n    "pr_url": {quote(pr_url)},'
        f'\n    "not_before": {quote(not_before) if not_before else "null"},'
        f'\n    "pr_state": {quote(pr_state) if pr_state else "null"},'
        f'\n    "pr_polled_at": {quote(pr_polled_at) if pr_polled_at else "null"},'
        f'\n    "created_at": {quote(created)},\n    "updated_at": {quote(updated)},'
        f'\n    "version": {int.__repr__(version)},'
        '\n    "tries": {},\n    "rung": null,\n    "told": null,\n    "timeouts": 0,'
        '\n    "reviews_seen": 0,'
        f'\n    "best_of": {int.__repr__(best_of) if best_of else "null"},'
        f'\n    "race": {_json_list(race, shown, quote)},'
        f'\n    "source": {quote(source) if source else "null"},'
        f'\n    "source_url": {quote(source_url) if source_url else "null"}\n  }}'
    )


def _json_list(
    items: tuple[str, ...], shown: dict[tuple[str, ...], str], quote: Callable[[str], str]
) -> str:
    """A list of text as json.dumps lays it out as a card's field, remembered per listing
    (most cards share their labels and surface)."""
    if not items:
        return "[]"
    text = shown.get(items)
    if text is None:
        text = shown[items] = "[\n      " + ",\n      ".join(map(quote, items)) + "\n    ]"
    return text


def _text_list(raw: Any, field: str, bad: Callable[[str, str], CorruptCard]) -> tuple[str, ...]:
    """A JSON list of text (labels, surface, race), or CorruptCard naming the field."""
    import json  # only an unusual list

    try:
        value = json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        value = None
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise bad(field, f"holds {_shown(raw)}, not a JSON list of text")
    return tuple(value)


def _shown(value: Any, limit: int = 40) -> str:
    """A stored value for a one-line message: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cards(
    rows: Iterable[tuple[Any, ...]],
    deps: Mapping[str, list[str]],
    unreadable: list[CorruptCard] | None,
    states: Mapping[str, tuple[Any, ...]] | None = None,
) -> list[Card]:
    """Cards from rows (and their card_state rows, `states`, by card); with `unreadable` a
    corrupt row is left out and noted there."""
    cards = []
    lists: dict[str, tuple[str, ...]] = {}
    states = states or {}
    for row in rows:
        try:
            cards.append(_card_from_row(row, deps.get(row[0], ()), lists, states.get(row[0])))
        except CorruptCard as exc:
            if unreadable is None:
                raise
            unreadable.append(exc)
    return cards


def _id_key(card_id: str) -> tuple[str, int]:
    prefix, _, num = card_id.rpartition("-")
    return (prefix, int(num)) if num.isascii() and num.isdigit() else (card_id, 0)

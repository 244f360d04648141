"""`--json` is read by scripts: the quicker writer must print exactly what
`json.dumps(obj, indent=2, ensure_ascii=False)` printed, for any text a card can hold.

`board card list --json` used to go through json's pure-Python indent path; the writer that
replaced it (board/cli/jsonout.py) lays out the lines itself. These tests compare the two on
hostile text (quotes, backslashes, control characters, line and paragraph separators,
astral and combining characters, a lone surrogate), on every JSON type and on what the
writer hands back to json.dumps (floats, subclasses, keys that are not text), and through the
real command line on a real board.
"""

from __future__ import annotations

import enum
import json
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
from board.core.model import Blocked, CardDraft
from board.core.store import Expect, open_store

from board.cli import jsonout
from tests.support.repos import make_repo, run_cli

HOSTILE = [
    "",
    "plain",
    'a "quoted" word',
    "back\\slash \\n not a newline",
    "line\nbreak\r\ncarriage\ttab",
    "\x00\x01\x08\x0b\x0c\x1b[31mred\x1b[0m\x1f\x7f",
    "\u2028line sep\u2029para sep\u0085next line",
    "ünïcödé, 中文, العربية, עברית",
    "astral 😀 🏳️‍🌈 𝔘𝔫𝔦",
    "e\u0301 combining, \ufeff bom, \u200b zero width",
    "lone \ud800 surrogate",
    "</script><!-- -->",
    "  leading and trailing  ",
    ",\n  ",  # the writer's own separator, inside a value
    '": [',
]


class Colour(enum.IntEnum):
    RED = 1


def _same(obj: Any) -> None:
    assert jsonout.dumps(obj) == json.dumps(obj, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_is_written_as_json_dumps_writes_it(text: str) -> None:
    _same(text)
    _same([text, text])
    _same({text: text, "k": [text], "d": {text: [text, {text: text}]}})


@pytest.mark.parametrize(
    "obj",
    [
        None,
        True,
        False,
        0,
        -1,
        2**100,
        [],
        {},
        (),
        [[]],
        [{}],
        {"a": {}},
        {"a": []},
        [[[[1]]], [[], {}], {"x": [None, True, False]}],
        ("a", ("b", ["c"])),
        [1.5, float("inf"), float("nan"), -0.0],  # floats: json.dumps writes them
        {1: "int key", None: "none key", False: "bool key", 2.5: "float key"},
        [Colour.RED, {"c": Colour.RED}],  # an int subclass: json.dumps writes it
        OrderedDict([("b", 1), ("a", 2)]),  # a dict subclass
        {"nested": OrderedDict([("x", [1, 2])])},
    ],
    ids=repr,
)
def test_every_json_type_is_written_as_json_dumps_writes_it(obj: Any) -> None:
    _same(obj)


def test_what_json_dumps_refuses_is_refused_alike() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        jsonout.dumps(loop)
    with pytest.raises(TypeError, match="not JSON serializable"):
        jsonout.dumps({"a": [object()]})


def test_card_list_and_show_print_the_cards_as_json_dumps_did(tmp_path: Path) -> None:
    """Through the real command line, every field a card has, hostile text in each."""
    repo = make_repo(tmp_path, init="cli")
    assert repo.board is not None
    store = open_store(repo.board)
    with store.transaction() as tx:
        for i, text in enumerate(HOSTILE[1:]):
            text = text.replace("\ud800", "?")  # the store takes UTF-8 only
            card = tx.create(
                CardDraft(
                    title=f"{i} {text}".replace("\n", " "),
                    spec=text,
                    acceptance=text,
                    labels=[text, "x"] if i % 2 else [],
                    surface=[f"src/{i}/**"],
                    deps=["c-1"] if i > 1 else [],
                    lane="ready" if i % 3 else "backlog",
                ),
                "c",
                "test",
            )
            if i % 4 == 1:
                tx.update(card.id, Expect(), {"blocked": Blocked("held", text or "x")}, "test")
    cards = store.list_cards()
    want = json.dumps([c.to_json() for c in cards], indent=2, ensure_ascii=False) + "\n"
    store.close()

    res = run_cli(repo.root, "card", "list", "--json")
    assert res.returncode == 0, res.stderr
    assert res.stdout == want

    res = run_cli(repo.root, "card", "show", "c-3", "--json")
    assert res.returncode == 0, res.stderr
    shown = json.loads(res.stdout)
    assert res.stdout == json.dumps(shown, indent=2, ensure_ascii=False) + "\n"
    assert shown["timeline"] and shown["dependents"] == []

"""`board card edit` and the core verb under it: a card not yet started is changed as the
operator saw it; an edit racing the loop's claim is refused naming what changed, and bad
input is one line that changes nothing (the same checks as `card add`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from board.core import config
from board.core.cards import actions
from board.core.drive.claim import claim
from board.core.errors import Conflict, Refused
from board.core.model import CardDraft
from board.core.store import Store

from tests.support.repos import run_cli


def board(cwd: Path, *args: str, **kw):
    return run_cli(cwd, *args, **kw)


def shown(repo: Path, card: str) -> dict:
    res = board(repo, "card", "show", card, "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_edit_changes_every_field_add_takes(repo: Path) -> None:
    board(repo, "card", "add", "first", "--spec", "s", "--ready")
    board(repo, "card", "add", "draft", "--surface", "old/**", "--label", "x")
    res = board(
        repo,
        "card",
        "edit",
        "c-2",
        "--title",
        "Second",
        "--spec",
        "build it",
        "--acceptance",
        "it works",
        "--priority",
        "0",
        "--dep",
        "c-1",
        "--surface",
        "src/**",
        "--no-surface",
        "old/**",
        "--no-label",
        "x",
        "--ready",
        "--json",
    )
    assert res.returncode == 0, res.stderr
    card = json.loads(res.stdout)
    assert (card["title"], card["spec"], card["acceptance"]) == ("Second", "build it", "it works")
    assert (card["priority"], card["lane"]) == (0, "ready")
    assert card["deps"] == ["c-1"] and card["surface"] == ["src/**"] and card["labels"] == []
    res = board(repo, "card", "edit", "c-2", "--no-dep", "c-1", "--json")
    assert json.loads(res.stdout)["deps"] == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("card", "edit", "c-2", "--title", ""), "needs a title"),
        (("card", "edit", "c-2", "--title", "a\nb"), "is one line"),
        (("card", "edit", "c-2", "--priority", "9"), "priority must be 0-4"),
        (("card", "edit", "c-2", "--dep", "c-77"), "no card 'c-77'"),
        (("card", "edit", "c-1", "--dep", "c-2"), "dependency cycle: c-1 → c-2 → c-1"),
        (("card", "edit", "c-2", "--no-dep", "c-9"), "has no dependency 'c-9'"),
        (("card", "edit", "c-2", "--surface", " "), "empty surface glob"),
        (("card", "edit", "c-2", "--spec", ""), "a ready card needs a spec"),
        (("card", "edit", "c-2"), "nothing to change"),
        (("card", "edit", "c-2", "--version", "0", "--title", "t"), "(version 0 → 1, now"),
        (("card", "edit", "c-3", "--title", "t"), "is done; only a card not yet started"),
        (("card", "edit", "c-404", "--title", "t"), "no card 'c-404'"),
    ],
)
def test_bad_edits_are_one_line_and_change_nothing(repo: Path, args: tuple, needle: str) -> None:
    board(repo, "card", "add", "first", "--spec", "s", "--ready")
    board(repo, "card", "add", "second", "--spec", "s", "--ready", "--dep", "c-1")
    board(repo, "card", "add", "third")
    board(repo, "done", "c-3")
    before = [shown(repo, c) for c in ("c-1", "c-2", "c-3")]
    res = board(repo, *args)
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], res.stderr
    assert [shown(repo, c) for c in ("c-1", "c-2", "c-3")] == before, "a refused edit wrote"


def test_an_edit_after_the_loops_claim_is_refused_naming_the_claim(
    cfg: config.Config, store: Store
) -> None:
    """The operator opened the card while it was ready; the loop claimed it before the
    write. The edit must not rewrite the spec of a card a coder is building."""
    card = actions.add_card(store, CardDraft("build", spec="old", lane="ready"))
    seen = store.get(card.id)
    assert claim(cfg, store, seen) is not None
    with pytest.raises(Conflict) as refused:
        actions.edit_card(store, card.id, actions.CardEdit(spec="new"), seen=seen)
    line = refused.value.line()
    assert "changed since it was shown" in line and "lane ready → working" in line, line
    assert "nothing edited" in line
    assert store.get(card.id).spec == "old"


def test_a_working_card_is_refused_even_without_a_seen_version(store: Store, cfg) -> None:
    card = actions.add_card(store, CardDraft("build", spec="old", lane="ready"))
    claim(cfg, store, store.get(card.id))
    with pytest.raises(Refused, match="is working; only a card not yet started"):
        actions.edit_card(store, card.id, actions.CardEdit(title="t"))
    assert store.get(card.id).title == "build"


def test_an_edit_that_changes_nothing_writes_nothing(store: Store) -> None:
    card = actions.add_card(store, CardDraft("same", spec="s"))
    after = actions.edit_card(store, card.id, actions.CardEdit(title="same", spec="s"), seen=card)
    assert after.version == card.version


def test_the_operators_guide_quotes_the_edit_race_refusals_as_they_read(
    cfg: config.Config, store: Store, repo: Path
) -> None:
    """Each quoted refusal in the operator's guide's `card edit` paragraph
    (docs/operator.md), its `…` standing for any text, matches the line the board really
    prints (issue 39: they had drifted apart)."""
    import re

    from tests.support.paths import ROOT

    text = " ".join((ROOT / "docs" / "operator.md").read_text().split())
    para = text[text.index("`board card edit ID` changes a card not yet started") :]
    quotes = re.findall(r"`(c-3: changed since it was shown [^`]*)`", para[:1500])
    assert len(quotes) == 2, quotes

    def pattern(quote: str) -> str:
        return ".*".join(re.escape(part) for part in quote.replace("c-3", "c-1").split("…"))

    card = actions.add_card(store, CardDraft("build", spec="old", lane="ready"))
    seen = store.get(card.id)
    claim(cfg, store, seen)
    with pytest.raises(Conflict) as refused:
        actions.edit_card(store, card.id, actions.CardEdit(spec="new"), seen=seen)
    assert re.fullmatch(pattern(quotes[0]), refused.value.line()), refused.value.line()
    res = board(repo, "card", "edit", card.id, "--version", "1", "--title", "t")
    line = res.stderr.strip().removeprefix("board: ")
    assert re.fullmatch(pattern(quotes[1]).replace("2", r"\d+"), line), line  # its version

"""`board card import` (issue 44): cards from GitHub issues, printed by the forge stand-in
(tests/standins/forge.py `issue-list`: `gh issue list --json`'s own fields, filters and
defaults), and from JSON Lines; and the way back, a PR body that closes the issue and
`[import] on_done_argv` run once. Real git (a bare origin and a clone), the real SQLite store,
the real `board` command line in a child process, real coder scripts for the drives.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from board.core import config
from board.core.cards import importing
from board.core.config.keyschema import GH_FIELDS
from board.core.model import SOURCE_CLOSED_EVENT, SOURCE_DONE_EVENT, CardDraft
from board.core.store import Expect, SQLiteStore, Store

from tests.support.boards import make_board
from tests.support.loop import drive_one, edit_tier
from tests.support.paths import STANDINS
from tests.support.repos import run_cli

FORGE = str(STANDINS / "forge.py")
URL = "https://forge.example.test/o/r/issues/{}"


def issue(number: int, title: str, body: str = "", state: str = "OPEN", **kw: Any) -> dict:
    names = kw.pop("labels", [])
    labels = [{"id": f"L{n}", "name": n, "description": "", "color": "f00"} for n in names]
    return {
        "number": number,
        "title": title,
        "body": body or f"the work of #{number}",
        "labels": labels,
        "url": URL.format(number),
        "state": state,
        "createdAt": "2026-11-01T00:00:00Z",  # a field gh has that the import does not ask for
        **kw,
    }


def _board(tmp_path: Path, **imports: Any) -> tuple[config.Config, Store, Path]:
    issues = tmp_path / "issues.json"
    argv = [sys.executable, FORGE, "issue-list", str(issues), "--json", GH_FIELDS]
    cfg, store = make_board(
        tmp_path, origin=True, tiers={"default": edit_tier()}, imports={"gh_argv": argv, **imports}
    )
    return cfg, store, issues


def _tracker(path: Path, *issues: dict, **extra: Any) -> None:
    path.write_text(json.dumps({"issues": list(issues), **extra}), encoding="utf-8")


def _import(cfg: config.Config, *args: str, input_text: str | None = None) -> Any:
    res = run_cli(cfg.root, "card", "import", *args, "--json", input_text=input_text)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _refused(cfg: config.Config, *args: str, input_text: str | None = None) -> str:
    res = run_cli(cfg.root, "card", "import", *args, input_text=input_text)
    assert res.returncode == 1, (res.stdout, res.stderr)
    assert res.stdout == "" and res.stderr.count("\n") == 1, res.stderr  # one line
    return res.stderr.strip()


def _by_source(store: Store) -> dict[str, Any]:
    return {c.source: c for c in store.list_cards() if c.source}


def _everything(store: Store) -> Any:
    cards = store.list_cards()
    return [c.to_json() for c in cards], [store.timeline(c.id) for c in cards]


def test_import_then_again_with_one_issue_edited_one_closed_one_new_and_one_started(
    tmp_path: Path,
) -> None:
    cfg, store, issues = _board(tmp_path)
    _tracker(
        issues,
        issue(1, "Add login", labels=["auth"]),
        issue(2, "Add logout", "log out; depends on #1"),
        issue(3, "Fix the typo"),
        issue(4, "Tidy the docs"),
        issue(5, "An old one", state="CLOSED"),
    )
    got = _import(cfg, "gh", "--ready")
    assert (len(got["added"]), got["skipped"]) == (4, ["gh#5"]), "a closed issue became a card"
    cards = _by_source(store)
    assert set(cards) == {"gh#1", "gh#2", "gh#3", "gh#4"}
    one = cards["gh#1"]
    assert (one.title, one.spec, one.labels, one.lane) == (
        "Add login",
        "the work of #1",
        ("auth",),
        "ready",
    )
    shown = json.loads(run_cli(cfg.root, "card", "show", one.id, "--json").stdout)
    assert (shown["source"], shown["source_url"]) == ("gh#1", URL.format(1))
    text = run_cli(cfg.root, "card", "show", one.id).stdout
    assert f"source: gh#1 {URL.format(1)}" in text
    assert cards["gh#2"].deps == (one.id,)
    started = cards["gh#4"]  # a coder took it meanwhile: its words are no longer the tracker's
    with store.transaction() as tx:
        tx.update(started.id, Expect(version=started.version), {"lane": "working"}, "board")

    _tracker(
        issues,
        issue(1, "Add login with a passkey", labels=["auth", "ui"]),
        issue(2, "Add logout", "log out; depends on #1"),
        issue(3, "Fix the typo", state="CLOSED"),
        issue(4, "Tidy the docs, all of them", state="CLOSED"),
        issue(5, "An old one", state="CLOSED"),
        issue(6, "Add a help page"),
    )
    got = _import(cfg, "gh")
    now = _by_source(store)
    assert len(store.list_cards()) == 5, "a card was added twice"
    assert (got["updated"], got["cancelled"], got["noted"]) == (
        [one.id],
        [cards["gh#3"].id],
        [started.id],
    )
    assert [now["gh#6"].id] == got["added"] and now["gh#6"].lane == "backlog"
    assert (now["gh#1"].title, now["gh#1"].labels) == ("Add login with a passkey", ("auth", "ui"))
    assert now["gh#3"].lane == "cancelled"
    assert (now["gh#4"].lane, now["gh#4"].title) == ("working", "Tidy the docs"), (
        "a started card was changed by its tracker"
    )
    notes = [e for e in store.timeline(started.id) if e.kind == SOURCE_CLOSED_EVENT]
    assert [e.text for e in notes] == [
        "issue #4 was closed upstream; the card is working, so its work goes on (cancel it "
        "if it is no longer wanted)"
    ]
    before = _everything(store)
    again = _import(cfg, "gh")
    assert again["added"] == again["updated"] == again["cancelled"] == again["noted"] == []
    assert _everything(store) == before, "importing the same issues again changed a card"


def test_deps_from_depends_on_and_blocked_by_and_a_cycle_refused_writing_nothing(
    tmp_path: Path,
) -> None:
    cfg, store, issues = _board(tmp_path)
    _tracker(
        issues,
        issue(1, "Base", "depends on #3"),
        issue(2, "Middle", "Blocked by: #1"),
        issue(3, "Top", "this depends on #2, and that is a loop"),
    )
    line = _refused(cfg, "gh")
    assert line.startswith("board: issue #") and "dependency cycle:" in line, line
    assert line.endswith("; nothing imported"), line
    assert store.list_cards() == [], "a refused import wrote cards"

    _tracker(
        issues,
        issue(1, "Base"),
        issue(2, "Middle", "Blocked by: #1"),
        issue(3, "Top", "Depends on #1, #2 and #9."),
    )
    got = _import(cfg, "gh")
    cards = _by_source(store)
    assert cards["gh#2"].deps == (cards["gh#1"].id,)
    assert set(cards["gh#3"].deps) == {cards["gh#1"].id, cards["gh#2"].id}
    assert got["unknown_deps"] == ["issue #3 → #9"], "an issue not imported became a dep"
    # a dep the operator added by hand to a card of no issue stays; #9 imported later is wired
    hand = store.create(CardDraft(title="by hand"))
    run_cli(cfg.root, "card", "edit", cards["gh#1"].id, "--dep", hand.id)
    _tracker(
        issues,
        issue(1, "Base"),
        issue(2, "Middle", "Blocked by: #1"),
        issue(3, "Top", "Depends on #1, #2 and #9."),
        issue(9, "Later"),
    )
    _import(cfg, "gh")
    cards = _by_source(store)
    assert cards["gh#1"].deps == (hand.id,)
    assert set(cards["gh#3"].deps) == {cards[f"gh#{n}"].id for n in (1, 2, 9)}


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("not json at all", "gh's answer is not JSON"),
        ('{"number": 1}', "gh's answer is {'number': 1}, not a list of issues"),
        ('[{"number": "1", "title": "t"}]', "gh's issue 1: its number is '1'"),
        ('[{"number": 1, "title": 5, "body": "", "labels": [], "url": "", "state": "OPEN"}]',
         "issue #1: its title is 5, not text"),
        ('[{"number": 1, "title": "t", "body": "", "labels": ["bug"], "url": "", "state": "OPEN"}]',
         "issue #1: its labels are ['bug'], not gh's label objects"),
        ('[{"number": 1, "title": "t", "body": "", "labels": [], "url": "", "state": "MERGED"}]',
         "issue #1: its state is 'MERGED', not OPEN or CLOSED"),
        ('[{"number": 1, "title": "t", "labels": [], "url": "", "state": "OPEN"}]',
         "issue #1: gh did not say its body"),
        (json.dumps([issue(1, "fine"), issue(2, "huge", "x" * (importing.MAX_SPEC_CHARS + 1))]),
         "issue #2: its body is 4,194,305 characters, over 4,194,304"),
        (json.dumps([issue(1, "fine"), issue(2, "two\nlines")]),
         "issue #2: a card's title is one line, and 'two\\nlines' holds a line break"),
        (json.dumps([issue(1, "fine"), issue(1, "twice")]), "issue #1: given twice in one import"),
    ],
    ids=["not-json", "no-list", "number-text", "title-number", "label-text", "state", "no-body",
         "huge-body", "newline-title", "twice"],
)  # fmt: skip
def test_a_hostile_or_broken_forge_answer_is_refused_in_one_line_writing_nothing(
    tmp_path: Path, answer: str, said: str
) -> None:
    cfg, store, issues = _board(tmp_path)
    _tracker(issues, issue(7, "already here"))
    _import(cfg, "gh")
    before = _everything(store)
    _tracker(issues, raw=answer)
    line = _refused(cfg, "gh")
    assert said in line and line.endswith("nothing imported"), line
    assert _everything(store) == before, "a refused import changed the board"


def test_escapes_in_a_title_are_kept_as_card_add_keeps_them_and_shown_harmless(
    tmp_path: Path,
) -> None:
    """`card add` keeps a title's escapes and every surface shows them harmless (safetext):
    an imported title is the same card, so `card show` never clears the operator's screen."""
    cfg, store, issues = _board(tmp_path)
    hostile = "Fix \x1b[2J\x1b]52;c;cm0gLXJm\x07 the \u202eclipboard"
    _tracker(issues, issue(1, hostile))
    _import(cfg, "gh")
    card = _by_source(store)["gh#1"]
    assert card.title == hostile
    added = run_cli(cfg.root, "card", "add", hostile, "--json")
    assert json.loads(added.stdout)["title"] == hostile, "card add keeps it otherwise"
    shown = run_cli(cfg.root, "card", "show", card.id).stdout
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
    assert "Fix ␛[2J␛]52;c;cm0gLXJm^G the <U+202E>clipboard" in shown


def test_gh_s_own_flags_carry_the_filters_and_a_failing_gh_is_one_line(tmp_path: Path) -> None:
    cfg, store, issues = _board(tmp_path)
    _tracker(
        issues,
        issue(1, "a bug", labels=["bug"], milestone={"title": "v1"}),
        issue(2, "a bug of v2", labels=["bug"], milestone={"title": "v2"}),
        issue(3, "no bug", milestone={"title": "v1"}),
        *(issue(n, f"bug {n}", labels=["bug", "ui"]) for n in range(10, 15)),
    )
    got = _import(cfg, "gh", "--label", "bug", "--milestone", "v1")
    assert set(_by_source(store)) == {"gh#1"} and len(got["added"]) == 1
    _import(cfg, "gh", "--label", "bug", "--label", "ui", "--limit", "2")
    assert set(_by_source(store)) == {"gh#1", "gh#14", "gh#13"}  # newest first, as gh lists
    _tracker(issues, fail=["HTTP 401: Bad credentials (https://api.github.com/graphql)", 4])
    line = _refused(cfg, "gh")
    assert line == (
        "board: [import] gh_argv failed (exit 4): HTTP 401: Bad credentials "
        "(https://api.github.com/graphql); nothing imported"
    )
    assert "--limit must be 1 or more, not 0" in _refused(cfg, "gh", "--limit", "0")


def test_json_lines_import_by_key_with_deps_on_keys_and_card_ids(tmp_path: Path) -> None:
    cfg, store, _issues = _board(tmp_path)
    typed = run_cli(cfg.root, "card", "add", "typed in", "--json")
    typed_id = json.loads(typed.stdout)["id"]
    lines = [
        {"key": "api", "title": "The API", "spec": "build it", "priority": 1, "labels": ["be"]},
        {"key": "ui", "title": "The UI", "spec": "draw it", "deps": ["api", typed_id],
         "surface": ["ui/**"], "kind": "task", "acceptance": "it shows"},
        {"key": "doc", "title": "The docs", "deps": ["ui"]},
    ]  # fmt: skip
    path = cfg.root / "backlog.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + "\n", encoding="utf-8")
    got = _import(cfg, str(path))
    cards = _by_source(store)
    api, ui, doc = (cards[f"file:backlog.jsonl#{k}"] for k in ("api", "ui", "doc"))
    assert got["added"] == [api.id, ui.id, doc.id]
    assert (api.priority, api.labels, api.lane) == (1, ("be",), "backlog")
    assert (ui.kind, ui.surface, ui.acceptance) == ("task", ("ui/**",), "it shows")
    assert set(ui.deps) == {api.id, typed_id} and doc.deps == (ui.id,)

    # again, from stdin under the same scope: the UI's title edited, a new line whose dep is
    # a key of the earlier import only, and nothing added twice
    lines[1]["title"] = "The new UI"
    again = [lines[1], {"key": "qa", "title": "QA", "deps": ["api"]}]
    text = "".join(json.dumps(x) + "\n" for x in again)
    got = _import(cfg, "-", "--scope", "backlog.jsonl", input_text=text)
    cards = _by_source(store)
    assert got["updated"] == [ui.id] and got["added"] == [cards["file:backlog.jsonl#qa"].id]
    assert cards["file:backlog.jsonl#ui"].title == "The new UI"
    assert cards["file:backlog.jsonl#qa"].deps == (api.id,)
    assert len(store.list_cards()) == 5


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        ('{"key": "a", "title": "A"}\n{"key": "b", "title": "B", "spec": 3}\n',
         "line 2 (key 'b'): its spec is 3, not text"),
        ('{"key": "a", "title": "A"}\nnot json\n', "line 2: not JSON"),
        ('{"key": "a", "title": "A", "state": "OPEN"}\n', "line 1: no card field 'state'"),
        ('{"title": "A"}\n', "line 1: its key is None: each line needs a one-line key"),
        ('{"key": "a", "title": "A"}\n{"key": "a", "title": "B"}\n',
         "line 2: key 'a' is line 1's too"),
        ('{"key": "a", "title": "A", "priority": 9}\n',
         "line 1 (key 'a'): priority must be 0-4, got 9"),
        ('{"key": "a", "title": "A", "deps": ["nope"]}\n',
         "line 1 (key 'a'): depends on 'nope', which is no key of this file nor a card id"),
        ('{"key": "a", "title": "A", "deps": ["b"]}\n{"key": "b", "title": "B", "deps": ["a"]}\n',
         "dependency cycle:"),
        ('{"key": "a", "title": "A", "labels": [""]}\n',
         "line 1 (key 'a'): an empty label is not allowed"),
        ('{"key": "a", "title": "A\\u001b[2J\\nB"}\n',
         "line 1 (key 'a'): a card's title is one line"),
    ],
)  # fmt: skip
def test_a_bad_line_is_refused_naming_it_and_nothing_of_the_file_is_written(
    tmp_path: Path, lines: str, said: str
) -> None:
    cfg, store, _issues = _board(tmp_path)
    before = _everything(store)
    good = '{"key": "fine", "title": "a good line, after the bad one"}\n'
    line = _refused(cfg, "-", input_text=lines + good)
    assert said in line and line.endswith("; nothing imported"), line
    assert _everything(store) == before, "a refused import wrote something"


def test_a_pushed_pr_of_an_imported_card_closes_its_issue(tmp_path: Path) -> None:
    state = tmp_path / "forge.json"
    issues = tmp_path / "issues.json"
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": edit_tier()},
        publish={"mode": "push", "pr_argv": [FORGE, "create", str(state), "--head", "{branch}"]},
        imports={"gh_argv": [FORGE, "issue-list", str(issues), "--json", GH_FIELDS]},
    )
    _tracker(issues, issue(123, "Add the export", "write work/export.txt"))
    _import(cfg, "gh", "--ready")
    typed = run_cli(cfg.root, "card", "add", "typed in", "--spec", "s", "--ready", "--json")
    for card in (_by_source(store)["gh#123"], store.get(json.loads(typed.stdout)["id"])):
        end = drive_one(cfg, store, card)
        assert end.outcome == "review", end
    imported, plain = (cfg.board_dir / "pr" / f"{c}.md" for c in ("c-1", "c-2"))
    assert "\nCloses #123\n" in imported.read_text(encoding="utf-8")
    assert "Closes #" not in plain.read_text(encoding="utf-8")


def _on_done_board(tmp_path: Path) -> tuple[config.Config, Store, Path, Path]:
    record = tmp_path / "closed.txt"
    closer = tmp_path / "close.sh"
    closer.write_text(f'#!/bin/sh\nprintf "%s|%s|%s\\n" "$1" "$2" "$3" >> {record}\n')
    closer.chmod(0o755)
    cfg, store, issues = _board(tmp_path, on_done_argv=[str(closer), "{number}", "{card}", "{url}"])
    return cfg, store, issues, record


def test_on_done_argv_runs_once_when_an_imported_card_folds_done(tmp_path: Path) -> None:
    cfg, store, issues, record = _on_done_board(tmp_path)
    _tracker(issues, issue(42, "Fold me", "write the work"))
    _import(cfg, "gh", "--ready")
    card = _by_source(store)["gh#42"]
    plain = run_cli(cfg.root, "card", "add", "typed in", "--spec", "s", "--ready", "--json")
    for one in (card, store.get(json.loads(plain.stdout)["id"])):
        end = drive_one(cfg, store, one)
        assert end.outcome == "done", end
    assert record.read_text().splitlines() == [f"42|{card.id}|{URL.format(42)}"]
    # a restart, another host, `board done` after the fold: nobody runs it again
    other = SQLiteStore(cfg.db_path)
    try:
        assert importing.after_done(other, cfg, card.id) == ""
    finally:
        other.close()
    assert importing.after_done(store, cfg, card.id) == ""
    assert run_cli(cfg.root, "done", card.id).returncode == 1  # already done: refused
    assert len(record.read_text().splitlines()) == 1
    taken = [e.text for e in store.timeline(card.id) if e.kind == SOURCE_DONE_EVENT]
    assert taken == [f"[import] on_done_argv: {tmp_path}/close.sh 42 {card.id} {URL.format(42)}"]


def test_on_done_argv_runs_for_board_done_and_a_failure_is_said_never_blocking(
    tmp_path: Path,
) -> None:
    cfg, store, issues, record = _on_done_board(tmp_path)
    _tracker(issues, issue(1, "done by hand"), issue(2, "its closer fails"))
    _import(cfg, "gh")
    cards = _by_source(store)
    res = run_cli(cfg.root, "done", cards["gh#1"].id)
    assert res.returncode == 0, res.stderr
    assert record.read_text().splitlines() == [f"1|{cards['gh#1'].id}|{URL.format(1)}"]
    record.unlink()
    record.mkdir()  # the closer's append now fails: exit 2
    res = run_cli(cfg.root, "done", cards["gh#2"].id)
    assert res.returncode == 0, res.stderr
    assert store.get(cards["gh#2"].id).lane == "done"
    said = [e.text for e in store.timeline(cards["gh#2"].id) if e.kind == "comment"]
    assert len(said) == 1 and said[0].startswith("[import] on_done_argv failed (exit "), said
    assert said[0].endswith("not retried: close gh#2 by hand"), said


def test_import_s_config_is_refused_in_one_line(tmp_path: Path) -> None:
    for table, said in (
        ('gh_argv = []', "import.gh_argv: is empty: board card import gh runs it"),
        ('on_done_argv = ["gh", "{issue}"]',
         "import.on_done_argv: has {issue}, which is none of {number}, {card}, {url}"),
        ('timeout_s = 0', "import.timeout_s: must be more than 0"),
    ):  # fmt: skip
        (tmp_path / "board.toml").write_text(f"[import]\n{table}\n", encoding="utf-8")
        with pytest.raises(config.ConfigError) as caught:
            config.load(tmp_path)
        assert caught.value.line() == f"{tmp_path}/board.toml:2: {said}" or said in str(
            caught.value
        ), caught.value.line()

"""Cards from where the work is tracked: GitHub issues (`board card import gh`) and JSON Lines
(`board card import FILE|-`), and the way back (`[import] on_done_argv`).

Teams keep their backlog in a tracker; typing each issue in again with `card add` is the work
nobody does twice. An import is the same card as `card add` would make, checked by the same
rules (core/cards/actions.py), so an issue title with a line break is refused exactly as one
typed in is. What the tracker (or the `gh` it runs) answers is read as hostile input: a value
of the wrong type, a body past what a spec may hold, output that is no JSON, each is refused
in one line naming the record, and nothing of that import is written: every card it adds,
edits, cancels or wires is written in one store transaction, or none is.

A card remembers its source (`gh#123`, `file:<scope>#<key>`; the store keeps one card per
source), so importing again finds it: a card not yet started (backlog, ready) takes the
tracker's words again, a new issue becomes a new card, nothing is added twice. An issue
closed upstream cancels its card while nobody has started it; once work has started it is
only said on the card, once: the operator's coder may be half way through, and the board
never throws work away because a tracker changed its mind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from typing import Any

from board.core import proc
from board.core.cards import actions
from board.core.config import Config
from board.core.config.keyschema import GH_FIELDS
from board.core.errors import BoardError, NotFound, Refused
from board.core.model import (
    GH_SOURCE,
    PRIORITY_DEFAULT,
    SOURCE_CLOSED_EVENT,
    SOURCE_DONE_EVENT,
    TERMINAL,
    Card,
    CardDraft,
)
from board.core.records import Frozen, Record
from board.core.store import Expect, Store, Tx

WHO = "import"
# a spec is the task in words, as `card add --spec-file` bounds it; a body past this is a
# dump (or a hostile forge), refused rather than cut: a cut spec is a wrong task
MAX_SPEC_CHARS = 4 * 1024 * 1024
MAX_TITLE_CHARS = 1000  # a lane row, a branch slug, a commit subject: never a page
MAX_KEY_CHARS = 200
MAX_INPUT_BYTES = 64 * 1024 * 1024  # what one import reads at most (gh's answer, a file)
DEFAULT_LIMIT = 1000  # gh's own default is 30: a re-import would miss the older issues
# "depends on #12", "Blocked by: #3, #4 and #5" in an issue's body
_DEP_PHRASE = re.compile(
    r"\b(?:depends\s+on|blocked\s+by)\s*:?\s*((?:#\d+(?:\s*(?:,|and|&)\s*)?)+)", re.IGNORECASE
)
_ISSUE_REF = re.compile(r"#(\d+)")
FILE_FIELDS = (
    "key", "title", "spec", "acceptance", "priority", "kind", "labels", "surface", "deps",
)  # fmt: skip


class Item(Record):
    """One record to import, read and checked for its types: an issue or a line."""

    source: str  # gh#12, file:<scope>#<key>
    what: str  # how a refusal names it: "issue #12", "line 3 (key a)"
    title: str
    url: str = ""
    closed: bool = False
    # None: not given (a file's line leaves the card's own); the card's fields otherwise
    spec: str | None = None
    acceptance: str | None = None
    priority: int | None = None
    kind: str | None = None
    labels: tuple[str, ...] | None = None
    surface: tuple[str, ...] | None = None
    # what it waits on: a source (`gh#3`, `file:x#a`) or, from a file, a key-or-card-id ref
    deps: tuple[str, ...] | None = None


class Imported(Frozen):
    """What an import did, card by card: for the one-line summary and `--json`."""

    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    cancelled: tuple[str, ...] = ()
    noted: tuple[str, ...] = ()  # closed upstream while its work goes on: said on the card
    unchanged: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()  # closed issues no card was made of
    unknown_deps: tuple[str, ...] = ()  # "issue #4 → #9": named in a body, not imported

    def summary(self) -> str:
        parts = [
            f"{len(ids)} {word}"
            for ids, word in (
                (self.added, "added"),
                (self.updated, "updated"),
                (self.cancelled, "cancelled (closed upstream)"),
                (self.noted, "closed upstream while worked on (noted on the card)"),
                (self.unchanged, "unchanged"),
            )
            if ids
        ]
        line = "imported: " + (", ".join(parts) or "nothing")
        if self.unknown_deps:
            line += f"; not imported, so no dep: {', '.join(self.unknown_deps)}"
        return line

    def to_json(self) -> dict[str, Any]:
        return {
            "added": list(self.added),
            "updated": list(self.updated),
            "cancelled": list(self.cancelled),
            "noted": list(self.noted),
            "unchanged": list(self.unchanged),
            "skipped": list(self.skipped),
            "unknown_deps": list(self.unknown_deps),
        }


# reading: gh's answer ---------------------------------------------------------------------


def gh_argv(
    cfg: Config,
    labels: Sequence[str] = (),
    milestone: str | None = None,
    limit: int | None = None,
) -> list[str]:
    """`[import] gh_argv` with the filters as gh's own flags, and `--state all`: a closed
    issue must be seen to cancel its card."""
    if limit is not None and limit < 1:
        raise Refused(f"--limit must be 1 or more, not {limit}")
    argv = list(cfg.import_.gh_argv)
    for label in labels:
        argv += ["--label", label]
    if milestone is not None:
        argv += ["--milestone", milestone]
    argv += ["--limit", str(limit or DEFAULT_LIMIT), "--state", "all"]
    return argv


def run_gh(cfg: Config, argv: Sequence[str]) -> str:
    """gh's answer (its stdout), or Refused in one line saying why there is none."""
    res = proc.run(argv, cwd=cfg.root, timeout=cfg.import_.timeout_s)
    name = "[import] gh_argv"
    if res.missing:
        raise Refused(f"cannot run {name}: {res.stderr.strip()}; nothing imported")
    if res.timed_out:
        raise Refused(
            f"{name} gave no answer in {cfg.import_.timeout_s:g}s ([import] timeout_s); "
            "nothing imported"
        )
    if res.returncode != 0:
        said = " ".join((res.stderr.strip() or res.stdout.strip()).split())[:300]
        raise Refused(f"{name} failed (exit {res.returncode}): {said}; nothing imported")
    if len(res.stdout) > MAX_INPUT_BYTES:
        raise Refused(f"{name}'s answer is over {MAX_INPUT_BYTES // 2**20} MiB; nothing imported")
    return res.stdout


def _bad(what: str, why: str) -> Refused:
    return Refused(f"{what}: {why}; nothing imported")


def _text(value: Any, what: str, name: str, limit: int) -> str:
    if not isinstance(value, str):
        raise _bad(what, f"its {name} is {_shown(value)}, not text")
    if len(value) > limit:
        raise _bad(what, f"its {name} is {len(value):,} characters, over {limit:,}")
    return value


def _text_list(value: Any, what: str, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _bad(what, f"its {name} is {_shown(value)}, not a list of text")
    return tuple(value)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def parse_gh(text: str) -> list[Item]:
    """The issues of `gh issue list --json number,title,body,labels,url,state`, each
    field's type checked; Refused naming the first issue that is not one."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise Refused(f"gh's answer is not JSON ({str(exc)[:80]}); nothing imported") from None
    if not isinstance(data, list):
        raise Refused(f"gh's answer is {_shown(data)}, not a list of issues; nothing imported")
    items = []
    for i, issue in enumerate(data, 1):
        if not isinstance(issue, dict):
            raise _bad(f"gh's issue {i}", f"it is {_shown(issue)}, not an issue")
        number = issue.get("number")
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise _bad(f"gh's issue {i}", f"its number is {_shown(number)}")
        what = f"issue #{number}"
        missing = [f for f in GH_FIELDS.split(",") if f not in issue]
        if missing:
            raise _bad(what, f"gh did not say its {', '.join(missing)}")
        labels = issue["labels"]
        if not isinstance(labels, list) or not all(
            isinstance(lb, dict) and isinstance(lb.get("name"), str) for lb in labels
        ):
            raise _bad(what, f"its labels are {_shown(labels)}, not gh's label objects")
        state = issue["state"]
        if state not in ("OPEN", "CLOSED"):
            raise _bad(what, f"its state is {_shown(state)}, not OPEN or CLOSED")
        body = _text(issue["body"], what, "body", MAX_SPEC_CHARS)
        refs = [int(n) for m in _DEP_PHRASE.finditer(body) for n in _ISSUE_REF.findall(m[1])]
        items.append(
            Item(
                source=f"{GH_SOURCE}{number}",
                what=what,
                title=_text(issue["title"], what, "title", MAX_TITLE_CHARS),
                url=_text(issue["url"], what, "url", 2000),
                closed=state == "CLOSED",
                spec=body,
                labels=tuple(lb["name"] for lb in labels),
                deps=tuple(dict.fromkeys(f"{GH_SOURCE}{n}" for n in refs if n != number)),
            )
        )
    return items


# reading: JSON Lines -----------------------------------------------------------------------


def file_source(scope: str, key: str) -> str:
    return f"file:{scope}#{key}"


def parse_lines(text: str, scope: str) -> list[Item]:
    """One card per line, fields named as `card show --json` names them, plus `key`; a blank
    line is skipped. A dep that is a key of this file becomes that line's source; any other
    stays a ref, found at import as an earlier import's key or a card id."""
    if not scope.strip() or scope.splitlines() != [scope]:
        raise Refused(f"the import's scope is {_shown(scope)}: give one line (--scope NAME)")
    rows: list[tuple[int, dict[str, Any]]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise _bad(f"line {n}", f"not JSON ({str(exc)[:60]})") from None
        if not isinstance(row, dict):
            raise _bad(f"line {n}", f"{_shown(row)} is not an object of a card's fields")
        unknown = sorted(set(row) - set(FILE_FIELDS))
        if unknown:
            raise _bad(
                f"line {n}", f"no card field {unknown[0]!r} (fields: {', '.join(FILE_FIELDS)})"
            )
        rows.append((n, row))
    keys: dict[str, int] = {}
    for n, row in rows:
        key = row.get("key")
        if not isinstance(key, str) or not key.strip() or key.splitlines() != [key]:
            raise _bad(f"line {n}", f"its key is {_shown(key)}: each line needs a one-line key")
        if len(key) > MAX_KEY_CHARS:
            raise _bad(f"line {n}", f"its key is over {MAX_KEY_CHARS} characters")
        if key in keys:
            raise _bad(f"line {n}", f"key {key!r} is line {keys[key]}'s too")
        keys[key] = n
    items = []
    for n, row in rows:
        what = f"line {n} (key {row['key']!r})"

        def opt(name: str, limit: int = MAX_SPEC_CHARS) -> str | None:
            return None if name not in row else _text(row[name], what, name, limit)  # noqa: B023

        def opt_list(name: str) -> tuple[str, ...] | None:
            return None if name not in row else _text_list(row[name], what, name)  # noqa: B023

        if "title" not in row:
            raise _bad(what, "it has no title")
        priority = row.get("priority")
        if "priority" in row and (isinstance(priority, bool) or not isinstance(priority, int)):
            raise _bad(what, f"its priority is {_shown(priority)}, not a whole number")
        deps = opt_list("deps")
        items.append(
            Item(
                source=file_source(scope, row["key"]),
                what=what,
                title=_text(row["title"], what, "title", MAX_TITLE_CHARS),
                spec=opt("spec"),
                acceptance=opt("acceptance"),
                priority=priority,
                kind=opt("kind", 40),
                labels=opt_list("labels"),
                surface=opt_list("surface"),
                deps=None
                if deps is None
                else tuple(file_source(scope, d) if d in keys else d for d in deps),
            )
        )
    return items


# writing -----------------------------------------------------------------------------------


def _draft(item: Item, ready: bool) -> CardDraft:
    return CardDraft(
        title=item.title,
        spec=item.spec or "",
        acceptance=item.acceptance or "",
        kind=item.kind or "feature",
        lane="ready" if ready else "backlog",
        priority=PRIORITY_DEFAULT if item.priority is None else item.priority,
        labels=list(item.labels or ()),
        surface=list(item.surface or ()),
        source=item.source,
        source_url=item.url,
    )


def _refused(item: Item, exc: BoardError) -> Refused:
    return Refused(f"{item.what}: {exc.line()}; nothing imported")


def check_items(items: Sequence[Item], ready: bool, tiers: Collection[str] | None = None) -> None:
    """Every record as `card add` checks a new card, before the store is touched; a record
    imported twice in one go is refused too (which of the two would be the card?)."""
    seen: dict[str, str] = {}
    for item in items:
        if item.source in seen:
            raise Refused(f"{item.what}: given twice in one import; nothing imported")
        seen[item.source] = item.what
        if item.closed:
            continue
        try:
            actions.validate_draft(_draft(item, ready), tiers)
        except Refused as exc:
            raise _refused(item, exc) from None


def import_items(
    store: Store,
    items: Sequence[Item],
    *,
    prefix: str = "c",
    ready: bool = False,
    tiers: Collection[str] | None = None,
    cfg: Config | None = None,
    who: str = WHO,
) -> Imported:
    """Add, update, cancel and wire the cards of `items` in one transaction: a refusal of
    any record (its fields, a dep that is no card, a cycle) writes nothing at all. Trees of
    cards it cancelled are reaped afterwards (saved first), as `board cancel` reaps them."""
    check_items(items, ready, tiers)
    with store.transaction() as tx:
        done = _write(tx, items, prefix=prefix, ready=ready, tiers=tiers, who=who)
    if cfg is not None:
        for card_id in done.cancelled:
            actions.reap_trees(store, cfg, card_id)
    return done


def _write(
    tx: Tx,
    items: Sequence[Item],
    *,
    prefix: str,
    ready: bool,
    tiers: Collection[str] | None,
    who: str,
) -> Imported:
    by_source = {c.source: c for c in tx.all_cards() if c.source}
    out: dict[str, list[str]] = {k: [] for k in Imported.__match_args__}
    open_items: list[Item] = []
    for item in items:
        card = by_source.get(item.source)
        try:
            if card is None:
                if item.closed:
                    out["skipped"].append(item.source)
                    continue
                card = tx.create(_draft(item, ready), prefix, who)
                by_source[item.source] = card
                out["added"].append(card.id)
                open_items.append(item)
            elif card.lane in actions.EDITABLE_LANES:
                if item.closed:
                    actions.rewire_dependents(tx, card, who)
                    tx.update(
                        card.id,
                        Expect(version=card.version),
                        {"lane": "cancelled", "drive": ""},
                        who,
                        note=f"{item.what} was closed upstream",
                    )
                    out["cancelled"].append(card.id)
                    continue
                changes = actions.edit_changes(tx, card, _edit(item, ready), tiers)
                if changes:
                    by_source[item.source] = tx.update(
                        card.id, Expect(version=card.version), changes, who, note="imported again"
                    )
                    out["updated"].append(card.id)
                else:
                    out["unchanged"].append(card.id)
                open_items.append(item)
            elif item.closed and card.lane not in TERMINAL:
                if not tx.has_event(card.id, SOURCE_CLOSED_EVENT):
                    tx.add_event(
                        card.id,
                        f"{item.what} was closed upstream; the card is {card.lane}, so its "
                        "work goes on (cancel it if it is no longer wanted)",
                        who,
                        kind=SOURCE_CLOSED_EVENT,
                    )
                    out["noted"].append(card.id)
                else:
                    out["unchanged"].append(card.id)
            else:
                out["unchanged"].append(card.id)
        except Refused as exc:
            raise _refused(item, exc) from None
    for item in open_items:
        try:
            wired = _wire(tx, item, by_source, who, out["unknown_deps"])
        except Refused as exc:
            raise _refused(item, exc) from None
        card_id = by_source[item.source].id
        if wired and card_id in out["unchanged"]:
            out["unchanged"].remove(card_id)
            out["updated"].append(card_id)
    return Imported(**{k: tuple(dict.fromkeys(v)) for k, v in out.items()})


def _edit(item: Item, ready: bool) -> actions.CardEdit:
    return actions.CardEdit(
        title=item.title,
        spec=item.spec,
        acceptance=item.acceptance,
        priority=item.priority,
        kind=item.kind,
        labels=item.labels,
        surface=item.surface,
        ready=ready,
    )


def _wire(tx: Tx, item: Item, by_source: dict[str, Card], who: str, unknown: list[str]) -> bool:
    """The card's deps as the record names them, cycles refused as `card add` refuses them.

    From an issue: the issues its body names that are cards (this import or an earlier),
    beside any dep the operator gave by hand (a dep on a card of no issue is kept). From a
    file: its `deps` list, as `card edit` replaces a list; none given leaves the card's.
    Whether the card's deps changed."""
    if item.deps is None:
        return False
    card = tx.get(by_source[item.source].id)
    if card.lane not in actions.EDITABLE_LANES:
        return False
    named: list[str] = []
    for ref in item.deps:
        found = by_source.get(ref)
        if found is not None:
            named.append(found.id)
        elif ref.startswith(GH_SOURCE):
            unknown.append(f"{item.what} → #{ref[len(GH_SOURCE) :]}")
        elif ref.startswith("file:"):  # a key of this file whose line was skipped: none is
            raise Refused(f"depends on {ref!r}, which is no card")
        else:
            scope = item.source.rsplit("#", 1)[0]
            earlier = by_source.get(f"{scope}#{ref}")
            if earlier is not None:
                named.append(earlier.id)
            else:
                try:
                    named.append(tx.get(ref).id)
                except NotFound:
                    raise Refused(
                        f"depends on {ref!r}, which is no key of this file nor a card id"
                    ) from None
    if item.source.startswith(GH_SOURCE):
        kept = [d for d in card.deps if not _from_gh(tx, d)]
        new = [*kept, *(d for d in named if d not in kept)]
    else:
        new = list(dict.fromkeys(named))
    if set(new) == set(card.deps):
        return False
    deps = actions.check_deps(tx, card.id, new)
    tx.update(card.id, Expect(version=card.version), {"deps": tuple(deps)}, who)
    return True


def _from_gh(tx: Tx, card_id: str) -> bool:
    try:
        return tx.get(card_id).source.startswith(GH_SOURCE)
    except NotFound:
        return False


# the way back -----------------------------------------------------------------------------


def on_done_argv(cfg: Config, card: Card) -> list[str]:
    """`[import] on_done_argv` for `card`, `{number}` `{card}` `{url}` filled in item by item
    (no shell ever sees it); `{number}` is '' for a card of no GitHub issue."""
    number = card.issue_number
    subs = {
        "number": "" if number is None else str(number),
        "card": card.id,
        "url": card.source_url,
    }
    out = []
    for item in cfg.import_.on_done_argv:
        for key, value in subs.items():
            item = item.replace("{" + key + "}", value)
        out.append(item)
    return out


def after_done(store: Store, cfg: Config, card_id: str) -> str:
    """Run `[import] on_done_argv` once for a card with a source that is now `done`, in a
    board that folds (a pushed card's PR closes its issue itself: `Closes #N`). Returns what
    happened in a line, '' when nothing was to be done.

    "Once" is the card's timeline: the run is taken by writing a `source-done` event in a
    transaction that first locks the card and finds none, and only then run. Two hosts
    folding, a restart, a `board done` after a fold: whoever writes the event runs it, and
    nobody else ever does. A run that then fails (a dead login, a timeout) is said on the
    card and in the return, never retried by itself, and never blocks the card: it is done."""
    argv = cfg.import_.on_done_argv
    if not argv or cfg.publish.mode != "fold":
        return ""
    try:
        with store.transaction() as tx:
            card = tx.get(card_id)
            if card.lane != "done" or not card.source or tx.has_event(card_id, SOURCE_DONE_EVENT):
                return ""
            filled = on_done_argv(cfg, card)
            tx.add_event(
                card_id, f"[import] on_done_argv: {' '.join(filled)}", "board", SOURCE_DONE_EVENT
            )
        res = proc.run(filled, cwd=cfg.root, timeout=cfg.import_.timeout_s)
        if res.ok:
            return f"{card_id}: [import] on_done_argv ran ({card.source})"
        why = (
            f"gave no answer in {cfg.import_.timeout_s:g}s"
            if res.timed_out
            else f"failed (exit {res.returncode}): "
            + " ".join((res.stderr.strip() or res.stdout.strip()).split())[:300]
        )
        line = f"[import] on_done_argv {why}; not retried: close {card.source} by hand"
        store.add_comment(card_id, line, "board")
        return f"{card_id}: {line}"
    except BoardError as exc:  # the card is done whatever happens here
        return f"{card_id}: [import] on_done_argv not run: {exc}"


def done(
    store: Store,
    cfg: Config | None,
    card_id: str,
    who: str = actions.OPERATOR,
    reason: str = "",
) -> Card:
    """`board done` (the CLI's, the TUI's): the lane verb, then, for a card that came from
    a tracker, `[import] on_done_argv` as a fold runs it (once, with fold only)."""
    card = actions.done(store, cfg, card_id, who, reason)
    if cfg is not None and card.source:
        after_done(store, cfg, card_id)
    return card


# the verbs -----------------------------------------------------------------------------------


def import_gh(
    store: Store,
    cfg: Config,
    *,
    labels: Sequence[str] = (),
    milestone: str | None = None,
    limit: int | None = None,
    ready: bool = False,
) -> Imported:
    """`board card import gh`: the issues `[import] gh_argv` prints, as cards."""
    text = run_gh(cfg, gh_argv(cfg, labels, milestone, limit))
    items = parse_gh(text)
    return import_items(
        store, items, prefix=cfg.board.prefix, ready=ready, tiers=cfg.coder.tiers, cfg=cfg
    )


def import_lines(
    store: Store, cfg: Config, text: str, *, scope: str, ready: bool = False
) -> Imported:
    """`board card import FILE|-`: one card per JSON line, found again by its key in
    `scope` (the file's name, or --scope)."""
    items = parse_lines(text, scope)
    return import_items(
        store, items, prefix=cfg.board.prefix, ready=ready, tiers=cfg.coder.tiers, cfg=cfg
    )

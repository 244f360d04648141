"""The operator's verbs: one function each, shared by the CLI and the TUI.

Each verb validates against the card as it is inside one write transaction, so a
verb never acts on a stale picture: if the loop moved the card a moment ago, the
verb sees that and refuses with what it found.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from board.core.cards import waits
from board.core.cards.enddrives import end_drives
from board.core.config import Config
from board.core.errors import Conflict, NotFound, Refused
from board.core.failures import OPERATOR_CLASSES
from board.core.model import (
    BEST_OF_MAX,
    BEST_OF_MIN,
    BLOCK_CLASSES,
    KINDS,
    PRIORITY_MAX,
    PRIORITY_MIN,
    REQUEUE_EVENT,
    REQUEUED,
    TERMINAL,
    Blocked,
    Card,
    CardDraft,
)
from board.core.records import Record
from board.core.store import Expect, Store, Tx, describe_changes

OPERATOR = "operator"


def _clean_list(values: Iterable[str], what: str) -> list[str]:
    out: list[str] = []
    for value in values:
        if not isinstance(value, str) or not value.strip():
            raise Refused(f"an empty {what} is not allowed")
        if value not in out:
            out.append(value)
    return out


def _check_title(title: str) -> None:
    if not isinstance(title, str) or not title.strip():
        raise Refused("a card needs a title (it was empty)")
    check_one_line(title, "a card's title")


def check_one_line(text: str, what: str) -> None:
    """Titles are one line: a lane row, a branch slug, a commit subject, a `Split …` task."""
    if text.splitlines() != [text]:
        shown = repr(text) if len(text) <= 40 else repr(text[:39]) + "…"
        raise Refused(
            f"{what} is one line, and {shown} holds a line break (put the rest in the spec)"
        )


def _check_reason(reason: str | None, verb: str) -> str:
    if reason is None or not str(reason).strip():
        raise Refused(f"{verb} needs a reason (--reason TEXT)")
    return str(reason)


def _mutate(
    store: Store,
    card_id: str,
    fn: Callable[[Tx, Card], dict[str, Any]],
    who: str,
    note: str = "",
) -> Card:
    """Read, validate and write one card inside one transaction, expecting the version read."""
    with store.transaction() as tx:
        card = tx.get(card_id)
        changes = fn(tx, card)
        return tx.update(card_id, Expect(version=card.version), changes, who, note)


def find_cycle(tx: Tx, card_id: str, deps: Sequence[str]) -> list[str] | None:
    """A path card → … → card if giving `card_id` these deps would close a loop."""
    for dep in deps:
        if dep == card_id:
            return [card_id, card_id]
        stack: list[tuple[str, list[str]]] = [(dep, [card_id, dep])]
        seen: set[str] = set()
        while stack:
            node, path = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            try:
                node_deps = tx.get(node).deps
            except NotFound:
                continue
            for nxt in node_deps:
                if nxt == card_id:
                    return [*path, card_id]
                stack.append((nxt, [*path, nxt]))
    return None


def check_deps(tx: Tx, card_id: str | None, deps: Sequence[str]) -> list[str]:
    deps = _clean_list(deps, "dependency")
    for dep in deps:
        if card_id is not None and dep == card_id:
            raise Refused(f"dependency cycle: {card_id} → {card_id} (a card cannot wait on itself)")
        tx.get(dep)  # NotFound names the unknown id
    if card_id is not None:
        cycle = find_cycle(tx, card_id, deps)
        if cycle:
            raise Refused(f"dependency cycle: {' → '.join(cycle)}")
    return deps


def validate_draft(draft: CardDraft, tiers: Collection[str] | None = None) -> None:
    """Refuse a card that could not be worked on, before anything is written. `tiers`, the
    board's `[coder.tiers]`, is what a race's names are checked against (None: its shape
    only; the loop blocks a card whose race names a tier the board has not)."""
    _check_title(draft.title)
    if draft.kind not in KINDS:
        raise Refused(f"kind must be one of {', '.join(KINDS)}, got {draft.kind!r}")
    check_priority(draft.priority)
    if draft.lane not in ("backlog", "ready"):
        raise Refused(f"a new card starts in backlog or ready, not {draft.lane}")
    if draft.lane == "ready" and not draft.spec.strip():
        raise Refused("a card needs a spec before it is ready (--spec TEXT)")
    draft.labels = _clean_list(draft.labels, "label")
    draft.surface = _clean_list(draft.surface, "surface glob")
    if draft.best_of is not None:
        check_best_of(draft.best_of)
    if draft.race:
        if draft.best_of is not None:
            raise Refused(RACE_AND_BEST_OF)
        draft.race = check_race(draft.race, tiers)


def add_card(
    store: Store,
    draft: CardDraft,
    prefix: str = "c",
    who: str = OPERATOR,
    tiers: Collection[str] | None = None,
) -> Card:
    """Create a card (in backlog, or in ready when it has a spec); `tiers` as
    `validate_draft` takes them."""
    validate_draft(draft, tiers)
    with store.transaction() as tx:
        draft.deps = check_deps(tx, None, draft.deps)
        return tx.create(draft, prefix, who)


class CardEdit(Record):
    """What an edit changes; None leaves a field as it is. Lists replace the card's whole
    list (the CLI's `--dep`/`--no-dep` work out the new list from the card it was shown)."""

    title: str | None = None
    spec: str | None = None
    acceptance: str | None = None
    priority: int | None = None
    kind: str | None = None
    assignee: str | None = None
    labels: Sequence[str] | None = None
    deps: Sequence[str] | None = None
    surface: Sequence[str] | None = None
    best_of: int | None = None  # its own best of N, 1 to 16; 0: back to the board's
    race: Sequence[str] | None = None  # a tier per candidate; (): no race
    ready: bool = False  # move a backlog card to ready (it needs a spec)


EDITABLE_LANES = ("backlog", "ready")  # not yet started: a working card's brief is written
_EDIT_FIELDS = (
    "title", "spec", "acceptance", "priority", "kind", "assignee", "labels", "best_of", "race",
)  # fmt: skip
RACE_AND_BEST_OF = (
    "--race and --best-of both say how many candidates build the card: give one of them"
)


def changed_since(seen: Card, now: Card) -> str:
    """What differs between the card as it was shown and as it is: `lane ready → working;
    drive d-1`, for a refusal that says what happened meanwhile."""
    fields = ("lane", "blocked", "drive", *_EDIT_FIELDS, "deps", "surface", "branch")
    changes = {f: getattr(now, f) for f in fields if getattr(now, f) != getattr(seen, f)}
    return describe_changes(seen, changes) or f"version {seen.version} → {now.version}"


def edit_changes(
    tx: Tx, card: Card, edit: CardEdit, tiers: Collection[str] | None = None
) -> dict[str, Any]:
    """The fields an edit changes, validated as `add_card` validates a new card. A card
    has a race or its own best of, never both: the one given replaces the other."""
    changes: dict[str, Any] = {}
    if edit.title is not None:
        _check_title(edit.title)
        changes["title"] = edit.title
    for name in ("spec", "acceptance", "assignee"):
        value = getattr(edit, name)
        if value is not None:
            changes[name] = str(value)
    if edit.kind is not None:
        if edit.kind not in KINDS:
            raise Refused(f"kind must be one of {', '.join(KINDS)}, got {edit.kind!r}")
        changes["kind"] = edit.kind
    if edit.priority is not None:
        check_priority(edit.priority)
        changes["priority"] = edit.priority
    if edit.best_of and edit.race:
        raise Refused(RACE_AND_BEST_OF)
    if edit.best_of is not None:
        if edit.best_of != 0:  # 0: the board's `[coder] best_of` again
            check_best_of(edit.best_of)
            changes["race"] = ()
        changes["best_of"] = edit.best_of
    if edit.race is not None:
        changes["race"] = tuple(check_race(edit.race, tiers)) if edit.race else ()
        if edit.race:
            changes["best_of"] = 0
    if edit.labels is not None:
        changes["labels"] = tuple(_clean_list(edit.labels, "label"))
    if edit.surface is not None:
        changes["surface"] = tuple(_clean_list(edit.surface, "surface glob"))
    if edit.deps is not None:
        changes["deps"] = tuple(check_deps(tx, card.id, edit.deps))
    lane = "ready" if edit.ready else card.lane
    if lane != card.lane:
        changes["lane"] = lane
    if lane == "ready" and not str(changes.get("spec", card.spec)).strip():
        raise Refused(f"{card.id}: a ready card needs a spec (it would be empty)")
    return {k: v for k, v in changes.items() if getattr(card, k) != v}


def edit_card(
    store: Store,
    card_id: str,
    edit: CardEdit,
    seen: Card | None = None,
    who: str = OPERATOR,
    tiers: Collection[str] | None = None,
) -> Card:
    """Change a card not yet started (backlog or ready), as the operator saw it; `tiers`
    as `validate_draft` takes them.

    `seen` is the card as it was shown (the form, the CLI's read): the write expects its
    version, so an edit made while the loop claimed the card is refused naming what
    changed, instead of rewriting the spec of a card a coder is already building. The
    checks are `add_card`'s: a bad field is refused and nothing is written.
    """
    with store.transaction() as tx:
        card = tx.get(card_id)
        if seen is not None and card.version != seen.version:
            raise Conflict(
                f"{card_id}: changed since it was shown ({changed_since(seen, card)}); "
                "nothing edited"
            )
        if card.lane not in EDITABLE_LANES:
            raise Refused(
                f"{card_id}: is {card.lane}; only a card not yet started (backlog or ready) "
                "is edited"
            )
        changes = edit_changes(tx, card, edit, tiers)
        if not changes:
            return card
        return tx.update(card_id, Expect(version=card.version), changes, who)


def check_priority(priority: object) -> None:
    """0 (most urgent) to 4, a whole number."""
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise Refused(f"priority must be an integer {PRIORITY_MIN}-{PRIORITY_MAX}")
    if not PRIORITY_MIN <= priority <= PRIORITY_MAX:
        raise Refused(f"priority must be {PRIORITY_MIN}-{PRIORITY_MAX}, got {priority}")


def check_best_of(best_of: object) -> None:
    """A card's own best of N: 1 (one drive, whatever the board's) to 16, a whole number;
    0 would build nothing, and past 16 is a typo that starts a crowd of coders."""
    if (
        isinstance(best_of, bool)
        or not isinstance(best_of, int)
        or not BEST_OF_MIN <= best_of <= BEST_OF_MAX
    ):
        raise Refused(
            f"--best-of must be a whole number from {BEST_OF_MIN} to {BEST_OF_MAX}, not {best_of!r}"
        )


def check_race(race: Sequence[str], tiers: Collection[str] | None) -> list[str]:
    """A card's race: 1 to 16 tier names (a tier may repeat: two candidates of it), each a
    tier of `tiers` when given, in one line naming the first that is not. Its names, as
    given."""
    names = list(race)
    if not BEST_OF_MIN <= len(names) <= BEST_OF_MAX:
        raise Refused(
            f"--race names {BEST_OF_MIN} to {BEST_OF_MAX} tiers (one candidate each), "
            f"not {len(names)}"
        )
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise Refused("--race has an empty tier name (give TIER,TIER,…)")
        if tiers is not None and name not in tiers:
            raise Refused(
                f"--race names tier {name!r}, which [coder.tiers] does not have "
                f"({', '.join(sorted(tiers))})"
            )
    return names


def ready(store: Store, card_id: str, who: str = OPERATOR) -> Card:
    """backlog → ready: the card has what a coder needs (a title and a spec)."""

    def fn(tx: Tx, card: Card) -> dict[str, Any]:
        if card.lane != "backlog":
            raise Refused(f"{card.id}: expects backlog, got {card.lane}")
        if not card.title.strip():
            raise Refused(f"{card.id}: needs a title before it is ready")
        if not card.spec.strip():
            raise Refused(f"{card.id}: needs a spec before it is ready")
        return {"lane": "ready"}

    return _mutate(store, card_id, fn, who)


def hold(store: Store, card_id: str, reason: str | None, who: str = OPERATOR) -> Card:
    """The operator's hand block: the loop never clears it; a live drive stands aside."""
    reason = _check_reason(reason, "hold")

    def fn(tx: Tx, card: Card) -> dict[str, Any]:
        if card.lane in TERMINAL:
            raise Refused(f"{card.id}: is {card.lane}; a {card.lane} card cannot be held")
        return {"blocked": Blocked("held", reason)}

    return _mutate(store, card_id, fn, who)


def unblock(store: Store, card_id: str, who: str = OPERATOR) -> Card:
    """Clear the block so the queue can take the card; a too-wide park also drops its count."""

    def fn(tx: Tx, card: Card) -> dict[str, Any]:
        if card.blocked is None:
            raise Refused(f"{card.id}: is not blocked")
        changes: dict[str, Any] = {"blocked": None, "not_before": ""}
        changes.update(waits.cleared(card))  # the operator acted: the tries start over
        if card.blocked.cls == "too-wide" and card.timeouts:
            changes["timeouts"] = 0
        return changes

    before = store.get(card_id)
    card = _mutate(store, card_id, fn, who)
    if before.blocked is not None and before.blocked.cls in OPERATOR_CLASSES:
        for tier in waits.resume_tiers_of(store, before):
            store.add_event(
                card_id, f"tier {tier} resumed: its {before.blocked.cls} pause lifted", who
            )
    return card


def block(
    store: Store,
    card_id: str,
    cls: str,
    reason: str,
    expect: Expect | None = None,
    who: str = "board",
    extra: dict[str, Any] | None = None,
) -> Card:
    """The loop's block: names what it expects so a moved card is never blocked by a drive."""
    if cls not in BLOCK_CLASSES:
        raise Refused(f"unknown block class {cls!r}")
    _check_reason(reason, "a block")
    with store.transaction() as tx:
        card = tx.get(card_id)
        (expect or Expect(version=card.version)).check(card)
        changes: dict[str, Any] = {"blocked": Blocked(cls, reason)}
        changes.update(extra or {})
        return tx.update(card_id, Expect(version=card.version), changes, who)


def requeue(store: Store, card_id: str, reason: str | None = None, who: str = OPERATOR) -> Card:
    """Send a card back to ready (clearing its block); the reason goes into the next brief."""

    def fn(tx: Tx, card: Card) -> dict[str, Any]:
        if card.lane in TERMINAL:
            raise Refused(f"{card.id}: is {card.lane}; a {card.lane} card cannot be requeued")
        if card.lane == "ready" and card.blocked is None:
            raise Refused(f"{card.id}: is already ready")
        if not card.spec.strip():
            raise Refused(f"{card.id}: needs a spec before it is ready")
        # always recorded: the next drive reads it as "rebuild", never "carry on from the
        # kept tree" (see drive.requeued_since_last_build); the reason goes into the brief
        tx.add_event(card.id, reason or REQUEUED, who, kind=REQUEUE_EVENT)
        changes: dict[str, Any] = {"lane": "ready", "blocked": None, "drive": "", "not_before": ""}
        changes.update(waits.cleared(card))  # a requeue is a fresh start: tries and rung too
        if card.blocked is not None and card.blocked.cls == "too-wide" and card.timeouts:
            # like unblock: a requeued too-wide card gets a real attempt, not an instant re-park
            changes["timeouts"] = 0
        return changes

    before = store.get(card_id)
    card = _mutate(store, card_id, fn, who)
    if before.blocked is not None and before.blocked.cls in OPERATOR_CLASSES:
        for tier in waits.resume_tiers_of(store, before):
            store.add_event(
                card_id, f"tier {tier} resumed: its {before.blocked.cls} pause lifted", who
            )
    return card


def set_deps(store: Store, card_id: str, deps: Sequence[str], who: str = OPERATOR) -> Card:
    """Replace a card's dependencies, refusing a cycle and naming it."""

    def fn(tx: Tx, card: Card) -> dict[str, Any]:
        if card.lane in TERMINAL:
            raise Refused(f"{card.id}: is {card.lane}; its dependencies are final")
        return {"deps": tuple(check_deps(tx, card.id, deps))}

    return _mutate(store, card_id, fn, who)


def rewire_dependents(tx: Tx, card: Card, who: str) -> None:
    """C → B → A becomes C → A when B is cancelled, for dependents not yet started."""
    open_deps = []
    for dep in card.deps:
        try:
            if tx.get(dep).lane not in TERMINAL:
                open_deps.append(dep)
        except NotFound:
            continue
    for dep_id in tx.dependents(card.id):
        dependent = tx.get(dep_id)
        if dependent.lane not in ("backlog", "ready"):
            continue
        new = [d for d in dependent.deps if d != card.id]
        new += [d for d in open_deps if d not in new and d != dependent.id]
        note = (
            f"{card.id} was cancelled; now waits on {', '.join(open_deps)}"
            if open_deps
            else f"{card.id} was cancelled; it no longer waits on it"
        )
        tx.update(dependent.id, Expect(version=dependent.version), {"deps": tuple(new)}, who, note)


def _close(
    store: Store, cfg: Config | None, card_id: str, lane: str, who: str, reason: str
) -> Card:
    def fn(tx: Tx, card: Card) -> dict[str, Any]:
        if card.lane in TERMINAL:
            raise Refused(f"{card.id}: is already {card.lane}")
        if lane == "cancelled":
            rewire_dependents(tx, card, who)
        return {"lane": lane, "drive": ""}

    card = _mutate(store, card_id, fn, who, note=reason)
    ended = end_drives(store, card_id, f"{lane} by {who}", status=lane)
    for line in ended.lines:
        store.add_event(card_id, line, who)
    if cfg is not None:
        reap_trees(store, cfg, card_id)
    return card


def reap_trees(store: Store, cfg: Config, card_id: str) -> None:
    """Save-then-remove every tree the card owns; a tree that cannot be saved stays, said so."""
    from board.core.git import worktrees  # late: worktrees needs git, the store verbs do not

    try:
        worktrees.reap_card(cfg, card_id, store=store)
    except Exception as exc:  # the card's move stands; the tree stays and the card says why
        store.add_comment(card_id, f"its tree was kept: {exc}", "board")


def cancel(
    store: Store, cfg: Config | None, card_id: str, who: str = OPERATOR, reason: str = ""
) -> Card:
    """Cancel a card in any open lane: dependents are rewired, its trees saved then removed
    (with no `cfg`, as for a board being seeded, the card has no trees to reap)."""
    return _close(store, cfg, card_id, "cancelled", who, reason)


def done(
    store: Store, cfg: Config | None, card_id: str, who: str = OPERATOR, reason: str = ""
) -> Card:
    """Mark a card done by hand (e.g. its PR merged): its trees are saved then removed
    (with no `cfg`, the card has no trees to reap)."""
    return _close(store, cfg, card_id, "done", who, reason)


def comment(store: Store, card_id: str, text: str, who: str = OPERATOR) -> None:
    if not text.strip():
        raise Refused("an empty comment is not allowed")
    store.add_comment(card_id, text, who)


def claimable(card: Card, lanes: dict[str, str]) -> bool:
    """Ready, unblocked, and every dependency closed."""
    if card.lane != "ready" or card.blocked is not None:
        return False
    return all(lanes.get(dep, "done") in TERMINAL for dep in card.deps)


def ready_queue(store: Store, cards: list[Card] | None = None) -> list[Card]:
    """Claimable cards: priority first (0 most urgent), then age; of `cards` (the whole
    board) when the caller has just read them."""
    cards = store.list_cards() if cards is None else cards
    lanes = {c.id: c.lane for c in cards}
    queue = [c for c in cards if claimable(c, lanes)]
    queue.sort(key=lambda c: (c.priority, c.created_at, c.seq))
    return queue

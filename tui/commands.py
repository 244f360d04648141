"""The verbs the TUI offers, their keys, and the one command-palette provider.

`VERBS` is the single table: the screens build their bindings from it, the palette
lists it, the help shows it. Each verb is one call through the door `board.core.ops`,
the same call the CLI makes; the TUI adds only the question it asks first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, cast

from board.core.model import TERMINAL, Card
from board.core.records import Frozen
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.screen import Screen

from .screenbase import BoardAppScreen, PaletteActions

if TYPE_CHECKING:
    from .app import BoardApp


class Summarized(Protocol):
    """A verb's result that words itself (a split); a verb returning a card is worded by
    the app (`result_line`)."""

    def summary(self) -> str: ...


VerbCall = Callable[["BoardApp", str, "str | None"], "Card | Summarized"]


class Verb(Frozen, slots=True):
    """A core verb as a key: what it asks first (a reason, or yes/no naming the card)."""

    name: str
    key: str
    help: str
    ask: str = ""  # "" | "reason" | "optional-reason" | "confirm" | "confirm-reason"
    question: str = ""  # the words before the card id in the question
    call: VerbCall | None = None  # (app, card id, the answer) -> the card, or a result
    placeholder: str = "reason"  # what the answer field says it wants
    # in the footer: none, since at 80 columns the verbs cut each other's labels ("Q reque")
    # and left stray letters under the palette's key; every verb is in `?` and the palette
    show: bool = False
    required: str = ""  # for ask="reason": said inside the dialog when the answer is empty
    valid: Callable[[Card], bool] | None = None  # the states the palette offers it in

    def offered(self, card: Card) -> bool:
        """Whether the palette offers this verb on `card` (the core still decides)."""
        return self.valid is None or self.valid(card)

    @property
    def binding_id(self) -> str:
        return f"verb.{self.name}"

    def binding(self) -> Binding:
        return Binding(
            self.key,
            f"verb('{self.name}')",
            self.name,
            show=self.show,
            tooltip=self.help,
            id=self.binding_id,
        )


# each verb reaches the door when it runs, and the door loads the verb's module then: the
# control room's start has no use for them (tests/test_tui_imports.py)


def _ready(app: BoardApp, card_id: str, reason: str | None) -> Card:
    from board.core import ops

    return ops.ready(app.store, card_id)


def _hold(app: BoardApp, card_id: str, reason: str | None) -> Card:
    from board.core import ops

    return ops.hold(app.store, card_id, reason)


def _unblock(app: BoardApp, card_id: str, reason: str | None) -> Card:
    from board.core import ops

    return ops.unblock(app.store, card_id)


def _requeue(app: BoardApp, card_id: str, reason: str | None) -> Card:
    from board.core import ops

    return ops.requeue(app.store, card_id, reason or None)


def _cancel(app: BoardApp, card_id: str, reason: str | None) -> Card:
    from board.core import ops

    return ops.cancel(app.store, app.cfg, card_id, reason=reason or "")


def _done(app: BoardApp, card_id: str, reason: str | None) -> Card:
    from board.core import ops

    return ops.done(app.store, app.cfg, card_id, reason=reason or "")


def _stop(app: BoardApp, card_id: str, reason: str | None) -> Card:
    from board.core import ops

    return ops.stop(app.store, app.cfg, card_id, reason or None).card


def _approve(app: BoardApp, card_id: str, reason: str | None) -> Card:
    from board.core import ops

    seen = app.verb_versions.get(card_id)  # the version the operator was looking at
    k = app.verb_candidates.get(card_id)  # a candidate row's `a`; None: what waits in review
    return ops.approve(app.store, app.cfg, card_id, expect_version=seen, candidate=k).card


def slice_titles(answer: str | None) -> list[str]:
    """`Parse the config; Report line numbers` → the slices' titles, in order."""
    return [title.strip() for title in (answer or "").split(";") if title.strip()]


def _split(app: BoardApp, card_id: str, reason: str | None) -> Summarized:
    from board.core import ops
    from board.core.errors import Refused

    titles = slice_titles(reason)
    if not titles:
        raise Refused(f"split {card_id}: name at least one slice (titles separated by ;)")
    return ops.split(app.store, app.cfg, card_id, titles)


def _open(card: Card) -> bool:
    return card.lane not in TERMINAL


def _unstarted(card: Card) -> bool:
    return card.lane in ("backlog", "ready")


VERBS: dict[str, Verb] = {
    v.name: v
    for v in (
        Verb(
            "ready",
            "r",
            "move a backlog card to ready (it needs a spec)",
            call=_ready,
            valid=lambda c: c.lane == "backlog",
        ),
        Verb(
            "unblock",
            "u",
            "clear the card's block so the queue can take it",
            call=_unblock,
            valid=lambda c: c.blocked is not None,
        ),
        Verb(
            "hold",
            "H",
            "block the card by hand (class held); the loop never clears it",
            ask="reason",
            question="Hold",
            call=_hold,
            valid=lambda c: _open(c) and (c.blocked is None or c.blocked.cls != "held"),
            required="A reason is needed (the loop never clears a hold): type it, or esc.",
        ),
        Verb(
            "requeue",
            "Q",
            "send the card back to ready; the reason goes into the next brief",
            ask="optional-reason",
            question="Requeue",
            call=_requeue,
            valid=lambda c: _open(c) and not (c.lane == "ready" and c.blocked is None),
        ),
        Verb(
            "stop",
            "S",
            "stop the card's drive: its tree saved to stranded/, the card held in ready",
            ask="confirm-reason",
            question="Stop",
            call=_stop,
            valid=lambda c: c.lane == "working",
        ),
        Verb(
            "approve",
            "a",
            "publish a card waiting in review (fold or push), as you saw it",
            ask="confirm",
            question="Approve and publish",
            call=_approve,
            valid=lambda c: c.lane == "review",
        ),
        Verb(
            "split",
            "vertical_line",
            "split a card too wide for one build into slices (titles separated by ;): "
            "the slices ready, dependents repointed, the card cancelled",
            ask="reason",
            question="Split",
            call=_split,
            valid=_unstarted,
            placeholder="slice titles, separated by ;",
            required="Name at least one slice (titles separated by ;), or esc.",
        ),
        Verb(
            "cancel",
            "x",
            "cancel the card: dependents rewired, its trees saved then removed",
            ask="confirm",
            question="Cancel",
            call=_cancel,
            valid=_open,
        ),
        Verb(
            "done",
            "M",  # mark done; D is the dependency view (tui/depscreen.py)
            "mark the card done by hand: its trees saved then removed",
            ask="confirm",
            question="Mark done",
            call=_done,
            valid=_open,
        ),
    )
}


def verb_bindings() -> list[Binding]:
    """The verb keys, for every screen that has a current card."""
    return [verb.binding() for verb in VERBS.values()]


class PaletteEntry(Frozen, slots=True):
    """One palette line: what it says, what it does, and its help."""

    text: str
    run: Callable[[], Any]
    help: str


def palette_entries(app: BoardApp, screen: Screen[Any]) -> Iterator[PaletteEntry]:
    """Every verb for the current card first, then the screen's and the app's commands."""
    card: Card | None = None
    offer = PaletteActions()
    if isinstance(screen, BoardAppScreen):
        card, offer = screen.current_card(), screen.palette_actions()
    if card is not None:
        for verb in VERBS.values():
            if not verb.offered(card):
                continue
            yield PaletteEntry(
                f"{verb.name} {card.id}",
                partial(app.run_verb, verb.name, card.id, card.title),
                f"{app.key_for(verb.binding_id, verb.key)} · {verb.help}",
            )
        if offer.open_card is not None:
            yield PaletteEntry(
                f"open {card.id}",
                offer.open_card,
                f"{app.key_for('board.open', 'enter')} · card screen",
            )
        yield PaletteEntry(
            f"logs {card.id}",
            app.action_logs,
            f"{app.key_for('card.logs', 'l')} · the card's drive logs",
        )
        if isinstance(screen, BoardAppScreen):
            yield from _work_entries(app, screen, card)
    if isinstance(screen, BoardAppScreen) and offer.open_card is not None:
        yield PaletteEntry(
            "new card", screen.action_new_card, f"{app.key_for('card.new', 'n')} · add a card"
        )
    yield PaletteEntry(
        "stranded branches",
        app.action_stranded,
        f"{app.key_for('app.stranded', 's')} · browse stranded work",
    )
    yield PaletteEntry(
        "flow",
        app.action_flow,
        f"{app.key_for('app.flow', 'F')} · the last day: done per hour, drives, failures",
    )
    if offer.toggle_cancelled is not None:
        yield PaletteEntry(
            "toggle cancelled lane",
            offer.toggle_cancelled,
            f"{app.key_for('board.cancelled', 'c')} · show or hide cancelled",
        )
    if offer.filter is not None:
        yield PaletteEntry(
            "filter cards",
            offer.filter,
            f"{app.key_for('board.filter', 'slash')} · by title, id, label, class",
        )
    yield PaletteEntry(
        "refresh", app.action_refresh, f"{app.key_for('app.refresh', 'R')} · reload from the store"
    )
    yield PaletteEntry(
        "next theme", app.action_next_theme, f"{app.key_for('app.theme', 'T')} · cycle the themes"
    )
    for name in app.theme_names:
        yield PaletteEntry(f"theme {name}", partial(app.set_board_theme, name), "switch theme")
    yield PaletteEntry(
        "help",
        app.action_help,
        f"{app.key_for('app.help', 'question_mark')} · keys for this screen",
    )
    yield PaletteEntry("quit", app.action_quit, f"{app.key_for('app.quit', 'q')} · leave board tui")


def _work_entries(app: BoardApp, screen: BoardAppScreen, card: Card) -> Iterator[PaletteEntry]:
    """Edit, the spec in $EDITOR, the shell and the diff: each where it can work; the
    dependency view on any card."""
    if _unstarted(card):
        yield PaletteEntry(
            f"edit {card.id}",
            screen.action_edit_card,
            f"{app.key_for('card.edit', 'e')} · the card's form (not yet started)",
        )
        yield PaletteEntry(
            f"spec {card.id} in $EDITOR",
            screen.action_edit_spec,
            f"{app.key_for('card.edit_spec', 'E')} · the spec in your editor",
        )
    if card.branch and card.lane in ("working", "ready", "review"):
        yield PaletteEntry(
            f"shell in {card.id}'s tree",
            screen.action_shell,
            f"{app.key_for('card.shell', 'exclamation_mark')} · $SHELL in the card's tree",
        )
        yield PaletteEntry(
            f"diff {card.id}'s tree",
            screen.action_live_diff,
            f"{app.key_for('card.diff', 'd')} · the live tree against its start",
        )
    yield PaletteEntry(
        f"deps of {card.id}",
        app.action_deps,
        f"{app.key_for('card.deps', 'D')} · what it waits on and what waits on it",
    )


def _plain(text: str) -> Content:
    """Palette text as plain content: never parsed as markup."""
    return Content(text)


class BoardCommands(Provider):
    """The palette for the screen it was opened from: the current card's verbs and the app's."""

    def _entries(self) -> list[PaletteEntry]:
        return list(palette_entries(cast("BoardApp", self.app), self.screen))

    async def discover(self) -> Hits:
        for entry in self._entries():
            yield DiscoveryHit(_plain(entry.text), entry.run, text=entry.text, help=entry.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for entry in self._entries():
            score = matcher.match(entry.text)
            if score > 0:
                content = _plain(entry.text)
                _, offsets = matcher.fuzzy_search.match(matcher.query, entry.text)
                style = matcher.match_style
                for offset in offsets:
                    content = content.stylize(style, offset, offset + 1)
                yield Hit(score, content, entry.run, text=entry.text, help=entry.help)

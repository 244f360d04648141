"""The new-card and edit form: the fields of `board card add`, checked by the same core verb.

A `ModalScreen` so the board stays underneath and nothing behind it takes keys. Saving
calls `ops.add_card` (new) or `ops.edit_card` (edit) in a worker; a refusal is
shown inside the form, which stays open with everything typed, so a bad priority or a
dependency cycle costs one correction, not the whole card. An edit names the card as the
form was filled from it (`seen`): when the loop claimed the card meanwhile the core
refuses with what changed, and the form says so instead of closing.

Dependencies are picked from a fuzzy list of the open cards (read in a worker when the
form opens): type to narrow it, `enter` adds or removes the highlighted card.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from board.core import ops
from board.core.errors import BoardError
from board.core.model import PRIORITY_DEFAULT, TERMINAL, Card, CardDraft
from board.core.records import Frozen
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.fuzzy import Matcher
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from .boarddata import one_line

if TYPE_CHECKING:
    from .app import BoardApp

DEP_ROWS = 4  # the fuzzy list's height: the form fits 80x24 with the spec's box


class OpenCard(Frozen):
    """A card a new or edited card may wait on: its id and title, as one line."""

    id: str
    title: str

    @property
    def text(self) -> str:
        return f"{self.id}  {one_line(self.title)}"


def globs(text: str) -> list[str]:
    """`src/** docs/*.md, tests/**` → the surface globs (spaces or commas between them)."""
    return [g for g in text.replace(",", " ").split() if g]


def parse_priority(text: str) -> int:
    """The priority field as the core checks it: a whole number (the range is the core's)."""
    text = text.strip()
    if not text:
        return PRIORITY_DEFAULT
    try:
        return int(text)
    except ValueError:
        from board.core.errors import Refused

        raise Refused(f"priority must be a whole number 0-4, got {text!r}") from None


def parse_best_of(text: str) -> int | None:
    """The best-of field: blank is the board's `[coder] best_of` (None), else a whole number
    (its range is the core's `check_best_of`)."""
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        from board.core.errors import Refused

        raise Refused(
            f"best of must be a whole number 1-16 (blank: the board's), got {text!r}"
        ) from None


class CardForm(ModalScreen["Card | None"]):
    """Add a card (`n`), or edit one not yet started (`e`): the same fields, the same checks."""

    BINDINGS = [
        Binding("ctrl+s", "save", "save", tooltip="add or save the card", id="form.save"),
        Binding("escape", "abandon", "cancel", tooltip="close, writing nothing", id="form.abandon"),
    ]

    def __init__(self, seen: Card | None = None) -> None:
        super().__init__()
        self.seen = seen  # the card as shown, when editing
        self.deps: list[str] = list(seen.deps) if seen else []
        self.open_cards: list[OpenCard] = []
        self.shown_cards: list[OpenCard] = []
        self.saving = False

    @property
    def board_app(self) -> BoardApp:
        return cast("BoardApp", self.app)

    def compose(self) -> ComposeResult:
        seen = self.seen
        heading = f"edit {seen.id}" if seen else "new card"
        blink = self.board_app.cursor_blink
        with Vertical(id="form"):
            yield Static(Text(heading, style="bold"), id="form-heading")
            with VerticalScroll(id="form-fields"):
                with Horizontal(classes="form-row"):
                    yield Label("title", classes="form-label")
                    yield Input(
                        seen.title if seen else "",
                        placeholder="one line",
                        id="form-title",
                        compact=True,
                    )
                yield Label("spec: what to build (tab leaves it)", id="form-spec-label")
                spec = TextArea(
                    seen.spec if seen else "", id="form-spec", soft_wrap=True, compact=True
                )
                spec.cursor_blink = blink
                yield spec
                with Horizontal(classes="form-row"):
                    yield Label("acceptance", classes="form-label")
                    yield Input(
                        seen.acceptance if seen else "",
                        placeholder="how to tell it is done",
                        id="form-acceptance",
                        compact=True,
                    )
                with Horizontal(classes="form-row"):
                    yield Label("priority", classes="form-label")
                    yield Input(
                        str(seen.priority if seen else PRIORITY_DEFAULT),
                        placeholder="0 (urgent) to 4",
                        id="form-priority",
                        compact=True,
                    )
                with Horizontal(classes="form-row"):
                    yield Label("best of", classes="form-label")
                    yield Input(
                        str(seen.best_of) if seen and seen.best_of else "",
                        placeholder=self._best_of_hint(),
                        id="form-best-of",
                        compact=True,
                    )
                with Horizontal(classes="form-row"):
                    yield Label("surface", classes="form-label")
                    yield Input(
                        " ".join(seen.surface) if seen else "",
                        placeholder="globs it may touch (none: it runs alone)",
                        id="form-surface",
                        compact=True,
                    )
                with Horizontal(classes="form-row"):
                    yield Label("waits on", classes="form-label")
                    yield Input(
                        placeholder="type to find an open card, enter adds it",
                        id="form-dep-search",
                        compact=True,
                    )
                yield Static(self._deps_text(), id="form-deps")
                yield OptionList(id="form-dep-list", markup=False)
                ready = seen is not None and seen.lane == "ready"
                yield Checkbox(
                    "ready now (the loop may take it)",
                    ready,
                    id="form-ready",
                    disabled=ready,  # an edit never moves a ready card back to backlog
                    compact=True,
                )
            yield Static(Text(""), id="form-error")
            with Horizontal(id="form-buttons"):
                yield Button(
                    Text("Save" if seen else "Add"), id="form-save", variant="primary", compact=True
                )
                yield Button(Text("Cancel"), id="form-cancel", compact=True)
            yield Static(
                Text("ctrl+s save · esc cancel · tab next field · enter on a card: add/remove"),
                id="form-hint",
            )

    def _best_of_hint(self) -> str:
        """What a blank best of means for this card: the board's count, or its race's."""
        if self.seen is not None and self.seen.race:
            return f"blank: its race ({','.join(self.seen.race)}); N replaces it"
        board = self.board_app.cfg.coder.best_of
        return f"candidates at once; blank: the board's ({board})"

    def on_mount(self) -> None:
        for field in self.query(Input):
            field.cursor_blink = self.board_app.cursor_blink
        self.query_one("#form-title", Input).focus()
        self._read_open_cards()

    # dependencies ------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="form-cards", exit_on_error=False)
    def _read_open_cards(self) -> None:
        try:
            cards = self.board_app.store.list_cards()
        except BoardError as exc:
            self.app.call_from_thread(self.show_error, exc.line())
            return
        own = self.seen.id if self.seen else None
        found = [OpenCard(c.id, c.title) for c in cards if c.lane not in TERMINAL and c.id != own]
        self.app.call_from_thread(self._cards_read, found)

    def _cards_read(self, cards: list[OpenCard]) -> None:
        self.open_cards = cards
        self._filter_cards(self.query_one("#form-dep-search", Input).value)

    def _filter_cards(self, query: str) -> None:
        if query.strip():
            matcher = Matcher(query.strip())
            scored = [(matcher.match(c.text), c) for c in self.open_cards]
            shown = [c for score, c in sorted(scored, key=lambda x: -x[0]) if score > 0]
        else:
            shown = list(self.open_cards)
        self.shown_cards = shown
        options = self.query_one("#form-dep-list", OptionList)
        options.set_options(
            Option(Text(("✓ " if c.id in self.deps else "  ") + c.text), id=c.id) for c in shown
        )
        if shown:
            options.highlighted = 0

    def _deps_text(self) -> Text:
        return Text("  waits on: " + (", ".join(self.deps) if self.deps else "nothing"))

    def toggle_dep(self, card_id: str) -> None:
        """Add the card to the dependencies, or take it out if it is there."""
        if card_id in self.deps:
            self.deps.remove(card_id)
        else:
            self.deps.append(card_id)
        self.query_one("#form-deps", Static).update(self._deps_text())
        options = self.query_one("#form-dep-list", OptionList)
        keep = options.highlighted
        self._filter_cards(self.query_one("#form-dep-search", Input).value)
        if keep is not None and keep < options.option_count:
            options.highlighted = keep

    @on(Input.Changed, "#form-dep-search")
    def _search_changed(self, event: Input.Changed) -> None:
        self._filter_cards(event.value)

    @on(Input.Submitted, "#form-dep-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        options = self.query_one("#form-dep-list", OptionList)
        if options.highlighted is not None and self.shown_cards:
            self.toggle_dep(self.shown_cards[options.highlighted].id)

    @on(OptionList.OptionSelected, "#form-dep-list")
    def _dep_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.toggle_dep(event.option.id)

    def on_key(self, event: object) -> None:
        """up/down in the search field move the fuzzy list's highlight (as a palette does)."""
        from textual.events import Key

        if not isinstance(event, Key) or event.key not in ("up", "down"):
            return
        search = self.query_one("#form-dep-search", Input)
        if not search.has_focus:
            return
        options = self.query_one("#form-dep-list", OptionList)
        if event.key == "down":
            options.action_cursor_down()
        else:
            options.action_cursor_up()
        event.stop()

    # saving ------------------------------------------------------------------------------

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        """`enter` in a one-line field saves (as in a dialog); in the search it picks."""
        if event.input.id != "form-dep-search":
            event.stop()
            self.action_save()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "form-save":
            self.action_save()
        else:
            self.action_abandon()

    def show_error(self, line: str) -> None:
        """A refusal, inside the form: it stays open with what was typed."""
        error = self.query_one("#form-error", Static)
        error.update(Text(one_line(line)))
        error.set_class(bool(line), "-shown")

    def action_abandon(self) -> None:
        self.dismiss(None)

    def action_save(self) -> None:
        if self.saving:
            return
        self.saving = True
        self.show_error("")
        values = {
            "title": self.query_one("#form-title", Input).value,
            "spec": self.query_one("#form-spec", TextArea).text,
            "acceptance": self.query_one("#form-acceptance", Input).value,
            "priority": self.query_one("#form-priority", Input).value,
            "best_of": self.query_one("#form-best-of", Input).value,
            "surface": self.query_one("#form-surface", Input).value,
            "ready": self.query_one("#form-ready", Checkbox).value,
        }
        self._save(values, list(self.deps))

    @work(thread=True, exclusive=True, group="form-save", exit_on_error=False)
    def _save(self, values: dict[str, object], deps: list[str]) -> None:
        app = self.board_app
        try:
            card = save_card(app, self.seen, values, deps)
        except BoardError as exc:
            app.call_from_thread(self._refused, exc.line())
            return
        except Exception as exc:  # one line in the form, never a traceback
            app.call_from_thread(self._refused, f"internal error: {type(exc).__name__}: {exc}")
            return
        app.call_from_thread(self._saved, card)

    def _refused(self, line: str) -> None:
        self.saving = False
        self.show_error(line)

    def _saved(self, card: Card) -> None:
        self.saving = False
        self.dismiss(card)


def save_card(app: BoardApp, seen: Card | None, values: dict[str, object], deps: list[str]) -> Card:
    """The form's write: `add_card` for a new card, `edit_card` naming the card as shown."""
    priority = parse_priority(str(values["priority"]))
    best_of = parse_best_of(str(values.get("best_of", "")))
    if best_of is not None:  # 0 is no count here: blank says the board's
        ops.check_best_of(best_of)
    surface = globs(str(values["surface"]))
    if seen is None:
        draft = CardDraft(
            title=str(values["title"]),
            spec=str(values["spec"]),
            acceptance=str(values["acceptance"]),
            lane="ready" if values["ready"] else "backlog",
            priority=priority,
            deps=deps,
            surface=surface,
            best_of=best_of,
        )
        return ops.add_card(app.store, draft, prefix=app.cfg.board.prefix)
    edit = ops.CardEdit(
        title=str(values["title"]),
        spec=str(values["spec"]),
        acceptance=str(values["acceptance"]),
        priority=priority,
        deps=deps,
        surface=surface,
        # blank: the board's again (a card's own is dropped; a race is left as it is)
        best_of=best_of if best_of is not None else (0 if seen.best_of else None),
        ready=bool(values["ready"]) and seen.lane == "backlog",
    )
    return ops.edit_card(app.store, seen.id, edit, seen=seen)


__all__ = ["CardForm", "OpenCard", "globs", "parse_best_of", "parse_priority", "save_card"]

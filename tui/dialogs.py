"""Modal questions: a confirmation that names the card, and a one-line reason.

Both answer through `dismiss`, so a declined question returns before any verb runs:
nothing is written unless the operator said yes (or gave the reason). A required reason
left empty keeps the dialog open and says so inside it: closing it with the CLI's words on
the status line left the next keys acting on the board. Every question fits a 60x15
terminal: a card's title is cut (`TITLE_MAX`) and a long question scrolls inside its box,
so the buttons and the question's end are never pushed off the screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from .boarddata import one_line
from .movement import EDGES, PAGE_MOVES, movement_bindings

if TYPE_CHECKING:
    from .app import BoardApp


TITLE_MAX = 120  # characters of a card's title in a question (the rest is on the card)


class ConfirmDialog(ModalScreen[bool]):
    """Yes or no; `no` is focused so a stray `enter` keeps the card as it is."""

    BINDINGS = [
        Binding("y", "answer(True)", "yes", id="dialog.yes"),
        Binding("n,escape", "answer(False)", "no", id="dialog.no"),
        Binding("left,right,tab,shift+tab", "switch", show=False, id="dialog.switch"),
    ]

    def __init__(self, question: Text, yes_label: str) -> None:
        super().__init__()
        self.question = question
        self.yes_label = yes_label

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            with VerticalScroll(id="question-box"):
                yield Static(self.question, id="question")
            with Horizontal(id="buttons"):
                yield Button(Text(self.yes_label), id="yes", variant="error")
                yield Button(Text("No, keep it"), id="no", variant="primary")
            yield Static(Text("y yes · n/esc no"), id="hint")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    def action_switch(self) -> None:
        yes = self.query_one("#yes", Button)
        (self.query_one("#no", Button) if yes.has_focus else yes).focus()


class ConfirmReasonDialog(ModalScreen[str | None]):
    """Yes or no with an optional reason (a stop): `no` is focused as in every destructive
    question; `tab` reaches the reason field, and `enter` there is yes. Answers the reason
    ('' when none) for yes, None for no. ConfirmDialog's keys, under the same ids."""

    BINDINGS = ConfirmDialog.BINDINGS

    def __init__(self, question: Text, yes_label: str, placeholder: str = "reason") -> None:
        super().__init__()
        self.question = question
        self.yes_label = yes_label
        self.placeholder = placeholder

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            with VerticalScroll(id="question-box"):
                yield Static(self.question, id="question")
            field = Input(placeholder=self.placeholder, id="reason", compact=True)
            field.cursor_blink = cast("BoardApp", self.app).cursor_blink
            yield field
            with Horizontal(id="buttons"):
                yield Button(Text(self.yes_label), id="yes", variant="error")
                yield Button(Text("No, keep it"), id="no", variant="primary")
            yield Static(Text("y yes · n/esc no · tab the reason, enter there says yes"), id="hint")

    def _answer(self, yes: bool) -> None:
        self.dismiss(self.query_one("#reason", Input).value if yes else None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self._answer(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self._answer(yes)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._answer(True)

    def action_switch(self) -> None:
        order = [self.query_one("#no", Button), self.query_one("#reason", Input)]
        order.append(self.query_one("#yes", Button))
        index = next((i for i, w in enumerate(order) if w.has_focus), -1)
        order[(index + 1) % len(order)].focus()


class ReasonDialog(ModalScreen[str | None]):
    """Ask for a reason: `enter` gives it, `esc` abandons. A required reason left empty
    keeps the dialog open with `required` said inside it; an optional one may be empty."""

    BINDINGS = [Binding("escape", "abandon", "cancel", id="dialog.abandon")]

    def __init__(self, question: Text, placeholder: str = "reason", required: str = "") -> None:
        super().__init__()
        self.question = question
        self.placeholder = placeholder
        self.required = required  # what to say when the answer is empty ('' : optional)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            with VerticalScroll(id="question-box"):
                yield Static(self.question, id="question")
            field = Input(placeholder=self.placeholder, id="reason")
            field.cursor_blink = cast("BoardApp", self.app).cursor_blink
            yield field
            yield Static(Text(""), id="dialog-error")
            yield Static(Text("enter to confirm · esc to cancel"), id="hint")

    def on_mount(self) -> None:
        self.query_one("#reason", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.required and not event.value.strip():
            error = self.query_one("#dialog-error", Static)
            error.update(Text(self.required))
            error.add_class("-shown")
            return
        self.dismiss(event.value)

    def action_abandon(self) -> None:
        self.dismiss(None)


def card_question(verb_words: str, card_id: str, title: str, tail: str = "") -> Text:
    """`Cancel c-3 “title”?` with the title shown literally (it may hold markup or escapes)."""
    text = Text()
    text.append(f"{verb_words} ")
    text.append(card_id, style="bold")
    text.append(" “")
    shown = one_line(title)
    text.append(shown if len(shown) <= TITLE_MAX else shown[: TITLE_MAX - 1] + "…")
    text.append("”?")
    if tail:
        text.append(f"\n{tail}")
    return text


class HelpScreen(ModalScreen[None]):
    """The keys of the screen it was opened from, generated from its live bindings.

    Because it reads the bindings after the user's keymap, a key rebound in
    `[tui.keys]` shows here as the user bound it.
    """

    BINDINGS = [
        Binding("escape,question_mark,q", "close", "close", id="help.close"),
        *movement_bindings("help", PAGE_MOVES, ids=EDGES, said=EDGES, reader=True),
    ]

    def __init__(self, rows: list[tuple[str, str, str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(no_wrap=True, style="bold")
        table.add_column(no_wrap=True)
        table.add_column(no_wrap=True, style="italic")
        table.add_column()
        for keys, what, ident, why in self.rows:
            table.add_row(Text(keys), Text(what), Text(ident), Text(why))
        with Vertical(id="help"):
            yield Static(Text("keys  ·  esc closes  ·  rebind by id in board.toml [tui.keys]"))
            with VerticalScroll(id="help-scroll"):
                yield Static(table, id="help-table")

    def action_close(self) -> None:
        self.dismiss(None)

    def action_scroll(self, delta: int) -> None:
        self.query_one("#help-scroll", VerticalScroll).scroll_relative(y=delta, animate=False)

    def action_page(self, direction: int) -> None:
        scroll = self.query_one("#help-scroll", VerticalScroll)
        scroll.scroll_relative(y=direction * max(1, scroll.size.height - 1), animate=False)

    def action_edge(self, end: int) -> None:
        scroll = self.query_one("#help-scroll", VerticalScroll)
        if end:
            scroll.scroll_end(animate=False)
        else:
            scroll.scroll_home(animate=False)

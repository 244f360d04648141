"""The pick's question: onto which branch. The run branch (or the base) is filled in."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

if TYPE_CHECKING:
    from ..app import BoardApp


class TargetDialog(ModalScreen[str | None]):
    """Which branch to pick onto: the base by default; `esc` abandons."""

    BINDINGS = [Binding("escape", "abandon", "cancel", id="dialog.abandon")]
    DEFAULT_CSS = """
    TargetDialog {
        align: center middle;
        background: $background 60%;
    }
    TargetDialog #dialog {
        width: 72;
        max-width: 100%;
        height: auto;
        border: thick $primary;
        background: $surface;
        padding: 1 2;
    }
    TargetDialog #question { width: 1fr; margin-bottom: 1; }
    TargetDialog #target { width: 1fr; }
    TargetDialog #hint { color: $text-muted; margin-top: 1; }
    """

    def __init__(self, question: Text, default: str, hint: str) -> None:
        super().__init__()
        self.question = question
        self.default = default
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.question, id="question")
            field_ = Input(value=self.default, placeholder="branch", id="target")
            field_.cursor_blink = cast("BoardApp", self.app).cursor_blink
            yield field_
            yield Static(Text(self.hint), id="hint")

    def on_mount(self) -> None:
        self.query_one("#target", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_abandon(self) -> None:
        self.dismiss(None)

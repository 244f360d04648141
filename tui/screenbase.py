"""What the board app's screens share: the typed app, the current card, the palette's offer.

Typed both ways, so a renamed method is an error a type checker names, not a probe
(`getattr(self.app, ...)`, `hasattr(screen, ...)`) that skips it in silence:

- a screen reaches its app as the `BoardApp` it is (`board_app`, a `cast` as posting
  does: these screens are only ever pushed by the board app);
- it says which card it is on (`current_card`) and which of its own commands the palette
  may offer (`palette_actions`), instead of being asked whether it has a method;
- it hears of store changes by subscribing to the app's `store_changes` signal
  (`watch_store`), instead of the app calling `reload` on every screen by name.

The logs screen stays a plain `Screen`: it runs under any app (its tests use a bare one)
and polls the drive list on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from board.core.model import Card
from board.core.records import Frozen
from textual.screen import Screen

if TYPE_CHECKING:
    from .app import BoardApp


class PaletteActions(Frozen, slots=True):
    """A screen's own commands the palette offers beside the card's verbs (None: not here)."""

    open_card: Callable[[], Any] | None = None
    toggle_cancelled: Callable[[], Any] | None = None
    filter: Callable[[], Any] | None = None


class BoardAppScreen(Screen[None]):
    """A screen of the board app: the lanes, a card, the stranded browser."""

    @property
    def board_app(self) -> BoardApp:
        """The app, typed: its store, config, status line, verbs and signals."""
        return cast("BoardApp", self.app)

    def current_card(self) -> Card | None:
        """The card the verbs, the palette and `l` act on; None when there is none."""
        return None

    def palette_actions(self) -> PaletteActions:
        """The screen's own palette commands (none unless the screen says so)."""
        return PaletteActions()

    def follow_card(self, card_id: str) -> None:
        """Put the cursor on this card once the screen has read it (a card just added)."""

    def reload(self) -> None:
        """Read again what the screen shows; called when the store changed."""

    def watch_store(self) -> None:
        """Reload whenever the app sees the store's change counter move (call in on_mount).

        Immediate: a reload only starts a worker, so it runs as the app publishes, in the
        order the screens were stacked.
        """
        self.board_app.store_changes.subscribe(self, self._store_changed, immediate=True)

    def _store_changed(self, count: int) -> None:
        self.reload()

    # into the work (`work.work_bindings`: the board and the card screen carry the keys)

    def _card_or_say(self, verb: str) -> Card | None:
        card = self.current_card()
        if card is None:
            self.board_app.say(f"{verb}: no card here", error=True)
        return card

    def action_new_card(self) -> None:
        from . import workkeys

        workkeys.new_card(self.board_app)

    def action_edit_card(self) -> None:
        from . import workkeys

        if (card := self._card_or_say("edit")) is not None:
            workkeys.edit_card(self.board_app, card)

    def action_edit_spec(self) -> None:
        from . import workkeys

        if (card := self._card_or_say("spec")) is not None:
            workkeys.edit_spec(self.board_app, card)

    def action_shell(self) -> None:
        from . import workkeys

        if (card := self._card_or_say("shell")) is not None:
            workkeys.open_shell(self.board_app, card)

    def action_live_diff(self) -> None:
        from . import workkeys

        if (card := self._card_or_say("diff")) is not None:
            workkeys.live_diff(self.board_app, card)


__all__ = ["BoardAppScreen", "PaletteActions"]

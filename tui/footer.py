"""The keys' footer: Textual's `Footer`, rebuilt only when the keys it shows change.

Textual's footer rebuilds all its key widgets (one per key, then a layout of the screen)
at every bindings signal, and a screen sends several as it opens (the old screen
suspended, the first focus, the resume, the focus the screen sets): pushing the diff
screen rebuilt its footer five times, 10–25 ms each, while the operator's first keys
waited. Here a signal that arrives while a rebuild is already on its way, or that would
show the same keys, rebuilds nothing. Its own module: importing Textual's footer is
left until a footer is first needed (the board's first paint does without it).
"""

from __future__ import annotations

from collections.abc import Hashable

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer


class KeysFooter(Footer):
    """A `Footer` that rebuilds only when the keys it would show have changed."""

    def __init__(self, *, compact: bool = True, id: str | None = None) -> None:
        super().__init__(compact=compact, id=id)
        self._ready = False  # a bindings signal has come: the keys can be drawn
        self._pending = False  # a rebuild is on its way and will read the keys then
        self._shown: Hashable = None  # what the last rebuild drew
        self.rebuilds = 0  # rebuilds with keys to draw (tests)

    def shown_keys(self, screen: Screen) -> Hashable:
        """Everything the footer draws from the screen's bindings, to compare."""
        display = screen.app.get_key_display
        return tuple(
            (binding, display(binding), enabled, tooltip)
            for (_node, binding, enabled, tooltip) in screen.active_bindings.values()
        )

    def bindings_changed(self, screen: Screen) -> None:
        """Rebuild, unless a rebuild is already coming or nothing shown would change."""
        if screen is not self.screen:
            super().bindings_changed(screen)
            return
        if self._pending:
            return
        if self._ready and self.shown_keys(screen) == self._shown:
            return
        self._ready = True
        # the conditions under which Textual's footer schedules its rebuild
        self._pending = screen.app.app_focus and self.is_attached
        super().bindings_changed(screen)

    def compose(self) -> ComposeResult:
        self._pending = False
        if self._ready:
            self._shown = self.shown_keys(self.screen)
            self.rebuilds += 1
        yield from super().compose()

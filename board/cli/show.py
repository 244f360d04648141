"""How the command line shows what came from a user or a coder: literally (invariant 5).

Titles, specs, reasons and log lines may hold terminal escapes; they are made visible
(`␛[2J`) so nothing a card or a coder says can drive the operator's terminal. One
definition, shared by every verb.
"""

from __future__ import annotations

from board.core.safetext import sanitize


def visible(text: str) -> str:
    """A card's text as the terminal may show it: escapes and controls made visible."""
    return sanitize(text, keep_newlines=True)


__all__ = ["visible"]

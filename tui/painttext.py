"""Text from a user or a coder made safe to paint (invariant 5), for every screen; no
Textual here, so the early read and the header's words can use it before Textual loads."""

from __future__ import annotations

from board.core.safetext import sanitize as _core_sanitize


def sanitize(text: str) -> str:
    """Text from a user or a coder, safe to paint: every escape and control char visible.

    ESC [2J shows as `␛[2J`, a bell as `^G`; line breaks are kept for multi-line text.
    """
    if not text:
        return ""
    return _core_sanitize(text.replace("\r\n", "\n"), keep_newlines=True)


def one_line(text: str) -> str:
    """Sanitized text for a single row: line breaks shown as ⏎ so a row stays one row."""
    return sanitize(text).replace("\n", " ⏎ ")


__all__ = ["one_line", "sanitize"]

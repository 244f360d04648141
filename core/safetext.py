"""Text from a user or a coder, made harmless before it reaches a terminal (invariant 5).

Titles, specs, reasons, log lines, diffs and branch names are shown literally: no
terminal escape gets through, so nothing a card or a coder says can clear the operator's
screen, set their clipboard (OSC 52) or make text read other than it is (bidirectional
overrides). One sanitiser, used by the command line, the TUI and the logs alike; see
docs/lifecycle.md#nothing-is-lost.
"""

from __future__ import annotations

import re


def _visible_form(code: int) -> str:
    if code == 0x1B:
        return "␛"
    if code < 0x20:
        return "^" + chr(code + 0x40)
    if code == 0x7F:
        return "^?"
    if code <= 0x9F:
        return f"\\x{code:02x}"
    return f"<U+{code:04X}>"  # bidirectional overrides: text that reads other than it is


_UNSAFE = (
    list(range(0x00, 0x09))
    + list(range(0x0A, 0x20))
    + list(range(0x7F, 0xA0))
    + list(range(0x202A, 0x202F))
    + list(range(0x2066, 0x206A))
)
_TABLE: dict[str, str] = {chr(c): _visible_form(c) for c in _UNSAFE}


def _char_class(codes: list[int]) -> str:
    """A regex class of `codes` (ascending), written as ranges rather than seventy single
    characters (quicker to compile)."""
    parts = []
    start = prev = codes[0]
    for code in [*codes[1:], -1]:  # -1 ends the last range
        if code == prev + 1:
            prev = code
            continue
        parts.append(re.escape(chr(start)) + (f"-{re.escape(chr(prev))}" if prev > start else ""))
        start = prev = code
    return "[" + "".join(parts) + "]"


# compiled on first use (a listing with no card, or one printed as JSON, needs neither):
# a class reaching past U+00FF takes re a few million instructions to compile
_PATTERNS: dict[bool, re.Pattern[str]] = {}


def _pattern(keep_newlines: bool) -> re.Pattern[str]:
    """What `sanitize` replaces. A tab (0x09) is never in _UNSAFE: it is expanded, or kept
    on request."""
    pattern = _PATTERNS.get(keep_newlines)
    if pattern is None:
        codes = [c for c in _UNSAFE if c != 0x0A or not keep_newlines]
        pattern = _PATTERNS[keep_newlines] = re.compile(_char_class(codes))
    return pattern


def _replace(match: re.Match[str]) -> str:
    return _TABLE[match.group()]


def sanitize(
    text: str, keep_newlines: bool = False, tab_size: int = 4, keep_tabs: bool = False
) -> str:
    """Make terminal escapes and control characters visible, so none reaches the terminal.

    ESC becomes `␛` (so `\\x1b[2J` shows as `␛[2J`), other C0 controls and DEL
    caret notation (`^G`, `^M`, `^?`), C1 controls `\\x9b`, bidirectional overrides
    `<U+202E>`. Tabs become spaces (a raw tab moves the cursor on a screen we paint)
    unless `keep_tabs` (text printed to a terminal line by line, like a diff, keeps them:
    a tab there only moves to the next stop). Newlines become `^J` unless
    `keep_newlines`. Text with nothing to replace is returned as is.
    """
    if "\t" in text and not keep_tabs:
        text = text.expandtabs(tab_size)
    pattern = _PATTERNS.get(keep_newlines) or _pattern(keep_newlines)
    if pattern.search(text) is None:
        return text
    return pattern.sub(_replace, text)


__all__ = ["sanitize"]


def diffstat(files: int, insertions: int | None, deletions: int | None) -> str:
    """`2 files +13 -0`, `1 file +1 -0`: a save's diffstat as every listing words it."""
    return f"{files} file{'s' * (files != 1)} +{insertions} -{deletions}"

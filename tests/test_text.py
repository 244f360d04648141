"""The sanitiser's patterns, compiled on first use from ranges of code points (not at every
verb's start, from seventy single characters), match exactly the characters it replaces."""

from __future__ import annotations

from board.core import safetext

EVERY_CHARACTER = "".join(map(chr, range(0x110000)))


def test_the_patterns_match_exactly_the_unsafe_characters() -> None:
    unsafe = [chr(c) for c in safetext._UNSAFE]
    assert safetext._pattern(False).findall(EVERY_CHARACTER) == unsafe
    assert safetext._pattern(True).findall(EVERY_CHARACTER) == [c for c in unsafe if c != "\n"]
    assert safetext._pattern(True) is safetext._pattern(True)  # compiled once
    assert "\t" not in unsafe and " " not in unsafe


def test_sanitize_over_every_character() -> None:
    shown = safetext.sanitize(EVERY_CHARACTER, keep_tabs=True)
    want = "".join(safetext._TABLE.get(c, c) for c in EVERY_CHARACTER)
    assert shown == want
    assert safetext.sanitize("a\nb", keep_newlines=True) == "a\nb"
    assert safetext.sanitize("\x1b[2J") == "␛[2J" and safetext.sanitize("\u202e") == "<U+202E>"

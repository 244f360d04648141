"""The sanitiser's patterns, compiled on first use from ranges of code points (not at every
verb's start, from seventy single characters), match exactly the characters it replaces."""

from __future__ import annotations

from board.core import text

EVERY_CHARACTER = "".join(map(chr, range(0x110000)))


def test_the_patterns_match_exactly_the_unsafe_characters() -> None:
    unsafe = [chr(c) for c in text._UNSAFE]
    assert text._pattern(False).findall(EVERY_CHARACTER) == unsafe
    assert text._pattern(True).findall(EVERY_CHARACTER) == [c for c in unsafe if c != "\n"]
    assert text._pattern(True) is text._pattern(True)  # compiled once
    assert "\t" not in unsafe and " " not in unsafe


def test_sanitize_over_every_character() -> None:
    shown = text.sanitize(EVERY_CHARACTER, keep_tabs=True)
    want = "".join(text._TABLE.get(c, c) for c in EVERY_CHARACTER)
    assert shown == want
    assert text.sanitize("a\nb", keep_newlines=True) == "a\nb"
    assert text.sanitize("\x1b[2J") == "␛[2J" and text.sanitize("\u202e") == "<U+202E>"

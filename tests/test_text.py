"""The sanitiser's patterns, written as ranges of code points (quicker to compile at every
start than seventy single characters), still match exactly the characters it replaces."""

from __future__ import annotations

from board.core import text

EVERY_CHARACTER = "".join(map(chr, range(0x110000)))


def test_the_patterns_match_exactly_the_unsafe_characters() -> None:
    unsafe = [chr(c) for c in text._UNSAFE]
    assert text._UNSAFE_RE.findall(EVERY_CHARACTER) == unsafe
    assert text._UNSAFE_KEEP_NL_RE.findall(EVERY_CHARACTER) == [c for c in unsafe if c != "\n"]
    assert "\t" not in unsafe and " " not in unsafe


def test_sanitize_over_every_character() -> None:
    shown = text.sanitize(EVERY_CHARACTER, keep_tabs=True)
    want = "".join(text._TABLE.get(c, c) for c in EVERY_CHARACTER)
    assert shown == want
    assert text.sanitize("a\nb", keep_newlines=True) == "a\nb"
    assert text.sanitize("\x1b[2J") == "␛[2J" and text.sanitize("\u202e") == "<U+202E>"

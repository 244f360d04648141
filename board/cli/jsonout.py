"""`--json` output: exactly `json.dumps(obj, indent=2, ensure_ascii=False)`, written faster.

With `indent`, Python's json module leaves its C encoder for a pure-Python generator that
yields every bracket, comma and value through a chain of nested generators: for
`board card list --json` over 10,000 cards that was the largest single cost of the verb.
This writer walks the same values once, encodes each string with json's own C string
encoder, and lays out the same lines; so what scripts read stays byte for byte what it was
(tests/test_cli_json.py compares it with json.dumps on hostile text). Anything but the plain
JSON types (a float, a subclass, a key that is not text) goes to json.dumps itself, so a
value this writer does not know is never written differently.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring  # the C encoder's, for ensure_ascii=False
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

_CONTAINERS = (dict, list, tuple)


class _Unusual(Exception):
    """A value this writer leaves to json.dumps."""


def dumps(obj: Any) -> str:
    """`json.dumps(obj, indent=2, ensure_ascii=False)`, the same text."""
    out: list[str] = []
    try:
        _write(obj, out, "\n")
    except (_Unusual, RecursionError):  # json.dumps says what is wrong with a cycle, too
        return json.dumps(obj, indent=2, ensure_ascii=False)
    return "".join(out)


def _scalar(value: Any) -> str:
    """A value that is not a container, as json writes it (text is handled by the caller)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return int.__repr__(value)
    if type(value) is str:
        return encode_basestring(value)
    raise _Unusual


def _write(value: Any, out: list[str], nl: str) -> None:
    """Append `value` laid out as json's indent=2 does, `nl` being its own line's start."""
    kind = type(value)
    if kind is dict:
        if not value:
            out.append("{}")
            return
        inner = nl + "  "
        sep = "{" + inner
        for key, item in value.items():
            if type(key) is not str:
                raise _Unusual
            if type(item) is str:
                out.append(f"{sep}{encode_basestring(key)}: {encode_basestring(item)}")
            elif type(item) in _CONTAINERS:
                out.append(f"{sep}{encode_basestring(key)}: ")
                _write(item, out, inner)
            else:
                out.append(f"{sep}{encode_basestring(key)}: {_scalar(item)}")
            sep = "," + inner
        out.append(nl + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = nl + "  "
        sep = "[" + inner
        for item in value:
            if type(item) is str:
                out.append(sep + encode_basestring(item))
            elif type(item) in _CONTAINERS:
                out.append(sep)
                _write(item, out, inner)
            else:
                out.append(sep + _scalar(item))
            sep = "," + inner
        out.append(nl + "]")
    else:
        out.append(_scalar(value))

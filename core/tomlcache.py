"""What tomllib made of board.toml, kept beside the board so a verb need not import tomllib.

Importing tomllib compiles its regular expressions and imports typing and string: about a
fifth of `board card list`'s start on an empty board. So `config.load` keeps tomllib's
answer in `.board/board.toml.cache` (marshal, a builtin module) together with the exact
text it was given and the Python that ran it, and a later read takes the answer from there
only when that text equals the text read now, character for character: an edit is seen at
once, whatever the file's size or time stamps. The cache never holds anything but
tomllib's own answer for that very text, so it is exact by construction; no TOML is read
here. Anything wrong with it (missing, unreadable, torn, from another Python or another
program, not a plain tree of TOML values) means tomllib parses, as it would without it.
It is written only for a file that reads as a valid board.toml (a refused one is read
again each time), best effort and atomically (a whole file or none, by rename): an
unwritable `.board`, a document marshal cannot hold (a TOML date), or a race with another
writer costs only the next read's parse. Validation of the values stays with
`config.parse`, on every read.
"""

from __future__ import annotations

import marshal
import os
import sys
from binascii import crc32

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any

NAME = "board.toml.cache"  # in .board/
_MAGIC = b"board.toml cache 1\n"
# what tomllib read the text with: another interpreter reads it again
_PYTHON = sys.version


def read(path: str, text: str) -> dict[str, Any] | None:
    """tomllib's answer for `text` as kept at `path`, or None when it is not kept there
    for exactly this text and this Python (then parse it)."""
    data = load(path, _MAGIC, text)
    if type(data) is not dict or not _plain(data):
        return None
    return data


def dumps(text: str, data: dict[str, Any]) -> bytes | None:
    """The cache file's bytes for `data`, tomllib's answer for `text`; None when marshal
    cannot hold it (a TOML date or time: such a file is read with tomllib each time)."""
    return pack(_MAGIC, text, data)


def load(path: str, magic: bytes, key: str) -> object:
    """What `pack(magic, key, …)` kept at `path`, or None when it was kept for another key
    (a text read otherwise than now), by another Python or program, or is damaged.

    The layout any kept reading uses (the stranded listing's too: core/git/stranded.py):
    `magic`, a CRC-32 of the rest, then marshal's (Python, key, data)."""
    kept = load_keyed(path, magic)
    return kept[1] if kept is not None and kept[0] == key else None


def load_keyed(path: str, magic: bytes) -> tuple[str, object] | None:
    """(key, data) as `pack(magic, key, data)` kept them at `path`, whatever the key; None
    when kept by another Python or program, or damaged. For a caller that can use data kept
    for an earlier key (the stranded listing, for a file appended to since)."""
    try:
        with open(path, "rb") as fh:
            blob = fh.read()
    except (OSError, ValueError):
        return None
    head = len(magic) + 4
    if not blob.startswith(magic) or len(blob) <= head:
        return None
    payload = blob[head:]
    if crc32(payload).to_bytes(4, "big") != blob[len(magic) : head]:
        return None
    try:
        kept = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    if type(kept) is not tuple or len(kept) != 3:
        return None
    python, kept_key, data = kept
    if python != _PYTHON or type(kept_key) is not str:
        return None
    return kept_key, data


def pack(magic: bytes, key: str, data: Any) -> bytes | None:
    """The bytes `load` reads `data` back from, for `key`; None when marshal cannot hold it."""
    try:
        payload = marshal.dumps((_PYTHON, key, data))
    except ValueError:
        return None
    return magic + crc32(payload).to_bytes(4, "big") + payload


def write(path: str, blob: bytes) -> None:
    """Put `blob` (from `dumps`) at `path` whole, by rename; nothing when that cannot be
    done (no such directory, no permission)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
        except BaseException:
            os.unlink(tmp)
            raise
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _plain(value: object) -> bool:
    """Whether `value` is made only of what tomllib returns for a document without dates:
    tables with string keys, arrays, strings, integers, floats and booleans."""
    if type(value) is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if type(value) is list:
        return all(_plain(v) for v in value)
    return type(value) in (str, int, float, bool)

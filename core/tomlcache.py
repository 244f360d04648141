"""What tomllib made of board.toml, kept in the user's cache so a verb need not import tomllib.

Importing tomllib compiles its regular expressions and imports typing and string: about a
fifth of `board card list`'s start on an empty board. So `config.load` keeps tomllib's
answer in `board.toml.cache` (marshal, a builtin module), in the repository's folder of
the user's cache directory (core/cachedir.py), together with the exact text it was given
and the Python that ran it, and a later read takes the answer from there only when that
text equals the text read now, character for character: an edit is seen at once,
whatever the file's size or time stamps. Never in `.board/`: a clone brings what its
repository committed there, and a kept answer for board.toml's very text could name
another coder's argv than the text does (docs/lifecycle.md, "Nothing is lost"). marshal
is not meant for bytes anyone else wrote, and it reads only this user's own files.

The cache never holds anything but tomllib's own answer for that very text, so it is
exact by construction; no TOML is read here. Anything wrong with it (missing,
unreadable, torn, from another Python or another program, not a plain tree of TOML
values) means tomllib parses, as it would without it. It is written only for a file that
reads as a valid board.toml (a refused one is read again each time), best effort and
atomically (a whole file or none, by rename): an unwritable cache directory, a document
marshal cannot hold (a TOML date), or a race with another writer costs only the next
read's parse; with caching off (`BOARD_CACHE_DIR=`) tomllib parses every time. Validation
of the values stays with `config.parse`, on every read.
"""

from __future__ import annotations

import marshal
import sys
from binascii import crc32

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any

    from board.core.cachedir import Folder

NAME = "board.toml.cache"  # in the repository's folder of the user's cache (cachedir.for_repo)
_MAGIC = b"board.toml cache 1\n"
# what tomllib read the text with: another interpreter reads it again
_PYTHON = sys.version


def read(folder: Folder, name: str, text: str) -> dict[str, Any] | None:
    """tomllib's answer for `text` as kept as `name` in `folder`, or None when it is not
    kept there for exactly this text and this Python (then parse it)."""
    data = load(folder, name, _MAGIC, text)
    if type(data) is not dict or not _plain(data):
        return None
    return data


def dumps(text: str, data: dict[str, Any]) -> bytes | None:
    """The cache file's bytes for `data`, tomllib's answer for `text`; None when marshal
    cannot hold it (a TOML date or time: such a file is read with tomllib each time)."""
    return pack(_MAGIC, text, data)


def load(folder: Folder, name: str, magic: bytes, key: str) -> object:
    """What `pack(magic, key, …)` kept as `name` in `folder`, or None when it was kept for
    another key (a text read otherwise than now), by another Python or program, or is
    damaged.

    The layout any kept reading uses (the stranded listing's too: core/git/savestats.py):
    `magic`, a CRC-32 of the rest, then marshal's (Python, key, data)."""
    kept = load_keyed(folder, name, magic)
    return kept[1] if kept is not None and kept[0] == key else None


def load_keyed(folder: Folder, name: str, magic: bytes) -> tuple[str, object] | None:
    """(key, data) as `pack(magic, key, data)` kept them as `name` in `folder`, whatever the
    key; None when kept by another Python or program, or damaged. For a caller that can use
    data kept for an earlier key (the stranded listing, for a file appended to since)."""
    blob = folder.read(name)
    if blob is None:
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


def write(folder: Folder, name: str, blob: bytes) -> None:
    """Put `blob` (from `dumps` or `pack`) as `name` in `folder` whole, by rename; nothing
    when that cannot be done (no permission, a directory that is not the user's own)."""
    folder.write(name, blob)


def _plain(value: object) -> bool:
    """Whether `value` is made only of what tomllib returns for a document without dates:
    tables with string keys, arrays, strings, integers, floats and booleans."""
    if type(value) is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if type(value) is list:
        return all(_plain(v) for v in value)
    return type(value) in (str, int, float, bool)

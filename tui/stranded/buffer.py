"""A diff's bytes as git writes them, readable by line while they grow; no Textual here.

Operators open million-line diffs. The diff streams from `git diff` through a thread into
`DiffBuffer`, which indexes whole blocks of lines at C speed (a `count` per block, no
Python call per line), so the view can page the first screen while the rest is still
arriving. A preview (`stranded.diff_preview`: a big new file's start, read from its blob
while git is still diffing it) may be shown first; git's own bytes are checked against it
and replace it where they differ.
"""

from __future__ import annotations

import bisect
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable

from board.core import proc
from board.core.logs import LINE_CAP, decode_line
from board.core.records import Record
from board.core.safetext import sanitize

LONG_LINE = 1024 * 1024  # bytes without a newline before a line is kept as its head only
BLOCK_CACHE = 16
KEYS_FIRST_S = 0.15  # after an operator's key, git's output waits this long to be read


def _decode(raw: bytes) -> str:
    """One diff line as text: long lines cut with a marker, and a CR kept (shown as ^M).

    A diff that only changes line endings must still show a difference.
    """
    if raw.endswith(b"\r"):
        return decode_line(raw[:-1], len(raw) - 1) + "\r"
    return decode_line(raw)


class DiffFile(Record, slots=True):
    """One file of the diff: where its header is, where its hunks start, its +/− so far."""

    line: int
    path: str
    hunk: int = -1
    added: int = 0
    deleted: int = 0
    binary: bool = False


def _line_start(block: bytes, prefix: bytes, start: int, end: int) -> int:
    """Where the first line in `block[start:end]` that begins with `prefix` begins, or -1;
    `start` is at a line's start (blocks hold whole lines)."""
    if block.startswith(prefix, start, end):
        return start
    at = block.find(b"\n" + prefix, start, end)
    return at + 1 if at >= 0 else -1


def _line_starts(block: bytes, prefix: bytes, start: int, end: int) -> list[int]:
    """Every line in `block[start:end]` that begins with `prefix`, by where it begins."""
    out = [start] if block.startswith(prefix, start, end) else []
    needle = b"\n" + prefix
    at = block.find(needle, start, end)
    while at >= 0:
        out.append(at + 1)
        at = block.find(needle, at + 1, end)
    return out


def _header_path(header: bytes) -> str:
    """`diff --git a/x b/y` → `y` (sanitized); odd or quoted headers are shown as git wrote them."""
    text = decode_line(header)[len("diff --git ") :]
    cut = text.rfind(" b/")
    if cut >= 0 and text.startswith("a/"):
        return sanitize(text[cut + 3 :])
    return sanitize(text)


class DiffBuffer:
    """A diff's bytes as they stream in, readable by line number while they grow.

    Bytes arrive in chunks from the reader thread. Each chunk's whole lines become a block
    (one `bytes`); the index is the first line number of each block, so feeding a 50 MB,
    million-line diff costs a few C calls per 64 KB, not a Python call per line (which would
    starve the UI of the GIL). Lines are split out of a block only when drawn, and a few
    split blocks are cached. The files (`diff --git` headers) and their +/− counts are
    found per block with regular expressions and `count`, at the same C speed.
    """

    def __init__(self, on_grow: Callable[[], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._feed_lock = threading.Lock()  # git's reader and the preview feed in turn
        self._preview: bytes | None = None  # shown ahead of git, not yet all matched by it
        self._matched = 0  # bytes of the preview git has written the same
        self._git_started = False
        self._hold_until = 0.0  # the reader waits until then: the operator is pressing keys
        self.previewed = False  # a preview was shown (tests, status)
        self.generation = 0  # bumped when the lines are replaced: a viewer drops its cache
        self.on_grow = on_grow
        self._clear()
        self.done = False
        self.result: proc.Result | None = None
        self.error = ""

    def _clear(self) -> None:
        self._blocks: list[bytes] = []
        self._starts = array("q")
        self._count = 0
        self._pending = bytearray()
        self._long_head = bytearray()
        self._long_len = 0
        self._split: OrderedDict[int, list[bytes]] = OrderedDict()
        self.files: list[DiffFile] = []
        self._file_lines = array("q")
        self.bytes = 0

    @property
    def count(self) -> int:
        """Complete lines known (a partial last line counts once the diff has ended)."""
        return self._count

    # feeding (the reader thread) --------------------------------------------------------------

    @property
    def preview_replaced(self) -> bool:
        """git wrote something else than the preview showed: its bytes replaced it."""
        return self.generation > 0

    @property
    def previewing(self) -> bool:
        """Lines from a preview are shown that git has not yet written itself."""
        return self._preview is not None

    def preview(self, data: bytes) -> bool:
        """Show `data` (what git is expected to write first, `stranded.diff_preview`)
        before git writes anything; False if git has already begun, so it is not used."""
        with self._feed_lock:
            if self._git_started or self.done:
                return False
            self._preview = data
            self.previewed = True
            self._take(data)
        return True

    def hold(self, seconds: float = KEYS_FIRST_S) -> None:
        """The operator pressed a key: read nothing more for `seconds`. The reader thread
        sleeps instead of taking the GIL, git blocks on its full pipe instead of taking a
        core, and the next key (a held `j` repeats every 30 ms or so) gets the whole
        machine; reading resumes the moment the keys stop."""
        self._hold_until = time.monotonic() + seconds

    @property
    def held(self) -> bool:
        """The reader is waiting for the operator's keys to stop."""
        return self._hold_until > time.monotonic()

    def _keys_first(self) -> None:
        while (left := self._hold_until - time.monotonic()) > 0:
            time.sleep(min(left, 0.05))

    def feed(self, data: bytes) -> None:
        """Bytes as read from git. What a preview already showed is checked, not added
        again; at the first byte that differs, git's bytes replace the preview's lines."""
        self._keys_first()
        with self._feed_lock:
            self._git_started = True
            shown = self._preview
            if shown is not None:
                n = min(len(data), len(shown) - self._matched)
                if data[:n] != shown[self._matched : self._matched + n]:
                    self._replace(shown[: self._matched] + data)
                    return
                self._matched += n
                if self._matched == len(shown):
                    self._preview = None
                data = data[n:]
            if data:
                self._take(data)

    def _replace(self, data: bytes) -> None:
        """Drop every line (the preview was wrong) and index `data`, git's own bytes."""
        self._preview = None
        with self._lock:
            self._clear()
            self.generation += 1
        self._take(data)
        if self.on_grow is not None:
            self.on_grow()

    def _take(self, data: bytes) -> None:
        """Whole lines are indexed at once, a partial line waits."""
        self.bytes += len(data)
        if self._long_len:
            nl = data.find(b"\n")
            if nl < 0:
                self._long_len += len(data)
                return
            self._long_len += nl
            text = decode_line(bytes(self._long_head), self._long_len)
            self._long_head.clear()
            self._long_len = 0
            self._add(text.encode("utf-8", "replace") + b"\n")
            data = data[nl + 1 :]
        buf = self._pending
        buf += data
        cut = buf.rfind(b"\n")
        if cut >= 0:
            block = bytes(buf[: cut + 1])
            del buf[: cut + 1]
            self._add(block)
        if len(buf) > LONG_LINE:  # a line with no end in sight: keep its head only
            self._long_head = bytearray(buf[: LINE_CAP // 2])
            self._long_len = len(buf)
            buf.clear()
        if cut >= 0 and self.on_grow is not None:
            self.on_grow()

    def finish(self, result: proc.Result | None = None, error: str = "") -> None:
        """The stream ended: the last partial line becomes a line; say how git ended."""
        with self._feed_lock:
            if self._preview is not None:  # git wrote less than the preview showed
                self._replace(self._preview[: self._matched])
            self._git_started = True
            self._finish(result, error)

    def _finish(self, result: proc.Result | None, error: str) -> None:
        if self._long_len:
            text = decode_line(bytes(self._long_head), self._long_len)
            self._add(text.encode("utf-8", "replace") + b"\n")
            self._long_head.clear()
            self._long_len = 0
        if self._pending:
            self._add(bytes(self._pending) + b"\n")
            self._pending.clear()
        self.result = result
        self.error = error
        self.done = True
        if self.on_grow is not None:
            self.on_grow()

    def _add(self, block: bytes) -> None:
        start = self._count
        self._index_files(block, start)
        with self._lock:
            self._blocks.append(block)
            self._starts.append(start)
            self._count = start + block.count(b"\n")

    def _index_files(self, block: bytes, start: int) -> None:
        """Find the files whose headers are in `block`, and count +/− lines per file.

        `find` and `count` (memchr-speed C) rather than multi-line regular expressions,
        which step through every byte in Python's regex engine: this runs on the reader
        thread for every 64 KB, and what it holds the GIL for, the keys wait for.
        """
        heads = _line_starts(block, b"diff --git ", 0, len(block))
        bounds = [0, *heads, len(block)]
        line, pos = start, 0
        new_files = []
        for i in range(len(bounds) - 1):
            seg, end = bounds[i], bounds[i + 1]
            if i > 0:  # a new file starts at `seg`
                line += block.count(b"\n", pos, seg)
                pos = seg
                eol = block.find(b"\n", seg)
                new_files.append(DiffFile(line, _header_path(block[seg:eol])))
                current: DiffFile | None = new_files[-1]
            else:
                current = self.files[-1] if self.files else None
            if current is None or seg == end:
                continue
            body = seg
            if current.hunk < 0:
                hunk = _line_start(block, b"@@", seg, end)
                # "Binary files … differ" is a header line: no hunk line starts so
                if _line_start(block, b"Binary files ", seg, end if hunk < 0 else hunk) >= 0:
                    current.binary = True
                if hunk < 0:
                    continue
                body = hunk
                current.hunk = line + block.count(b"\n", pos, body)
            first = block[body : body + 1]
            current.added += block.count(b"\n+", body, end) + (first == b"+")
            current.deleted += block.count(b"\n-", body, end) + (first == b"-")
        if new_files:
            with self._lock:
                self.files.extend(new_files)
                self._file_lines.extend(f.line for f in new_files)

    # reading (the UI thread) ----------------------------------------------------------------

    def _block_lines(self, b: int) -> list[bytes]:
        lines = self._split.get(b)
        if lines is None:
            lines = self._blocks[b].split(b"\n")
            self._split[b] = lines
            if len(self._split) > BLOCK_CACHE:
                self._split.popitem(last=False)
        else:
            self._split.move_to_end(b)
        return lines

    def lines(self, start: int, stop: int) -> list[str]:
        """Decoded text of lines `start..stop-1` (long lines cut with a marker, \\r dropped)."""
        with self._lock:
            stop = min(stop, self._count)
            start = max(0, start)
            if start >= stop:
                return []
            out: list[str] = []
            b = bisect.bisect_right(self._starts, start) - 1
            k = start
            while k < stop:
                first = self._starts[b]
                lines = self._block_lines(b)
                n = len(lines) - 1
                take = min(stop, first + n)
                out.extend(_decode(raw) for raw in lines[k - first : take - first])
                k = take
                b += 1
            return out

    def file_at(self, line: int) -> int:
        """Index of the file the line belongs to, -1 before the first file header."""
        with self._lock:
            return bisect.bisect_right(self._file_lines, line) - 1

    def in_header(self, line: int) -> bool:
        """True for the header lines of a file (`diff --git`, `index`, `---`, `+++`, …)."""
        with self._lock:  # one look: a replaced preview swaps the file list meanwhile
            i = bisect.bisect_right(self._file_lines, line) - 1
            if i < 0 or i >= len(self.files):
                return False
            f = self.files[i]
        return f.hunk < 0 or line < f.hunk

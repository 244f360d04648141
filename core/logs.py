"""Drive logs: the writer the drive appends with, and a reader that opens any log at once.

The format is one line per output line, each prefixed with a UTC stamp
(`2026-01-02T03:04:05.678Z text`), appended and flushed line by line so a
follower sees output as it happens, not when the drive ends.

The reader is modelled on toolong. A log can be gigabytes and growing by tens
of thousands of lines a second, and the operator must see its tail at once:

- `LogFile` indexes line breaks *from the end* in a background thread, so the
  last screenful is readable after the first chunk; the rest of the index
  fills in above it. The index (`lineindex.LineEnds`) holds about 2.3 bytes a line, not
  an 8-byte offset: a 1 GB log of ten million lines costs 23 MB, not 80.
- Line ids are stable while the index grows in both directions: the scan adds
  negative ids above, the follower (`LogFile.poll`) adds ids at the bottom.
- Lines are read with `os.pread`, not through an `mmap`: a log truncated under
  an `mmap` raises SIGBUS and kills the process, and a drive log can be
  truncated (or replaced) while the operator watches it.
- A line longer than `LINE_CAP` bytes is shown cut, with a visible marker;
  invalid UTF-8 is replaced, never raised.

A log line is shown through `board.core.safetext.sanitize`, like every untrusted string:
escape sequences and control characters become visible text.

No Textual here: `core` must import without it.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from board.core.errors import Refused
from board.core.lineindex import LineEnds, SplitLines, line_lengths
from board.core.records import Record

if TYPE_CHECKING:  # logs sits beside config, not above it: the type only, no import
    from board.core.config import Config

LOG_SUFFIX = ".log"
LINE_CAP = 16 * 1024  # bytes of one line that are ever decoded and shown
SCAN_FIRST_CHUNK = 64 * 1024  # the first read from the end: enough for the tail at once
SCAN_CHUNK = 1024 * 1024
POLL_MAX_BYTES = 8 * 1024 * 1024  # most bytes indexed per poll, so one poll never stalls
SEARCH_CHUNK = 1024 * 1024
STAMP_LEN = len("2026-01-02T03:04:05.678Z ")
_STAMP_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ")
_CARD_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


# ---------------------------------------------------------------------------------------------
# where logs live


def check_card_id(card_id: str) -> str:
    """Refuse an id that could not be a card's (it would name a path outside the logs)."""
    if not isinstance(card_id, str) or not _CARD_ID_RE.fullmatch(card_id):
        raise Refused(f"not a card id: {card_id!r}")
    return card_id


def log_path(cfg: Config, card_id: str, attempt: int) -> Path:
    """`.board/logs/<card>/<attempt>.log`: where a drive of `card_id` writes its output."""
    check_card_id(card_id)
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 0:
        raise Refused(f"not an attempt number: {attempt!r}")
    return Path(cfg.logs_dir) / card_id / f"{attempt}{LOG_SUFFIX}"


def list_attempts(cfg: Config, card_id: str) -> list[int]:
    """The attempts of a card that left a log, oldest first."""
    folder = Path(cfg.logs_dir) / check_card_id(card_id)
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    attempts = []
    for name in names:
        stem, dot, suffix = name.partition(".")
        if dot and "." + suffix == LOG_SUFFIX and stem.isascii() and stem.isdigit():
            attempts.append(int(stem))
    return sorted(attempts)


def latest_log(cfg: Config, card_id: str) -> Path | None:
    """The log of the card's most recent attempt, or None if it has none."""
    attempts = list_attempts(cfg, card_id)
    return log_path(cfg, card_id, attempts[-1]) if attempts else None


# ---------------------------------------------------------------------------------------------
# the writer


def format_stamp(moment: datetime) -> str:
    """`YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC."""
    moment = moment.astimezone(UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


def split_stamp(line: str) -> tuple[str, str]:
    """`(stamp, text)` of a log line; a line without a stamp gives `("", line)`."""
    if len(line) >= STAMP_LEN and _STAMP_RE.match(line):
        return line[: STAMP_LEN - 1], line[STAMP_LEN:]
    return "", line


def _utc_now() -> datetime:
    return datetime.now(UTC)


class LogWriter:
    """Appends stamped lines to a drive log, one unbuffered write per line.

    Each line goes out in a single `write` on an `O_APPEND` file, so a reader
    never sees half a line from us and a crash loses at most the line being
    written. Safe to call from the thread reading a coder's output.
    """

    def __init__(self, path: str | Path, clock: Callable[[], datetime] = _utc_now) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._clock = clock
        self._lock = threading.Lock()
        self._file = open(self.path, "ab", buffering=0)

    def write_line(self, text: str | bytes) -> None:
        """Append `text` with a stamp; embedded newlines make several stamped lines."""
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        stamp = format_stamp(self._clock())
        parts = text.split("\n")
        payload = "".join(f"{stamp} {part}\n" for part in parts)
        try:
            data = payload.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            data = payload.encode("utf-8", "replace")
        with self._lock:
            if self._file.closed:
                raise ValueError(f"log {self.path} is closed")
            view = memoryview(data)
            while view:
                view = view[self._file.write(view) :]

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.close()

    @property
    def closed(self) -> bool:
        return self._file.closed

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------
# decoding one line


def decode_line(raw: bytes, total: int | None = None, cap: int = LINE_CAP) -> str:
    """Bytes of one line (no newline) as text: CR dropped, bad UTF-8 replaced, long lines cut.

    `total` is the line's full length when `raw` holds only its first bytes; a
    cut line ends with a visible marker saying how long it really is.
    """
    total = len(raw) if total is None else total
    if len(raw) > cap:
        raw = raw[:cap]
    cut = total > len(raw)
    if not cut and raw.endswith(b"\r"):
        raw = raw[:-1]
    text = raw.decode("utf-8", "replace")
    if cut:
        text += f" … [line cut: {total:,} bytes]"
    return text


class LineSplitter(SplitLines[str]):
    """Turns a stream of byte chunks into decoded lines without holding a long line whole."""

    def __init__(self, cap: int = LINE_CAP) -> None:
        super().__init__(cap)

    def _finish(self) -> str:
        line = decode_line(bytes(self._head), self._length, self.cap)
        self._head.clear()
        self._length = 0
        return line


# ---------------------------------------------------------------------------------------------
# following appended bytes


class Chunk(Record):
    """What a follower read: new bytes, and whether the file was truncated or replaced first."""

    data: bytes = b""
    truncated: bool = False


class Follower:
    """Reads what is appended to a log, from `offset` on (the CLI's `-f`).

    A file that shrinks or is replaced is read again from its start, and the
    chunk says so. A missing file is simply empty until it appears.
    """

    def __init__(self, path: str | Path, offset: int = 0) -> None:
        self.path = Path(path)
        self.offset = offset
        self._fd: int | None = None
        self._ino: int | None = None

    def _open(self) -> bool:
        if self._fd is not None:
            return True
        try:
            self._fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        self._ino = os.fstat(self._fd).st_ino
        return True

    def read(self, max_bytes: int = POLL_MAX_BYTES) -> Chunk:
        """New bytes (at most `max_bytes`; call again while data comes back full)."""
        chunk = Chunk()
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return chunk
        if self._fd is not None and st.st_ino != self._ino:
            self.close()
            self.offset = 0
            chunk.truncated = True
        if not self._open():
            return chunk
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size < self.offset:
            self.offset = 0
            chunk.truncated = True
        if size > self.offset:
            data = os.pread(self._fd, min(size - self.offset, max_bytes), self.offset)
            self.offset += len(data)
            chunk.data = data
        return chunk

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


# ---------------------------------------------------------------------------------------------
# the indexed reader


class LogFile:
    """A log indexed by line, tail first, readable by line id while it grows.

    Ids: the line that ends the file's last complete line at open time is -1,
    lines above it -2, -3, … (found by `scan`, from the end); lines appended
    after open are 0, 1, … (found by `poll`), the partial last line, if any,
    last. `bounds()` gives the ids known so far. A truncated or replaced file
    starts a new `generation`: ids of the old one mean nothing any more.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._poll_lock = threading.Lock()
        self._fd: int | None = None
        self._ino: int | None = None
        self._closed = False
        self.generation = 0
        self._start(None)

    # state ----------------------------------------------------------------------------------

    def _start(self, fd: int | None) -> None:
        """(Re)start the index over `fd`; the caller holds the lock."""
        if self._fd is not None and self._fd != fd:
            os.close(self._fd)
        self._fd = fd
        size = os.fstat(fd).st_size if fd is not None else 0
        self._ino = os.fstat(fd).st_ino if fd is not None else None
        self.generation += 1
        # Line ends (the offset after each "\n"). The scan's, found from the end, are kept
        # as distances from scan_end (so they ascend as the scan walks up): `_rev_end(r)`.
        self._rev = LineEnds()
        self._fwd = LineEnds()  # the follower's, ascending
        self._scan_end = size  # the scan covers [0, scan_end), the follower [scan_end, size)
        self._scan_pos = size  # the scan has covered [scan_pos, scan_end)
        self._size = size
        self._done = size == 0

    def open(self) -> LogFile:
        """Open the file (a missing file reads as empty until it appears)."""
        with self._lock:
            try:
                fd = os.open(self.path, os.O_RDONLY)
            except FileNotFoundError:
                fd = None
            self._closed = False
            self._start(fd)
        return self

    def close(self) -> None:
        """Release the file; a scan or poll still running in another thread stops short."""
        with self._lock:
            self._closed = True
            self.generation += 1  # whatever a thread read from the old descriptor is dropped
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> LogFile:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def size(self) -> int:
        """Bytes indexed so far."""
        return self._size

    @property
    def scanned(self) -> bool:
        """True once every line above the open point is indexed."""
        return self._done

    @property
    def scan_fraction(self) -> float:
        """How much of the file above the open point is indexed (1.0 when done)."""
        if self._done or not self._scan_end:
            return 1.0
        return (self._scan_end - self._scan_pos) / self._scan_end

    def index_bytes(self) -> int:
        """Memory held by the line index: every array's allocated buffer (spare room
        included) and header, as `sys.getsizeof` counts them, and the two holders."""
        with self._lock:
            return self._rev.nbytes() + self._fwd.nbytes()

    # the index ------------------------------------------------------------------------------

    def bounds(self) -> tuple[int, int]:
        """`(lo, hi)`: ids lo..hi-1 are known lines (hi counts a partial last line)."""
        with self._lock:
            return self._bounds()

    def _bounds(self) -> tuple[int, int]:
        rev, fwd = self._rev, self._fwd
        lo = -len(rev) if self._done else -(len(rev) - 1)
        if fwd:
            last_end = fwd.last
        else:
            last_end = self._rev_end(0) if rev else (0 if self._done else -1)
        partial = 1 if 0 <= last_end < self._size else 0
        return lo, len(fwd) + partial

    def _rev_end(self, r: int) -> int:
        """The end of line `-r - 1` (the scan's r-th line end from the bottom)."""
        return self._scan_end - self._rev.get(r)

    @property
    def line_count(self) -> int:
        lo, hi = self.bounds()
        return max(0, hi - lo)

    def _span(self, k: int) -> tuple[int, int]:
        """Byte range of line `k` without its newline; the caller holds the lock."""
        return self._spans(k, k + 1)[0]

    def _spans(self, start: int, stop: int) -> list[tuple[int, int]]:
        """Byte ranges of known lines `start..stop-1`, read from the index in two runs
        (one above the open point, one below); the caller holds the lock and clips."""
        spans: list[tuple[int, int]] = []
        rev, fwd = self._rev, self._fwd
        if start < 0:  # line k ends at rev end r = -k - 1 and starts at rev end r + 1
            r_lo, r_hi = -min(stop, 0), -start
            scan_end = self._scan_end
            ends = [scan_end - u for u in rev.values(r_lo, r_hi + 1)]
            if r_hi >= len(rev):
                ends.append(0)  # the top line starts the file
            spans += [(ends[i + 1], ends[i] - 1) for i in range(r_hi - r_lo - 1, -1, -1)]
        if stop > 0:  # line k ends at fwd end k and starts at fwd end k - 1
            k0 = max(start, 0)
            if k0 == 0:
                ends = [self._rev_end(0) if rev else 0, *fwd.values(0, stop)]
            else:
                ends = fwd.values(k0 - 1, stop)
            spans += [(ends[i], ends[i + 1] - 1) for i in range(len(ends) - 1)]
            if stop > len(fwd):  # the partial last line
                spans.append((ends[-1], self._size))
        return spans

    def span(self, k: int) -> tuple[int, int]:
        """Byte range `[start, end)` of line `k`, without its newline."""
        with self._lock:
            lo, hi = self._bounds()
            if not lo <= k < hi:
                raise IndexError(k)
            return self._span(k)

    def line_of_offset(self, offset: int) -> int:
        """The id of the line holding byte `offset`."""
        with self._lock:
            rev = self._rev
            if rev and offset < self._rev_end(0):
                return -rev.count_below(self._scan_end - offset)  # the ends past offset
            return self._fwd.count_at_most(offset)

    def lines(self, start: int, stop: int, generation: int | None = None) -> list[str]:
        """Decoded text of lines `start..stop-1` (clipped to what is known), in one read if small.

        With `generation` given, nothing is returned once the file was truncated
        or replaced, so a caller never shows lines of one file under ids of another.
        """
        with self._lock:
            if generation is not None and generation != self.generation:
                return []
            lo, hi = self._bounds()
            start, stop = max(start, lo), min(stop, hi)
            if start >= stop or self._fd is None:
                return []
            spans = self._spans(start, stop)
            fd = self._fd
            first, last = spans[0][0], spans[-1][1]
            out: list[str] = []
            if last - first <= 4 * LINE_CAP * len(spans):
                block = os.pread(fd, last - first, first)
                for a, b in spans:
                    raw = block[a - first : min(b, a + LINE_CAP) - first]
                    out.append(decode_line(raw, b - a))
            else:  # a very long line among them: read each line's head only
                for a, b in spans:
                    out.append(decode_line(os.pread(fd, min(b - a, LINE_CAP), a), b - a))
            return out

    def line(self, k: int) -> str:
        """Decoded text of line `k` (random access)."""
        got = self.lines(k, k + 1)
        if not got:
            raise IndexError(k)
        return got[0]

    def nth(self, n: int) -> str:
        """Line `n` counted from the top of the file (0 is the first); needs the full scan."""
        with self._lock:
            if not self._done:
                raise LookupError("the top of the log is still being read")
            lo, _ = self._bounds()
        return self.line(lo + n)

    def tail(self, n: int) -> list[str]:
        """The last `n` known lines."""
        lo, hi = self.bounds()
        return self.lines(max(lo, hi - n), hi)

    # scanning from the end ----------------------------------------------------------------

    def scan(
        self,
        progress: Callable[[int], None] | None = None,
        stop: threading.Event | None = None,
        chunk: int = SCAN_CHUNK,
        chunks: int | None = None,
    ) -> bool:
        """Index the file above the open point, last chunk first; meant for a thread.

        `progress(n)` is called after each chunk with the number of lines it added
        above. Returns True when the whole file is indexed, False if stopped, if
        `chunks` reads were made and more remain (the view indexes the tail's first
        one itself, then a thread the rest), or if the file was truncated or replaced
        meanwhile (`poll` starts over then).
        """
        with self._lock:
            generation = self.generation
            fd = self._fd
            pos = self._scan_pos
            fresh = pos == self._scan_end  # nothing read yet: the tail's small read first
        size = SCAN_FIRST_CHUNK if fresh else chunk
        reads = 0
        while pos > 0:
            if stop is not None and stop.is_set():
                return False
            if chunks is not None and reads >= chunks:
                return False
            reads += 1
            low = max(0, pos - size)
            size = chunk
            try:
                data = os.pread(fd, pos - low, low) if fd is not None else b""
            except OSError:
                return False
            if len(data) != pos - low:
                return False  # truncated under us; poll() restarts the index
            lengths = line_lengths(data)
            newlines = len(lengths) - 1
            with self._lock:
                if generation != self.generation:
                    return False
                before = self._bounds()[0]
                if newlines:  # ends from the last newline up: gaps are the lengths between
                    self._rev.extend(
                        self._scan_end - (pos - lengths[-1]), lengths[newlines - 1 : 0 : -1]
                    )
                self._scan_pos = low
                if low == 0:
                    self._done = True
                added = before - self._bounds()[0]
            if progress is not None:
                progress(added)
            pos = low
        with self._lock:
            if generation == self.generation:
                self._done = True
        return True

    def start_scan(self) -> threading.Thread:
        """Run `scan` in a daemon thread (the CLI and tests; the TUI uses a worker)."""
        thread = threading.Thread(target=self.scan, daemon=True, name=f"scan-{self.path.name}")
        thread.start()
        return thread

    # following the end ----------------------------------------------------------------------

    def poll(self, max_bytes: int = POLL_MAX_BYTES) -> str:
        """Index what was appended since the last call.

        Returns "same", "grew" (call again soon if much was written: at most
        `max_bytes` are indexed per call) or "reset" (the file was truncated,
        replaced or appeared: the index starts over, `scan` must run again).
        """
        with self._poll_lock:
            if self._closed:
                return "same"
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                return "same"
            with self._lock:
                if self._closed:
                    return "same"
                fd = self._fd
                if fd is None or st.st_ino != self._ino or st.st_size < self._size:
                    try:
                        new_fd = os.open(self.path, os.O_RDONLY)
                    except FileNotFoundError:
                        return "same"
                    self._start(new_fd)
                    return "reset"
                offset = self._size
            if st.st_size <= offset:
                return "same"
            try:
                data = os.pread(fd, min(st.st_size - offset, max_bytes), offset)
            except OSError:
                return "same"
            lengths = line_lengths(data)
            newlines = len(lengths) - 1
            with self._lock:
                if fd != self._fd or self._closed:
                    return "same" if self._closed else "reset"
                if newlines:
                    self._fwd.extend(offset + lengths[0] + 1, lengths[1:newlines])
                self._size = offset + len(data)
            return "grew"

    # searching ------------------------------------------------------------------------------

    def find(
        self,
        needle: str,
        start: int,
        backward: bool = False,
        stop: threading.Event | None = None,
    ) -> int | None:
        """The id of the first line from `start` on (or before it, `backward`) containing `needle`.

        All-lowercase needles match any case (ASCII). Runs over the bytes in chunks,
        so a search through a gigabyte is a worker's job, never the UI thread's.
        """
        if not needle:
            return None
        raw = needle.encode("utf-8", "replace")
        flags = re.IGNORECASE if needle == needle.lower() else 0
        pattern = re.compile(re.escape(raw), flags)
        with self._lock:
            lo, hi = self._bounds()
            if lo >= hi:
                return None
            region_start = self._span(lo)[0]
            region_end = self._span(hi - 1)[1]
            start = min(max(start, lo), hi - 1)
            fd = self._fd
            if fd is None:
                return None
            origin = self._span(start)[0] if not backward else self._span(start)[1]
            generation = self.generation
        try:
            return self._search(
                pattern,
                len(raw) - 1,
                fd,
                origin,
                region_start,
                region_end,
                backward,
                stop,
                generation,
            )
        except OSError:  # the file went away under us: no answer, not a crash
            return None

    def _search(
        self,
        pattern: re.Pattern[bytes],
        overlap: int,
        fd: int,
        origin: int,
        region_start: int,
        region_end: int,
        backward: bool,
        stop: threading.Event | None,
        generation: int,
    ) -> int | None:
        if not backward:
            pos = origin
            while pos < region_end:
                if stop is not None and stop.is_set():
                    return None
                end = min(region_end, pos + SEARCH_CHUNK)
                data = os.pread(fd, end - pos + overlap, pos)[
                    : min(region_end, end + overlap) - pos
                ]
                m = pattern.search(data)
                if m:
                    return self._found(pos + m.start(), generation)
                pos = end
            return None
        pos = origin
        while pos > region_start:
            if stop is not None and stop.is_set():
                return None
            low = max(region_start, pos - SEARCH_CHUNK)
            data = os.pread(fd, min(pos + overlap, origin) - low, low)
            last = None
            for m in pattern.finditer(data):
                last = m
            if last is not None:
                return self._found(low + last.start(), generation)
            pos = low
        return None

    def _found(self, offset: int, generation: int) -> int | None:
        if generation != self.generation:
            return None
        return self.line_of_offset(offset)


def last_line(path: str | Path, max_bytes: int = 8192) -> str:
    """The last non-empty line of a log, read from its end (for lists of drives)."""
    found = tail_lines(path, 1, max_bytes)
    return found[-1] if found else ""


def tail_lines(path: str | Path, count: int, max_bytes: int = 65536) -> list[str]:
    """The last `count` non-empty lines of a log, oldest first, from at most its last
    `max_bytes`: what a preview shows, at a cost that does not grow with the log (a
    following preview reads it twice a second however fast the coder writes)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            data = fh.read(max_bytes)
    except OSError:
        return []
    pieces = data.split(b"\n")
    if size > max_bytes and len(pieces) > 1:
        pieces = pieces[1:]  # the first piece may be the end of a line cut in two
    found: list[str] = []
    for raw in reversed(pieces):
        if len(found) >= count:
            break
        if raw.strip():
            found.append(decode_line(raw))
    return found[::-1]


def iter_lines(path: str | Path, chunk: int = SCAN_CHUNK) -> Iterator[str]:
    """Every line of a log, decoded and capped, read in chunks from the start."""
    follower = Follower(path)
    splitter = LineSplitter()
    try:
        while True:
            got = follower.read(chunk)
            if not got.data:
                break
            yield from splitter.feed(got.data)
        yield from splitter.flush()
    finally:
        follower.close()


__all__ = [
    "LINE_CAP",
    "Chunk",
    "Follower",
    "LineSplitter",
    "LogFile",
    "LogWriter",
    "check_card_id",
    "decode_line",
    "format_stamp",
    "iter_lines",
    "last_line",
    "tail_lines",
    "latest_log",
    "list_attempts",
    "log_path",
    "split_stamp",
]

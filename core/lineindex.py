"""The line index of a drive log: line ends in about 2.3 bytes each, not 8.

A 1 GB log has ten million lines; `LogFile` (board.core.logs) keeps where each ends so
that any line can be read at once while the file grows in both directions. This is the
store for those offsets, kept apart from the reader so that each can be read on its own.
Plain data: no file, no thread, no board import.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate, repeat
from operator import add
from typing import Generic, TypeVar

INDEX_BLOCK = 32  # one absolute offset kept every this many lines
_GAP_CAP = 0xFFFF  # a gap this long or longer is kept aside, exactly


class LineEnds:
    """A growing ascending sequence of offsets (line ends) in about 2.3 bytes each, not 8.

    Why: a 1 GB log has ten million lines, and one 8-byte offset each is 80 MB held
    while the log is open. Consecutive line ends differ by a line's length, almost
    always under 64 KB, so each value is kept as a 2-byte gap (the line's length
    without its newline: the next value is the last plus the gap plus one), with an
    absolute offset every `INDEX_BLOCK` values. Any value is then a checkpoint plus
    the sum of at most `INDEX_BLOCK - 1` gaps (a C-speed `sum` of an array slice),
    never a walk from the start. A gap of 64 KB or more (a long line) is kept aside,
    exactly, in two small arrays, and its slot holds `_GAP_CAP`.

    Not thread-safe on its own: `LogFile` holds its lock around every call.
    """

    __slots__ = ("_big_at", "_big_gap", "_checkpoints", "_gaps", "_last", "_n")

    def __init__(self) -> None:
        self._checkpoints = array("Q")  # the values at 0, INDEX_BLOCK, 2 * INDEX_BLOCK, ...
        self._gaps = array("H")  # value[i] - value[i - 1] - 1, capped; slot 0 unused
        self._big_at = array("Q")  # ascending indexes whose gap is at least _GAP_CAP
        self._big_gap = array("Q")  # their exact gaps
        self._n = 0
        self._last = 0

    def __len__(self) -> int:
        return self._n

    @property
    def last(self) -> int:
        """The largest value (the caller checks the sequence is not empty)."""
        return self._last

    def nbytes(self) -> int:
        """Bytes held: each array's allocated buffer and header (`sys.getsizeof`), and this."""
        return (
            sys.getsizeof(self)
            + sys.getsizeof(self._checkpoints)
            + sys.getsizeof(self._gaps)
            + sys.getsizeof(self._big_at)
            + sys.getsizeof(self._big_gap)
        )

    def extend(self, first: int, gaps: Sequence[int]) -> None:
        """Append `first`, then one value per gap, each `gap + 1` past the one before."""
        n = self._n
        if n == 0:
            self._checkpoints.append(first)
            self._gaps.append(0)
            self._n, self._last = 1, first
        elif first <= self._last:
            raise ValueError(f"line ends must grow: {first} after {self._last}")
        else:
            gaps = [first - self._last - 1, *gaps]
        if not gaps:
            return
        n, last, count, step = self._n, self._last, len(gaps), INDEX_BLOCK
        # the checkpoints: a sum per block of gaps, not a running sum per line (the scan
        # of a gigabyte spent a sixth of its time making an int for every line end)
        points = []
        first_point = (-n) % step  # the first new index on a checkpoint, counted from n
        if first_point < count:
            value = last + sum(gaps[: first_point + 1]) + first_point + 1
            points.append(value)
            for t in range(first_point + step, count, step):
                value += sum(gaps[t - step + 1 : t + 1]) + step
                points.append(value)
        self._checkpoints.extend(points)
        if max(gaps) >= _GAP_CAP:
            for i, gap in enumerate(gaps):
                if gap >= _GAP_CAP:
                    self._big_at.append(n + i)
                    self._big_gap.append(gap)
            self._gaps.extend([min(gap, _GAP_CAP) for gap in gaps])
        else:
            self._gaps.extend(gaps)
        self._n += count
        self._last = last + sum(gaps) + count

    def _gaps_of(self, i: int, j: int) -> list[int]:
        """The exact gaps at indexes i..j-1."""
        gaps = self._gaps[i:j].tolist()
        big_at = self._big_at
        if big_at:
            for p in range(bisect_left(big_at, i), bisect_left(big_at, j)):
                gaps[big_at[p] - i] = self._big_gap[p]
        return gaps

    def get(self, i: int) -> int:
        """The value at index `i` (0 <= i < len)."""
        if not 0 <= i < self._n:
            raise IndexError(i)
        block = i // INDEX_BLOCK
        at = block * INDEX_BLOCK
        value: int = self._checkpoints[block]
        if i == at:
            return value
        big_at = self._big_at
        if big_at and bisect_left(big_at, at + 1) != bisect_left(big_at, i + 1):
            return value + sum(self._gaps_of(at + 1, i + 1)) + (i - at)
        return value + sum(self._gaps[at + 1 : i + 1]) + (i - at)

    def values(self, i: int, j: int) -> list[int]:
        """The values at indexes i..j-1 (clipped to the sequence), one lookup and a running sum."""
        i, j = max(i, 0), min(j, self._n)
        if i >= j:
            return []
        return list(accumulate(map(add, self._gaps_of(i + 1, j), repeat(1)), initial=self.get(i)))

    def count_below(self, x: int) -> int:
        """How many values are less than `x`."""
        block = bisect_left(self._checkpoints, x) - 1
        if block < 0:
            return 0
        at = block * INDEX_BLOCK
        return at + bisect_left(self.values(at, at + INDEX_BLOCK), x)

    def count_at_most(self, x: int) -> int:
        """How many values are at most `x`."""
        block = bisect_right(self._checkpoints, x) - 1
        if block < 0:
            return 0
        at = block * INDEX_BLOCK
        return at + bisect_right(self.values(at, at + INDEX_BLOCK), x)


def line_lengths(data: bytes) -> list[int]:
    """Lengths of the pieces of `data` between newlines (one more piece than newlines).

    `split` and `map(len, …)` run in C: no Python code runs per line, which is what
    lets a scan index a gigabyte, or a follower 50,000 lines a second, beside the UI.
    """
    return list(map(len, data.split(b"\n")))


__all__ = ["INDEX_BLOCK", "LineEnds", "line_lengths"]


L = TypeVar("L")


class SplitLines(Generic[L]):
    """A stream of byte chunks as lines, however the reads cut them: a line split across
    two reads is joined before anyone reads it, and at most `cap` bytes of one line are
    held (a longer one is still counted whole). What a line becomes is the subclass's
    `_finish` (the log's decoded text, the usage reader's text with its length)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._head = bytearray()
        self._length = 0

    def _add(self, piece: bytes) -> None:
        room = self.cap - len(self._head)
        if room > 0:
            self._head += piece[:room]
        self._length += len(piece)

    def _finish(self) -> L:
        raise NotImplementedError

    def feed(self, data: bytes) -> list[L]:
        """The lines completed by `data`; a trailing partial line is kept for later."""
        out: list[L] = []
        start = 0
        find = data.find
        while True:
            nl = find(b"\n", start)
            if nl < 0:
                if start < len(data):
                    self._add(data[start:])
                return out
            self._add(data[start:nl])
            out.append(self._finish())
            start = nl + 1

    def flush(self) -> list[L]:
        """The partial last line, once the writer is done."""
        return [self._finish()] if self._length else []

    def reset(self) -> None:
        self._head.clear()
        self._length = 0

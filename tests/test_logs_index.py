"""The compact line index (`LineEnds`, and `LogFile` over it) against a plain split.

The index keeps a 2-byte gap per line and an absolute offset every `INDEX_BLOCK` lines,
so the losses it could cause are quiet ones: a line shown from the wrong offset at a
block's edge, a long line (a gap past 2 bytes) that shifts every line after it, a line
split across two reads counted twice or lost, a CRLF or a missing last newline that
moves the text by a byte. Each test compares every line with what `bytes.split` gives.
"""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest
from board.core import logs
from board.core.lineindex import INDEX_BLOCK, LineEnds
from board.core.logs import LogFile, decode_line

LONG = 70_000  # a line longer than a 2-byte gap can say


def expected_lines(data: bytes) -> list[str]:
    """What the log shows, by the plainest reading: split at newlines, no final empty piece."""
    pieces = data.split(b"\n")
    if pieces[-1] == b"":
        pieces.pop()
    return [decode_line(p[: logs.LINE_CAP], len(p)) for p in pieces]


def expected_spans(data: bytes) -> list[tuple[int, int]]:
    spans, start = [], 0
    for piece in data.split(b"\n"):
        spans.append((start, start + len(piece)))
        start += len(piece) + 1
    if data.endswith(b"\n") or not data:
        spans.pop()
    return spans


def mixed_log(rng: random.Random, lines: int) -> bytes:
    """Lines of every kind the index must count right: empty, short, CRLF, and long
    ones (past 64 KB, and at the 2-byte limit exactly), placed at random."""
    out = []
    for i in range(lines):
        roll = rng.random()
        if roll < 0.01:
            body = b"x" * rng.choice([LONG, 0xFFFE, 0xFFFF, 0x10000])
        elif roll < 0.1:
            body = b""
        elif roll < 0.2:
            body = b"crlf %d\r" % i
        else:
            body = b"line %d " % i + b"w" * rng.randrange(0, 120)
        out.append(body)
    return b"\n".join(out) + b"\n"


def every_line_by_id(log: LogFile) -> list[str]:
    """Each known line read alone (random access), top to bottom."""
    lo, hi = log.bounds()
    return [log.line(k) for k in range(lo, hi)]


# --- LineEnds alone ------------------------------------------------------------------------


def test_line_ends_give_back_every_value_around_every_block_edge() -> None:
    rng = random.Random(7)
    ends = LineEnds()
    values: list[int] = []
    value = 5
    for batch in range(40):
        gaps = [
            rng.choice([0, 1, 50, 0xFFFE, 0xFFFF, LONG, 3]) for _ in range(rng.randrange(0, 50))
        ]
        first = value + rng.randrange(1, 3 * 0xFFFF)  # sometimes a big gap between batches
        ends.extend(first, gaps)
        values.append(first)
        for gap in gaps:
            values.append(values[-1] + gap + 1)
        value = values[-1]
        assert len(ends) == len(values), f"batch {batch}: a value was lost or invented"
        assert ends.last == values[-1]
    assert [ends.get(i) for i in range(len(values))] == values, "a single lookup was wrong"
    for i in range(0, len(values), 7):
        for j in (i, i + 1, i + INDEX_BLOCK - 1, i + INDEX_BLOCK, i + 3 * INDEX_BLOCK + 1):
            assert ends.values(i, j) == values[i:j], f"values({i}, {j}) was wrong"
    for x in sorted({v + d for v in values[::3] for d in (-1, 0, 1)}):
        below = sum(1 for v in values if v < x)
        at_most = sum(1 for v in values if v <= x)
        assert ends.count_below(x) == below, f"count_below({x})"
        assert ends.count_at_most(x) == at_most, f"count_at_most({x})"
    with pytest.raises(IndexError):
        ends.get(len(values))


def test_line_ends_refuse_a_value_that_does_not_grow() -> None:
    ends = LineEnds()
    ends.extend(10, [0, 0])
    with pytest.raises(ValueError):
        ends.extend(12, [])
    assert len(ends) == 3 and ends.values(0, 3) == [10, 11, 12], "a refused extend changed it"


# --- LogFile over it -----------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [7, 4096, 1 << 20])
def test_every_line_read_alone_is_what_a_plain_split_gives(tmp_path: Path, chunk: int) -> None:
    """Small chunks split lines (long ones too) across the scan's reads, many times over."""
    data = mixed_log(random.Random(chunk), 3000)
    path = tmp_path / "1.log"
    path.write_bytes(data)
    log = LogFile(path).open()
    assert log.scan(chunk=chunk)
    want = expected_lines(data)
    assert log.line_count == len(want), "lines lost or invented by the scan"
    assert every_line_by_id(log) == want, "a line read alone came from the wrong bytes"
    lo, hi = log.bounds()
    assert log.lines(lo, hi) == want, "a line read in a run came from the wrong bytes"
    spans = expected_spans(data)
    assert [log.span(k) for k in range(lo, hi)] == spans, "a line's byte range was wrong"
    rng = random.Random(1)
    for _ in range(300):  # runs of lines starting anywhere, across block edges
        a = rng.randrange(lo, hi)
        b = min(hi, a + rng.randrange(1, 3 * INDEX_BLOCK))
        assert log.lines(a, b) == want[a - lo : b - lo], f"lines({a}, {b})"
    for k, (start, end) in list(enumerate(spans, lo))[::5]:
        for offset in {start, (start + end) // 2, end}:
            assert log.line_of_offset(offset) == k, f"byte {offset} placed in the wrong line"


def test_crlf_and_a_missing_last_newline_read_as_a_split_does(tmp_path: Path) -> None:
    lines = [b"one\r", b"", b"three\r", b"x" * LONG + b"\r"] * (INDEX_BLOCK // 2) + [b"partial\r"]
    data = b"\n".join(lines)  # no newline at the end: the last line is partial
    path = tmp_path / "1.log"
    path.write_bytes(data)
    log = LogFile(path).open()
    assert log.scan(chunk=1000)
    want = expected_lines(data)
    assert want[-1] == "partial" and want[0] == "one"
    assert every_line_by_id(log) == want


def test_a_file_of_one_line_without_a_newline_and_one_of_newlines_only(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    for data in (b"alone", b"\n" * (3 * INDEX_BLOCK + 1), b"\n", b"x" * LONG):
        path.write_bytes(data)
        log = LogFile(path).open()
        assert log.scan(chunk=64)
        assert every_line_by_id(log) == expected_lines(data), data[:10]
        log.close()


def test_a_growing_file_read_in_pieces_that_cut_lines_matches_a_split(tmp_path: Path) -> None:
    """Appends that stop mid-line (and mid-CRLF), polled a few bytes at a time, across
    block edges of the follower's index and with a long line among them."""
    rng = random.Random(3)
    first = mixed_log(rng, 100)
    path = tmp_path / "1.log"
    path.write_bytes(first + b"half a li")  # opened with a partial last line
    log = LogFile(path).open()
    assert log.scan(chunk=256)
    data = first + b"half a li"
    assert every_line_by_id(log) == expected_lines(data)
    more = b"ne\r\n" + mixed_log(rng, 400) + b"x" * LONG + b"\nend\r"
    cuts = sorted(rng.sample(range(1, len(more)), 60))
    for a, b in zip([0, *cuts], [*cuts, len(more)], strict=True):
        with open(path, "ab") as fh:
            fh.write(more[a:b])
        data += more[a:b]
        while log.poll(max_bytes=rng.choice([1, 13, 4096, 1 << 20])) == "grew":
            pass
        assert log.size == len(data)
        lo, hi = log.bounds()
        want = expected_lines(data)
        assert log.lines(lo, hi) == want, f"after {len(data)} bytes the lines differ"
    assert every_line_by_id(log) == expected_lines(data), "a line read alone was wrong"
    lo, hi = log.bounds()
    assert [log.span(k) for k in range(lo, hi)] == expected_spans(data)


def test_a_log_appended_while_scanned_matches_a_split(tmp_path: Path) -> None:
    """The scan walks up (small chunks) while the follower indexes what a writer adds."""
    rng = random.Random(11)
    data = mixed_log(rng, 2000)
    path = tmp_path / "1.log"
    path.write_bytes(data)
    log = LogFile(path).open()
    scan = threading.Thread(target=log.scan, kwargs={"chunk": 512})
    scan.start()
    for _ in range(50):
        piece = mixed_log(rng, 20)
        with open(path, "ab") as fh:
            fh.write(piece)
        data += piece
        log.poll(max_bytes=777)
    scan.join()
    while log.poll() == "grew":
        pass
    assert every_line_by_id(log) == expected_lines(data)


def test_the_line_index_costs_at_most_four_bytes_a_line(tmp_path: Path) -> None:
    """Issue 27: a 1 GB log is ten million lines; at 8 bytes each the index alone is 80 MB.
    Counted as `sys.getsizeof` counts each array: the allocated buffer, spare room too."""
    path = tmp_path / "1.log"
    path.write_bytes(b"".join(b"line %d\n" % i for i in range(200_000)))
    log = LogFile(path).open()
    assert log.scan(chunk=4096)
    per_line = log.index_bytes() / log.line_count
    assert per_line <= 4, f"the index holds {per_line:.2f} bytes per line"
    with open(path, "ab") as fh:
        fh.write(b"".join(b"more %d\n" % i for i in range(200_000)))
    while log.poll(max_bytes=4096) == "grew":
        pass
    per_line = log.index_bytes() / log.line_count
    assert log.line_count == 400_000
    assert per_line <= 4, f"the followed part holds {per_line:.2f} bytes per line"

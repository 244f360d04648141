"""Drive logs without a screen: the writer, the tail-first reader, the follower, sanitize, the CLI.

Each test names the loss it guards against: output that shows up only when a
drive ends, a tail that waits for a whole file to be read, a follower that
loses lines or stalls on a huge one, an escape sequence that reaches the terminal.
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from board.core import logs
from board.core.config import Config
from board.core.errors import Refused
from board.core.logs import (
    Follower,
    LineSplitter,
    LogFile,
    LogWriter,
    decode_line,
    split_stamp,
)
from board.core.model import CardDraft
from board.core.safetext import sanitize
from board.core.store import SQLiteStore

from board.cli.logs import cmd_logs
from tests.support.boards import make_board
from tests.support.repos import run_cli
from tests.support.waiting import wait_for

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z $")


def numbered(n: int, start: int = 0) -> bytes:
    return b"".join(b"line %d\n" % i for i in range(start, start + n))


def full_scan(path: Path) -> LogFile:
    log = LogFile(path).open()
    assert log.scan(chunk=4096), "the scan did not finish"
    return log


def all_lines(log: LogFile) -> list[str]:
    lo, hi = log.bounds()
    return log.lines(lo, hi)


# --- the writer ------------------------------------------------------------------------------


class StepClock:
    """A clock for the writer that starts at a fixed moment and moves 1.5 ms per call."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 2, 3, 4, 5, 678_900, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(microseconds=1500)
        return self.now


def test_each_line_is_readable_as_soon_as_it_is_written_not_when_the_drive_ends(
    tmp_path: Path,
) -> None:
    path = tmp_path / "logs" / "c-1" / "1.log"
    writer = LogWriter(path, clock=StepClock())
    writer.write_line("compiling")
    seen = path.read_bytes()  # another process reading now, the writer still open
    assert seen == b"2026-01-02T03:04:05.680Z compiling\n", (
        f"the line was not on disk with its stamp while the drive ran: {seen!r}"
    )
    writer.write_line("done")
    assert path.read_bytes().count(b"\n") == 2, "the second line was buffered, not flushed"
    writer.close()
    assert writer.closed


def test_writer_stamps_are_utc_milliseconds_and_split_back(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    with LogWriter(path) as writer:
        writer.write_line("hello world")
    line = path.read_text().rstrip("\n")
    stamp, text = split_stamp(line)
    assert STAMP.match(stamp + " "), f"stamp {stamp!r} is not YYYY-MM-DDTHH:MM:SS.mmmZ"
    assert text == "hello world"
    assert split_stamp("no stamp here") == ("", "no stamp here")
    assert split_stamp("2026-01-02T03:04:05.678Zx") == ("", "2026-01-02T03:04:05.678Zx")


def test_embedded_newlines_become_stamped_lines_so_the_line_structure_holds(
    tmp_path: Path,
) -> None:
    path = tmp_path / "1.log"
    with LogWriter(path, clock=StepClock()) as writer:
        writer.write_line("one\ntwo")
        writer.write_line(b"bytes \xff in")
        writer.write_line("lone surrogate \udcff")
    lines = path.read_bytes().split(b"\n")[:-1]
    assert len(lines) == 4, f"a newline inside a line broke the format: {lines!r}"
    assert all(STAMP.match(ln[:25].decode()) for ln in lines), "a line lost its stamp"
    assert lines[2].endswith("bytes \ufffd in".encode()), "undecodable bytes were not replaced"


def test_writer_appends_to_an_existing_log_and_refuses_after_close(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    path.write_bytes(b"earlier\n")
    writer = LogWriter(path)
    writer.write_line("later")
    writer.close()
    assert path.read_bytes().startswith(b"earlier\n"), "the writer overwrote an existing log"
    with pytest.raises(ValueError):
        writer.write_line("after close")


def test_writer_lines_from_many_threads_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    writer = LogWriter(path)

    def spam(tag: str) -> None:
        for i in range(300):
            writer.write_line(f"{tag}-{i}-" + tag * 200)

    threads = [threading.Thread(target=spam, args=(t,)) for t in "abcd"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.close()
    for line in path.read_text().splitlines():
        _, text = split_stamp(line)
        tag = text[0]
        assert text.endswith(tag * 200) and text.count("-") == 2, f"interleaved: {line[:80]!r}"


# --- where logs live -------------------------------------------------------------------------


def test_log_paths_attempts_and_latest(tmp_path: Path) -> None:
    cfg = Config(root=tmp_path)
    assert logs.log_path(cfg, "c-3", 2) == tmp_path / ".board" / "logs" / "c-3" / "2.log"
    assert logs.latest_log(cfg, "c-3") is None
    for n in (1, 10, 2):
        p = logs.log_path(cfg, "c-3", n)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x\n")
    (tmp_path / ".board" / "logs" / "c-3" / "notes.txt").write_text("not a log")
    for stray in ("².log", "٣.log"):  # digits to str.isdigit, not a log's attempt number
        (tmp_path / ".board" / "logs" / "c-3" / stray).write_text("not a log")
    assert logs.list_attempts(cfg, "c-3") == [1, 2, 10], "attempts sorted as text, not numbers"
    assert logs.latest_log(cfg, "c-3") == logs.log_path(cfg, "c-3", 10)


@pytest.mark.parametrize("bad", ["../etc", "c-1/../../x", "", "a b", ".hidden", "c\x1b[2J"])
def test_an_id_that_is_not_a_card_cannot_name_a_path_outside_the_logs(
    tmp_path: Path, bad: str
) -> None:
    cfg = Config(root=tmp_path)
    with pytest.raises(Refused, match="not a card id"):
        logs.log_path(cfg, bad, 1)
    with pytest.raises(Refused):
        logs.list_attempts(cfg, bad)


# --- sanitize --------------------------------------------------------------------------------

INJECTIONS = {
    "clear screen": "\x1b[2J\x1b[H",
    "clipboard (OSC 52)": "\x1b]52;c;cm0gLXJmIH4K\x07",
    "window title (OSC 0)": "\x1b]0;pwned\x1b\\",
    "cursor moves": "\x1b[10A\x1b[5;5H\x1b7\x1b8",
    "8-bit CSI": "\x9b2J",
    "bell and backspace": "\x07\x08\x08",
    "carriage return overwrite": "safe\rEVIL",
    "bidi override": "\u202eexe.txt",
}


@pytest.mark.parametrize("name", sorted(INJECTIONS))
def test_escape_sequences_are_shown_not_passed_to_the_terminal(name: str) -> None:
    shown = sanitize("before " + INJECTIONS[name] + " after")
    bad = [c for c in shown if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u202e"]
    assert not bad, f"{name}: {bad!r} would reach the terminal in {shown!r}"
    assert shown.startswith("before ") and shown.endswith(" after")


def test_sanitize_makes_each_control_visible_and_readable() -> None:
    assert sanitize("\x1b[2J") == "␛[2J"
    assert sanitize("\x1b]52;c;aGk=\x07") == "␛]52;c;aGk=^G"
    assert sanitize("a\rb\x00c\x7f") == "a^Mb^@c^?"
    assert sanitize("\x9b") == "\\x9b"
    assert sanitize("x\u202ey") == "x<U+202E>y"
    assert sanitize("a\tb") == "a   b", "a tab reached the terminal (it moves the cursor)"
    assert sanitize("one\ntwo") == "one^Jtwo"
    assert sanitize("one\ntwo\x1b", keep_newlines=True) == "one\ntwo␛"
    assert sanitize("[bold red]x[/]") == "[bold red]x[/]", "sanitize is not a markup escaper"


def test_sanitize_leaves_ordinary_text_alone() -> None:
    text = "ordinary text, ünïcödé ✓ and emoji 🚀 — unchanged"
    assert sanitize(text) is text, "clean text was copied (the fast path is gone)"
    assert sanitize("") == ""


def test_every_control_code_point_is_replaced() -> None:
    every = "".join(chr(c) for c in range(0, 0xA0)) + "\u202a\u202b\u202c\u202d\u202e\u2066\u2069"
    shown = sanitize(every)
    assert not [c for c in shown if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F], shown
    assert "\u202e" not in shown and "\u2066" not in shown


# --- decoding --------------------------------------------------------------------------------


def test_invalid_utf8_is_replaced_never_raised() -> None:
    assert decode_line(b"ok \xff\xfe end") == "ok \ufffd\ufffd end"
    assert decode_line(b"crlf\r") == "crlf", "a CRLF line kept its CR (shown as ^M)"


def test_a_long_line_is_cut_with_a_marker_that_says_how_long_it_was() -> None:
    raw = b"x" * 50_000
    for text in (decode_line(raw), decode_line(raw[: logs.LINE_CAP], total=len(raw))):
        assert text.startswith("x" * 100) and "line cut: 50,000 bytes" in text, text[-60:]
        assert len(text) < logs.LINE_CAP + 100, "the whole line was decoded, not its head"


def test_the_splitter_never_holds_a_huge_line_whole() -> None:
    splitter = LineSplitter(cap=1000)
    out = []
    for _ in range(100):  # 10 MB arriving in pieces without a newline
        out += splitter.feed(b"y" * 100_000)
        assert len(splitter._head) <= 1000, "the partial line grew past the cap in memory"
    out += splitter.feed(b"\nnext\n")
    assert out[0].endswith("[line cut: 10,000,000 bytes]") and out[1] == "next"
    assert splitter.flush() == []


# --- the indexed reader ----------------------------------------------------------------------


def test_every_line_is_indexed_and_readable_by_id(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    path.write_bytes(numbered(20_000))
    log = full_scan(path)
    lo, hi = log.bounds()
    assert hi - lo == 20_000, f"lines lost or invented by the scan: {hi - lo}"
    lines = all_lines(log)
    assert lines[0] == "line 0" and lines[-1] == "line 19999"
    assert lines == [f"line {i}" for i in range(20_000)], "the scan misplaced a line"
    assert log.line(lo + 12_345) == "line 12345", "random access gave the wrong line"
    assert log.nth(12_345) == "line 12345" and log.nth(0) == "line 0"
    assert log.line(hi - 1) == "line 19999"
    with pytest.raises(IndexError):
        log.line(hi)


def test_the_tail_is_readable_before_the_scan_reaches_the_top(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    path.write_bytes(numbered(500_000))
    log = LogFile(path).open()
    stop = threading.Event()
    finished = log.scan(progress=lambda n: stop.set(), stop=stop)  # one chunk, then stop
    assert not finished and not log.scanned, "the test meant to stop the scan early"
    with pytest.raises(LookupError):
        log.nth(0)  # line numbers from the top are not known yet
    assert log.tail(3) == ["line 499997", "line 499998", "line 499999"], (
        "the tail was not available after the first chunk from the end"
    )
    assert log.line_count < 50_000, "more than the first chunk was read before the tail"
    assert 0 < log.scan_fraction < 1
    assert log.scan(), "resuming the scan did not finish it"
    assert all_lines(log)[:2] == ["line 0", "line 1"], "the resumed scan lost the head"
    assert log.line_count == 500_000


def test_a_huge_sparse_log_shows_its_tail_at_once(tmp_path: Path) -> None:
    """A 2 GB file (sparse: no disk used) whose tail is read after one chunk from the end."""
    path = tmp_path / "big.log"
    tail = numbered(100, start=10_000_000)
    with open(path, "wb") as fh:
        fh.truncate(2 * 1024**3)
        fh.seek(0, os.SEEK_END)
        fh.write(b"\n" + tail)
    log = LogFile(path).open()
    stop = threading.Event()
    log.scan(progress=lambda n: stop.set(), stop=stop)
    assert log.tail(2) == ["line 10000098", "line 10000099"], "the tail of a 2 GB log did not show"
    assert log.scan_fraction < 0.001, "the whole file was read before showing the tail"


def test_following_picks_up_appended_lines_and_a_growing_partial_line(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    path.write_bytes(b"first\nsecond\nhalf")
    log = full_scan(path)
    assert all_lines(log) == ["first", "second", "half"], "the partial last line was not shown"
    with open(path, "ab") as fh:
        fh.write(b" done\nthird\n")
    assert log.poll() == "grew"
    assert all_lines(log) == ["first", "second", "half done", "third"]
    assert log.poll() == "same"


def test_a_log_growing_fast_while_scanned_loses_and_misplaces_nothing(tmp_path: Path) -> None:
    """A writer adds 200k lines while the scan walks up and the follower polls."""
    path = tmp_path / "1.log"
    path.write_bytes(numbered(100_000))
    log = LogFile(path).open()
    scan = threading.Thread(target=log.scan, kwargs={"chunk": 4096})  # small: overlaps the writer
    scan.start()
    done = threading.Event()

    def writer() -> None:
        with open(path, "ab") as fh:
            for block in range(200):
                fh.write(numbered(1000, start=100_000 + block * 1000))
                fh.flush()
        done.set()

    w = threading.Thread(target=writer)
    w.start()
    while not done.is_set():
        log.poll(max_bytes=64 * 1024)
    w.join()
    scan.join()
    while log.poll() == "grew":
        pass
    lines = all_lines(log)
    assert len(lines) == 300_000, f"{300_000 - len(lines)} lines lost while following"
    assert lines == [f"line {i}" for i in range(300_000)], "a line was misplaced"


def test_truncation_restarts_the_index_instead_of_showing_stale_lines(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    path.write_bytes(numbered(1000))
    log = full_scan(path)
    generation = log.generation
    path.write_bytes(b"fresh start\n")  # truncate and rewrite
    assert log.poll() == "reset", "the shrunk file was not noticed"
    assert log.generation != generation
    assert log.lines(0, 10, generation=generation) == [], "old ids returned new lines"
    log.scan()
    assert all_lines(log) == ["fresh start"]


def test_a_replaced_log_is_read_anew(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    path.write_bytes(numbered(10))
    log = full_scan(path)
    other = tmp_path / "other.log"
    other.write_bytes(numbered(50, start=500))
    os.replace(other, path)
    assert log.poll() == "reset", "a replaced file (new inode) was not noticed"
    log.scan()
    assert all_lines(log)[0] == "line 500"


def test_a_closed_log_is_not_reopened_by_a_late_poll_or_scan(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    path.write_bytes(numbered(100))
    log = LogFile(path).open()
    log.close()
    with open(path, "ab") as fh:
        fh.write(b"more\n")
    assert log.poll() == "same", "a poll after close opened the file again"
    assert not log.scan(), "a scan after close claimed to finish"
    assert log._fd is None and log.lines(-10, 10) == []


def test_a_missing_log_is_empty_until_it_appears(tmp_path: Path) -> None:
    path = tmp_path / "c-1" / "1.log"
    log = LogFile(path).open()
    assert log.bounds()[1] - log.bounds()[0] <= 0 and log.scan()
    assert log.poll() == "same"
    path.parent.mkdir()
    path.write_bytes(b"hello\n")
    assert log.poll() == "reset"
    log.scan()
    assert all_lines(log) == ["hello"]
    with open(path, "ab") as fh:
        fh.write(b"again\n")
    assert log.poll() == "grew" and all_lines(log) == ["hello", "again"]


def test_an_empty_log_has_no_lines(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    path.write_bytes(b"")
    log = full_scan(path)
    assert log.line_count == 0 and log.tail(5) == []


def test_a_ten_megabyte_line_is_shown_cut_between_normal_lines(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    path.write_bytes(b"before\n" + b"z" * 10_000_000 + b"\nafter\n")
    log = full_scan(path)
    lines = all_lines(log)
    assert len(lines) == 3 and lines[0] == "before" and lines[2] == "after"
    assert lines[1].endswith("[line cut: 10,000,000 bytes]"), lines[1][-50:]
    assert len(lines[1]) < logs.LINE_CAP + 100, "the whole 10 MB line was decoded"


def test_invalid_utf8_in_the_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    path.write_bytes(b"good\n\xc3\x28 bad \xff\nend")
    assert all_lines(full_scan(path)) == ["good", "\ufffd( bad \ufffd", "end"]


def test_search_finds_lines_forward_backward_and_ignores_case_when_lowercase(
    tmp_path: Path,
) -> None:
    path = tmp_path / "1.log"
    body = numbered(50_000).replace(b"line 31337\n", b"line 31337 Needle here\n")
    body = body.replace(b"line 777\n", b"line 777 needle\n")
    path.write_bytes(body)
    log = full_scan(path)
    lo, _ = log.bounds()
    first = log.find("needle", lo)
    assert first is not None and log.line(first) == "line 777 needle"
    second = log.find("needle", first + 1)
    assert second is not None and log.line(second) == "line 31337 Needle here"
    assert log.find("needle", second + 1) is None, "a search past the last match found one"
    back = log.find("needle", second - 1, backward=True)
    assert back == first, "N (backward) did not find the previous match"
    assert log.find("Needle", lo) == second, "a needle with capitals matched another case"
    assert log.find("", lo) is None


def test_line_of_offset_maps_bytes_to_ids_across_scan_and_follow(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    path.write_bytes(b"aa\nbb\n")
    log = full_scan(path)
    with open(path, "ab") as fh:
        fh.write(b"cc\ndd")
    log.poll()
    lo, hi = log.bounds()
    for k in range(lo, hi):
        start, end = log.span(k)
        assert log.line_of_offset(start) == k and log.line_of_offset(end - 1) == k


def test_last_line_and_iter_lines(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    path.write_bytes(b"a\nb\n\n")
    assert logs.last_line(path) == "b"
    assert list(logs.iter_lines(path)) == ["a", "b", ""]
    assert logs.last_line(tmp_path / "missing.log") == ""


# --- the follower ----------------------------------------------------------------------------


def test_the_follower_reads_appends_and_notices_truncation(tmp_path: Path) -> None:
    path = tmp_path / "1.log"
    follower = Follower(path)
    assert follower.read().data == b"", "a missing file was not empty"
    path.write_bytes(b"one\n")
    assert follower.read().data == b"one\n"
    with open(path, "ab") as fh:
        fh.write(b"two\n")
    assert follower.read().data == b"two\n"
    path.write_bytes(b"new\n")
    got = follower.read()
    assert got.truncated and got.data == b"new\n", "truncation lost the new content"
    other = tmp_path / "other.log"
    other.write_bytes(b"a longer replacement log\n")
    os.replace(other, path)  # a new file, larger than what was read: only the inode tells
    got = follower.read()
    assert got.truncated and got.data == b"a longer replacement log\n", "replacement unnoticed"
    follower.close()


# --- board logs ------------------------------------------------------------------------------


class Tty(io.StringIO):
    """An output that says it is a terminal, to see what the operator's terminal would get."""

    def isatty(self) -> bool:
        return True


def test_board_logs_on_a_terminal_shows_escapes_instead_of_running_them(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path)
    store.create(CardDraft(title="demo"))
    path = logs.log_path(cfg, "c-1", 1)
    with LogWriter(path) as w:
        w.write_line("\x1b[2Jclear \x1b]52;c;aGk=\x07 [bold red]x[/]")
    store.start_drive("c-1", "default", 1, str(path.relative_to(cfg.root)), 0)
    out = Tty()
    ctx = SimpleNamespace(cfg=cfg, store=store, root=cfg.root)
    assert cmd_logs(SimpleNamespace(id="c-1", follow=False, attempt=None), ctx, out) == 0
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text, f"an escape reached the terminal: {text!r}"
    assert "␛[2Jclear ␛]52;c;aGk=^G [bold red]x[/]" in text
    store.close()


def test_board_logs_prints_the_latest_attempt(repo: Path) -> None:
    cfg = Config(root=repo)
    store = SQLiteStore(cfg.db_path)
    store.create(CardDraft(title="demo"))
    for attempt in (1, 2):
        with LogWriter(logs.log_path(cfg, "c-1", attempt)) as w:
            w.write_line(f"attempt {attempt} output")
    store.close()
    res = run_cli(repo, "logs", "c-1", timeout=30)
    assert res.returncode == 0, res.stderr
    assert "attempt 2 output" in res.stdout and "attempt 1" not in res.stdout, res.stdout
    res = run_cli(repo, "logs", "c-1", "--attempt", "1", timeout=30)
    assert "attempt 1 output" in res.stdout, "an earlier attempt could not be read"


def test_board_logs_refuses_an_unknown_card_and_a_card_without_logs(repo: Path) -> None:
    res = run_cli(repo, "logs", "c-99", timeout=30)
    assert res.returncode != 0 and "c-99" in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, "the refusal was not one line"
    store = SQLiteStore(Config(root=repo).db_path)
    store.create(CardDraft(title="demo"))
    store.close()
    res = run_cli(repo, "logs", "c-1", timeout=30)
    assert res.returncode != 0 and "no drive log yet" in res.stderr, res.stderr
    res = run_cli(repo, "logs", "../x", timeout=30)
    assert res.returncode != 0 and "not a card id" in res.stderr


def test_board_logs_pipe_output_is_the_exact_bytes(repo: Path) -> None:
    cfg = Config(root=repo)
    store = SQLiteStore(cfg.db_path)
    store.create(CardDraft(title="demo"))
    store.close()
    path = logs.log_path(cfg, "c-1", 1)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"exact line\nno newline at end")
    res = run_cli(repo, "logs", "c-1", timeout=30)
    assert res.stdout == "exact line\nno newline at end", repr(res.stdout)


def test_board_logs_follow_prints_lines_as_they_come_and_stops_when_the_drive_ends(
    tmp_path: Path,
) -> None:
    cfg, store = make_board(tmp_path)
    store.create(CardDraft(title="demo"))
    path = logs.log_path(cfg, "c-1", 1)
    drive = store.start_drive("c-1", "default", 1, str(path.relative_to(cfg.root)), 0)
    writer = LogWriter(path)
    writer.write_line("before follow")
    out = Tty()
    ctx = SimpleNamespace(cfg=cfg, store=store, root=cfg.root)
    result: list[int] = []
    follow = threading.Thread(
        target=lambda: result.append(
            cmd_logs(SimpleNamespace(id="c-1", follow=True, attempt=None), ctx, out)
        )
    )
    follow.start()
    for i in range(5):
        writer.write_line(f"live {i}")
    wait_for(lambda: "live 4" in out.getvalue(), what="the appended lines printed by -f")
    assert follow.is_alive(), "-f stopped while the drive was still running"
    writer.write_line("last words")
    writer.close()
    store.update_drive(drive.id, status="passed")
    follow.join(timeout=10)
    assert not follow.is_alive(), "-f did not stop when the drive ended"
    assert result == [0]
    text = out.getvalue()
    assert text.index("before follow") < text.index("live 0") < text.index("last words"), text
    store.close()


def test_board_logs_follow_stops_cleanly_on_ctrl_c(repo: Path) -> None:
    cfg = Config(root=repo)
    store = SQLiteStore(cfg.db_path)
    store.create(CardDraft(title="demo"))
    path = logs.log_path(cfg, "c-1", 1)
    store.start_drive("c-1", "default", 1, str(path.relative_to(repo)), 0)  # stays live
    store.close()
    with LogWriter(path) as w:
        w.write_line("still running")
    # as from a terminal: SIGINT at its default, even when this run's parent ignores it (a
    # job started in the background with `&` does, and its children inherit that)
    restore_sigint = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    restore_sigint += "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
    child = subprocess.Popen(
        [sys.executable, "-c", restore_sigint, "-m", "board.cli", "logs", "c-1", "-f"],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        first = child.stdout.readline()
        assert b"still running" in first, first
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, f"Ctrl-C ended -f with {child.returncode}: {err!r}"
    assert b"Traceback" not in err

"""One coder run's output on its way into the drive log, read by the tier's usage reader.

The presets run their agents with JSON output, which carries what they spent but reads as
noise in a log. Where the tier's reader is a JSON one (core/usage.py), the output bytes go
to `<attempt>.jsonl` exactly as the coder printed them, and the log gets the text the
reader makes of each line: the agent's messages, its result, a tool call as one short
line. Lines are split here, not in core/proc.py, so a line the pipe delivered in two
reads is joined before it is parsed, and one too long to read is cut, not split into
pieces that parse as nothing. The text is what the failure rules read (live, and in the
tail a failed coder leaves): an agent's rate-limit or login message is in it.

A tier whose reader is text (aider) or "none" logs its lines as before; aider's are read
for usage on the way.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from board.core import proc, usage
from board.core.model import Usage

TAIL_LINES = 200  # text lines kept for the failure rules (they read a failed run's end)


class CoderOutput:
    """The output of one coder run: `chunk` (raw bytes, from the reading thread) or `line`
    (a text tier's lines), `close` at its end, `tail` the text lines last logged."""

    def __init__(self, reader: str, log: Path, on_text: Callable[[str], None]) -> None:
        self.meter = usage.meter(reader)
        self.on_text = on_text
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self.raw = None
        self.lines = usage.Lines()
        if self.meter is not None and self.meter.json:
            self.raw = open(usage.raw_path(log), "ab", buffering=0)  # noqa: SIM115

    @property
    def is_json(self) -> bool:
        return self.raw is not None

    def chunk(self, data: bytes) -> None:
        """Raw output as read: kept whole in the .jsonl, its complete lines made text."""
        if self.raw is None or self.raw.closed:  # a straggler's bytes after the end
            return
        view = memoryview(data)
        while view:
            view = view[self.raw.write(view) :]
        for line, total in self.lines.feed(data):
            self._text(line, total)

    def line(self, text: str) -> None:
        """A text tier's line (proc.stream split it): logged as it is, metered."""
        if self.meter is not None:
            self._read(text, None)
        self._emit(text)

    def _text(self, line: str, total: int) -> None:
        for text in self._read(line, total):
            self._emit(text)

    def _read(self, line: str, total: int | None) -> list[str]:
        """The meter's text of one output line; the line itself, said unread, when the
        meter fails on it. The coder's output is hostile input, and this runs on the thread
        that drains its pipe: an exception would end that thread, the rest of the output
        would be lost to the log and the coder would block on a full pipe until its
        timeout, counted against its card."""
        assert self.meter is not None
        try:
            return self.meter.feed(line, total)
        except Exception as exc:  # a reader's slip on one line costs that line's reading only
            return [line[: usage.TEXT_CAP], f"[usage reader {self.meter.name}: {exc!r:.200}]"]

    def _emit(self, text: str) -> None:
        self.tail.append(text)
        self.on_text(text)

    def close(self) -> None:
        """The coder ended: its last partial line read, the text held back logged."""
        if self.raw is None:
            return
        for line, total in self.lines.flush():
            self._text(line, total)
        assert self.meter is not None
        for text in self.meter.end():
            self._emit(text)
        self.raw.close()

    def finish(
        self, res: proc.Result, prices: Mapping[str, usage.Price], argv: Sequence[str] = ()
    ) -> Usage | None:
        """After `close`: a JSON tier's result gets the text lines as its tail (what the
        failure rules and the block's comment read), and what the run spent (None:
        nothing said, or the tier meters nothing; `argv` may name the model)."""
        if self.is_json:
            res.tail = list(self.tail)
        if self.meter is None:
            return None
        return self.meter.usage(prices, usage.model_in_argv(argv))


def describe_end(res: proc.Result) -> str:
    """How a coder (or a formatter) ended, in words for the drive log."""
    if res.missing:
        return "could not be started"
    if res.first_output_timed_out:
        return "printed nothing before first_output_timeout_s; killed"
    if res.timed_out:
        return "timed out; its process group was killed"
    sig = res.killed_by_signal
    if sig is not None:
        return f"killed by signal {sig}"
    return f"exit {res.returncode}"

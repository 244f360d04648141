"""`board logs ID [-f]`: a card's latest drive log on the command line, through the core reader.

On a terminal every line goes through `sanitize`, so a coder printing escape
sequences cannot clear or retitle the operator's terminal or write to their
clipboard (OSC 52). Into a pipe or a file the bytes are copied exactly.

The core's log reader is imported by the functions that read, so building the parser for
any other verb does not pay for it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING

from board.core.errors import NotFound
from board.core.safetext import sanitize

if TYPE_CHECKING:
    from board.cli.commands import Context, Subparsers
    from board.core.config import Config
    from board.core.model import Drive
    from board.core.store import Store

POLL_S = 0.2
STATUS_EVERY_S = 1.0


def register(sub: Subparsers) -> None:
    """Add `board logs` to the CLI's subparsers."""
    p = sub.add_parser(
        "logs",
        help="print a card's latest drive log (-f follows it while the drive runs)",
        description=(
            "Print the log of a card's latest drive. With -f, keep printing what the "
            "drive writes until it ends or you press Ctrl-C."
        ),
    )
    p.add_argument("id", metavar="ID", help="the card, e.g. c-12")
    p.add_argument("-f", "--follow", action="store_true", help="follow the log as it grows")
    p.add_argument("--attempt", type=int, help="an earlier attempt instead of the latest")
    p.set_defaults(func=cmd_logs)


def _drive_log(cfg: Config, drive: Drive) -> Path:
    from board.core.logs import log_path

    return cfg.root / drive.log if drive.log else log_path(cfg, drive.card, drive.attempt)


def _choose(
    cfg: Config, store: Store, card_id: str, attempt: int | None
) -> tuple[Path, Drive | None]:
    """The log to show and the drive writing it (None when no drive record names it).

    A live drive wins (its log may not exist yet: -f waits for it); otherwise the
    highest attempt that left a log, whether or not the store still knows its drive.
    """
    from board.core.logs import list_attempts, log_path

    drives = store.list_drives(card_id)
    live = [d for d in drives if d.live and (attempt is None or d.attempt == attempt)]
    if live:
        newest = max(live, key=lambda d: d.attempt)
        return _drive_log(cfg, newest), newest
    found: dict[int, tuple[Path, Drive | None]] = {
        n: (log_path(cfg, card_id, n), None) for n in list_attempts(cfg, card_id)
    }
    for d in sorted(drives, key=lambda d: d.started_at):
        path = _drive_log(cfg, d)
        if path.exists():
            found[d.attempt] = (path, d)
    if attempt is not None:
        if attempt not in found:
            raise NotFound(f"{card_id} has no log for attempt {attempt}")
        return found[attempt]
    if not found:
        raise NotFound(f"{card_id} has no drive log yet")
    return found[max(found)]


def _still_running(store: Store, drive: Drive | None) -> bool:
    if drive is None:
        return False
    try:
        return store.get_drive(drive.id).live
    except NotFound:
        return False


class _Printer:
    """Writes log bytes to `out`: exact bytes into a pipe, sanitized lines onto a terminal."""

    def __init__(self, out: IO[str]) -> None:
        from board.core.logs import LineSplitter

        self.out = out
        self.terminal = bool(getattr(out, "isatty", lambda: False)())
        self.splitter = LineSplitter()

    def feed(self, data: bytes, truncated: bool = False) -> None:
        if truncated:
            self.splitter.reset()
            if self.terminal:
                self.out.write("--- the log was truncated or replaced; reading it again ---\n")
        if not data:
            return
        if self.terminal:
            lines = self.splitter.feed(data)
            if lines:
                self.out.write("".join(sanitize(line) + "\n" for line in lines))
                self.out.flush()
        else:
            buffer = getattr(self.out, "buffer", None)
            if buffer is not None:
                self.out.flush()
                buffer.write(data)
                buffer.flush()
            else:
                self.out.write(data.decode("utf-8", "replace"))
                self.out.flush()

    def finish(self) -> None:
        if self.terminal:
            rest = self.splitter.flush()
            if rest:
                self.out.write("".join(sanitize(line) + "\n" for line in rest))
        self.out.flush()


def cmd_logs(args: argparse.Namespace, ctx: Context, out: IO[str] | None = None) -> int:
    """Print (and with -f follow) the latest drive log of a card."""
    from board.core.logs import Follower, check_card_id

    card_id = check_card_id(args.id)
    store = ctx.store
    store.get(card_id)  # an unknown card is refused with its id named
    path, drive = _choose(ctx.cfg, store, card_id, args.attempt)
    printer = _Printer(out if out is not None else sys.stdout)
    follower = Follower(path)
    try:
        while True:  # everything written so far
            got = follower.read()
            printer.feed(got.data, got.truncated)
            if not got.data:
                break
        if not args.follow:
            printer.finish()
            return 0
        running = _still_running(store, drive)
        checked = time.monotonic()
        while running:
            got = follower.read()
            printer.feed(got.data, got.truncated)
            if not got.data:
                time.sleep(POLL_S)
            if time.monotonic() - checked >= STATUS_EVERY_S:
                running = _still_running(store, drive)
                checked = time.monotonic()
        while True:  # what the drive wrote before it ended
            got = follower.read()
            printer.feed(got.data, got.truncated)
            if not got.data:
                break
        printer.finish()
        return 0
    except KeyboardInterrupt:
        printer.finish()
        return 0
    finally:
        follower.close()

"""Sending the notices the loop records (core/cards/notices.py) to where the operator is:
`[notify] argv`, a command run once per notice, and `[notify] urls`, Apprise URLs (ntfy,
Slack, Telegram, email… through the optional extra `pip install 'board[notify]'`).

Why from the loop, in a thread of its own: the loop is what runs while nobody watches, and
a send is a network call or a child process that may hang; the ticks, the claims and the
drives never wait on one. Each notice is taken before it is sent (`Store.claim_notice`, a
compare-and-set of its tries), so two loops of one board (two hosts) never send it both;
a send that fails is logged, its failure kept on the row, and tried again a few times
(MAX_TRIES in all), each channel that took it not asked again. A notice older than
SEND_WITHIN_S is not sent: a board that gets `[notify]` after a month does not wake a
phone with that month's news. `board run --until-idle` sends what is pending before it
exits (`Sender.stop`).

The argv runs through core/proc.py: no shell, no stdin, its own process group, a timeout;
`{kind}`, `{card}`, `{class}` and `{text}` are put into each argument once, as whole
words, never through a shell. The text is plain already (notices.plain).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from board.core import proc
from board.core.cards import notices, waits
from board.core.config import Config, NotifySection
from board.core.errors import BoardError, StoreUnavailable
from board.core.failures import stamp
from board.core.model import Card, Notice, Pause
from board.core.store import Store

MAX_TRIES = 3  # sends begun per notice, the first and two retries
SEND_WITHIN_S = 3600.0  # a notice older than this is not sent
CLAIM_S = 300.0  # a claim older than this was a sender that died: the notice is free again
PASS_S = 2.0  # how often pending notices are looked for (a new one wakes the sender)
ERROR_MOST = 300

Log = Callable[..., None]  # the loop's log: an event name and its fields
_FIELD = re.compile(r"\{(kind|card|class|text)\}")


def argv_for(argv: tuple[str, ...], notice: Notice) -> list[str]:
    """`[notify] argv` for one notice: each `{kind}` `{card}` `{class}` `{text}` in an
    argument replaced once (a value is never read again for fields)."""
    values = {"kind": notice.kind, "card": notice.card, "class": notice.cls, "text": notice.text}
    return [_FIELD.sub(lambda m: values[m.group(1)], arg) for arg in argv]


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= ERROR_MOST else line[: ERROR_MOST - 1] + "…"


class Sender:
    """The loop's sender thread (`start`, `poke`, `stop`); `send_pending` is one pass."""

    def __init__(self, cfg: NotifySection, store: Store, log: Log, root: Path) -> None:
        self.cfg = cfg
        self.store = store
        self.log = log
        self.root = root
        self.wake = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._apprise: Any = None  # made at the first send to a URL

    @property
    def configured(self) -> bool:
        return bool(self.cfg.argv or self.cfg.urls)

    def start(self) -> None:
        if self.configured and self._thread is None:
            self._thread = threading.Thread(target=self._main, name="notify", daemon=True)
            self._thread.start()

    def poke(self) -> None:
        """A notice was recorded: look now, not at the next pass."""
        self.wake.set()

    def stop(self, flush: bool, timeout: float | None = None) -> None:
        """End the thread; with `flush`, after it sent what is pending (retries included),
        for up to `timeout` seconds (default: every try of one notice)."""
        thread = self._thread
        if thread is None:
            return
        self._flush = flush
        self._done.set()
        self.wake.set()
        wait = timeout if timeout is not None else MAX_TRIES * (self.cfg.timeout_s + PASS_S)
        thread.join(wait if flush else min(wait, self.cfg.timeout_s + 1))
        self._thread = None

    _flush = False

    def _main(self) -> None:
        while True:
            self.wake.wait(PASS_S)
            self.wake.clear()
            finishing = self._done.is_set()
            if finishing and not self._flush:
                return
            try:
                self.send_pending()
                while finishing and self.store.pending_notices(*self._window()):
                    time.sleep(0.2)  # a failed send is tried again, up to MAX_TRIES
                    self.send_pending()
            except BoardError as exc:  # the store is away: the next pass tries again
                self.log("notice", error=exc.line())
            if finishing:
                return

    def _window(self) -> tuple[str, int, str]:
        now = datetime.now(UTC)
        since = stamp(now - timedelta(seconds=SEND_WITHIN_S))
        return since, MAX_TRIES, stamp(now - timedelta(seconds=CLAIM_S))

    def send_pending(self) -> int:
        """One pass: take and send each pending notice; how many every channel took."""
        sent = 0
        for notice in self.store.pending_notices(*self._window()):
            if not self.store.claim_notice(notice):
                continue  # another loop took it
            sent_to, error = self.send(notice)
            self.store.notice_sent(notice.id, sent_to, error)
            fields: dict[str, Any] = {"id": notice.id, "kind": notice.kind, "card": notice.card}
            if error:
                self.log("notice", **fields, tries=notice.tries + 1, error=error)
            else:
                self.log("notice", **fields, sent_to=sent_to)
                sent += 1
        return sent

    def send(self, notice: Notice) -> tuple[str, str]:
        """Send `notice` on each channel that does not have it yet: (the channels that
        have it now, comma-separated; the failures in one line, '' when none)."""
        done = {c for c in notice.sent_to.split(",") if c}
        errors = []
        for channel, send in (("argv", self._run_argv), ("urls", self._send_urls)):
            if channel in done or not getattr(self.cfg, channel):
                continue
            try:
                error = send(notice)
            except StoreUnavailable:
                raise
            except Exception as exc:  # a sender's fault never ends the loop's thread
                error = f"{type(exc).__name__}: {exc}"
            if error:
                errors.append(f"{channel}: {_one_line(error)}")
            else:
                done.add(channel)
        return ",".join(sorted(done)), "; ".join(errors)

    def _run_argv(self, notice: Notice) -> str:
        argv = argv_for(self.cfg.argv, notice)
        res = proc.run(argv, cwd=self.root, timeout=self.cfg.timeout_s)
        if res.ok:
            return ""
        if res.missing:
            return f"{argv[0]} cannot be run: {res.stderr}"
        if res.timed_out:
            return f"{argv[0]} ran past {self.cfg.timeout_s:g}s and was killed"
        tail = (res.stderr or res.stdout).strip().splitlines()
        return f"{argv[0]} exited {res.returncode}" + (f": {tail[-1]}" if tail else "")

    def _send_urls(self, notice: Notice) -> str:
        import apprise  # the optional extra (checked at config load): only a loop that sends

        if self._apprise is None:
            box = apprise.Apprise()
            for n, url in enumerate(self.cfg.urls, start=1):
                if not box.add(url):
                    return f"URL {n} is not one Apprise understands"
            self._apprise = box
        ok = self._apprise.notify(
            body=notice.text,
            title=f"board: {notice.kind}",
            body_format=apprise.NotifyFormat.TEXT,
        )
        return "" if ok else "Apprise could not deliver to every URL"


class LoopNotices:
    """The loop's side of the notices: what it saw recorded (core/cards/notices.py), the
    sender woken for each one new. A notice the store refuses is logged and never stops
    the loop (a store gone for good stops it from its next call that is not a notice)."""

    def __init__(self, cfg: Config, store: Store, log: Log) -> None:
        self.cfg = cfg
        self.store = store
        self.log = log
        self.watch = notices.Watch()
        self.sender = Sender(cfg.notify, store, log, Path(cfg.root))
        self.cards: list[Card] = []  # what the last sweep read
        self._idle_told = False  # the run's going idle was recorded since it last worked

    def record(self, call: Callable[[], bool]) -> None:
        try:
            if call():
                self.sender.poke()
        except StoreUnavailable:
            raise
        except BoardError as exc:
            self.log("notice", error=exc.line())

    def needs(self, card: Card, cls: str) -> None:
        """The loop told the operator of `card`'s block (`card` as that write left it)."""
        if waits.needs_operator(self.cfg.publish, card):
            self.record(lambda: notices.needs(self.store, card.id, cls, card.version))

    def swept(self, cards: list[Card]) -> None:
        self.cards = cards
        self.record(lambda: self.watch.review(self.store, self.cfg.publish, cards))

    def held(self, pauses: list[Pause]) -> None:
        self.record(lambda: self.watch.held(self.store, pauses))

    def hosts_lost(self, lost: dict[str, str]) -> None:
        if lost:
            self.record(lambda: self.watch.hosts_lost(self.store, lost))

    def idle(self, quiet: bool) -> None:
        """The run going idle, once per stretch of work: the loop has nothing running and
        nothing to claim (`quiet`: no timed wait either), and no card works on any host."""
        if not quiet:
            self._idle_told = False
            return
        if self._idle_told or any(card.lane == "working" for card in self.cards):
            return
        self._idle_told = True
        self.record(lambda: notices.idle(self.store))


__all__ = ["CLAIM_S", "MAX_TRIES", "PASS_S", "SEND_WITHIN_S", "LoopNotices", "Sender", "argv_for"]

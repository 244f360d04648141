"""`board run`: the loop that claims cards and runs their drives, one loop per board.

Each tick is the sweep, then the claims:

- The sweep clears self-healing blocks (`transient`, `rate-limit`, `merge-conflict`)
  and requeues the card, at most `board.self_heal_max` times per card (or its failure
  rule's max_attempts); the count is the card's tries of the class (`Card.tries`, in
  the store, shared with the drive's back-offs) so a restart does not refund it. Every
  other block waits for a human, and the operator is told once — an event on the card
  and a line in the loop log — remembered in the store (`Card.told`, the block's class
  and a hash of its reason), so neither a second tick nor a restart repeats it. Orphan
  trees (their card done, cancelled or unknown) are reaped through the save.
- Claims take ready cards in queue order up to `max_concurrent` drives that build (a
  drive whose work is committed and waits its turn to publish frees its slot, up to
  `max_concurrent` of them: race.slots_in_use). A card whose
  surface overlaps a working card's surface is skipped (a card with no declared
  surface may touch any file, so it overlaps everything). Every decision is one
  JSON line in `.board/loop.log`, with the reason for every skip.

What the operator must hear of is recorded as a notice and sent by `[notify]`, whether or
not a TUI is open (core/ops/notify.py); `--until-idle` sends what is pending before exiting.

Drives run in threads. On SIGTERM/SIGINT the loop stops claiming, kills each
coder's process group, and each drive saves its tree with a comment, reaps it and
puts its card back in `ready` (a drive that stood aside leaves its tree alone).
Booting after a crash (`kill -9`, a power cut): each `working` card with no live
drive has its tree saved and goes back to `ready`, keeping any block, and the dead
drive's leftover processes are killed first (a coder runs in its own session, so it
outlives a killed loop). They are found by the process group the store recorded and,
since a loop killed while the store's write lock was busy never recorded it, by the
drive's token (`BOARD_DRIVE`) and tree (`BOARD_WORKTREE`) in every child's
environment: nothing still writes in a tree while it is saved.

A store whose server goes away (a `pg_ctl restart`, a failover) does not end the loop: the
store waits it out for `[store] reconnect_s` (core/store/outage.py), every call of the
tick, the heartbeat and the drives retrying with back-off while the coders run on, and
each drive records its end once the server answers again. The loop log says when the
store was lost and when it came back. Only when the server stays away past reconnect_s
does the loop stop, as after SIGTERM, and `board run` say so in one line; a drive that
cannot record its end then leaves its tree as it is for the next `board run` to save. A
SIGTERM during an outage waits for the server no more, so it stops as promptly.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from board.core import failures, hosts, loopsignals, proc
from board.core.cards import actions, importing, split, waits
from board.core.cards.enddrives import dead_result, state_before
from board.core.cards.waits import HEARTBEAT_S, globs_overlap, surfaces_overlap
from board.core.config import CONFIG_NAME, Config
from board.core.drive import drive, race
from board.core.errors import BoardError, NotFound, Refused, StoreUnavailable, StrandedWorkError
from board.core.git import naming, runbranch, shared, snapshot, treestate, worktrees
from board.core.loopclaims import ClaimSteps
from board.core.model import SELF_HEALING, SETUP_PAUSE, TERMINAL, Blocked, Card, Drive, Pause
from board.core.ops import leases, notify, spending
from board.core.ops.boardlock import BoardLock
from board.core.ops.leases import LEASE_LOST
from board.core.ops.pick import card_of_branch  # by name: `ops.pick` is the verb
from board.core.poller import ForgePoller
from board.core.proc import pid_alive
from board.core.publish import publish as publishing
from board.core.publish import shape
from board.core.publish.owner import release_working
from board.core.records import Record, field
from board.core.store import Expect, Store, utc_now

WHO = "board"
LOOP_LOG = "loop.log"
JOIN_POLL_S = 0.05
STORE_WATCH_S = loopsignals.SIGNAL_POLL_S  # a nap asks the store for writes this often
SETUP_FAILS_TO_PAUSE = 2  # cards in a row whose setup failed before claims stop


# ---------------------------------------------------------------------------------------------
# one loop per board


class Running(Record):
    """A drive the loop started and has not seen end."""

    card: str
    token: str
    thread: threading.Thread
    drive: drive.Drive | None = None  # None for a planner run
    started: float = field(default_factory=time.monotonic)


class Loop(ClaimSteps):
    """The engine behind `board run`; tests drive it in-process with `tick()` and `wait()`."""

    def __init__(
        self, cfg: Config, store: Store, echo: Callable[[str], None] | None = None
    ) -> None:
        self.cfg = cfg
        self.store = store
        self.echo = echo
        self.running: dict[str, Running] = {}
        self.ends: list[drive.DriveEnd] = []
        self.stopping = threading.Event()
        self.wake = threading.Event()
        self.lock = BoardLock(cfg)
        self._mu = threading.Lock()
        self._log_mu = threading.Lock()
        self._last_skip: dict[str, str] = {}
        self.log_path = Path(cfg.board_dir) / LOOP_LOG
        self.host = hosts.this_host()
        self.touched: set[str] = set()  # the cards this run claimed
        self.base_problem = ""  # why nothing can be claimed board-wide ('' when nothing)
        self.poller = ForgePoller(cfg, store, self.log, self.wake)
        self._shared_at = float("-inf")  # monotonic time saves were last shared
        self.setup_fails: list[str] = []  # cards whose setup failed since the last that worked
        self.store_lost = ""  # why the loop stopped: its store stayed unreachable ('' if not)
        self._store_back = float("-inf")  # monotonic time the store last came back
        self.budget_stopped: set[str] = set()  # drives this loop stopped for a money budget
        self.notices = notify.LoopNotices(cfg, store, self.log)  # recorded, and sent
        self._signalled = ""  # why a signal asked to stop; written by its handler alone
        self._changes_seen: int | None = None  # the store's change count as a tick began
        self._tick_began = float("-inf")  # monotonic

    # -- the loop log --------------------------------------------------------------------

    def log(self, event: str, **fields: Any) -> None:
        """One JSON line in `.board/loop.log`."""
        record = {"at": utc_now(), "event": event, **fields}
        line = json.dumps(record, ensure_ascii=False)
        with self._log_mu:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self.log_path.open("a", encoding="utf-8") as fh:
                fh.write(line + "\n")
        if self.echo is not None:
            self.echo(line)

    # -- running -------------------------------------------------------------------------

    def run(self, once: bool = False, until_idle: bool = False, reshape: bool = False) -> int:
        """Hold the board's lock, check board.toml's shape (core/publish/shape.py; `reshape`
        records it as the board's), boot, then tick until stopped (or once, waiting for
        drives; or until idle: nothing running and nothing left to claim, see `idle_report`)."""
        self.check_base()
        self.lock.acquire()
        try:
            said = shape.check(self.cfg, self.store, self.host, reshape=reshape)
        except BaseException:
            self.lock.release()
            raise
        self.store.keep_trying(self.cfg.store.reconnect_s, self._store_said)
        restore = loopsignals.install(self._note_signal)
        beating = self._start_heartbeat()
        polling = self._start_poller()
        self.notices.sender.start()
        try:
            self.log("start", pid=os.getpid(), once=once, until_idle=until_idle, shape=said)
            self._run(once, until_idle)
        finally:
            if self.stopping.is_set():
                self.shutdown()
            self.wait()
            # pending notices are sent before an idle run exits; a stop waits for none
            self.notices.sender.stop(flush=not self.stopping.is_set())
            restore()
            beating.set()
            polling.set()
            with contextlib.suppress(BoardError):
                self.store.end_loop(self.host, os.getpid())
            self.store.keep_trying(0)
            self.log("stop", pid=os.getpid())
            self.lock.release()
        return 0

    def _run(self, once: bool, until_idle: bool) -> None:
        """Boot, then tick until stopped. A store that stayed unreachable past
        `[store] reconnect_s` stops the loop as a signal does (`store_lost` says why)."""
        try:
            self.boot()
            while not self._take_signal():
                # idle only after a tick that began with no drive running and claimed
                # nothing: a drive that ends during or after a tick may free a card (its
                # dependent) that this tick, seeing it still running, did not claim
                was_running = bool(self.running)
                began = waits.now()
                claimed = self.tick()
                if once:
                    self.wait()
                    break
                idle = not (claimed or was_running or self.running)
                quiet = idle and not self._timed_waits(began)
                self.notices.idle(quiet)
                if until_idle and quiet:
                    self.log("idle", touched=sorted(self.touched))
                    break
                loopsignals.nap(self.wake, self.cfg.board.loop_interval_s, self._woken)
        except StoreUnavailable as exc:
            self._store_said("gave-up", exc.line())
        if self.store_lost:
            self.request_stop(f"board run stops: {self.store_lost}")

    def _noted(self) -> bool:
        return bool(self._signalled)

    def _woken(self) -> bool:
        """Whether a nap ends early: a signal, or a write to the store since the last tick
        began (a card added, edited, unblocked; by anyone), asked at most every
        STORE_WATCH_S. Without it a card added with `board card add` waited for the next
        loop_interval_s (5 s by default), unless the interval was set near its minimum,
        where the loop reads every card 20 times a second."""
        if self._noted():
            return True
        if time.monotonic() - self._tick_began < STORE_WATCH_S:
            return False
        seen = self._changes_seen
        return seen is not None and self._change_count() not in (None, seen)

    def _change_count(self) -> int | None:
        try:
            return self.store.change_count()
        except BoardError:  # an outage: the tick's own calls wait it out and say so
            return None

    def _take_signal(self) -> bool:
        """Stop for a signal the handler noted; whether the loop is stopping."""
        why, self._signalled = self._signalled, ""
        if why:
            self.request_stop(why)
        return self.stopping.is_set()

    def _store_said(self, event: str, line: str) -> None:
        """What the store tells of its server (`Store.keep_trying`): lost (the calls retry
        with back-off meanwhile), back, or gave up after reconnect_s (the loop stops). Told
        from whichever thread met it, with the store's lock held: it only logs and flags."""
        if event == "lost":
            wait = f"{self.cfg.store.reconnect_s:g}s"
            self.log("store", state="unreachable, retrying", reason=line, up_to=wait)
        elif event == "back":
            self._store_back = time.monotonic()
            self.log("store", state="back", after=line)
        elif not self.store_lost:
            self.store_lost = line
            self.log("store", state="gave up, stopping", reason=line)
            self.stopping.set()
            self.wake.set()

    def _start_heartbeat(self) -> threading.Event:
        """Write the loop's heartbeat to the store every HEARTBEAT_S, from its own thread so
        a long tick never makes a live loop look dead; set the event to stop it."""
        done = threading.Event()
        started = utc_now()
        pid = os.getpid()

        def beat() -> None:
            while True:
                with contextlib.suppress(BoardError):
                    self.store.beat(self.host, pid, started)
                if done.wait(HEARTBEAT_S):
                    return

        threading.Thread(target=beat, name="heartbeat", daemon=True).start()
        return done

    def _start_poller(self) -> threading.Event:
        """Poll the forge from its own thread (see core/poller.py); set the event to stop."""
        return self.poller.start()

    def _timed_waits(self, at: datetime) -> bool:
        """Whether a ready card waited for a time (its back-off, its tier's timed pause) when
        the tick began (`at`): an `--until-idle` run is not idle while one does, since it
        will claim it by itself. Judged at the tick's start, not now: a wait that lapsed
        since then kept that tick from claiming the card, and the next tick will."""
        pauses = self.store.pauses()  # lapsed ones too: the next tick lifts them
        for card in actions.ready_queue(self.store):
            if waits.not_before(card, at) is not None:
                return True
            pause = waits.active_pause(pauses, waits.rung(self.cfg.coder, card), at)
            if pause is not None and pause.until:
                return True
        return False

    def idle_report(self) -> list[str]:
        """Every card this run claimed that did not end `done`, as `id (where it is)`:
        what `board run --until-idle` names when it exits non-zero."""
        rest = []
        for card_id in sorted(self.touched, key=_card_order):
            try:
                card = self.store.get(card_id)
            except BoardError:
                continue
            if card.lane == "done":
                continue
            where = card.lane
            if card.blocked is not None:
                where += f", blocked {card.blocked.cls}"
            rest.append(f"{card_id} ({where})")
        return rest

    def check_base(self) -> None:
        """Refuse to start when the base branch does not exist: every card claimed would
        only be blocked, one by one. Checked before the lock, the log or any claim."""

        try:
            snapshot.base_ref(self.cfg)
        except NotFound:
            cfg = self.cfg
            where = (
                f"neither {cfg.publish.remote}/{cfg.board.base} nor a local branch"
                if cfg.publish.remote
                else ""
            )
            raise Refused(
                f"the base branch {cfg.board.base!r} does not exist "
                f"({where or 'no local branch'}): "
                f"set [board] base in {Path(cfg.root) / CONFIG_NAME}"
            ) from None

    def _note_signal(self, why: str) -> None:
        """The handler's part (no lock: see core/loopsignals.py); keep_trying sets two fields,
        and a store call waiting out an outage gives up now."""
        self._signalled = why
        self.store.keep_trying(0, self._store_said)

    def request_stop(self, why: str = "board run is shutting down") -> None:
        """Stop claiming and interrupt every drive (safe from a signal handler). A store
        whose server is away is waited for no more, so a stop asked for during an outage
        is prompt: a drive that cannot record its end keeps its tree for the next run."""
        self.store.keep_trying(0, self._store_said)
        self.stopping.set()
        self.wake.set()
        for run in list(self.running.values()):
            if run.drive is not None:
                run.drive.interrupt(why)
            else:
                self._kill_row_group(run.token)

    def shutdown(self) -> None:
        """Interrupt every drive and wait: each saves its tree and puts its card back."""
        self.request_stop()
        self.wait()
        self.log("shutdown", drives=len(self.ends))

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for every running drive to end; True if none is left."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._mu:
                threads = [r.thread for r in self.running.values()]
            if not threads:
                return True
            for t in threads:
                t.join(JOIN_POLL_S)
            self._take_signal()  # a signal while waiting for the drives: stop them
            if deadline is not None and time.monotonic() >= deadline:
                return False

    # -- boot ----------------------------------------------------------------------------

    def _row_alive(self, row: Drive) -> bool:
        """Whether a drive row still has a process behind it."""
        if not row.live:
            return False
        if row.host and row.host != self.host:
            return True  # another host's drive: it stands aside there if moved
        if row.owner_pid == os.getpid():
            return any(r.token == row.id for r in self.running.values()) or any(
                r.drive is not None and row.id in r.drive.tokens for r in self.running.values()
            )
        return pid_alive(row.owner_pid)

    def _kill_row_group(self, token: str) -> None:
        with contextlib.suppress(BoardError):
            row = self.store.get_drive(token)
            if row.pgid:
                proc.kill_group(row.pgid)

    def boot(self) -> list[str]:
        """After a crash: stale drive rows end `crashed` (their groups killed); every working
        card with no live drive has its tree saved and goes back to ready, keeping any block."""
        recovered = []
        stale: dict[str, Drive] = {}
        for row in self.store.live_drives():
            if self._row_alive(row):
                continue
            stale[row.id] = row
            if row.pgid and proc.group_alive(row.pgid):
                proc.kill_group(row.pgid)
                self.log("killed", card=row.card, drive=row.id, pgid=row.pgid)
            marked = proc.kill_marked({proc.MARK_DRIVE: [row.id]})  # a group never recorded
            if marked:
                self.log("killed", card=row.card, drive=row.id, pgids=marked, found="environment")
            self.store.update_drive(
                row.id,
                status="crashed",
                pgid=0,
                result=dead_result(row, f"its board run (pid {row.owner_pid}) died mid-drive"),
            )
        for card in self.store.list_cards("working"):
            if card.id in self.running:
                continue
            found = stale.get(card.drive)  # as read before it was marked crashed
            if card.drive and found is None:
                try:
                    found = self.store.get_drive(card.drive)
                except BoardError:
                    found = None
                if found is not None and self._row_alive(found):
                    continue
            self.recover_card(card, "board run died mid-drive; recovered at boot", found)
            recovered.append(card.id)
        leases.save_given_up_trees(self.cfg, self.store, self.host, self.log)
        if stale or recovered:
            self.log("boot", crashed=sorted(stale), recovered=recovered)
        return recovered

    def recover_card(self, card: Card, why: str, row: Drive | None = None) -> bool:
        """Save the card's trees (the save comments on the card), then back to ready,
        keeping its block. A dead salvage's card goes back to the lane and block it had
        before the salvage (its row, read before it was marked crashed, says which). A card
        whose drive's fold landed before the drive died goes done: its work is on the run
        branch, and building it again would find nothing left to do."""

        before = state_before(row) if row is not None and row.id == card.drive else None
        trees = naming.card_trees(self.cfg, card.id)
        landed = "" if before is not None else self._landed(card, row, trees)
        saved: list[str] = []
        for tree in trees:
            try:
                res = worktrees.discard_worktree(
                    self.cfg, tree, store=self.store, card_id=card.id, why=why
                )
            except (StrandedWorkError, Refused) as exc:
                self.store.add_comment(card.id, f"its tree was kept: {exc.line()}", WHO)
                continue
            saved += [s.branch for s in ([res.saved] if res.saved else []) + res.branch_saves]
        if not landed:
            treestate.note_resumable(self.store, self.cfg, card.id, saved)
        changes: dict[str, Any] = {"lane": "ready", "drive": ""}
        if before is not None:
            lane, blocked = before
            changes = {"lane": lane if lane not in TERMINAL else "ready", "drive": ""}
            changes["blocked"] = blocked or Blocked(
                "held",
                f"its salvage (drive {card.drive}) died before it ended; its work is saved. "
                "Unblock to let the loop run the card",
            )
        note = (
            f"{why}: drive {card.drive or '?'} had no live owner; "
            f"its tree was saved and the card is back in {changes['lane']}"
        )
        if landed:
            changes = {"lane": "done", "drive": "", "blocked": None}
            note = (
                f"{why}: drive {card.drive} had folded its work onto "
                f"{self.cfg.board.run_branch} at {landed[:10]} before it could mark the card "
                "done; the card is done"
            )
        if not release_working(self.store, card.id, card.drive, changes, note, WHO):
            return False
        folded = {"folded": landed} if landed else {}
        self.log("recover", card=card.id, drive=card.drive, reason=why, **folded)
        if landed:
            importing.after_done(self.store, self.cfg, card.id)
        return True

    def _landed(self, card: Card, row: Drive | None, trees: list[Path]) -> str:
        """The run branch's commit of the card's dead drive (or of its race's candidates),
        '' when its fold never landed (see `publish.landed_commit`)."""
        tokens = [card.drive]
        since = row.started_at if row is not None and row.id == card.drive else ""
        if since:
            with contextlib.suppress(BoardError):
                tokens += [
                    d.id
                    for d in self.store.list_drives(card.id)
                    if d.candidate is not None and d.started_at >= since
                ]
        try:
            return publishing.landed_commit(self.cfg, tokens, trees[0] if trees else None, since)
        except BoardError as exc:  # git could not say: the card is built again, as before
            self.log("recover-check", card=card.id, reason=exc.line())
            return ""

    # -- the tick ------------------------------------------------------------------------

    def tick(self) -> list[str]:
        """The sweep, the money budgets, then the claims; returns the cards claimed."""
        self._tick_began = time.monotonic()
        self._changes_seen = self._change_count()
        cards = self.sweep()
        if self.stopping.is_set():
            return []
        self.budgets()
        # the sweep's cards serve the claims when nobody wrote since they were read (the
        # count is read before them); else the claims read the board again, unless every
        # drive is busy (at 100 drives, most ticks): then they only say what waits
        same = self._changes_seen is not None and self._change_count() == self._changes_seen
        return self.claims(cards, fresh=same)

    def budgets(self) -> None:
        """The money budgets (core/ops/spending.py): the day's spend past `[budget] day_usd`
        pauses the claims, said once; with `[budget] hard` a running drive past a budget is
        stopped, its work saved. Otherwise a drive already running finishes."""
        at = waits.now()
        spending.pause_claims(self.cfg.budget, self.store, at, self.log)
        if self.cfg.budget.hard:
            with self._mu:
                running = [r for r in self.running.values() if r.token not in self.budget_stopped]
            for run in running:
                if run.drive is not None:  # a planner's run has no tree to save: it ends
                    if spending.stop_if_over(self.cfg, self.store, run.drive, at, self.log):
                        self.budget_stopped.add(run.token)

    def sweep(self) -> list[Card]:
        """Cards that need the loop (a working card with no live drive, a block that heals
        or must be told), lost hosts, orphan trees; returns the cards it read."""
        self._sweep_lost_hosts()
        self._share_saves()
        cards = self.store.list_cards()
        for card in cards:
            if card.id in self.running:
                continue
            try:
                self._sweep_card(card)
            except BoardError as exc:  # a card moved meanwhile: next tick sees it again
                self.log("sweep-skip", card=card.id, reason=exc.line())
        self.notices.swept(cards)
        self._sweep_orphans(cards)
        return cards

    def lost_hosts(self) -> dict[str, str]:
        """Every other host whose newest heartbeat is older than host_lease_s, with it."""
        return leases.lost_hosts(self.cfg.board, self.store, self.host)

    def _sweep_lost_hosts(self) -> None:
        """A host that stopped beating gives its cards back (core/ops/leases.py). For
        host_lease_s after the store came back from an outage no host is judged: none could
        beat while it was away, and each needs a moment to beat again."""
        if time.monotonic() - self._store_back >= self.cfg.board.host_lease_s:
            lost = leases.give_back(self.cfg.board, self.store, self.host, self.log)
            self.notices.hosts_lost(lost)

    def _share_saves(self) -> None:
        """With the run branch on the remote, at most every publish.poll_s: push this host's
        saves, fetch the others', obey the tombstones (see core/git/shared.py); a save
        that reached the remote is told on its card."""

        if not runbranch.on_remote(self.cfg.publish):
            return
        now = time.monotonic()
        if now - self._shared_at < min(self.cfg.publish.poll_s, 10.0):
            return
        self._shared_at = now
        try:
            for res in shared.sweep(self.cfg, self.store, self.log):
                card = card_of_branch(self.cfg.board, res.branch)
                self.log("pushed-save", branch=res.branch, card=card or "")
                if card and self.store.find(card) is not None:
                    self.store.add_event(
                        card, f"saved work {res.branch} is on {self.cfg.publish.remote} too", WHO
                    )
        except BoardError as exc:
            self.log("share-saves", error=exc.line())

    def _sweep_card(self, card: Card) -> None:
        if card.lane == "working":
            row = None
            if card.drive:
                with contextlib.suppress(BoardError):
                    row = self.store.get_drive(card.drive)
            if row is None or not self._row_alive(row):
                if row is not None and row.live:
                    self.store.update_drive(
                        row.id,
                        status="crashed",
                        pgid=0,
                        result=dead_result(row, "no live owner (sweep)"),
                    )
                self.recover_card(card, "its drive has no live owner", row)
            return
        if card.lane in TERMINAL:
            return
        if card.blocked is None:
            if card.told:
                self.store.update(card.id, Expect(version=card.version), {"told": ""}, WHO)
            return
        cls = card.blocked.cls
        if cls in SELF_HEALING:
            healed = waits.tries(card, cls)
            limit = failures.limit_for(self.cfg.failures.rules, cls, self.cfg.board.self_heal_max)
            if healed < limit:
                self._heal(card, healed + 1, limit)
                return
            self._tell_once(
                card,
                f"{cls} was already retried {healed} time(s) (its limit is {limit}); "
                f"it waits for the operator: {card.blocked.reason}",
            )
            return
        self._tell_once(card, f"blocked {cls}: {card.blocked.reason}")

    def _heal(self, card: Card, n: int, limit: int) -> None:
        assert card.blocked is not None
        cls = card.blocked.cls
        changes: dict[str, Any] = {
            "blocked": None,
            "tries": waits.with_tries(card, cls, n),
            "told": "",
        }
        if card.spec.strip():
            changes["lane"] = "ready"
        note = (
            f"self-healing block {cls} cleared and requeued ({n} of {limit}): {card.blocked.reason}"
        )
        self.store.update(card.id, Expect(version=card.version), changes, WHO, note)
        self.log("heal", card=card.id, cls=cls, n=n, reason=card.blocked.reason)

    def _tell_once(self, card: Card, text: str) -> None:
        """Tell the operator about a block once: an event and a loop-log line, remembered."""
        assert card.blocked is not None
        digest = hashlib.sha1(
            f"{card.blocked.cls}\0{card.blocked.reason}".encode(), usedforsecurity=False
        ).hexdigest()[:10]
        mark = f"{card.blocked.cls}:{digest}"
        if card.told == mark:
            return
        told = self.store.update(
            card.id,
            Expect(version=card.version),
            {"told": mark},
            WHO,
            note=f"the operator is told: {text}",
        )
        self.log("blocked", card=card.id, cls=card.blocked.cls, reason=card.blocked.reason)
        self.notices.needs(told, card.blocked.cls)  # a notice, keyed by this telling

    def _sweep_orphans(self, cards: list[Card]) -> None:
        """Trees whose card is not at work are saved and removed (worktrees.sweep_orphans).
        One reading of the worktrees directory; when every tree there is a card's at work
        (at 100 drives, nearly every tick), that is all: the live trees and the sweep's own
        pass over the names are made only when a tree might be an orphan (they were 1.7 ms
        of a 4.6 ms tick at 100 drives, 20 ticks a second)."""
        lanes = {c.id: c.lane for c in cards}
        root, prefix = self.cfg.worktrees_dir, self.cfg.board.prefix
        names = naming.tree_names(root)
        owners = (naming.card_id_of(name, prefix) for name in names)
        if all(worktrees.at_work(lanes.get(card or "")) for card in owners):
            return  # every tree is kept by worktrees.sweep_orphans without a look
        trees = naming.trees_by_card(self.cfg, names)
        live: set[Path] = set()
        for run in list(self.running.values()):
            if run.drive is not None and run.drive.tree is not None:
                live.add(run.drive.tree)
            live.update(trees.get(run.card, ()))
        try:
            results = worktrees.sweep_orphans(
                self.cfg, lanes.get, live, store=self.store, names=names
            )
        except BoardError as exc:
            self.log("orphans", error=exc.line())
            return
        for res in results:
            self.log(
                "orphan",
                card=res.card,
                tree=str(res.tree),
                removed=res.removed,
                saved=res.saved.branch if res.saved else "",
                kept=res.kept,
            )

    def in_use(self) -> int:
        """The drives counted against `max_concurrent` (a race counts its candidates; a
        drive whose work is committed and waits to publish does not, see race.slots_in_use)."""
        with self._mu:
            drives = [r.drive for r in self.running.values()]
            return race.slots_in_use(drives, self.cfg.board.max_concurrent)

    def _slot(self, card_id: str, take: bool) -> bool:
        """Take (or give back) a slot for a race's candidate (core/drive/race.py)."""
        with self._mu:
            run = self.running.get(card_id)
            drives = [r.drive for r in self.running.values()]
            mine = run.drive if run is not None else None
            got = race.slot(mine, drives, self.cfg.board.max_concurrent, take)
        if not take:
            self.wake.set()  # a freed slot may start a claim
        return got

    def _start(
        self, card_id: str, token: str, planner: bool, best_of: int = 1, tiers: Sequence[str] = ()
    ) -> None:
        runner = (
            None
            if planner
            else race.drive_for(self.cfg, self.store, card_id, token, best_of, self._slot, tiers)
        )
        if runner is not None:
            runner.on_built = self.wake.set  # its slot came free: a claim may start
        thread = threading.Thread(
            target=self._drive_main,
            args=(card_id, token, runner),
            name=f"drive-{card_id}",
            daemon=True,
        )
        with self._mu:
            self.running[card_id] = Running(card_id, token, thread, runner)
        thread.start()

    def _drive_main(self, card_id: str, token: str, runner: drive.Drive | None) -> None:
        try:
            if runner is not None:
                end = runner.run()
            else:
                end = self._run_planner(card_id, token)
            self.ends.append(end)
            self.log("end", **end.to_json())
            self._count_setup(end)
        except Exception as exc:  # never let a thread die silently
            self.log("end", card=card_id, drive=token, outcome="error", reason=repr(exc))
        finally:
            with self._mu:
                self.running.pop(card_id, None)
            self.wake.set()

    def _count_setup(self, end: drive.DriveEnd) -> None:
        """Two cards in a row whose [tree] setup failed: the project's setup is broken, not
        the cards, so claims stop (a `setup` pause) and the operator is told once; a setup
        that worked starts the count again. `board resume setup` lifts it."""
        with self._mu:
            if end.setup == "ok":
                self.setup_fails = []
                return
            if end.setup != "failed" or end.cls != "setup-failed":
                return
            self.setup_fails.append(end.card)
            fails = list(self.setup_fails)
        if len(fails) < SETUP_FAILS_TO_PAUSE:
            return
        if waits.active_pause(self.store.pauses(), SETUP_PAUSE) is not None:
            return
        reason = (
            f"{len(fails)} cards in a row failed [tree] setup ({', '.join(fails[-3:])}; the "
            f"last: {end.reason[:300]})"
        )
        self.store.pause_tier(
            Pause(SETUP_PAUSE, "setup-failed", reason, "", failures.stamp(waits.now()), end.card)
        )
        self.log("setup-paused", cards=fails, reason=reason, resume="board resume setup")

    def _run_planner(self, card_id: str, token: str) -> drive.DriveEnd:
        task = self.store.get(card_id)
        res = split.run_planner(self.store, self.cfg, task, token)
        return drive.DriveEnd(card=card_id, outcome=res.outcome, reason=res.reason, token=token)


def _card_order(card_id: str) -> tuple[str, int]:
    prefix, _, n = card_id.rpartition("-")
    return (prefix, int(n)) if n.isascii() and n.isdigit() else (card_id, 0)


def run_loop(
    cfg: Config, store: Store, once: bool = False, echo: Callable[[str], None] | None = None
) -> int:
    """`board run [--once]`."""
    return Loop(cfg, store, echo=echo).run(once=once)


__all__ = [
    "LEASE_LOST",
    "BoardLock",
    "Loop",
    "Running",
    "globs_overlap",
    "pid_alive",
    "run_loop",
    "surfaces_overlap",
]

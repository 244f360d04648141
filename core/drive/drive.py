"""One drive: one build of one card, from a fresh worktree to a published branch.

The path (docs/lifecycle.md, "Every edge"): save the card's old trees, create a fresh
worktree, write the brief into the scratch directory, run the coder tier's argv
(no stdin, its own process group, a timeout; output streamed line by line into
`.board/logs/<card>/<attempt>.log`), then `gate.format_argv`, then `gate.argv`
(a red gate re-runs the coder with the gate's output in the brief, up to
`gate.retries` times), then the board's own commit with its surface
harvest, then the publish.

Why each rule:

- The drive owns its card only while the card is `working` under the drive's
  token, unblocked, and the drive's row still `running`. Before every edge that
  changes the card (block, retry, climb, publish) it re-reads the card; if someone
  moved it — held, requeued, stopped, cancelled — it blocks, retries and publishes
  nothing, keeps the tree, and leaves a note saying what it found (invariant 4,
  docs/lifecycle.md).
  In the system we re-create a hold that landed while a retry was being prepared
  lost the tree, so the re-read happens again right before the drive removes its
  own failed attempt.
- A climb keeps the drive's own failed attempt: its tree is saved to a stranded
  branch marked `kind=attempt` before it goes, and the next rung's brief names
  that branch. The system we re-create discarded it unsaved ("a failed attempt
  is not work anyone asked to keep"), but a coder that died after an hour of good
  edits, or a gate red over one test, left work worth a look, and the docs
  promises nothing a coder made is thrown away. So that attempts do not bury the
  stranded branches an operator must act on, they are marked and the browser
  folds them under their card; `board stranded prune` clears them once the card
  is done or cancelled. Every removal saves first (`discard_worktree`).
- A coder that cannot start, or prints nothing before `first_output_timeout_s`,
  never reached the model: that is the board's infrastructure, not the card, so
  it blocks `dispatch-infra` without climbing (and never counts toward a split).
- A gate killed by a signal reached no verdict; calling it red would climb the
  ladder over an OOM kill. It is noted and the drive goes on.
- The harvest: with a declared surface, what lies inside it is the card's
  product and is committed; tracked changes outside it are discarded so the fold
  can rebase (a rewritten lockfile) and untracked files outside it are named.
  Before anything outside the surface is dropped, the whole tree is saved to a
  `stranded/…` branch (invariant 1), and the result names that branch.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from board.core import failures, proc, usage
from board.core.cards import split
from board.core.config import Config
from board.core.drive import setup
from board.core.drive.backoff import BackOffSteps
from board.core.drive.brief import (
    KeptAttempt,
    brief_text,
    last_fold_conflict,
    latest_requeue_reason,
    write_brief,
)
from board.core.drive.claim import claim
from board.core.drive.coderlog import CoderOutput, describe_end
from board.core.drive.gate import GateVerdict, run_gate
from board.core.drive.harvest import Harvest, harvest, in_surface, tree_changes, tree_status
from board.core.drive.landing import LandSteps
from board.core.drive.trees import TreeSteps
from board.core.errors import BoardError, Conflict, StoreUnavailable
from board.core.git import depwork, gitutil, treefiles, treestate
from board.core.logs import LogWriter, log_path
from board.core.model import Card
from board.core.publish.owner import Owner, StoodAside, block_owned, edge_update, release_working
from board.core.records import Record
from board.core.store import Store

WHO = "board"
TAIL_LINES = 20
SETTLE_S = 1.0  # how long a drive waits for a card move after a kill it did not cause
CLIMBED = False  # `Drive._build`: the attempt climbed (nothing more this round)


# ---------------------------------------------------------------------------------------------
# the drive


class DriveEnd(Record):
    """How a drive ended, for the loop's log and for tests."""

    card: str
    outcome: str  # done | review | blocked | parked | stood-aside | stopped | backed-off
    reason: str
    token: str
    attempts: int = 1
    tree: str = ""
    cls: str = ""
    commit: str = ""
    harvest: Harvest | None = None
    setup: str = ""  # ok | failed | "" (no setup ran): the loop counts failures in a row

    def to_json(self) -> dict[str, Any]:
        return {
            "card": self.card,
            "outcome": self.outcome,
            "reason": self.reason,
            "drive": self.token,
            "attempts": self.attempts,
            "class": self.cls,
            "commit": self.commit,
        }


class _Ended(Exception):
    """Internal: unwinds the drive's loop with how it ended."""

    def __init__(self, end: DriveEnd) -> None:
        self.end = end


class Drive(TreeSteps, BackOffSteps, LandSteps):
    """One build of one claimed card; `run()` returns a DriveEnd and never raises.

    `interrupt()` (from another thread, e.g. the loop's shutdown) kills the running
    child's process group; the drive then saves its tree and puts the card back in
    `ready`.
    """

    def __init__(self, cfg: Config, store: Store, card_id: str, token: str) -> None:
        self.cfg = cfg
        self.store = store
        self.card_id = card_id
        self.token = token
        self.tokens = [token]
        row = store.get_drive(token)
        self.attempt = row.attempt
        # a back-off left the card on its rung: the retry is that rung, not the first
        self.rung = cfg.coder.ladder.index(row.tier) if row.tier in cfg.coder.ladder else 0
        self.tree: Path | None = None
        self.start = ""
        self.brief: Path | None = None
        self.resumed_from = ""  # the branch this build's tree started from, when it resumed
        self.stood_aside = False
        self.log: LogWriter | None = None
        self._stop = threading.Event()
        self._stop_why = ""
        self._pgid = 0
        self._pg_lock = threading.Lock()
        self._pending: tuple[str, str] = ("failed", "")  # how the current attempt's row ends
        self.kept_attempts: list[KeptAttempt] = []  # failed attempts saved, for the next brief
        self.slot = 0  # BOARD_SLOT, held while the project's commands may run in the tree
        self.branch_deleted = ""  # the tree's branch its last removal deleted (a ref)
        self.built = False  # committed, waiting to publish: it holds no max_concurrent slot
        self.on_built: Callable[[], None] | None = None  # the loop's: a slot came free
        self.waiting: failures.Failure | None = None  # a live rule stopped the coder
        self.coder_seconds = 0.0
        self.setup = ""  # how the last [tree] setup ended: ok | failed
        self.output: CoderOutput | None = None  # the running coder's output, read
        self.untold: list[str] = []  # slow-rule notes the card is told of from this thread

    # -- control from other threads ------------------------------------------------------

    def interrupt(self, why: str = "board run is shutting down") -> None:
        """Stop at the next step: kill the running child's whole group now."""
        if not self._stop.is_set():
            self._stop_why = why
        self._stop.set()
        with self._pg_lock:
            if self._pgid:
                proc.kill_group(self._pgid)

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    @property
    def tier(self) -> str:
        return self.cfg.coder.ladder[self.rung]

    @property
    def owner(self) -> Owner:
        return Owner("working", self.token)

    # -- the run -------------------------------------------------------------------------

    def run(self) -> DriveEnd:
        self.slot = setup.take_slot()
        try:
            return self._run()
        except _Ended as ended:
            return ended.end
        except StoreUnavailable as exc:  # the loop gave up on the store: record nothing
            return self._store_gone(exc)
        except Exception as exc:  # a bug or a git failure: the card must not stay working
            return self._failed_internally(exc)
        finally:
            self._close_log()
            setup.give_slot(self.slot)

    def _run(self) -> DriveEnd:
        fresh = True
        gate_round = 0
        gate_output = ""
        first = True
        while True:
            if not first:
                self._rotate()
            first = False
            self._open_log()
            self._within_budget()  # before each attempt, a gate retry's too
            adopted = False
            if fresh:
                adopted = self._fresh_build()
                gate_round, gate_output = 0, ""
            assert self.tree is not None
            card = self.store.get(self.card_id)
            text = brief_text(
                self.cfg.gate,
                card,
                tree=self.tree,
                branch=card.branch,
                tier=self.tier,
                attempt=self.attempt,
                gate_output=gate_output,
                gate_round=gate_round,
                requeue_reason=latest_requeue_reason(self.store, self.card_id),
                fold_conflict=last_fold_conflict(self.store, self.card_id),
                resumed_from=self.resumed_from if fresh else "",
                attempts=self.kept_attempts,
            )
            self.brief = write_brief(self.cfg.board, self.tree, text)
            built = self._build(self.brief, fresh, adopted, gate_round)
            if built is CLIMBED:
                fresh = True
                continue
            if isinstance(built, GateVerdict):  # red, with a retry left
                gate_round += 1
                gate_output = built.tail
                self._comment(
                    f"attempt {self.attempt} (tier {self.tier}): {built.reason}; "
                    f"retry {gate_round} of {self.cfg.gate.retries} with its output "
                    "in the brief",
                    built.tail,
                )
                self._pending = ("failed", built.reason)
                fresh = False
                continue
            end = self._commit_and_publish()
            if end is None:  # nothing inside the surface: it climbed
                fresh = True
                continue
            return end

    # -- steps ---------------------------------------------------------------------------

    def _build(
        self, brief: Path, fresh: bool, adopted: bool, gate_round: int
    ) -> GateVerdict | bool:
        """One round of an attempt, the coder then the gate, shared by a drive and a race's
        candidate (core/drive/race.py): CLIMBED when it climbed (a drive's `_climb` returns;
        a candidate's ends it), a red verdict when a gate retry is left (the caller retries
        its own way), True when the tree is green (or no gate is set)."""
        self._check_stop()
        res: proc.Result | None = None
        if not adopted:
            self._edge_check("coder start")  # held or stopped meanwhile: start no coder
            res = self._run_coder(brief)
            self._check_stop()
            failure = self._coder_failure(res, fresh)
            if failure is not None:
                self._not_its_fault("coder", res)
                self._climb(failure, "terminal", res.tail_text(TAIL_LINES))
                return CLIMBED
        self._format()
        self._check_stop()
        self._no_leak()
        if not self._has_work():
            if res is not None:  # aider exits 0 when its calls failed: read what it said
                self._not_its_fault("coder", res)
            tail = res.tail_text() if res is not None else ""
            self._climb("the coder exited 0 but changed nothing", "terminal", tail)
            return CLIMBED
        if not self.cfg.gate.argv:
            return True
        self._edge_check("gate start")  # held while the coder or formatter ran
        verdict = self._gate()
        self._check_stop()
        self._no_leak()
        if not verdict.red:
            return True
        self._not_its_fault("gate", None, verdict.tail, verdict.exit_code)
        if gate_round < self.cfg.gate.retries:
            return verdict
        self._stayed_red()
        why = f"{verdict.reason}, and stayed red after {self.cfg.gate.retries} retries"
        self._climb(why, "gate-red", verdict.tail)
        return CLIMBED

    def _stayed_red(self) -> None:
        """Hook: the gate stayed red after its retries, just before the climb."""

    def _run_coder(self, brief: Path) -> proc.Result:
        tier = self.cfg.coder.tiers[self.tier]
        assert self.tree is not None
        argv = gitutil.argv_with(
            tier.argv, brief=str(brief), worktree=str(self.tree), card=self.card_id
        )
        timeout = tier.timeout_s or self.cfg.coder.timeout_s
        self._say(f"coder (tier {self.tier}, attempt {self.attempt}): {argv}")
        self.waiting = None
        began = time.monotonic()
        log = log_path(self.cfg, self.card_id, self.attempt)
        out = self.output = CoderOutput(tier.usage, log, self._watched_line)
        try:
            res = self._stream(argv, timeout, self.cfg.coder.first_output_timeout_s, watch=True)
        finally:
            self.output = None
            out.close()
        spent = out.finish(res, self.cfg.usage.prices, argv)  # its tail: the text, not JSON
        self._tell_slow_rules()  # what its lines met, told on the card from this thread
        self.coder_seconds = time.monotonic() - began
        self._say(f"coder ended: {describe_end(res)}")
        if spent is not None:  # on its attempt's row now: the budgets read it before the next
            self._say(f"usage: {usage.said(spent)}")
            try:
                self.store.record_usage(self.token, spent)
            except StoreUnavailable:
                raise
            except BoardError as exc:  # a figure the store refuses is logged, not fatal
                self._say(f"usage not recorded: {exc}")
        return res

    def _watched_line(self, text: str) -> None:
        """A coder's line: logged, and matched against the `live` failure rules, so a coder
        that waits for a login in a browser is stopped now, not at its timeout."""
        self._line(text)
        if self.waiting is not None:
            return
        found = failures.classify_line(self.cfg.failures.rules, "coder", text)
        self._tell_slow_rules(comment=False)  # the reading thread: no store write here
        if found is None:
            return
        self.waiting = found
        self._say(f"the coder waits for the operator ({found.cls}): {found.line!r}; stopped")
        with self._pg_lock:
            if self._pgid:
                proc.kill_group(self._pgid)

    def _env(self) -> dict[str, str]:
        """What every child of the drive finds about its tree (setup, coder, gate)."""
        assert self.tree is not None
        env = setup.tree_env(self.cfg, self.tree, self.card_id, self.slot)
        env["BOARD_DRIVE"] = self.token
        return env

    def _stream(
        self, argv: list[str], timeout: float, first_output: float = 0, watch: bool = False
    ) -> proc.Result:
        assert self.tree is not None
        env = self._env()
        out = self.output if watch else None
        try:
            return proc.stream(
                argv,
                cwd=self.tree,
                timeout=timeout,
                on_line=out.line if out is not None else self._line,
                first_output_timeout=first_output,
                env=env,
                on_start=self._on_start,
                on_chunk=out.chunk if out is not None and out.is_json else None,
            )
        finally:
            self._child_ended()

    def _child_ended(self) -> None:
        """The child's group is gone: nothing for an interrupt or a crashed loop to kill."""
        with self._pg_lock:
            self._pgid = 0
        self.store.update_drive(self.token, pgid=0)

    def _on_start(self, pid: int) -> None:
        with self._pg_lock:
            self._pgid = pid
            if self._stop.is_set():
                proc.kill_group(pid)
        self.store.update_drive(self.token, pgid=pid)

    def _coder_failure(self, res: proc.Result, fresh: bool) -> str | None:
        """None when the coder succeeded; ends the drive for infra failures and the park."""
        if self.waiting is not None:  # stopped as it waited for a login: never the card's
            self._back_off("coder", self.waiting, res.tail_text(200))
        tail = res.tail_text(TAIL_LINES)
        if res.timed_out and res.produced_output:  # a coder hung on a limit: not its size
            self._not_its_fault("coder", res)
        if res.missing:
            self._block(
                "dispatch-infra",
                f"the coder {res.argv[0]!r} could not be started ({tail.strip() or 'missing'}); "
                f"fix [coder.tiers.{self.tier}] argv, then unblock",
            )
        if res.first_output_timed_out:
            self._block(
                "dispatch-infra",
                f"the coder (tier {self.tier}) printed nothing in "
                f"{self.cfg.coder.first_output_timeout_s:g}s and was killed: it never reached its "
                "model; check the coder command and its service, then unblock",
                tail,
            )
        if res.timed_out:
            why = f"the coder (tier {self.tier}) timed out after {self._coder_timeout():g}s"
            if fresh and res.produced_output:
                reason = self._count_timeout()
                if reason:
                    self._parked(reason, tail)
            return why
        if res.returncode != 0:
            if res.killed_by_signal is not None:
                self._settle()  # a kill we did not send: a `board stop` may be moving the card
                self._edge_check("climb")
            return f"the coder (tier {self.tier}) exited {res.returncode}"
        return None

    def _coder_timeout(self) -> float:
        return self.cfg.coder.tiers[self.tier].timeout_s or self.cfg.coder.timeout_s

    def _count_timeout(self) -> str | None:
        """Issue 6's count of a timeout that counts."""
        card = self.store.get(self.card_id)
        self._edge_check("timeout count")
        try:
            return split.count_timeout(self.store, self.cfg, card, self.token)
        except Conflict as exc:
            self._stand_aside("timeout count", exc.line())
        return None  # pragma: no cover - _stand_aside raises

    def _format(self) -> None:
        if not self.cfg.gate.format_argv:
            return
        assert self.tree is not None
        argv = gitutil.argv_with(self.cfg.gate.format_argv, worktree=str(self.tree))
        self._say(f"format: {argv}")
        res = self._stream(argv, self.cfg.gate.timeout_s)
        if not res.ok:
            self._say(f"format did not finish cleanly ({describe_end(res)}); going on")

    def _gate(self) -> GateVerdict:
        assert self.tree is not None
        gate = gitutil.argv_with(self.cfg.gate.argv, worktree=str(self.tree), card=self.card_id)
        self._say(f"gate: {gate}")
        verdict = run_gate(
            self.cfg.gate,
            self.tree,
            self._line,
            on_start=self._on_start,
            card=self.card_id,
            brief=str(self.brief or ""),
            env=self._env(),
        )
        self._child_ended()
        self._say(f"gate: {verdict.reason}")
        if verdict.status == "no-verdict":
            self._settle()
            self._edge_check("gate")
            self.store.add_event(
                self.card_id,
                f"attempt {self.attempt}: {verdict.reason}, so it is not red; going on",
                WHO,
            )
        return verdict

    def _no_leak(self) -> None:
        """A copied secret in the change: block `secret-leak`, nothing committed, saved or
        pushed, the tree kept as it is for the operator (core/git/treefiles.py)."""
        assert self.tree is not None
        leak = treefiles.leak_in(self.cfg, self.tree)
        if leak is None:
            return
        self._block(
            "secret-leak",
            f"{leak.text()}: nothing was committed, saved or pushed. Its tree is kept at "
            f"{self.tree}: take it out there, then unblock",
            remove_tree=False,
        )

    def _has_work(self) -> bool:
        assert self.tree is not None
        status = tree_status(self.cfg.board, self.tree)
        return status.head != self.start or bool(status.changes)

    # -- edges ---------------------------------------------------------------------------

    def _edge_check(self, edge: str) -> Card:
        """Re-read the card before an edge; stand aside (raising _Ended) if it is not ours."""
        card = self.store.get(self.card_id)
        found = self.owner.why_not(card, self.store)
        if found:
            self._stand_aside(edge, found)
        return card

    def _settle(self) -> None:
        """Give another process's stop/cancel a moment to land before we judge the child."""
        deadline = time.monotonic() + SETTLE_S
        while time.monotonic() < deadline:
            if self.owner.why_not(self.store.get(self.card_id), self.store):
                return
            time.sleep(0.05)

    def _check_stop(self) -> None:
        if self._stop.is_set():
            self._shutdown()

    def _climb(self, why: str, top_cls: str, tail: str) -> None:
        """One rung up, or at the top a block; the failed attempt is saved, then removed."""
        why += depwork.note(self.cfg, self.store, self.store.get(self.card_id), self.start)
        if self.rung + 1 >= len(self.cfg.coder.ladder):
            log = self._log_rel()
            self._block(
                top_cls,
                f"{why}; that was the top rung ({self.tier}), attempt {self.attempt}; "
                f"its log: {log}",
                tail,
            )
        nxt = self.cfg.coder.ladder[self.rung + 1]
        self._edge_check("climb")
        self._comment(
            f"attempt {self.attempt} (tier {self.tier}) failed: {why}; climbing to tier {nxt}",
            tail,
        )
        self._keep_own_attempt(why, nxt)
        self._pending = ("failed", why)
        self.rung += 1

    def _rotate(self) -> None:
        """Start the next attempt: a new drive row, the card's token moved to it by CAS."""
        old = self.token
        attempt = self.store.next_attempt(self.card_id)
        log_rel = self.cfg.rel(log_path(self.cfg, self.card_id, attempt))
        row = self.store.start_drive(self.card_id, self.tier, attempt, log_rel, os.getpid())
        try:
            edge_update(
                self.store,
                self.card_id,
                self.owner,
                {"drive": row.id},
                "retry",
                note=f"attempt {attempt} (tier {self.tier}) by drive {row.id}",
            )
        except StoodAside as exc:
            self.store.update_drive(row.id, status="stood-aside", result=str(exc))
            self._stand_aside("retry", exc.found)
        self._end_row(*self._pending, token=old)
        self._close_log()
        self.token = row.id
        self.attempt = attempt
        self.tokens.append(row.id)

    def _block(self, cls: str, reason: str, tail: str = "", remove_tree: bool = True) -> NoReturn:
        """Block the card as the drive ends (flag kept, card to ready), then save the tree."""
        try:
            block_owned(self.store, self.card_id, self.owner, cls, reason)
        except StoodAside as exc:
            self._stand_aside("block", exc.found)
        if tail.strip():
            self._comment(f"attempt {self.attempt} (tier {self.tier}) log tail", tail)
        self._say(f"blocked {cls}: {reason}")
        self._end_row("blocked", f"{cls}: {reason}")
        if remove_tree and self.tree is not None:
            self._remove_tree(f"blocked {cls}")
        raise _Ended(self._end("blocked", reason, cls=cls))

    def _parked(self, reason: str, tail: str) -> NoReturn:
        """Issue 6 parked the card too-wide: end, card back to ready with its flag, tree saved."""
        self._release(f"drive {self.token} ends: parked too-wide")
        if tail.strip():
            self._comment(f"attempt {self.attempt} (tier {self.tier}) log tail", tail)
        self._end_row("blocked", f"too-wide: {reason}")
        if self.tree is not None:
            self._remove_tree("parked too-wide")
        raise _Ended(self._end("parked", reason, cls="too-wide"))

    def _backed_off(self, note: str, cls: str) -> NoReturn:
        raise _Ended(self._end("backed-off", note, cls=cls))

    def _release(self, note: str) -> bool:
        """A card still working under this drive (but held or parked) goes back to ready."""
        changes = {"lane": "ready", "drive": ""}
        return release_working(self.store, self.card_id, self.token, changes, note, WHO)

    def _stand_aside(self, edge: str, found: str) -> NoReturn:
        """Do nothing to the card but note what was found; the tree stays (invariant 4)."""
        self.stood_aside = True
        note = f"drive {self.token} stood aside at {edge}: {found}; {self._where_tree()}"
        self._say(note)
        if not self._release(note):
            self.store.add_event(self.card_id, note, WHO)
        self._end_row("stood-aside", f"at {edge}: {found}")
        raise _Ended(self._end("stood-aside", found))

    def _where_tree(self) -> str:
        """Where the drive's tree is, for a note that leaves it as it is."""
        if self.tree is not None and self.tree.exists():
            return f"its tree is kept at {self.tree}"
        return "it holds no tree"

    def _shutdown(self) -> NoReturn:
        """The loop is stopping: save the tree with a comment, reap it, card back to ready."""
        card = self.store.get(self.card_id)
        found = self.owner.why_not(card, self.store)
        if found:
            self._stand_aside("shutdown", found)
        why = self._stop_why or "board run is shutting down"
        if self.tree is not None and self.tree.exists():
            saved = self._remove_tree(f"{why} during attempt {self.attempt}")
            treestate.note_resumable(self.store, self.cfg, self.card_id, saved)
        try:
            edge_update(
                self.store,
                self.card_id,
                self.owner,
                {"lane": "ready", "drive": ""},
                "shutdown",
                note=f"{why}: drive {self.token} stopped; the card is back in ready",
            )
        except StoodAside as exc:
            self._stand_aside("shutdown", exc.found)
        self._end_row("stopped", why)
        raise _Ended(self._end("stopped", why))

    def _store_gone(self, exc: StoreUnavailable) -> DriveEnd:
        """The store stayed unreachable past `[store] reconnect_s`, so the loop is stopping
        and nothing can be recorded: the tree is left exactly as it is (removing it would
        need the save's comment, and a block could not land), and the card stays working
        under this drive, which the next `board run` finds dead and recovers as after a
        crash: its tree saved, the card back in ready (the loop's stop kills its coder)."""
        why = f"nothing recorded, {self._where_tree()} for the next board run to save: {exc.line()}"
        self._say(why)
        return self._end("stopped", why)

    def _failed_internally(self, exc: Exception) -> DriveEnd:
        """An unexpected error: block `transient` (the sweep retries), tree saved, trace logged."""
        text = exc.line() if isinstance(exc, BoardError) else f"{type(exc).__name__}: {exc}"
        self._say("internal error:\n" + traceback.format_exc())
        try:
            self._block("transient", f"the drive failed: {text}")
        except _Ended as ended:
            return ended.end
        except Exception:  # the store itself is failing: say so in the log and give up
            self._say("could not record the failure:\n" + traceback.format_exc())
        return self._end("blocked", text, cls="transient")

    # -- helpers -------------------------------------------------------------------------

    def _end_row(self, status: str, result: str, token: str = "") -> None:
        """End a drive row that is still running (a row another process ended keeps its word)."""
        token = token or self.token
        try:
            if not self.store.get_drive(token).live:
                return
            self.store.update_drive(token, status=status, pgid=0, result=result[:500])
        except BoardError:
            pass

    def _end(
        self, outcome: str, reason: str, cls: str = "", commit: str = "", h: Harvest | None = None
    ) -> DriveEnd:
        return DriveEnd(
            card=self.card_id,
            outcome=outcome,
            reason=reason,
            token=self.token,
            attempts=len(self.tokens),
            tree=str(self.tree or ""),
            cls=cls,
            commit=commit,
            harvest=h,
            setup=self.setup,
        )

    def _comment(self, text: str, tail: str = "") -> None:
        body = text
        if tail.strip():
            lines = tail.rstrip().splitlines()[-TAIL_LINES:]
            body += "\n\nlog tail:\n" + "\n".join(f"    {x}" for x in lines)
        try:
            self.store.add_comment(self.card_id, body, WHO)
        except BoardError:
            pass

    def _log_rel(self) -> str:
        return self.cfg.rel(log_path(self.cfg, self.card_id, self.attempt))

    def _open_log(self) -> None:
        if self.log is None:
            self.log = LogWriter(log_path(self.cfg, self.card_id, self.attempt))

    def _close_log(self) -> None:
        if self.log is not None:
            self.log.close()
            self.log = None

    def _line(self, text: str) -> None:
        if self.log is not None:
            self.log.write_line(text)

    def _say(self, text: str) -> None:
        if self.log is None:
            try:
                self._open_log()
            except OSError:
                return
        self._line(f"board: {text}")


def run_drive(cfg: Config, store: Store, card_id: str, token: str) -> DriveEnd:
    """Run one claimed drive to its end (what the loop's threads call)."""
    return Drive(cfg, store, card_id, token).run()


__all__ = [
    "Drive",
    "DriveEnd",
    "GateVerdict",
    "Harvest",
    "KeptAttempt",
    "brief_text",
    "claim",
    "harvest",
    "in_surface",
    "latest_requeue_reason",
    "run_drive",
    "run_gate",
    "tree_changes",
    "write_brief",
]

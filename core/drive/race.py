"""Best of N (issue 42): one card built by N candidates at once, the gate as the judge.

With `[coder] best_of` above 1 the loop's drive for a card is a `Race`: it owns the card as
any drive does (`working` under its token), and runs N `Candidate`s of the card's current
rung side by side, each a drive with its own row, log and process group, its own tree
`feat-<id>-<k>` on `feat/<id>-<k>`, and `BOARD_CANDIDATE=k` in its environment and brief.
A candidate builds and gates, and never changes the card: what a single drive would make
an edge of (a climb, a block, a back-off) is the candidate's result, and the race decides
for the card once all have ended. Why each rule: docs/lifecycle.md, "Best of N".

- `smallest-green`: among the green candidates, the fewest changed lines (as a save counts
  them), ties to the first finished. The chosen tree is committed and published exactly as
  a single drive's is; every other candidate's tree with work is saved first, kind
  `candidate` (invariant 1).
- `first-green`: the first candidate to finish green folds, and the race stops the rest
  at once (their process groups killed, their rows ended `stopped`, no further one
  started) and saves each stopped tree with work, kind `candidate`, as `board stop` saves
  a drive's: waiting for slower candidates buys nothing once one is good enough.
- None green: every candidate's tree is saved as an `attempt`, and the card climbs (or
  blocks at the top) as one failed attempt would; the next rung's brief names each branch.
  When no candidate failed through its own fault, the race backs off or blocks as the first
  such candidate would have.
- A candidate counts against `board.max_concurrent`: the race holds its claim's slot and
  asks the loop (`grab`) for each further one, so a card never runs more than N.
- A card's race of tiers (`card add|edit --race a,b`): candidate k runs tier race[k-1]
  (its row's tier, its coder's argv, timeout and usage reader) instead of the card's rung;
  N is the number of names. The rung still climbs when none is green, as one failed attempt
  would, and blocks at the top; the next race runs the same tiers.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NoReturn

from board.core import failures
from board.core.cards import waits
from board.core.config import Config
from board.core.drive import setup
from board.core.drive.brief import KeptAttempt, brief_text, latest_requeue_reason, write_brief
from board.core.drive.drive import Drive, DriveEnd
from board.core.drive.gate import GateVerdict
from board.core.errors import BoardError, StoreUnavailable, StrandedWorkError
from board.core.git import naming, snapshot, treefiles, worktrees
from board.core.logs import log_path
from board.core.publish.owner import Owner
from board.core.records import Record
from board.core.store import Store

GRAB_POLL_S = 0.05  # how often a race asks the loop again for a slot for its next candidate
WATCH_S = 0.2  # how often a running race re-reads its card (a hold or a requeue stops it)
RULE_SMALLEST_GREEN = "smallest-green"
RULE_FIRST_GREEN = "first-green"


class CandidateResult(Record):
    """How one candidate ended: green (with its changed lines) or not, and why."""

    k: int
    token: str
    attempt: int
    tier: str = ""  # the tier its coder ran
    tree: Path | None = None
    start: str = ""
    green: bool = False
    lines: int = 0  # changed lines (insertions + deletions) of a green candidate
    why: str = ""  # why it is not green
    tail: str = ""
    top_cls: str = "terminal"  # the class its failure blocks with at the top rung
    cls: str = ""  # a failure that is not the card's (a back-off or a block class)
    failure: failures.Failure | None = None  # the rule matched, for a back-off
    step: str = ""  # coder | gate: where the failure was read
    output: str = ""
    keep: bool = False  # its tree must stay as it is (a secret leak, a setup that failed)
    stood_aside: str = ""  # the card moved under it: what was found
    stopped: bool = False
    seq: int = 0  # finishing order, from 1
    seconds: float = 0.0


class _Out(Exception):
    """Internal: unwinds a candidate with its result."""

    def __init__(self, result: CandidateResult) -> None:
        self.result = result


class Candidate(Drive):
    """Candidate k of N: coder and gate in its own tree; it never changes the card.

    Its edges check the race's token, so a hold, stop or cancel of the card stands it aside.
    """

    def __init__(
        self,
        cfg: Config,
        store: Store,
        card_id: str,
        token: str,
        race_token: str,
        k: int,
        n: int,
        attempts: list[KeptAttempt],
        tier: str = "",
    ) -> None:
        super().__init__(cfg, store, card_id, token)
        self.race_token = race_token
        self.k = k
        self.n = n
        self.race_tier = tier  # a card's race names it; '' runs the rung's tier
        self.kept_attempts = list(attempts)
        self.result = CandidateResult(k=k, token=token, attempt=self.attempt, tier=self.tier)

    @property
    def tier(self) -> str:
        """Its race's tier for it (`--race`), else the card's rung's, as a single drive's."""
        return self.race_tier or super().tier

    @property
    def owner(self) -> Owner:
        return Owner("working", self.race_token)

    def _env(self) -> dict[str, str]:
        env = super()._env()
        env["BOARD_CANDIDATE"] = str(self.k)
        return env

    def _out(self, **changes: object) -> NoReturn:
        for name, value in changes.items():
            setattr(self.result, name, value)
        raise _Out(self.result)

    # what a single drive makes an edge of, a candidate makes its result -------------------

    def _block(self, cls: str, reason: str, tail: str = "", remove_tree: bool = True) -> NoReturn:
        self._say(f"candidate {self.k} ends: {cls}: {reason}")
        self._end_row("blocked", f"{cls}: {reason}")
        self._out(why=reason, cls=cls, tail=tail, keep=not remove_tree)

    def _climb(self, why: str, top_cls: str, tail: str) -> None:
        self._say(f"candidate {self.k} is not green: {why}")
        self._end_row("failed", why)
        self._out(why=why, top_cls=top_cls, tail=tail)

    def _back_off(
        self, step: str, failure: failures.Failure, output: str, tier: str = ""
    ) -> NoReturn:
        why = f"the {step} (tier {self.tier}) hit {failure.cls}: {failure.line}"
        self._say(f"candidate {self.k} ends: {why}")
        self._end_row("failed", f"{failure.cls}: {failure.line}")
        self._out(why=why, cls=failure.cls, failure=failure, step=step, output=output)

    def _count_timeout(self) -> str | None:
        """A candidate's timeout counts toward no split: N candidates timing out at once
        would spend the card's count in one rung."""
        return None

    def _stand_aside(self, edge: str, found: str) -> NoReturn:
        self.stood_aside = True
        self._say(f"candidate {self.k} stood aside at {edge}: {found}; {self._where_tree()}")
        self._end_row("stood-aside", f"at {edge}: {found}")
        self._out(why=found, stood_aside=found)

    def _shutdown(self) -> NoReturn:
        why = self._stop_why or "board run is shutting down"
        self._end_row("stopped", why)
        self._out(why=why, stopped=True)

    # the run -------------------------------------------------------------------------------

    def run(self) -> DriveEnd:  # the loop never calls it: `race_run` is the candidate's run
        raise NotImplementedError

    def race_run(self) -> CandidateResult:
        """Build and gate; never raises. The tree stays for the race to choose or save."""
        began = time.monotonic()
        self.slot = setup.take_slot()
        try:
            self._candidate()
        except _Out:
            pass
        except StoreUnavailable as exc:
            self.result.why = f"the store is unreachable: {exc.line()}"
            self.result.stopped = True
        except Exception as exc:  # a bug or a git failure: this candidate is not green
            text = exc.line() if isinstance(exc, BoardError) else f"{type(exc).__name__}: {exc}"
            self._say("internal error:\n" + traceback.format_exc())
            self._end_row("failed", f"the candidate failed: {text}")
            self.result.why = f"the candidate failed: {text}"
            self.result.cls = "transient"
        finally:
            self.result.tree = self.tree
            self.result.start = self.start
            self.result.seconds = time.monotonic() - began
            self._close_log()
            setup.give_slot(self.slot)
        return self.result

    def _candidate(self) -> None:
        self._open_log()
        self._edge_check("candidate start")
        try:
            self.tree, self.start = worktrees.fresh_tree(
                self.cfg, self.card_id, str(self.k), store=self.store
            )
        except StrandedWorkError as exc:
            cls = "secret-leak" if isinstance(exc, treefiles.SecretLeak) else "stranded-work"
            self._block(cls, exc.line(), remove_tree=False)
        self._say(
            f"candidate {self.k} of {self.n}: fresh worktree {self.tree} at {self.start[:10]}"
        )
        self._ready_tree()
        gate_round, gate_output = 0, ""
        while True:
            assert self.tree is not None
            card = self.store.get(self.card_id)
            text = brief_text(
                self.cfg.gate,
                card,
                tree=self.tree,
                branch=naming.branch_for(self.card_id, str(self.k)),
                tier=self.tier,
                attempt=self.attempt,
                gate_output=gate_output,
                gate_round=gate_round,
                requeue_reason=latest_requeue_reason(self.store, self.card_id),
                attempts=self.kept_attempts,
                candidate=(self.k, self.n),
            )
            self.brief = write_brief(self.cfg.board, self.tree, text)
            built = self._build(self.brief, gate_round == 0, False, gate_round)
            if isinstance(built, GateVerdict):  # red, with a retry left
                gate_round += 1
                gate_output = built.tail
                self._say(
                    f"{built.reason}; retry {gate_round} of {self.cfg.gate.retries} "
                    "with its output in the brief"
                )
                continue
            stats = snapshot.unpublished_work(self.cfg, self.tree).stats
            self.result.green = True
            self.result.lines = stats.insertions + stats.deletions
            self._record("green" if self.cfg.gate.argv else "", self.result.lines)
            self._say(f"candidate {self.k} is green: {stats.text()}")
            self._end_row("passed", f"candidate {self.k} green: {stats.text()}")
            return

    def _stayed_red(self) -> None:
        self._record("red")

    def _record(self, gate: str, lines: int | None = None) -> None:
        """Its gate's word and its changed lines on its drive row, for `board card show`'s
        candidates (core/cards/candidates.py); a red one's lines are counted here, as a save
        counts them. Never fails the candidate: the row is what is shown, not what is chosen."""
        try:
            if lines is None:
                assert self.tree is not None
                stats = snapshot.unpublished_work(self.cfg, self.tree).stats
                lines = stats.insertions + stats.deletions
            self.store.update_drive(self.token, gate=gate, lines_changed=lines)
        except BoardError as exc:
            self._say(f"candidate {self.k}'s gate and lines were not recorded: {exc.line()}")


class Race(Drive):
    """The drive of a card with best_of > 1 or a race of tiers: it owns the card and runs its
    candidates, candidate k of tier `tiers[k-1]` when the card names them."""

    def __init__(
        self,
        cfg: Config,
        store: Store,
        card_id: str,
        token: str,
        n: int,
        slot: Callable[[str, bool], bool] | None = None,
        tiers: Sequence[str] = (),
    ) -> None:
        super().__init__(cfg, store, card_id, token)
        if tiers and len(tiers) != n:  # candidates_for counts a race by its names
            raise ValueError(f"a race of {n} candidates names {len(tiers)} tiers")
        self.n = n
        self.tiers = tuple(tiers)
        self._slot = slot or (lambda card_id, take: True)  # the loop's: see `slot`
        self.candidates: list[Candidate] = []
        self.results: list[CandidateResult] = []
        self._race_mu = threading.Lock()
        self._won = ""  # first-green: why the other candidates are stopped, once one is green
        self._moved = ""  # what the race found when its card moved under it (a verb)
        self.slots_held = 0  # the loop's count of the slots this race's candidates hold

    def interrupt(self, why: str = "board run is shutting down") -> None:
        super().interrupt(why)
        with self._race_mu:
            running = list(self.candidates)
        for cand in running:
            cand.interrupt(why)

    def _run(self) -> DriveEnd:
        first = True
        while True:
            if not first:
                self._rotate()
            first = False
            self._open_log()
            self._within_budget()
            self._edge_check("fresh build")
            self._known_tiers()
            try:  # every old tree of the card is saved, then removed (invariant 1)
                worktrees.fresh_build_prepare(self.cfg, self.card_id, store=self.store)
            except StrandedWorkError as exc:
                cls = "secret-leak" if isinstance(exc, treefiles.SecretLeak) else "stranded-work"
                self._block(cls, exc.line(), remove_tree=False)
            results = self._run_candidates()
            self._check_stop()
            if self._moved:  # a verb moved the card: every tree saved, then stand aside
                self._remove_tree(f"the card moved under its race: {self._moved}")
                self._stand_aside("candidates", self._moved)
            moved = next((r.stood_aside for r in results if r.stood_aside), "")
            if moved:
                self._edge_check("choice")  # stands aside, every tree kept (invariant 4)
            green = [r for r in results if r.green]
            if green:
                end = self._fold_chosen(results, green)
                if end is None:  # nothing inside the surface: it climbed
                    continue
                return end
            self._none_green(results)

    def _known_tiers(self) -> None:
        """A race naming a tier board.toml no longer has blocks before any candidate starts
        (the names were checked when given; board.toml may have changed since)."""
        gone = next((t for t in self.tiers if t not in self.cfg.coder.tiers), None)
        if gone is not None:
            self._block(
                "dispatch-infra",
                f"its race names tier {gone!r}, which [coder.tiers] no longer has; "
                f"`board card edit {self.card_id} --race TIER,…` (or --no-race), then unblock",
            )

    def _tier_of(self, k: int) -> str:
        """Candidate k's tier: its race's k-th name, else the card's rung's."""
        return self.tiers[k - 1] if self.tiers else self.tier

    def _what(self) -> str:
        """What runs, for the log and the card's comments."""
        if self.tiers:
            return f"race of {self.n} (tiers {', '.join(self.tiers)}; rung {self.tier})"
        return f"best of {self.n} (tier {self.tier})"

    def _run_candidates(self) -> list[CandidateResult]:
        """Start candidates 1..N as the loop gives slots, wait for all, in finishing order."""
        self._say(f"{self._what()}: starting its candidates")
        with self._race_mu:
            self.candidates = []
            self._won = self._moved = ""
        self.results = []
        threads: list[threading.Thread] = []
        done: list[CandidateResult] = []
        done_mu = threading.Lock()

        def one(cand: Candidate) -> None:
            try:
                res = cand.race_run()
                with done_mu:
                    res.seq = len(done) + 1
                    done.append(res)
                if res.green and self.cfg.coder.best_of_rule == RULE_FIRST_GREEN:
                    self._stop_the_rest(res)  # before its slot is free: no further one starts
            finally:
                self._slot(self.card_id, False)

        for k in range(1, self.n + 1):
            taken = False
            while not self.stopping and not self._won and not self._watch():
                taken = self._slot(self.card_id, True)
                if taken:
                    break
                time.sleep(GRAB_POLL_S)
            if not taken or self.stopping or self._won or self._moved:
                if taken:  # stopped, or first-green decided, as the slot came: give it back
                    self._slot(self.card_id, False)
                break
            attempt = self.store.next_attempt(self.card_id)
            log_rel = self.cfg.rel(log_path(self.cfg, self.card_id, attempt))
            tier = self._tier_of(k)
            row = self.store.start_drive(
                self.card_id, tier, attempt, log_rel, os.getpid(), candidate=k
            )
            cand = Candidate(
                self.cfg,
                self.store,
                self.card_id,
                row.id,
                self.token,
                k,
                self.n,
                self.kept_attempts,
                tier=tier if self.tiers else "",
            )
            with self._race_mu:
                self.candidates.append(cand)
                won = self._won or self._moved
            if self.stopping:
                cand.interrupt(self._stop_why)
            elif won:  # green came between the slot and the row: it starts no coder
                cand.interrupt(won)
            self._say(f"candidate {k} of {self.n}: drive {row.id}, attempt {attempt}, tier {tier}")
            thread = threading.Thread(
                target=one, args=(cand,), name=f"candidate-{self.card_id}-{k}"
            )
            threads.append(thread)
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(WATCH_S)
                self._watch()
        self.results = sorted(done, key=lambda r: r.seq)
        return self.results

    def _watch(self) -> str:
        """What moved the card under the race ('' while it is the race's): a `hold` or a
        `requeue` stops every candidate now, as `stop` and `cancel` do, so none runs on for
        a card it no longer builds; the race then saves each tree and stands aside."""
        if self._moved:
            return self._moved
        try:
            found = self.owner.why_not(self.store.get(self.card_id), self.store)
        except BoardError:  # the store blinked: the next look decides
            return ""
        if not found:
            return ""
        with self._race_mu:
            self._moved = found
            running = list(self.candidates)
        self._say(f"the card moved under the race ({found}): stopping every candidate")
        for cand in running:
            cand.interrupt(f"the card moved: {found}")
        return found

    def _stop_the_rest(self, first: CandidateResult) -> None:
        """first-green: candidate `first` is green, so every other one still running is
        stopped now (its process group killed; it ends `stopped`, its tree kept for the
        race to save) and no further one starts. Only the first green stops the rest."""
        with self._race_mu:
            if self._won:
                return
            self._won = f"candidate {first.k} was green first ({RULE_FIRST_GREEN})"
            others = [c for c in self.candidates if c.k != first.k]
        self._say(f"{self._won}: stopping the others")
        for cand in others:
            cand.interrupt(self._won)

    def _fold_chosen(
        self, results: list[CandidateResult], green: list[CandidateResult]
    ) -> DriveEnd | None:
        """Save every other candidate (kind `candidate`), then publish the chosen one's tree
        as a single drive's is."""
        rule = self.cfg.coder.best_of_rule
        if rule == RULE_FIRST_GREEN:
            chosen = min(green, key=lambda r: r.seq)
            how = "the first green one"
        else:
            chosen = min(green, key=lambda r: (r.lines, r.seq))
            how = "the fewest of the green ones"
        self._edge_check("choice")
        words = "; ".join(_said(r) for r in results)
        self._say(f"candidate {chosen.k} is chosen ({rule}): {words}")
        for r in results:
            if r is not chosen:
                self._save(r, naming.KIND_CANDIDATE, f"candidate {chosen.k} was chosen")
        which = (
            f"candidate {chosen.k} (tier {chosen.tier})" if self.tiers else f"candidate {chosen.k}"
        )
        self._comment(
            f"{self._what()}: {which} chosen, {chosen.lines} changed line(s), {how}; {words}"
        )
        self.tree, self.start = chosen.tree, chosen.start
        return self._commit_and_publish()

    def _none_green(self, results: list[CandidateResult]) -> None:
        """No candidate green: each tree saved as an attempt, then the card climbs as one
        failed attempt would (or backs off / blocks as the first candidate whose failure
        was not its own, when none failed through its own fault)."""
        for r in results:
            branch = self._save(r, naming.KIND_ATTEMPT, f"none of {self.n} candidates was green")
            if branch:
                why = f"candidate {r.k} of {self.n}: {r.why}"
                self.kept_attempts.append(KeptAttempt(r.attempt, r.tier or self.tier, why, branch))
        own = [r for r in results if not r.cls]
        if not own and results:
            first = results[0]
            if first.failure is not None:
                self._back_off(first.step, first.failure, first.output, first.tier)
            self._block(first.cls, f"candidate {first.k}: {first.why}", first.tail)
        top = "gate-red" if any(r.top_cls == "gate-red" for r in own) else "terminal"
        tail = next((r.tail for r in own if r.tail.strip()), "")
        why = (
            f"none of {len(results)} candidate(s) was green ("
            + "; ".join(f"{r.k}: {r.why}" for r in results)
            + ")"
        )
        self._climb(why, top, tail)

    def _save(self, r: CandidateResult, kind: str, why: str) -> str:
        """Save then remove a candidate's tree; '' when it held nothing or was kept."""
        tree = r.tree
        if tree is None or not tree.exists():
            return ""
        if r.keep:
            self._comment(f"candidate {r.k}'s tree is kept as it is at {tree}: {r.why}")
            return ""
        try:
            res = worktrees.discard_worktree(
                self.cfg, tree, store=self.store, card_id=self.card_id, why=why, kind=kind
            )
        except BoardError as exc:  # StrandedWorkError included: the tree stays as it is
            self._comment(f"candidate {r.k}'s tree was kept at {tree}: {exc.line()}")
            return ""
        r.tree = tree if tree.exists() else None
        if res.saved is None:
            return ""
        self._say(f"candidate {r.k}'s work was saved to {res.saved.branch} ({kind})")
        return res.saved.branch

    def _remove_tree(self, why: str, replayed: tuple[str, str] | None = None) -> list[str]:
        """A single drive's save-then-remove of its tree, and every candidate's still here
        (a shutdown, a block, an internal error while the candidates' trees stand)."""
        saved = super()._remove_tree(why, replayed) if self.tree is not None else []
        for cand in self.candidates:
            r = cand.result
            r.tree = r.tree or cand.tree
            if r.tree is not None and r.tree != self.tree:
                branch = self._save(r, naming.KIND_SAVED, why)
                if branch:
                    saved.append(branch)
        return saved


def drive_for(
    cfg: Config,
    store: Store,
    card_id: str,
    token: str,
    best_of: int,
    slot: Callable[[str, bool], bool] | None = None,
    race: Sequence[str] = (),
) -> Drive:
    """The loop's drive for a claimed card: a `Race` of `best_of` candidates (`candidates_for`
    says how many), of the card's race of tiers when it names one (a race of one tier too:
    its tier is not the rung's), or with 1 and no race the single drive, exactly as before
    issue 42."""
    if best_of > 1 or race:
        return Race(cfg, store, card_id, token, best_of, slot, tiers=race)
    return Drive(cfg, store, card_id, token)


def slots_in_use(drives: Iterable[Drive | None], limit: int) -> int:
    """The slots of `limit` (max_concurrent) these running drives hold: one each (a
    planner's run, None, too), a race one per candidate it runs and never less than its
    claim's one; a drive whose work is committed and waits to publish (`built`) holds none
    unless more than `limit` of them wait (waits.slots_taken)."""
    building = publishing = 0
    for d in drives:
        if d is not None and d.built:
            publishing += 1
        else:
            building += max(1, d.slots_held) if isinstance(d, Race) else 1
    return waits.slots_taken(building, publishing, limit)


def slot(mine: Drive | None, drives: list[Drive | None], limit: int, take: bool) -> bool:
    """Take a slot for race `mine`'s next candidate, or give one back (`take` False), the
    loop's lock held: its first candidate takes the claim's slot, every further one a free
    slot of `limit`; False when none is free."""
    if not isinstance(mine, Race):
        return False
    if not take:
        mine.slots_held = max(0, mine.slots_held - 1)
        return True
    if mine.slots_held > 0 and slots_in_use(drives, limit) >= limit:
        return False
    mine.slots_held += 1
    return True


def _said(r: CandidateResult) -> str:
    if r.green:
        return f"{r.k} green, {r.lines} line(s)"
    if r.stopped:
        return f"{r.k} stopped: {r.why}"
    return f"{r.k} not green: {r.why}"


__all__ = [
    "RULE_FIRST_GREEN",
    "RULE_SMALLEST_GREEN",
    "Candidate",
    "CandidateResult",
    "Race",
    "drive_for",
    "slot",
    "slots_in_use",
]

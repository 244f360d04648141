"""Timeouts that mean "too wide": the durable budget, the park, the decompose task, the split.

A card whose coder times out again and again is too big for one build: rebuilding it
whole only burns more timeouts. At `coder.timeout_split_after` counted timeouts (seed
002) the board files a decompose task for the planner, parks the card `too-wide` (the
sweep never re-runs it) and only then releases the task, in that order, so whoever
picks up the task finds the card already parked.

The count lives in the store only (`Card.timeouts`, not a label): a count held in memory
would survive an operator's `unblock` from another process and re-park the card on its
first real retry (docs/lifecycle.md, "Every edge"). Which timeouts count is the drive's
decision (a fresh build whose coder printed something); this module only keeps the count.

`split` performs the task's four steps in the one safe order (create the slices in
backlog, repoint the dependents, cancel the card, ready the slices) inside one
transaction, so a failure part-way changes nothing and no dependent is ever released
before the slices it needs exist.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from board.core import logs, proc
from board.core.cards import actions, waits
from board.core.config import Config, PlannerSection
from board.core.errors import BoardError, Conflict, NotFound, Refused, StoreError
from board.core.git import gitutil
from board.core.logs import LogWriter
from board.core.model import TERMINAL, Blocked, Card, CardDraft
from board.core.records import Frozen, field
from board.core.store import Expect, Store, Tx

if TYPE_CHECKING:
    from board.core.store.contract import DriveFields

ASKED_LABEL = "decompose-asked"  # on the card: a decompose task was filed for it
SPLIT_OF = "split-of="  # on the decompose task: the card it splits
SPLIT_FROM = "split-from="  # on each slice: the card it was cut from
TOO_WIDE = "too-wide"
WHO = "board"

_OWN_LABELS = (ASKED_LABEL, SPLIT_OF)
_SPLIT_TITLE_RE = re.compile(r"^Split [a-z][a-z0-9]*-\d+: ")


# the count ----------------------------------------------------------------------------------


def timeout_count(card: Card) -> int:
    """The durable count of counted timeouts (0 when none was counted)."""
    return card.timeouts


def count_timeout(store: Store, cfg: Config, card: Card, token: str) -> str | None:
    """Count one timeout of a fresh build that reached the model; park the card at the threshold.

    The drive calls this only for a timeout that counts. Everything happens inside one
    transaction that expects the card still `working` under `token`, so a card moved
    meanwhile is never counted or parked (the Conflict tells the drive to stand aside).
    At the threshold, in this order: the decompose task is filed (backlog), the card is
    parked `too-wide` with a reason naming the task (or saying plainly none was filed),
    then the task is released to `ready`. Returns the park reason, or None if not parked.
    """
    threshold = cfg.coder.timeout_split_after
    if threshold <= 0:  # 0 turns the whole budget off: nothing counted, nothing parked
        return None
    with store.transaction() as tx:
        current = tx.get(card.id)
        Expect(lane="working", drive=token).check(current)
        if current.pr_url:  # a fix round of a published card is never counted: it built once
            return None
        count = timeout_count(current) + 1
        current = tx.update(
            current.id,
            Expect(lane="working", drive=token, version=current.version),
            {"timeouts": count},
            WHO,
            note=f"coder timeout {count} of {threshold} before a split is asked",
        )
        if count < threshold:
            return None
        # 1. file the decompose task (it stays in backlog, invisible to the queue)
        task, why_none = _ask(tx, cfg, current)
        current = tx.get(current.id)
        # 2. park the card: the sweep never re-runs a too-wide card; the operator is told once
        reason = park_reason(current, count, task, why_none)
        tx.update(
            current.id,
            Expect(lane="working", drive=token, version=current.version),
            {"blocked": Blocked(TOO_WIDE, reason)},
            WHO,
        )
        # 3. release the task: whoever picks it up cancels this card, so it is parked first
        if task is not None and task.lane == "backlog":
            tx.update(
                task.id,
                Expect(lane="backlog", version=task.version),
                {"lane": "ready"},
                WHO,
                note=f"released: {current.id} is parked too-wide for this split",
            )
        return reason


def clear_count(store: Store, card_id: str) -> Card:
    """Drop the count: a build reached review or was published, so the card is not too wide."""
    with store.transaction() as tx:
        card = tx.get(card_id)
        if not card.timeouts:
            return card
        return tx.update(
            card_id,
            Expect(version=card.version),
            {"timeouts": 0},
            WHO,
            note="the timeout count is cleared: a build got through",
        )


def park_reason(card: Card, count: int, task: Card | None, why_none: str = "") -> str:
    """The too-wide reason: it names the task, or says plainly none was filed and what to do."""
    head = f"timed out {count} times: too wide for one build, so it is not rebuilt whole."
    retry = (
        f"or raise coder.timeout_s in board.toml and `board unblock {card.id}` "
        "for a real retry (the count starts again)"
    )
    by_hand = f'`board split {card.id} --into "TITLE" [--into "TITLE"]...`'
    if task is not None:
        return (
            f"{head} Parked for its split: task {task.id} ({task.title!r}) asks the planner "
            f"to split it. Or split it yourself with {by_hand}, {retry}."
        )
    return (
        f"{head} NO split task was filed ({why_none or 'none could be filed'}). "
        f"Split it yourself with {by_hand}, {retry}."
    )


# the decompose task ---------------------------------------------------------------------------


def task_title(card: Card) -> str:
    return f"Split {card.id}: {card.title}"


def is_decompose_task(card: Card) -> bool:
    """A decompose task never gets a decompose task of its own (no recursion)."""
    if card.label_value(SPLIT_OF) is not None:
        return True
    return card.kind == "task" and bool(_SPLIT_TITLE_RE.match(card.title))


def _find_tasks(tx: Tx, card: Card) -> list[Card]:
    """Every task filed to split this card, found by its title (the label may have been lost)."""
    prefix = f"Split {card.id}: "
    cards = tx.all_cards()
    return [c for c in cards if c.kind == "task" and c.title.startswith(prefix) and c.id != card.id]


def task_spec(card: Card, dependents: Sequence[Card], count: int | None = None) -> str:
    """What the planner (or the operator) needs: the card, its dependents, the four safe steps."""
    why = f"timed out {count} times" if count else "was asked to be split"
    lines = [
        f"{card.id} ({card.title}) {why}: it is too wide for one build. "
        "Split it into slices that each fit one build.",
        "",
        f"{card.id}'s spec:",
        _indent(card.spec or "(empty)"),
    ]
    if card.acceptance:
        lines += ["", f"{card.id}'s acceptance:", _indent(card.acceptance)]
    lines += ["", f"Its surface: {', '.join(card.surface) if card.surface else '(none declared)'}"]
    if dependents:
        lines += ["", "Its dependents (each must end up waiting on the slice(s) it needs):"]
        lines += [f"  - {d.id} ({d.title}), {d.lane}" for d in dependents]
    else:
        lines += ["", "Its dependents: none."]
    lines += [
        "",
        "Do the split in this order; each step relies on the one before:",
        "  1. Create the slices and leave them in backlog.",
        "  2. Repoint every dependent onto the slice(s) it needs.",
        f"  3. Cancel {card.id} (only now: cancelling it earlier releases its dependents "
        "before any slice exists).",
        f"  4. Mark the slices ready (only now: while {card.id} is open it still claims "
        "their files).",
        "",
        f'`board split {card.id} --into "TITLE" [--surface GLOB]... [--into "TITLE"]...` '
        "does all four, in this order, as one operation.",
    ]
    return "\n".join(lines)


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines())


def _ask(tx: Tx, cfg: Config, card: Card) -> tuple[Card | None, str]:
    """Find or file the decompose task inside `tx`; heal a lost label. (task, why none)."""
    if is_decompose_task(card):
        return None, f"{card.id} is itself a decompose task; it gets no split task of its own"
    found = _find_tasks(tx, card)
    open_tasks = [c for c in found if c.lane not in TERMINAL]
    if open_tasks:
        task = open_tasks[0]
    elif found:
        closed = found[-1]
        return None, f"its split task {closed.id} is already {closed.lane}"
    else:
        dependents = [tx.get(d) for d in tx.dependents(card.id)]
        dependents = [d for d in dependents if d.lane not in TERMINAL]
        task = tx.create(
            CardDraft(
                title=task_title(card),
                spec=task_spec(card, dependents, timeout_count(card) or None),
                kind="task",
                lane="backlog",
                priority=card.priority,
                assignee=cfg.planner.name,
                labels=[f"{SPLIT_OF}{card.id}"],
            ),
            cfg.board.prefix,
            WHO,
        )
        tx.add_event(card.id, f"asked for a split: filed {task.id} for {cfg.planner.name}", WHO)
    if ASKED_LABEL not in card.labels:  # file-then-label: heal a lost label write
        tx.update(
            card.id,
            Expect(version=card.version),
            {"labels": (*card.labels, ASKED_LABEL)},
            WHO,
            note=f"its split task is {task.id}",
        )
    return task, ""


def request_decomposition(store: Store, cfg: Config, card: Card | str) -> Card | None:
    """The open decompose task for the card, filed (in backlog) if there is none yet.

    Idempotent: a repeat ask finds the task by its title, heals a lost `decompose-asked`
    label and never files a duplicate. Returns None once that split has closed, and for
    a card that is itself a decompose task. The task is not released: the caller parks
    the card first, then releases it.
    """
    card_id = card if isinstance(card, str) else card.id
    with store.transaction() as tx:
        current = tx.get(card_id)
        if current.lane in TERMINAL:
            return None
        task, _ = _ask(tx, cfg, current)
        return task


# the split -----------------------------------------------------------------------------------


class SplitResult(Frozen):
    """What `board split` did: the cancelled card, its slices, the dependents repointed."""

    card: Card
    slices: tuple[Card, ...]
    repointed: tuple[str, ...]
    task_closed: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def summary(self) -> str:
        ids = ", ".join(s.id for s in self.slices)
        parts = [f"split {self.card.id} into {ids} (ready)"]
        if self.repointed:
            parts.append(f"repointed {', '.join(self.repointed)} onto {ids}")
        parts.append(f"{self.card.id} cancelled")
        if self.task_closed:
            parts.append(f"split task {self.task_closed} done")
        return "; ".join(parts + list(self.notes))

    def to_json(self) -> dict[str, Any]:
        return {
            "card": self.card.to_json(),
            "slices": [s.to_json() for s in self.slices],
            "repointed": list(self.repointed),
            "task_closed": self.task_closed,
            "notes": list(self.notes),
        }


STEPS = ("create", "repoint", "cancel", "ready")


def split(
    store: Store,
    cfg: Config,
    card_id: str,
    titles: Sequence[str],
    surfaces: Sequence[Sequence[str] | None] | None = None,
    who: str = actions.OPERATOR,
    _observe: Callable[[str, Tx], None] | None = None,
) -> SplitResult:
    """Split a card into slices: the four steps in the safe order, as one transaction.

    1. create the slices in backlog (each inherits the card's surface unless given its
       own, its deps, priority and spec as context); 2. repoint every open dependent
       onto the slices; 3. cancel the card; 4. mark the slices ready. A failure at any
       step rolls all of it back and says so. The card's trees are then saved-and-reaped.
    """
    titles = [t.strip() if isinstance(t, str) else t for t in titles]
    if not titles:
        raise Refused(f"split {card_id}: name at least one slice (--into TITLE)")
    for title in titles:
        if not isinstance(title, str) or not title:
            raise Refused(f"split {card_id}: a slice needs a title (one --into was empty)")
        try:
            actions.check_one_line(title, "a slice's title")
        except Refused as exc:
            raise Refused(f"split {card_id}: {exc}") from None
    if surfaces is not None and len(surfaces) != len(titles):
        raise Refused(
            f"split {card_id}: {len(surfaces)} surfaces for {len(titles)} slices "
            "(give one per slice, or none)"
        )
    own = [
        actions._clean_list(s, "surface glob") if s else []
        for s in (surfaces or [None] * len(titles))
    ]
    step = "check"
    done_task: str | None = None
    try:
        with store.transaction() as tx:
            card = tx.get(card_id)
            _check_splittable(card)
            n = len(titles)
            # 1. the slices, in backlog: nothing can claim them yet
            step = "create"
            slices = [
                tx.create(
                    CardDraft(
                        title=title,
                        spec=_slice_spec(card, title, i, n),
                        acceptance="",
                        kind=card.kind,
                        lane="backlog",
                        priority=card.priority,
                        labels=[x for x in card.labels if not x.startswith(_OWN_LABELS)]
                        + [f"{SPLIT_FROM}{card.id}"],
                        deps=list(card.deps),
                        surface=list(own[i] or card.surface),
                    ),
                    cfg.board.prefix,
                    who,
                )
                for i, title in enumerate(titles)
            ]
            slice_ids = tuple(s.id for s in slices)
            if _observe:
                _observe(step, tx)
            # 2. every open dependent waits on the slices instead of the card
            step = "repoint"
            repointed = []
            for dep_id in tx.dependents(card.id):
                dependent = tx.get(dep_id)
                if dependent.lane in TERMINAL:
                    continue
                deps = [d for d in dependent.deps if d != card.id]
                deps += [s for s in slice_ids if s not in deps]
                tx.update(
                    dependent.id,
                    Expect(version=dependent.version),
                    {"deps": tuple(deps)},
                    who,
                    note=f"{card.id} is split; now waits on {', '.join(slice_ids)}",
                )
                repointed.append(dependent.id)
            if _observe:
                _observe(step, tx)
            # 3. cancel the card: its dependents already wait on the slices
            step = "cancel"
            card = tx.get(card.id)
            tx.update(
                card.id,
                Expect(version=card.version),
                {
                    "lane": "cancelled",
                    "drive": "",
                    "blocked": None,
                    "timeouts": 0,
                },
                who,
                note=f"split into {', '.join(slice_ids)}",
            )
            for task in _find_tasks(tx, card):
                if task.lane in ("backlog", "ready"):
                    tx.update(
                        task.id,
                        Expect(version=task.version),
                        {"lane": "done", "blocked": None},
                        who,
                        note=f"{card.id} was split into {', '.join(slice_ids)}",
                    )
                    done_task = task.id
            if _observe:
                _observe(step, tx)
            # 4. the slices become claimable: the card no longer claims their files
            step = "ready"
            slices = [
                tx.update(s.id, Expect(lane="backlog", version=s.version), {"lane": "ready"}, who)
                for s in slices
            ]
            if _observe:
                _observe(step, tx)
            cancelled = tx.get(card.id)
    except BoardError as exc:
        if step == "check":
            raise
        kind = type(exc) if type(exc) in (Refused, NotFound, Conflict, StoreError) else Refused
        raise kind(
            f"split {card_id} failed at step {STEPS.index(step) + 1} ({step}): {exc.line()}; "
            "nothing was changed"
        ) from None
    except Exception as exc:
        raise Refused(
            f"split {card_id} failed at step {STEPS.index(step) + 1} ({step}): "
            f"{type(exc).__name__}: {exc}; nothing was changed"
        ) from exc
    notes: list[str] = []
    try:
        actions.reap_trees(store, cfg, card_id)
    except Exception as exc:  # the split stands; the trees stay and the card says why
        note = f"{card_id}'s trees were not reaped: {exc}"
        store.add_comment(card_id, note, WHO)
        notes.append(note)
    return SplitResult(cancelled, tuple(slices), tuple(repointed), done_task, tuple(notes))


def _check_splittable(card: Card) -> None:
    if card.lane in TERMINAL:
        raise Refused(f"{card.id}: is {card.lane}; a {card.lane} card cannot be split")
    parked = card.blocked is not None and card.blocked.cls == TOO_WIDE
    if card.lane == "working" and not parked:
        raise Refused(
            f"{card.id}: is working under drive {card.drive or '?'}; "
            "stop it or wait for the build to end before splitting it"
        )


def _slice_spec(card: Card, title: str, index: int, count: int) -> str:
    lines = [
        title,
        "",
        f"This is slice {index + 1} of {count} cut from {card.id} ({card.title}), which was "
        "too wide for one build. Build only this slice; the other slices are separate cards.",
        "",
        f"{card.id}'s spec, for context:",
        _indent(card.spec or "(empty)"),
    ]
    if card.acceptance:
        lines += ["", f"{card.id}'s acceptance, for context:", _indent(card.acceptance)]
    return "\n".join(lines)


# the planner --------------------------------------------------------------------------------


for_planner = waits.for_planner  # kept here too: the planner's verbs live in this module


def planner_queue(store: Store, planner: PlannerSection) -> list[Card]:
    """Claimable planner tasks, in queue order; none without a planner command (they wait)."""
    if not planner.argv:
        return []
    return [c for c in actions.ready_queue(store) if for_planner(planner, c)]


class PlannerResult(Frozen):
    """How a planner run ended: `done`, `blocked`, or `stood-aside`, with one line of why."""

    outcome: str
    reason: str
    returncode: int | None = None
    log: str = ""


def planner_brief(task: Card, target: str | None) -> str:
    lines = [task.title, "", task.spec]
    lines += [
        "",
        "You run in the repository root with no worktree. Do not edit, commit or push "
        "files: only split the card, with the `board split` command above.",
    ]
    if target:
        lines.append(f"When {target} is cancelled and its slices exist, this task is done.")
    return "\n".join(lines) + "\n"


def run_planner(store: Store, cfg: Config, task: Card, token: str) -> PlannerResult:
    """Dispatch a claimed decompose task to `planner.argv`, in the repository root.

    The caller has claimed the task (`working` under `token`). The planner gets no stdin,
    its own process group and `planner.timeout_s`; its output goes to the task's log.
    `{brief}` is the path of a brief file, `{card}` the card to split, `{task}` the task,
    `{root}`/`{worktree}` the repository root. Afterwards the task is `done` if the card
    was split (cancelled), else it is blocked with the reason; a task moved meanwhile is
    left alone.
    """
    if not cfg.planner.argv:
        raise Refused(f"{task.id}: no planner command is configured ([planner] argv)")
    current = store.get(task.id)
    if current.lane != "working" or current.drive != token:
        return PlannerResult("stood-aside", f"{task.id} is {current.lane}, not under {token}")
    target = current.label_value(SPLIT_OF)
    root = Path(cfg.root)
    log_rel = _planner_log(store, cfg, task.id, token)
    log_path = root / log_rel
    log_path.parent.mkdir(parents=True, exist_ok=True)
    brief_path = cfg.board_dir / "briefs" / f"{task.id}.md"
    brief_path.parent.mkdir(parents=True, exist_ok=True)
    brief_path.write_text(planner_brief(current, target), encoding="utf-8")
    argv = gitutil.argv_with(
        cfg.planner.argv,
        brief=str(brief_path),
        card=target or "",
        task=task.id,
        root=str(root),
        worktree=str(root),
    )
    env = {"BOARD_TASK": task.id, "BOARD_CARD": target or "", "BOARD_ROOT": str(root)}
    log = LogWriter(log_path)
    try:
        log.write_line(f"board: planner for {task.id} (splits {target or '?'}): {argv}")

        def on_start(pid: int) -> None:
            _drive_field(store, token, pgid=pid)

        res = proc.stream(
            argv,
            cwd=root,
            timeout=cfg.planner.timeout_s,
            on_line=log.write_line,
            first_output_timeout=cfg.coder.first_output_timeout_s,
            env=env,
            on_start=on_start,
        )
        log.write_line(f"board: planner ended: rc={res.returncode} timed_out={res.timed_out}")
    finally:
        log.close()
    outcome, reason = _planner_outcome(store, current, target, res)
    if outcome == "stood-aside":
        _drive_field(store, token, status="stood-aside", pgid=0, result=reason)
        return PlannerResult(outcome, reason, res.returncode, log_rel)
    try:
        with store.transaction() as tx:
            now = tx.get(task.id)
            expect = Expect(lane="working", drive=token, version=now.version)
            if now.blocked is not None:  # held while it ran: back to ready, the flag kept
                tx.update(task.id, expect, {"lane": "ready", "drive": ""}, WHO, note=reason)
                outcome = "stood-aside"
                reason = f"{task.id} was blocked {now.blocked.cls} while the planner ran; {reason}"
            elif outcome == "done":
                tx.update(task.id, expect, {"lane": "done", "drive": ""}, WHO, note=reason)
            else:
                cls = "dispatch-infra" if res.missing or res.first_output_timed_out else "terminal"
                tx.update(
                    task.id,
                    expect,
                    {"lane": "ready", "drive": "", "blocked": Blocked(cls, reason)},
                    WHO,
                )
    except BoardError as exc:  # moved between our read and our write
        outcome, reason = "stood-aside", f"{task.id} moved meanwhile: {exc.line()}"
    status = {"done": "passed", "blocked": "blocked"}.get(outcome, "stood-aside")
    _drive_field(store, token, status=status, pgid=0, result=reason)
    return PlannerResult(outcome, reason, res.returncode, log_rel)


def _planner_outcome(
    store: Store, task: Card, target: str | None, res: proc.Result
) -> tuple[str, str]:
    now = store.get(task.id)
    if now.lane == "done" or (now.lane != "working" or now.drive != task.drive):
        return "stood-aside", f"{task.id} is {now.lane} now; the planner's end changes nothing"
    split_done = False
    if target:
        try:
            split_done = store.get(target).lane == "cancelled"
        except NotFound:
            split_done = False
    if split_done:
        return "done", f"the planner split {target}"
    tail = " | ".join(x.strip() for x in res.tail[-3:] if x.strip())[:300]
    if res.missing:
        why = f"the planner command could not be started: {tail or res.argv[0]}"
    elif res.first_output_timed_out:
        why = "the planner printed nothing before coder.first_output_timeout_s and was killed"
    elif res.timed_out:
        why = "the planner ran past planner.timeout_s and was killed"
    elif res.returncode != 0:
        why = f"the planner exited {res.returncode}"
    else:
        why = "the planner exited 0"
    left = f" but {target} is not split" if target else ""
    return "blocked", f"{why}{left}" + (f"; its last output: {tail}" if tail else "")


def _planner_log(store: Store, cfg: Config, task_id: str, token: str) -> str:
    try:
        drive = store.get_drive(token)
        if drive.log:
            return drive.log
    except NotFound:
        pass
    attempt = store.next_attempt(task_id)
    return str(logs.log_path(cfg, task_id, attempt).relative_to(cfg.root))


def _drive_field(store: Store, token: str, **fields: Unpack[DriveFields]) -> None:
    """Record on the drive row if the caller made one for this token; a plain token has none."""
    try:
        store.get_drive(token)
    except NotFound:
        return
    store.update_drive(token, **fields)

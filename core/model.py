"""The card model: lanes, the blocked flag, events. Plain data, no I/O."""

from __future__ import annotations

from board.core.records import FACTORY, Frozen, Record, as_dict

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any

LANES: tuple[str, ...] = ("backlog", "ready", "working", "review", "done", "cancelled")
TERMINAL: frozenset[str] = frozenset({"done", "cancelled"})
OPEN_LANES: frozenset[str] = frozenset(LANES) - TERMINAL
KINDS: tuple[str, ...] = ("feature", "task")

SELF_HEALING: frozenset[str] = frozenset({"transient", "rate-limit", "merge-conflict"})
HUMAN_CLASSES: frozenset[str] = frozenset(
    {
        "held",
        "terminal",
        "dispatch-infra",
        "too-wide",
        "stranded-work",
        "gate-red",
        "fold-conflict",
        "auth",  # a dead login: no stronger model fixes it, and every card would burn on it
        "pr-closed",  # its pull request was closed without a merge: a human decides
        "setup-failed",  # its tree's [tree] setup failed: the project's, not the card's
        "secret-leak",  # its change holds a copied file's value: never committed or saved
    }
)
BLOCK_CLASSES: frozenset[str] = SELF_HEALING | HUMAN_CLASSES

PRIORITY_MIN = 0  # most urgent
PRIORITY_MAX = 4
PRIORITY_DEFAULT = 2


class Blocked(Frozen):
    """Why a card may not be claimed: a class the loop understands and a reason a human reads."""

    __slots__ = __match_args__ = ("cls", "reason")
    cls: str
    reason: str

    def __init__(self, cls: str, reason: str) -> None:
        set_ = object.__setattr__
        set_(self, "cls", cls)
        set_(self, "reason", reason)

    def to_json(self) -> dict[str, str]:
        return {"class": self.cls, "reason": self.reason}


# timeline event kinds beyond "event" and "comment", which the drive reads back
REQUEUE_EVENT = "requeue"  # the operator's requeue; its text is the reason for the brief
REQUEUED = "requeued"  # a requeue event's text when the operator gave no reason
FOLD_CONFLICT_EVENT = "fold-conflict"  # what a fold conflicted on, quoted in the next brief
RESUME_EVENT = "resume-from"  # the branch an interrupted build's work was saved to


class Event(Frozen):
    """One line of a card's timeline: who changed what, when; comments are events too."""

    __slots__ = __match_args__ = ("seq", "card", "at", "who", "kind", "text")
    seq: int
    card: str
    at: str
    who: str
    kind: str  # "event" | "comment"
    text: str

    def __init__(self, seq: int, card: str, at: str, who: str, kind: str, text: str) -> None:
        set_ = object.__setattr__
        set_(self, "seq", seq)
        set_(self, "card", card)
        set_(self, "at", at)
        set_(self, "who", who)
        set_(self, "kind", kind)
        set_(self, "text", text)

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)


# the fields of a card the board keeps for itself (its counts), in the card_state table
STATE_FIELDS: tuple[str, ...] = ("tries", "rung", "told", "timeouts", "reviews_seen")


class Card(Frozen):
    """A unit of work. `version` increments on every write and is what compare-and-set checks.

    No __slots__: a listing fills a card's instance dict in one call (store/cardrow.py)."""

    __match_args__ = (
        "id",
        "title",
        "spec",
        "acceptance",
        "kind",
        "lane",
        "priority",
        "assignee",
        "branch",
        "pr_url",
        "blocked",
        "labels",
        "deps",
        "surface",
        "created_at",
        "updated_at",
        "version",
        "seq",
        "drive",
        "not_before",
        "pr_state",
        "pr_polled_at",
        "tries",
        "rung",
        "told",
        "timeouts",
        "reviews_seen",
    )
    id: str
    title: str
    spec: str
    acceptance: str
    kind: str
    lane: str
    priority: int
    assignee: str
    branch: str
    pr_url: str
    blocked: Blocked | None
    labels: tuple[str, ...]
    deps: tuple[str, ...]
    surface: tuple[str, ...]
    created_at: str
    updated_at: str
    version: int
    seq: int
    drive: str  # token of the drive that owns the card while it is working
    not_before: str  # ISO UTC: no claim before then (a back-off); "" when none
    pr_state: str  # the PR's state when last polled (OPEN, MERGED, CLOSED, ...)
    pr_polled_at: str  # when it was polled
    # the board's own counts of the card (docs/lifecycle.md, "Failures that are not the
    # card's fault"), kept in the store's card_state table, never among the labels:
    tries: tuple[tuple[str, int], ...]  # (class, failures or heals of it), in the order set
    rung: str  # the tier a back-off left the card on; "" for the ladder's first
    told: str  # "<class>:<hash>" of the block the operator was told about; "" when none
    timeouts: int  # counted coder timeouts toward a split (coder.timeout_split_after)
    reviews_seen: int  # the PR's change requests already acted on (a requeue each)

    def __init__(
        self,
        id: str,
        title: str,
        spec: str = "",
        acceptance: str = "",
        kind: str = "feature",
        lane: str = "backlog",
        priority: int = PRIORITY_DEFAULT,
        assignee: str = "",
        branch: str = "",
        pr_url: str = "",
        blocked: Blocked | None = None,
        labels: tuple[str, ...] = (),
        deps: tuple[str, ...] = (),
        surface: tuple[str, ...] = (),
        created_at: str = "",
        updated_at: str = "",
        version: int = 0,
        seq: int = 0,
        drive: str = "",
        not_before: str = "",
        pr_state: str = "",
        pr_polled_at: str = "",
        tries: tuple[tuple[str, int], ...] = (),
        rung: str = "",
        told: str = "",
        timeouts: int = 0,
        reviews_seen: int = 0,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "id", id)
        set_(self, "title", title)
        set_(self, "spec", spec)
        set_(self, "acceptance", acceptance)
        set_(self, "kind", kind)
        set_(self, "lane", lane)
        set_(self, "priority", priority)
        set_(self, "assignee", assignee)
        set_(self, "branch", branch)
        set_(self, "pr_url", pr_url)
        set_(self, "blocked", blocked)
        set_(self, "labels", labels)
        set_(self, "deps", deps)
        set_(self, "surface", surface)
        set_(self, "created_at", created_at)
        set_(self, "updated_at", updated_at)
        set_(self, "version", version)
        set_(self, "seq", seq)
        set_(self, "drive", drive)
        set_(self, "not_before", not_before)
        set_(self, "pr_state", pr_state)
        set_(self, "pr_polled_at", pr_polled_at)
        set_(self, "tries", tries)
        set_(self, "rung", rung)
        set_(self, "told", told)
        set_(self, "timeouts", timeouts)
        set_(self, "reviews_seen", reviews_seen)

    @property
    def is_open(self) -> bool:
        return self.lane in OPEN_LANES

    def label_value(self, key: str) -> str | None:
        """The value of a `key:...` or `key=value` style label, e.g. `reviews-seen=2`."""
        for label in self.labels:
            if label.startswith(key):
                return label[len(key) :]
        return None

    def counts(self) -> str:
        """The board's own counts of the card in one line, '' when all are at rest: what
        `board card show` and the card screen print beside the labels (they were labels)."""
        parts = []
        if self.tries:
            parts.append("tries " + ", ".join(f"{cls}={n}" for cls, n in self.tries))
        if self.rung:
            parts.append(f"rung {self.rung}")
        if self.timeouts:
            parts.append(f"timeouts {self.timeouts}")
        if self.reviews_seen:
            parts.append(f"reviews seen {self.reviews_seen}")
        if self.told:
            parts.append(f"told {self.told}")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "spec": self.spec,
            "acceptance": self.acceptance,
            "kind": self.kind,
            "lane": self.lane,
            "priority": self.priority,
            "assignee": self.assignee,
            "blocked": self.blocked.to_json() if self.blocked else None,
            "labels": list(self.labels),
            "deps": list(self.deps),
            "surface": list(self.surface),
            "branch": self.branch,
            "pr_url": self.pr_url,
            "not_before": self.not_before or None,
            "pr_state": self.pr_state or None,
            "pr_polled_at": self.pr_polled_at or None,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "version": self.version,
            "tries": dict(self.tries),
            "rung": self.rung or None,
            "told": self.told or None,
            "timeouts": self.timeouts,
            "reviews_seen": self.reviews_seen,
        }


class CardDraft(Record):
    """The fields an operator gives when adding a card; the store assigns id and times."""

    __slots__ = __match_args__ = (
        "title",
        "spec",
        "acceptance",
        "kind",
        "lane",
        "priority",
        "assignee",
        "labels",
        "deps",
        "surface",
    )
    title: str
    spec: str
    acceptance: str
    kind: str
    lane: str
    priority: int
    assignee: str
    labels: list[str]
    deps: list[str]
    surface: list[str]

    def __init__(
        self,
        title: str,
        spec: str = "",
        acceptance: str = "",
        kind: str = "feature",
        lane: str = "backlog",
        priority: int = PRIORITY_DEFAULT,
        assignee: str = "",
        labels: list[str] = FACTORY,
        deps: list[str] = FACTORY,
        surface: list[str] = FACTORY,
    ) -> None:
        self.title = title
        self.spec = spec
        self.acceptance = acceptance
        self.kind = kind
        self.lane = lane
        self.priority = priority
        self.assignee = assignee
        self.labels = [] if labels is FACTORY else labels
        self.deps = [] if deps is FACTORY else deps
        self.surface = [] if surface is FACTORY else surface


class LaneMove(Frozen):
    """One lane change of a card, as the store records it beside the timeline line that says
    it (`lane A → B`), in the same transaction: the flow screen counts these, never the
    line's words, which a block reason or a note may also hold."""

    __slots__ = __match_args__ = ("seq", "card", "at", "who", "old", "new")
    seq: int
    card: str
    at: str
    who: str
    old: str  # the lane it left
    new: str  # the lane it entered

    def __init__(self, seq: int, card: str, at: str, who: str, old: str, new: str) -> None:
        set_ = object.__setattr__
        set_(self, "seq", seq)
        set_(self, "card", card)
        set_(self, "at", at)
        set_(self, "who", who)
        set_(self, "old", old)
        set_(self, "new", new)

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)


DRIVE_LIVE = "running"


class Drive(Frozen):
    """One build of one card, as the store records it; the log file holds its output."""

    __slots__ = __match_args__ = (
        "id",
        "card",
        "attempt",
        "tier",
        "status",
        "started_at",
        "ended_at",
        "pgid",
        "host",
        "owner_pid",
        "log",
        "result",
    )
    id: str  # token; the card's `drive` field holds it while the drive owns the card
    card: str
    attempt: int
    tier: str
    status: str  # running | passed | failed | timeout | blocked | stood-aside | stopped | crashed
    started_at: str
    ended_at: str
    pgid: int  # process group of the child now running (coder or gate), 0 when none
    host: str
    owner_pid: int  # pid of the `board run` process driving it
    log: str  # path relative to the repository root
    result: str  # one line: why it ended

    def __init__(
        self,
        id: str,
        card: str,
        attempt: int,
        tier: str,
        status: str,
        started_at: str,
        ended_at: str = "",
        pgid: int = 0,
        host: str = "",
        owner_pid: int = 0,
        log: str = "",
        result: str = "",
    ) -> None:
        set_ = object.__setattr__
        set_(self, "id", id)
        set_(self, "card", card)
        set_(self, "attempt", attempt)
        set_(self, "tier", tier)
        set_(self, "status", status)
        set_(self, "started_at", started_at)
        set_(self, "ended_at", ended_at)
        set_(self, "pgid", pgid)
        set_(self, "host", host)
        set_(self, "owner_pid", owner_pid)
        set_(self, "log", log)
        set_(self, "result", result)

    @property
    def live(self) -> bool:
        return self.status == DRIVE_LIVE

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)


FORGE_PAUSE = "forge"  # the pause a dead forge login puts on PR polling (`board resume forge`)
SETUP_PAUSE = "setup"  # the pause two failed setups in a row put on claims (`board resume setup`)


class Pause(Frozen):
    """A tier nobody may claim for, board-wide: its account hit a limit (until a time) or
    its login died (`until` empty: until the operator unblocks a card of it or resumes it)."""

    __slots__ = __match_args__ = ("tier", "cls", "reason", "until", "since", "card")
    tier: str
    cls: str  # rate-limit | auth
    reason: str
    until: str  # ISO UTC, or "" for "until the operator acts"
    since: str
    card: str  # the card whose failure paused it

    def __init__(
        self,
        tier: str,
        cls: str,
        reason: str,
        until: str,
        since: str,
        card: str = "",
    ) -> None:
        set_ = object.__setattr__
        set_(self, "tier", tier)
        set_(self, "cls", cls)
        set_(self, "reason", reason)
        set_(self, "until", until)
        set_(self, "since", since)
        set_(self, "card", card)

    def to_json(self) -> dict[str, Any]:
        return {
            "tier": self.tier,
            "class": self.cls,
            "reason": self.reason,
            "until": self.until or None,
            "since": self.since,
            "card": self.card,
        }


class LoopBeat(Frozen):
    """A running `board run`, as its heartbeat in the store says."""

    __slots__ = __match_args__ = ("host", "pid", "started_at", "heartbeat_at")
    host: str
    pid: int
    started_at: str
    heartbeat_at: str

    def __init__(
        self,
        host: str,
        pid: int,
        started_at: str,
        heartbeat_at: str,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "host", host)
        set_(self, "pid", pid)
        set_(self, "started_at", started_at)
        set_(self, "heartbeat_at", heartbeat_at)

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)


class BoardShape(Frozen):
    """How a board publishes, as the store records it for every host: board.toml's
    `[publish] mode`, `[board] run_branch` and `base`, and `[publish] run_on_remote`, with the
    host that recorded it (the one host a board with a local run branch runs on) and when.

    Kept in the store, not only in each clone's board.toml, so that hosts whose files say
    different things cannot each fold onto a run branch of their own (docs/lifecycle.md,
    "One board, one shape")."""

    __slots__ = __match_args__ = (
        "mode", "run_branch", "base", "run_on_remote", "host", "recorded_at",
    )  # fmt: skip
    mode: str
    run_branch: str
    base: str
    run_on_remote: bool
    host: str
    recorded_at: str

    def __init__(
        self,
        mode: str,
        run_branch: str,
        base: str,
        run_on_remote: bool,
        host: str = "",
        recorded_at: str = "",
    ) -> None:
        set_ = object.__setattr__
        set_(self, "mode", mode)
        set_(self, "run_branch", run_branch)
        set_(self, "base", base)
        set_(self, "run_on_remote", run_on_remote)
        set_(self, "host", host)
        set_(self, "recorded_at", recorded_at)

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)

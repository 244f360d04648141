"""The card model: lanes, the blocked flag, events. Plain data, no I/O."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
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
    }
)
BLOCK_CLASSES: frozenset[str] = SELF_HEALING | HUMAN_CLASSES

PRIORITY_MIN = 0  # most urgent
PRIORITY_MAX = 4
PRIORITY_DEFAULT = 2


@dataclass(frozen=True)
class Blocked:
    """Why a card may not be claimed: a class the loop understands and a reason a human reads."""

    cls: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"class": self.cls, "reason": self.reason}


# timeline event kinds beyond "event" and "comment", which the drive reads back
REQUEUE_EVENT = "requeue"  # the operator's requeue; its text is the reason for the brief
REQUEUED = "requeued"  # a requeue event's text when the operator gave no reason
FOLD_CONFLICT_EVENT = "fold-conflict"  # what a fold conflicted on, quoted in the next brief
RESUME_EVENT = "resume-from"  # the branch an interrupted build's work was saved to


@dataclass(frozen=True)
class Event:
    """One line of a card's timeline: who changed what, when; comments are events too."""

    seq: int
    card: str
    at: str
    who: str
    kind: str  # "event" | "comment"
    text: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Card:
    """A unit of work. `version` increments on every write and is what compare-and-set checks."""

    id: str
    title: str
    spec: str = ""
    acceptance: str = ""
    kind: str = "feature"
    lane: str = "backlog"
    priority: int = PRIORITY_DEFAULT
    assignee: str = ""
    branch: str = ""
    pr_url: str = ""
    blocked: Blocked | None = None
    labels: tuple[str, ...] = ()
    deps: tuple[str, ...] = ()
    surface: tuple[str, ...] = ()
    created_at: str = ""
    updated_at: str = ""
    version: int = 0
    seq: int = 0
    drive: str = ""  # token of the drive that owns the card while it is working
    not_before: str = ""  # ISO UTC: no claim before then (a back-off); "" when none
    pr_state: str = ""  # the PR's state when last polled (OPEN, MERGED, CLOSED, ...)
    pr_polled_at: str = ""  # when it was polled

    @property
    def is_open(self) -> bool:
        return self.lane in OPEN_LANES

    def label_value(self, key: str) -> str | None:
        """The value of a `key:...` or `key=value` style label, e.g. `budget:timeout=2`."""
        for label in self.labels:
            if label.startswith(key):
                return label[len(key) :]
        return None

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
        }


@dataclass
class CardDraft:
    """The fields an operator gives when adding a card; the store assigns id and times."""

    title: str
    spec: str = ""
    acceptance: str = ""
    kind: str = "feature"
    lane: str = "backlog"
    priority: int = PRIORITY_DEFAULT
    assignee: str = ""
    labels: list[str] = field(default_factory=list)
    deps: list[str] = field(default_factory=list)
    surface: list[str] = field(default_factory=list)


DRIVE_LIVE = "running"


@dataclass(frozen=True)
class Drive:
    """One build of one card, as the store records it; the log file holds its output."""

    id: str  # token; the card's `drive` field holds it while the drive owns the card
    card: str
    attempt: int
    tier: str
    status: str  # running | passed | failed | timeout | blocked | stood-aside | stopped | crashed
    started_at: str
    ended_at: str = ""
    pgid: int = 0  # process group of the child now running (coder or gate), 0 when none
    host: str = ""
    owner_pid: int = 0  # pid of the `board run` process driving it
    log: str = ""  # path relative to the repository root
    result: str = ""  # one line: why it ended

    @property
    def live(self) -> bool:
        return self.status == DRIVE_LIVE

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


FORGE_PAUSE = "forge"  # the pause a dead forge login puts on PR polling (`board resume forge`)


@dataclass(frozen=True)
class Pause:
    """A tier nobody may claim for, board-wide: its account hit a limit (until a time) or
    its login died (`until` empty: until the operator unblocks a card of it or resumes it)."""

    tier: str
    cls: str  # rate-limit | auth
    reason: str
    until: str  # ISO UTC, or "" for "until the operator acts"
    since: str
    card: str = ""  # the card whose failure paused it

    def to_json(self) -> dict[str, Any]:
        return {
            "tier": self.tier,
            "class": self.cls,
            "reason": self.reason,
            "until": self.until or None,
            "since": self.since,
            "card": self.card,
        }


@dataclass(frozen=True)
class LoopBeat:
    """A running `board run`, as its heartbeat in the store says."""

    host: str
    pid: int
    started_at: str
    heartbeat_at: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

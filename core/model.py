"""The card model: lanes, the blocked flag, events. Plain data, no I/O."""

from __future__ import annotations

from board.core.records import Frozen, Record, as_dict, field

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
        "over-budget",  # its attempts together spent its `[budget] card_usd`: a human decides
    }
)
BLOCK_CLASSES: frozenset[str] = SELF_HEALING | HUMAN_CLASSES

PRIORITY_MIN = 0  # most urgent
PRIORITY_MAX = 4
PRIORITY_DEFAULT = 2
# a card's own best of N (`card add|edit --best-of N`, issue 42), as `[coder] best_of` is
# bounded: 0 would build nothing, past 16 is a typo that starts a crowd of coders on one card
BEST_OF_MIN = 1
BEST_OF_MAX = 16
GH_SOURCE = "gh#"  # a card's source when a GitHub issue made it: gh#<number>


class Blocked(Frozen, slots=True):
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
# an imported card's issue closed upstream while its work goes on: said once, not each import
SOURCE_CLOSED_EVENT = "source-closed"
# `[import] on_done_argv` taken for this card (written before it runs): it runs once, ever
SOURCE_DONE_EVENT = "source-done"


class Event(Frozen, slots=True):
    """One line of a card's timeline: who changed what, when; comments are events too."""

    seq: int
    card: str
    at: str
    who: str
    kind: str  # "event" | "comment"
    text: str

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)


# the fields of a card the board keeps for itself (its counts), in the card_state table
STATE_FIELDS: tuple[str, ...] = ("tries", "rung", "told", "timeouts", "reviews_seen")


class Card(Frozen):
    """A unit of work. `version` increments on every write and is what compare-and-set checks.

    No __slots__: a listing fills a card's instance dict in one call (store/cardrow.py)."""

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
    # the board's own counts of the card (docs/lifecycle.md, "Failures that are not the
    # card's fault"), kept in the store's card_state table, never among the labels:
    tries: tuple[tuple[str, int], ...] = ()  # (class, failures or heals of it), in the order set
    rung: str = ""  # the tier a back-off left the card on; "" for the ladder's first
    told: str = ""  # "<class>:<hash>" of the block the operator was told about; "" when none
    timeouts: int = 0  # counted coder timeouts toward a split (coder.timeout_split_after)
    reviews_seen: int = 0  # the PR's change requests already acted on (a requeue each)
    # candidates of its rung built at once (`--best-of N`, 1 to 16); 0: the board's
    # `[coder] best_of` (core/cards/candidates.py `candidates_for`)
    best_of: int = 0
    # one candidate per tier named, in order (`--race TIER,TIER,…`, 1 to 16 names, a tier
    # may repeat), instead of N of its rung; () when none. A card has a race or a best_of,
    # never both (core/cards/actions.py)
    race: tuple[str, ...] = ()
    # where it came from (`board card import`, issue 44): `gh#123` for a GitHub issue,
    # `file:<scope>#<key>` for a JSON Lines record; "" for a card typed in. One card per
    # source (the store's unique index), so importing again finds it, never adds it twice
    source: str = ""
    source_url: str = ""  # the issue's address, "" when none

    @property
    def issue_number(self) -> int | None:
        """The GitHub issue this card came from (`gh#123` → 123), None for any other card:
        what a PR body closes and `[import] on_done_argv`'s `{number}`."""
        if not self.source.startswith(GH_SOURCE):
            return None
        number = self.source[len(GH_SOURCE) :]
        return int(number) if number.isdigit() else None

    @property
    def is_open(self) -> bool:
        return self.lane in OPEN_LANES

    def label_value(self, key: str) -> str | None:
        """The value of a `key:...` or `key=value` style label, e.g. `split-of=c-4`."""
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
            "best_of": self.best_of or None,
            "race": list(self.race),
            "source": self.source or None,
            "source_url": self.source_url or None,
        }


class CardDraft(Record, slots=True):
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
    best_of: int | None = None  # its own best of N (1 to 16); None: the board's `[coder] best_of`
    race: list[str] = field(default_factory=list)  # a tier per candidate; []: no race
    source: str = ""  # where it came from (`board card import`); "" when typed in
    source_url: str = ""


class LaneMove(Frozen, slots=True):
    """One lane change of a card, as the store records it beside the timeline line that says
    it (`lane A → B`), in the same transaction: the flow screen counts these, never the
    line's words, which a block reason or a note may also hold."""

    seq: int
    card: str
    at: str
    who: str
    old: str  # the lane it left
    new: str  # the lane it entered

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)


DRIVE_LIVE = "running"


class Drive(Frozen, slots=True):
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
    # what its coder spent, as the agent reported it (`Usage`); None: not said, or not yet
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    model: str = ""
    turns: int | None = None
    # a candidate of a race (best of N, issue 42): its k (from 1), its gate's word (green,
    # red; '' when no gate ran) and its changed lines; None and '' on every other drive
    candidate: int | None = None
    gate: str = ""
    lines_changed: int | None = None

    @property
    def live(self) -> bool:
        return self.status == DRIVE_LIVE

    @property
    def usage(self) -> Usage | None:
        """What this drive's coder spent, None when nothing of it is known (an older
        board's drive, an agent that says nothing, a drive still running)."""
        usage = Usage(
            self.input_tokens,
            self.output_tokens,
            self.cached_tokens,
            self.cost_usd,
            self.model,
            self.turns,
        )
        return None if usage == NO_USAGE else usage

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)


# the readers of what a tier's agent spent (core/usage.py), named by its `usage` key
READERS: tuple[str, ...] = ("none", "claude", "codex", "gemini", "aider")
JSON_READERS: frozenset[str] = frozenset({"claude", "codex", "gemini"})


class Price(Frozen, slots=True):
    """What one model costs, in US dollars per million tokens, as the operator set it in
    `[usage.prices."<model>"]`: the only source of a cost the agent did not report."""

    input: float
    output: float
    cached_input: float


class Usage(Frozen, slots=True):
    """What one drive's coder spent, as the agent itself reported it (core/usage.py reads
    it from the coder's output): None where the agent did not say, so an unknown is never
    shown or summed as a zero. Cost comes from the agent, or from tokens and the operator's
    `[usage.prices]`; never from a guess."""

    input_tokens: int | None = None  # tokens sent, cached ones excluded
    output_tokens: int | None = None
    cached_tokens: int | None = None  # input tokens read from the provider's cache
    cost_usd: float | None = None
    model: str = ""
    turns: int | None = None

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)


NO_USAGE = Usage()  # a drive of which nothing is known
# the most one drive can have spent, past which a figure is no count or cost but garbage (a
# hostile or broken agent's): the readers take it as unknown and the store refuses it, so
# that a drive row fits its BIGINT columns and no sum of them overflows (SQLite's integer
# SUM fails past 2**63, PostgreSQL's float SUM past 1.8e308, SQLite's gives inf)
MOST_TOKENS = 10**12
MOST_USD = 1_000_000.0


class UsageSum(Frozen, slots=True):
    """What a group of drives spent together (one card's attempts, a tier's, a day's), as
    the store sums its drive rows. A sum is None when no drive of the group said it; a
    drive that said tokens but no cost is counted in `unpriced`, so its spend is shown as
    unknown or partial, never as a zero."""

    key: str  # the card id, the tier or the UTC day (YYYY-MM-DD); "" for a card's total
    drives: int = 0  # every drive of the group, failed ones and those that said nothing too
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None  # the known costs summed; None when none is known
    unpriced: int = 0  # drives with tokens but no cost (no price for their model)

    @property
    def spent(self) -> float:
        """The known spend, 0.0 when none is known: what a budget compares (an unpriced
        drive adds nothing it could be sure of)."""
        return self.cost_usd or 0.0

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)


FORGE_PAUSE = "forge"  # the pause a dead forge login puts on PR polling (`board resume forge`)
SETUP_PAUSE = "setup"  # the pause two failed setups in a row put on claims (`board resume setup`)
# the pause the day's spend reaching `[budget] day_usd` puts on claims, until the next UTC
# midnight or `board resume budget` (core/cards/budget.py); its class is OVER_BUDGET, the
# class a card past `[budget] card_usd` is blocked with. The operator's resume leaves the
# row in place with the class BUDGET_RESUMED until that midnight, so that no loop pauses the
# same day's claims again (it lapses, and is lifted, as any timed pause)
BUDGET_PAUSE = "budget"
OVER_BUDGET = "over-budget"
BUDGET_RESUMED = "resumed"


class Pause(Frozen, slots=True):
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


# what a notice tells (core/cards/notices.py): a card newly needs the operator, the run went
# idle, a tier paused or resumed, a host was lost, the day's money budget or a broken
# [tree] setup stopped the claims
NOTICE_KINDS = ("needs", "idle", "paused", "resumed", "host-lost", "budget", "setup")


class Notice(Frozen, slots=True):
    """One thing the operator is told, recorded once in the store by whichever loop saw it
    first (`key` is unique), then sent (`[notify]`) and shown by every TUI. `text` is plain:
    the card's id, a class and a fixed phrase, never a card's title, spec or a log line."""

    id: int
    kind: str
    card: str
    cls: str
    text: str
    at: str
    key: str = ""
    sent_at: str = ""  # '' until every channel of `[notify]` took it
    tries: int = 0  # sends begun
    error: str = ""  # the last send's failure, in one line
    seen: bool = False  # the operator opened the notices screen since
    sent_to: str = ""  # the channels that took it ("argv", "urls"), comma-separated

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)


class LoopBeat(Frozen, slots=True):
    """A running `board run`, as its heartbeat in the store says."""

    host: str
    pid: int
    started_at: str
    heartbeat_at: str

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)


class BoardShape(Frozen, slots=True):
    """How a board publishes, as the store records it for every host: board.toml's
    `[publish] mode`, `[board] run_branch` and `base`, and `[publish] run_on_remote`, with the
    host that recorded it (the one host a board with a local run branch runs on) and when.

    Kept in the store, not only in each clone's board.toml, so that hosts whose files say
    different things cannot each fold onto a run branch of their own (docs/lifecycle.md,
    "One board, one shape")."""

    mode: str
    run_branch: str
    base: str
    run_on_remote: bool
    host: str = ""
    recorded_at: str = ""

    def to_json(self) -> dict[str, Any]:
        return as_dict(self)

"""Why a ready card is not claimed yet: its own back-off, its tier's pause, its retry count.

A failure that is not the card's fault (docs/lifecycle.md, "Failures that are not the
card's fault") sends the card back to `ready` with a not-before time, and a rate limit or
a dead login pauses its tier board-wide: drives share one account, so the next card of
that tier would only hit the same wall. The claim, `board status` and the card screen all
ask here, so they say the same thing.

The count of tries is one per card and class (`Card.tries`, kept in the store, so a
restart does not refund it), shared by the drive's back-offs and the sweep's self-healing;
the rung a back-off left the card on is kept there too (`Card.rung`), so the retry is the
same rung and not a climb. The operator's unblock or requeue clears both. Neither is a
label: the labels are the operator's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from typing import Any

from board.core import hosts
from board.core.cards import budget
from board.core.config import CoderSection, Config, PlannerSection, PublishSection
from board.core.failures import OPERATOR_CLASSES, parse_stamp
from board.core.model import SELF_HEALING, SETUP_PAUSE, TERMINAL, Card, LoopBeat, Pause
from board.core.proc import pid_alive
from board.core.records import Record, field
from board.core.store import Store

_MAGIC = "*?["


def now() -> datetime:
    return datetime.now(UTC)


def tries(card: Card, cls: str) -> int:
    """How often this card has already failed (or been healed) with class `cls`."""
    return dict(card.tries).get(cls, 0)


def with_tries(card: Card, cls: str, n: int) -> tuple[tuple[str, int], ...]:
    """The card's tries with `cls` at `n` (set last, as the latest)."""
    return (*((c, k) for c, k in card.tries if c != cls), (cls, n))


def wait_class(card: Card) -> str:
    """The class a waiting card backed off for: the one it has tries of (a rate limit
    first, since it is the one that pauses a tier); '' when it has none."""
    have = [cls for cls, _n in card.tries]
    for cls in ("rate-limit", "transient", *have):
        if cls in have:
            return cls
    return ""


def rung(coder: CoderSection, card: Card) -> str:
    """The tier the card's next build starts on: the rung a back-off left it on, else the
    ladder's first (a rung no longer in the ladder counts as the first)."""
    return card.rung if card.rung in coder.ladder else coder.ladder[0]


def rung_field(coder: CoderSection, tier: str) -> str:
    """`Card.rung` for a card left on `tier`: '' for the ladder's first."""
    return "" if tier == coder.ladder[0] else tier


def cleared(card: Card) -> dict[str, Any]:
    """The changes that drop the card's tries and rung (none if it has neither): what the
    operator's unblock, requeue or a published build does."""
    changes: dict[str, Any] = {}
    if card.tries:
        changes["tries"] = ()
    if card.rung:
        changes["rung"] = ""
    return changes


def active_pause(pauses: Sequence[Pause], tier: str, at: datetime | None = None) -> Pause | None:
    """The tier's pause if it still holds at `at` (no `until`: until the operator acts)."""
    at = at or now()
    for pause in pauses:
        if pause.tier != tier:
            continue
        until = parse_stamp(pause.until)
        if not pause.until or (until is not None and until > at):
            return pause
    return None


def not_before(card: Card, at: datetime | None = None) -> datetime | None:
    """The card's own not-before time if it is still in the future."""
    when = parse_stamp(card.not_before)
    if when is None or when <= (at or now()):
        return None
    return when


def resume_tiers_of(store: Store, card: Card) -> list[str]:
    """The operator unblocked an `auth` (or `dispatch-infra`) card: the login (or the
    tier's argv) is taken to be fixed, so that pause of its tier (the tier of its last
    drive, or the pause it caused) lifts. Returns the tiers resumed."""
    drives = store.list_drives(card.id, limit=1)
    last = drives[0].tier if drives else ""
    held = [p for p in store.pauses() if p.cls in OPERATOR_CLASSES]
    found = {(p.tier, p.cls) for p in held if p.card == card.id or p.tier == last}
    return sorted({tier for tier, cls in sorted(found) if store.resume_tier(tier, cls)})


# ---------------------------------------------------------------------------------------------
# surfaces: a conservative overlap test


def _norm(glob: str) -> list[str]:
    g = glob.strip()
    while g.startswith("./"):
        g = g[2:]
    if g.endswith("/"):
        g = g.rstrip("/") + "/*"
    forms = [g]
    if not any(c in g for c in _MAGIC) and "." not in g.rsplit("/", 1)[-1]:
        forms.append(g + "/*")  # a plain name without a suffix may be a directory
    return forms


def _prefix(glob: str) -> str:
    cut = min((glob.index(c) for c in _MAGIC if c in glob), default=len(glob))
    return glob[:cut]


def _suffix(glob: str) -> str:
    cut = max(glob.rfind("*"), glob.rfind("?"), glob.rfind("]"))
    return glob[cut + 1 :]


def _pair(a: str, b: str) -> bool:
    a_magic = any(c in a for c in _MAGIC)
    b_magic = any(c in b for c in _MAGIC)
    if not a_magic and not b_magic:
        return a == b
    if not a_magic:
        return fnmatchcase(a, b)
    if not b_magic:
        return fnmatchcase(b, a)
    pa, pb = _prefix(a), _prefix(b)
    if not (pa.startswith(pb) or pb.startswith(pa)):
        return False
    sa, sb = _suffix(a), _suffix(b)
    return sa.endswith(sb) or sb.endswith(sa)


def globs_overlap(a: str, b: str) -> bool:
    """Whether some path could match both globs. Errs towards True: a false 'disjoint'
    would let two drives edit one file, a false 'overlap' only delays a card."""
    return any(_pair(x, y) for x in _norm(a) for y in _norm(b))


def surfaces_overlap(a: Iterable[str], b: Iterable[str]) -> tuple[str, str] | None:
    """The first overlapping pair of globs, or None; an empty surface overlaps everything."""
    a, b = list(a), list(b)
    if not a or not b:
        return ("(no surface)" if not a else a[0], "(no surface)" if not b else b[0])
    for x in a:
        for y in b:
            if globs_overlap(x, y):
                return (x, y)
    return None


# ---------------------------------------------------------------------------------------------
# why a ready card is not claimed: one answer for the claim, the TUI and `board status`


def for_planner(planner: PlannerSection, card: Card) -> bool:
    """A task assigned to the planner: never given to a coder; dispatched to `planner.argv`."""
    return card.kind == "task" and card.assignee == planner.name


class ClaimView(Record):
    """What a claim decides from, read once: each card's lane, the working cards' surfaces,
    the tier pauses, whether a loop is running at all ('' when one is), and how many drives
    run of how many the loops allow."""

    lanes: dict[str, str]
    working: list[tuple[str, tuple[str, ...]]]
    pauses: list[Pause]
    no_loop: str = ""
    at: datetime = field(default_factory=now)
    in_use: int = 0  # drives running now
    limit: int = 0  # drives the running loops may run at once (0: not judged)


def claim_view(
    store: Store | None,
    cards: Sequence[Card] | None = None,
    pauses: Sequence[Pause] | None = None,
    no_loop: str = "",
    at: datetime | None = None,
    in_use: int = 0,
    limit: int = 0,
) -> ClaimView:
    """The view a claim decides from. `store` is read for what is not given (None: both
    `cards` and `pauses` are given, as the TUI does from what it already read); `at` is
    the moment judged (a clock injected for tests), now by default."""
    if cards is None or pauses is None:
        assert store is not None, "claim_view needs the store for what it is not given"
        cards = store.list_cards() if cards is None else cards
        pauses = store.pauses() if pauses is None else pauses
    return ClaimView(
        lanes={c.id: c.lane for c in cards},
        working=[(c.id, c.surface) for c in cards if c.lane == "working"],
        pauses=list(pauses),
        no_loop=no_loop,
        at=at or now(),
        in_use=in_use,
        limit=limit,
    )


# The line a drive writes in its log once its work is committed and it gives back its slot
# of max_concurrent to wait its turn at the publish (core/drive/drive.py); the TUI tells such
# a drive from one that builds by it, the very line its row shows.
PUBLISH_WAIT = "built: waits its turn to publish; its drive is free for the next card"


def publishing(last_line: str) -> bool:
    """Whether a live drive whose log's last line (its stamp cut off) is this one waits to
    publish, holding no slot: the drive's own words, "board: " and PUBLISH_WAIT."""
    return last_line.startswith("board: " + PUBLISH_WAIT)


def slots_taken(building: int, publishing: int, limit: int) -> int:
    """The slots of `limit` (max_concurrent) taken: each drive that builds, and a drive
    that waits to publish only past `limit` of them, so a slow publish (a fold queue, a
    slow forge) never lets more than twice `limit` trees stand at once."""
    return building + max(0, publishing - limit)


def all_busy(in_use: int, limit: int) -> str:
    """Why nothing more is claimed while every drive runs ('' while one is free): the words
    of the loop's log and of every ready card the TUI shows waiting for a free drive."""
    if limit <= 0 or in_use < limit:
        return ""
    return f"every drive is busy ({in_use} of {limit}, board.max_concurrent)"


HEARTBEAT_S = 2.0  # how often a running loop writes its heartbeat (core/loop.py)
STALE_AFTER_S = 3 * HEARTBEAT_S  # another host's loop with no beat for this long is gone


def heartbeat_age(beat: LoopBeat, at: datetime) -> float | None:
    """Seconds since the loop's last heartbeat (None: its stamp cannot be read)."""
    heard = parse_stamp(beat.heartbeat_at)
    return (at - heard).total_seconds() if heard is not None else None


def loop_running(beat: LoopBeat, at: datetime | None = None, here: str | None = None) -> bool:
    """Whether the loop behind a heartbeat row still runs: the one answer `board status`,
    the TUI's header and the why-it-waits words give. A loop that stops cleanly takes its
    row with it, but one that is killed (SIGKILL, a crash, a power cut) leaves it behind:

    - on this host (`here`, default the name the board gives this machine: `board run
      --host`, else the hostname, `hosts.this_host`) the row's pid decides at once: a
      dead pid is a dead loop, whatever the heartbeat's age. The TUI reads twice a second,
      so it says "loop not running" well within 2 s of the death; no age limit could,
      since the loop beats every 2 s and a limit under that would call a live loop dead
      between two beats;
    - on another host (a shared store) no pid can be asked, so the heartbeat's age
      decides: gone after STALE_AFTER_S, three beats. Not two: a beat is a store write,
      and one that waited a second or two on another writer's lock would flicker a live
      loop dead. A pid reused by another process on this host is caught by the same limit.
    """
    age = heartbeat_age(beat, at or now())
    if age is None or age > STALE_AFTER_S:
        return False
    if beat.host == (hosts.this_host() if here is None else here):
        return pid_alive(beat.pid)
    return True


NO_LOOP = "no loop is running (board run)"  # what a card waits for when nothing else holds it


def needs_operator(publish: PublishSection, card: Card) -> bool:
    """Whether the card waits for a human and nothing else will move it: blocked with a
    class the sweep does not heal (a hold, a red gate, a dead login…), or built and
    waiting in review for `board approve` (`publish.review = "operator"`)."""
    if card.lane in TERMINAL:
        return False
    if card.blocked is not None:
        return card.blocked.cls not in SELF_HEALING
    return card.lane == "review" and publish.review == "operator"


def why_waits(cfg: Config, card: Card, view: ClaimView) -> str:
    """Why this card is not claimed now, in the words the operator reads ('' when the next
    claim takes it). The loop skips a card for exactly this reason, and the TUI shows it on
    the card's row and screen: one function, so they never disagree."""
    if card.lane != "ready" or card.blocked is not None:
        return ""
    for dep in card.deps:
        lane = view.lanes.get(dep)
        if lane is not None and lane not in TERMINAL:
            return f"waits on {dep} ({lane})"
    held = budget.held_pause(view.pauses, view.at)
    if held is not None:  # a planner spends too: nothing is claimed
        return f"claims are paused (board resume budget): {held.reason}"
    if for_planner(cfg.planner, card):
        if not cfg.planner.argv:
            return "a planner task, and no planner command is configured ([planner] argv)"
    else:
        when = not_before(card, view.at)
        if when is not None:
            return f"a retry, not before {card.not_before}"
        held = active_pause(view.pauses, SETUP_PAUSE, view.at)
        if held is not None:
            return f"claims are paused (board resume setup): {held.reason}"
        tier = rung(cfg.coder, card)
        pause = active_pause(view.pauses, tier, view.at)
        if pause is not None:
            until = f"until {pause.until}" if pause.until else "until the operator acts"
            return f"tier {tier} is paused ({pause.cls}) {until}: {pause.reason}"
        for other, surface in view.working:
            if other == card.id:
                continue
            if not card.surface:
                return f"it has no surface, so it runs alone: {other} is working"
            if not surface:
                return f"{other} is working and has no surface, so it runs alone"
            pair = surfaces_overlap(card.surface, surface)
            if pair is not None:
                return f"surface overlaps working {other}'s ({pair[0]} ~ {pair[1]})"
    return view.no_loop or all_busy(view.in_use, view.limit)

"""What the board's header and its working rows show, read off the UI thread; no Textual.

After `board run` was stopped the board looked exactly as before, and a ready card sat
there with nothing saying nobody would run it. So the board answers "is it running, what
is each card doing, why is that one waiting" without opening anything, as lazygit and k9s
put state in a header:

- the loop's health, from its heartbeat row (`waits.loop_running`: a dead pid on this
  host at once, a stale beat anywhere), the drives in use of `max_concurrent`, the paused
  tiers with a countdown, and how many cards need the operator;
- each working card's tier, attempt, elapsed time and its drive's last log line;
- what the agents spent today (UTC) and whether the day's money budget paused the claims
  (`budget paused until 00:00 UTC`), read with the board's rows, not twice a second.

The store and the logs are read in a worker (`read_health`), twice a second: none of this
is a store write, so the store watch alone would never see a loop die. The clock is
injected, so tests and snapshots show fixed times.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from board.core.cards import waits
from board.core.config import BoardSection, Config
from board.core.failures import parse_stamp
from board.core.model import (
    BUDGET_PAUSE,
    BUDGET_RESUMED,
    OVER_BUDGET,
    Card,
    Drive,
    LoopBeat,
    Pause,
    UsageSum,
)
from board.core.records import Frozen, field, replace
from board.core.store import Store
from rich.cells import cell_len, set_cell_size

from .painttext import one_line
from .times import drive_elapsed, format_elapsed
from .usagetext import known, money, sum_cost

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


class LiveDrive(Frozen, slots=True):
    """A working card's drive as its row shows it: `default #2 · 3m04s · running tests`."""

    card: str
    tier: str
    attempt: int
    elapsed: str
    last: str  # the log's last line, without its stamp, sanitized to one line

    def text(self) -> str:
        head = f"{one_line(self.tier)} #{self.attempt} · {self.elapsed}"
        return f"{head} · {self.last}" if self.last else head


class Health(Frozen, slots=True):
    """The loop, the drives and the pauses at one moment (`at`, from the injected clock)."""

    at: datetime
    max_concurrent: int
    loops: tuple[LoopBeat, ...] = ()  # the loops that run, newest beat first
    last_beat: LoopBeat | None = None  # the newest row, running or not ("last heard")
    drives: dict[str, LiveDrive] = field(default_factory=dict)  # card -> its live drive
    pauses: tuple[Pause, ...] = ()  # every pause recorded (the claim judges their time)
    silent: tuple[LoopBeat, ...] = ()  # other hosts' loops that stopped beating, newest first
    host_lease_s: float = 60.0  # a silent host past this has lost its lease (board.host_lease_s)
    store_down: str = ""  # why the store could not be read just now ('' when it could)

    @property
    def loop_up(self) -> bool:
        return bool(self.loops)

    @property
    def no_loop(self) -> str:
        """What a ready card waits for when nothing else holds it ('' while a loop runs)."""
        return "" if self.loop_up else waits.NO_LOOP

    @property
    def capacity(self) -> int:
        """The drives the running loops may run at once: max_concurrent on each host."""
        return self.max_concurrent * max(1, len(self.loops))

    @property
    def publishing(self) -> int:
        """The live drives whose work is committed and waits its turn to publish: their rows
        say so, and they hold no slot (waits.slots_taken)."""
        return sum(waits.publishing(d.last) for d in self.drives.values())

    @property
    def in_use(self) -> int:
        """The slots of `capacity` the live drives take, as the loop counts them."""
        return drives_in_use(list(self.drives.values()), self.capacity)

    def active_pauses(self) -> list[Pause]:
        """The pauses that hold now; the operator's resume of the day budget is none."""
        return [
            p
            for p in self.pauses
            if waits.active_pause([p], p.tier, self.at) is not None and p.cls != BUDGET_RESUMED
        ]

    def budget_pause(self) -> Pause | None:
        """The day budget's pause on the claims while it holds: the `budget` row of class
        `over-budget` (the same row with the operator's resume on it is no pause)."""
        for pause in self.active_pauses():
            if pause.tier == BUDGET_PAUSE and pause.cls == OVER_BUDGET:
                return pause
        return None

    def view(self, cards: waits.ClaimView | Sequence[Card]) -> waits.ClaimView:
        """The claim's view at this moment, what `why_waits` decides from: of these cards,
        or of a view already made of them (its lanes and working surfaces, kept across
        readings so a tick does not walk 10,000 cards again)."""
        view = cards if isinstance(cards, waits.ClaimView) else waits.claim_view(None, cards, [])
        return replace(
            view,
            pauses=list(self.pauses),
            no_loop=self.no_loop,
            at=self.at,
            in_use=self.in_use,
            limit=self.capacity,
        )


def store_down(last: Health | None, board: BoardSection, why: str, at: datetime) -> Health:
    """The reading when the store's server could not be reached: the last reading as it
    was (what the board shows is what was last read), saying so. The next reading that
    gets through replaces it, so the header follows the server back by itself."""
    if last is None:
        return Health(at, board.max_concurrent, host_lease_s=board.host_lease_s, store_down=why)
    return replace(last, at=at, store_down=why)


def read_health(cfg: Config, store: Store, clock: Clock = utc_now) -> Health:
    """Read the loops, the live drives (and their logs' last lines) and the pauses."""
    at = clock()
    beats = store.loops()
    running = tuple(b for b in beats if waits.loop_running(b, at))
    up = {b.host for b in running}
    silent: dict[str, LoopBeat] = {}
    for beat in beats:  # newest first: a host's newest row speaks for it
        if beat.host not in up:
            silent.setdefault(beat.host, beat)
    drives: dict[str, LiveDrive] = {}
    for drive in sorted(store.live_drives(), key=lambda d: d.started_at):
        drives[drive.card] = live_drive(cfg, drive, at)
    return Health(
        at=at,
        max_concurrent=cfg.board.max_concurrent,
        loops=running,
        last_beat=beats[0] if beats else None,
        drives=drives,
        pauses=tuple(store.pauses()),
        silent=tuple(silent.values()),
        host_lease_s=cfg.board.host_lease_s,
    )


def drives_in_use(lives: Sequence[LiveDrive], capacity: int) -> int:
    """The slots of `capacity` these live drives take, as the loop counts them: a drive whose
    row says it waits to publish takes none until more than `capacity` wait so."""
    publishing = sum(waits.publishing(d.last) for d in lives)
    return waits.slots_taken(len(lives) - publishing, publishing, capacity)


def live_drive(cfg: Config, drive: Drive, at: datetime) -> LiveDrive:
    # the log readers are loaded with the first live drive, not at start: a board with no
    # drive running paints its header without them
    from board.core.logs import last_line, split_stamp

    from .logs.drivelist import drive_path

    _, body = split_stamp(last_line(drive_path(cfg, drive)))
    elapsed = drive_elapsed(drive, at)
    return LiveDrive(drive.card, drive.tier, drive.attempt, elapsed, one_line(body.strip()))


def row_detail(
    cfg: Config, card: Card, health: Health | None, view: waits.ClaimView | None
) -> tuple[str, str]:
    """What a card's row says after its title, and its kind ("live", "wait", "detail"):

    - working: its drive's tier, attempt, elapsed time and last log line;
    - blocked: the block's reason (the class is the row's badge);
    - ready: why the claim skips it, from `waits.why_waits`, the very function the loop's
      claim skips it by (one function, so the board never says other words than the loop);
    - review: the PR's state, or that it waits for the operator's approve.
    """
    if card.lane == "working":
        live = health.drives.get(card.id) if health is not None else None
        return (live.text(), "live") if live is not None else ("", "")
    if card.blocked is not None:
        return one_line(card.blocked.reason), "detail"
    if card.lane == "ready":
        why = waits.why_waits(cfg, card, view) if view is not None else ""
        return (one_line(why), "wait") if why else ("", "")
    if card.lane == "review":
        if card.pr_state:
            return f"PR {one_line(card.pr_state)}", "detail"
        if cfg.publish.review == "operator":
            return "waits for your approve (a)", "wait"
    return "", ""


# -- the header's words ---------------------------------------------------------------------

Part = tuple[str, str]  # (text, kind): kind is "down", "up", "warn" or "" (plain)


def _ago(stamp: str, at: datetime) -> str:
    when = parse_stamp(stamp)
    return format_elapsed((at - when).total_seconds()) if when is not None else "?"


def _since(stamp: str, at: datetime) -> str:
    """`09:14Z`, or with the date when it was not today (UTC), as the store writes times."""
    when = parse_stamp(stamp)
    if when is None:
        return "?"
    when = when.astimezone(UTC)
    day = "" if when.date() == at.astimezone(UTC).date() else when.strftime("%Y-%m-%d ")
    return day + when.strftime("%H:%MZ")


def _loop_parts(health: Health, level: int) -> list[Part]:
    """The loop's words, from the fullest (level 0) to the shortest (level 2)."""
    at = health.at
    if not health.loop_up:
        beat = health.last_beat
        text = "▲ loop not running"
        if level == 0:
            if beat is not None:
                host = one_line(beat.host)
                text += f" (pid {beat.pid} on {host}, last beat {_ago(beat.heartbeat_at, at)} ago)"
            else:
                text += ": start it with board run"
        elif level == 1 and beat is None:
            text += " (board run)"
        return [(text, "down")]
    loops = health.loops
    if len(loops) > 1:
        hosts = ", ".join(f"{one_line(b.host)} pid {b.pid}" for b in loops)
        text = f"● {len(loops)} loops running" + (f" on {hosts}" if level == 0 else "")
        return [(text, "up")]
    beat = loops[0]
    host = one_line(beat.host)
    if level == 0:
        since, up = _since(beat.started_at, at), _ago(beat.started_at, at)
        text = f"● loop running on {host}, pid {beat.pid}, since {since} ({up})"
    elif level == 1:
        text = f"● loop running on {host}, pid {beat.pid}"
    else:
        text = "● loop running"
    return [(text, "up")]


def _silent_parts(health: Health, level: int) -> list[Part]:
    """Another host that stopped beating while a loop runs here or elsewhere: its drives
    go back to ready once its lease is lost, and its trees wait on it until it boots again,
    so the operator hears of it (with no loop at all, the loop's words already say so)."""
    if not health.loop_up or not health.silent:
        return []
    if level == 2:
        return [
            (f"▲ {len(health.silent)} host{'s' if len(health.silent) > 1 else ''} lost", "warn")
        ]
    parts: list[Part] = []
    for beat in health.silent:
        host = one_line(beat.host)
        age = waits.heartbeat_age(beat, health.at)
        lost = age is None or age > health.host_lease_s
        text = f"▲ {host} lost its lease" if lost else f"▲ {host} silent"
        if level == 0:
            text += f" (last beat {_ago(beat.heartbeat_at, health.at)} ago)"
        parts.append((text, "warn"))
    return parts


def _pause_parts(health: Health, level: int) -> list[Part]:
    parts: list[Part] = []
    for pause in health.active_pauses():
        if pause.tier == BUDGET_PAUSE:  # money: `_spend_parts` says it
            continue
        until = parse_stamp(pause.until)
        if until is None:
            left = "until you act" if level < 2 else "⏸"
        else:
            left = format_elapsed((until - health.at).total_seconds())
            left = f"{left} left" if level < 2 else left
        tier = one_line(pause.tier)
        cls = f" ({one_line(pause.cls)})" if level == 0 else ""
        parts.append((f"{tier} paused{cls} {left}", "warn"))
    return parts


def _spend_parts(health: Health, spend: UsageSum | None, day_usd: float, level: int) -> list[Part]:
    """Today's spend (UTC), when any drive today said what it spent: `spent $1.20 today`,
    `spent $1.20 of $5.00 today` with a day budget, partial when some drive had no price;
    and the day budget's pause on the claims: `budget paused until 00:00 UTC`. Money words
    only: the timeout budget (too-wide) is a card's, never the header's."""
    parts: list[Part] = []
    if known(spend) or day_usd > 0:
        cost = sum_cost(spend) if spend is not None and known(spend) else money(0.0)
        of = f" of {money(day_usd)}" if day_usd > 0 else ""
        parts.append((f"spent {cost}{of} today" if level < 2 else f"{cost}{of} today", ""))
    pause = health.budget_pause()
    if pause is not None:
        until = parse_stamp(pause.until)
        if until is None:
            left = "until you act (board resume budget)"
        else:
            left = "until " + until.astimezone(UTC).strftime("%H:%M UTC")
        parts.append(("budget paused " + left if level < 2 else "budget paused", "warn"))
    return parts


def header_parts(
    health: Health | None,
    needs: int,
    width: int,
    spend: UsageSum | None = None,
    day_usd: float = 0.0,
    unseen: int = 0,
) -> list[Part]:
    """The header line in `width` cells: the loop, the drives in use, today's spend and the
    day budget's pause, the paused tiers, the cards that need the operator and the notices
    no operator has seen (the notices screen shows them), each
    shortened before any is cut. The loop's state and the drive count come first, since
    they are what the header is for."""
    if health is None:
        return [("reading the loop's heartbeat…", "")]
    if health.store_down:
        return _store_down_parts(health, needs, width)
    drives = f"drives {health.in_use}/{health.capacity}"
    if health.publishing:
        drives += f" +{health.publishing} publishing"
    for level in (0, 1, 2):
        parts = _loop_parts(health, level)
        parts.append((drives, ""))
        parts += _spend_parts(health, spend, day_usd, level)
        parts += _silent_parts(health, level)
        parts += _pause_parts(health, level)
        if needs:
            verb = "needs" if needs == 1 else "need"
            cards = f"{needs} card" if needs == 1 else f"{needs} cards"
            parts.append((f"{needs if level == 2 else cards} {verb} you", "warn"))
        elif level == 0:
            parts.append(("nothing needs you", ""))
        if unseen:
            words = ("new notice" if unseen == 1 else "new notices") if level < 2 else "new"
            parts.append((f"{unseen} {words}", "warn"))
        if sum(cell_len(text) for text, _ in parts) + 3 * (len(parts) - 1) <= width:
            break
    joined: list[Part] = []
    used = 0
    for i, (text, kind) in enumerate(parts):
        sep = " · " if i else ""
        room = width - used - cell_len(sep)
        if room <= 1:
            break
        if cell_len(text) > room:
            text = set_cell_size(text, room - 1) + "…"
        if sep:
            joined.append((sep, ""))
        joined.append((text, kind))
        used += cell_len(sep) + cell_len(text)
    return joined


def _store_down_parts(health: Health, needs: int, width: int) -> list[Part]:
    """The store's server is unreachable: nothing else can be known now, so the header says
    that first, and that the board keeps asking (the rows are the last reading's)."""
    words = (
        "▲ store unreachable, retrying; the board shows what it last read",
        "▲ store unreachable, retrying",
        "▲ store unreachable",
    )
    text = next((w for w in words if cell_len(w) <= width), words[-1])
    if cell_len(text) > width:
        text = set_cell_size(text, max(0, width - 1)) + "…"
    parts: list[Part] = [(text, "down")]
    tail = f"{needs} card needs you" if needs == 1 else f"{needs} cards need you"
    if needs and cell_len(text) + 3 + cell_len(tail) <= width:
        parts += [(" · ", ""), (tail, "warn")]
    return parts


__all__ = [
    "Clock",
    "Health",
    "LiveDrive",
    "header_parts",
    "live_drive",
    "read_health",
    "row_detail",
    "store_down",
    "utc_now",
]

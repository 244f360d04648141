"""The card screen: everything about one card, read in a worker, shown literally.

Spec, acceptance, block, why it waits, its drive, what its attempts spent (each one and
the card's total, failed attempts included: `Store.card_usage`), the candidates of its
latest race when it raced (best of N: `candidates.latest_race`, what `board card show`
lists), labels, deps and
dependents, branch and worktree, the card's stranded branches and its timeline with
comments. Why a ready
card waits is `waits.why_waits`, the function the loop's claim skips it by, asked with
the loop's health as the header judges it. Which worktree holds the card's work is the
core's to say (`naming.card_worktree`: git's listing and the trees' names); that call and
the stranded listing run in the same worker as the store reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from board.core.cards import candidates, waits
from board.core.config import Config
from board.core.errors import BoardError, NotFound
from board.core.git import naming
from board.core.model import Card, Drive, Event, UsageSum
from board.core.records import Record, field
from board.core.safetext import diffstat
from board.core.store import Store
from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from .boarddata import one_line
from .commands import verb_bindings
from .footer import KeysFooter
from .health import Health, drives_in_use, live_drive, utc_now
from .movement import EDGES, PAGE_MOVES, movement_bindings
from .screenbase import BoardAppScreen
from .times import drive_elapsed, format_elapsed
from .usagetext import UNKNOWN, count, drive_cost, known, sum_cost, tokens_text
from .widgets import StatusLine, literal
from .workkeys import work_bindings

if TYPE_CHECKING:
    from .stranded.strandrows import StrandedRow


class CardDetail(Record):
    """All a card screen shows, gathered off the UI thread."""

    card: Card
    dep_lanes: list[tuple[str, str]]
    dependents: list[str]
    worktree: str
    stranded: list[str]
    timeline: list[Event]
    why: str = ""  # why the claim skips it now ('' when it does not, or it is not ready)
    drive: Drive | None = None  # its drive running now, else its last one
    attempts: list[Drive] = field(default_factory=list)  # its drives, oldest first
    usage: UsageSum | None = None  # what every attempt spent together (the store's sum)
    race: list[Drive] = field(default_factory=list)  # its latest race's candidates, by k
    chosen: int | None = None  # the candidate on the card's branch (in review: the one waiting)
    saved: dict[int, StrandedRow] = field(default_factory=dict)  # in review: k -> its save
    at: datetime = field(default_factory=utc_now)  # when this was read (the clock's)


ATTEMPTS_SHOWN = 50  # the card's latest drives listed with what each spent (the total is all)


def card_stranded(cfg: Config, card_id: str) -> list[str]:
    """The card's stranded branches as lines; a drive's failed attempt and a candidate not
    chosen say so."""
    # imported here, in the worker that reads the card: not on the UI thread (~40 ms)
    from board.core.git.stranded import list_stranded

    lines = []
    for item in list_stranded(cfg):
        if item.card != card_id:
            continue
        commit = item.commit[:10]
        files, ins, dels = item.files, item.insertions, item.deletions
        stats = "  " + diffstat(files, ins, dels) if files is not None else ""
        attempt = "  (a failed attempt)" if item.is_attempt else ""
        if item.is_candidate:
            attempt = "  (a candidate not chosen)"
        lines.append(f"{item.branch}  {commit}{stats}{attempt}")
    return lines


def load_detail(cfg: Config, store: Store, card_id: str, at: datetime | None = None) -> CardDetail:
    """Read the card and its surroundings; git and stranded problems become a line, not a crash."""
    at = at or utc_now()
    card = store.get(card_id)
    why = ""
    if card.lane == "ready" and card.blocked is None:
        loops = sum(waits.loop_running(beat, at) for beat in store.loops())
        limit = cfg.board.max_concurrent * max(1, loops)
        lives = [live_drive(cfg, d, at) for d in store.live_drives()]
        view = waits.claim_view(
            store,
            no_loop="" if loops else waits.NO_LOOP,
            at=at,
            in_use=drives_in_use(lives, limit),
            limit=limit,
        )
        why = waits.why_waits(cfg, card, view)
    drives = store.list_drives(card.id, limit=ATTEMPTS_SHOWN)
    dep_lanes = []
    for dep in card.deps:
        try:
            dep_lanes.append((dep, store.get(dep).lane))
        except NotFound:
            dep_lanes.append((dep, "missing"))
    try:
        tree = naming.card_worktree(cfg, card.id, card.branch)
        worktree = str(tree) if tree is not None else "none"
    except BoardError as exc:
        worktree = f"unknown ({exc.line()})"
    try:
        stranded = card_stranded(cfg, card.id)
    except BoardError as exc:
        stranded = [f"cannot list: {exc.line()}"]
    race = candidates.latest_race(drives)
    saved: dict[int, StrandedRow] = {}
    if race and card.lane == "review":  # what enter on a candidate row opens: its save
        try:
            saved = _candidate_saves(cfg, store, card.id, race, at)
        except BoardError:
            saved = {}
    return CardDetail(
        card,
        dep_lanes,
        store.dependents(card.id),
        worktree,
        stranded,
        store.timeline(card.id),
        why=why,
        drive=drives[0] if drives else None,
        attempts=sorted(drives, key=lambda d: (d.attempt, d.started_at, d.id)),
        usage=store.card_usage(card.id) if drives else None,
        race=race,
        chosen=candidates.chosen(card, race) if race else None,
        saved=saved,
        at=at,
    )


def _candidate_saves(
    cfg: Config, store: Store, card_id: str, race: Sequence[Drive], at: datetime
) -> dict[int, StrandedRow]:
    """k -> the stranded browser's row of candidate k's save (in the worker: git, cards)."""
    from .stranded.strandrows import branch_rows  # the stranded browser's: loaded here

    saves = candidates.saves_of(cfg, card_id, race)
    rows = branch_rows(store, list(saves.values()), at)
    by_branch = {row.name: row for row in rows}
    return {k: by_branch[b.branch] for k, b in saves.items() if b.branch in by_branch}


def _drive_line(drive: Drive, at: datetime) -> Text:
    """`default #2, running for 3m04s`, or how its last drive ended."""
    head = f"{one_line(drive.tier)} #{drive.attempt}, "
    if drive.live:
        return Text(head + f"running for {drive_elapsed(drive, at)} (l: its log)")
    ended = f"{one_line(drive.status)} after {drive_elapsed(drive, at)}"
    return Text(head + ended + (f": {one_line(drive.result)}" if drive.result else ""))


def spent_line(usage: UsageSum) -> Text:
    """The card's total: `$0.12 + 2 unpriced over 3 attempts · 12,345 in · …`, or what is
    not known, never a zero. Money: the timeout budget is the `counts` row's."""
    attempts = f"{usage.drives} attempt{'s' if usage.drives != 1 else ''}"
    if not known(usage):
        return Text(f"{UNKNOWN} (its {attempts} said nothing of what they spent)")
    tokens = tokens_text(usage.input_tokens, usage.output_tokens, usage.cached_tokens)
    return Text(f"{sum_cost(usage)} over {attempts} · {tokens}")


def attempts_table(attempts: Sequence[Drive]) -> Table:
    """Each attempt's tier, how it ended and what it spent: tokens in, out and cached, its
    cost (`—` when not said; `unpriced` for tokens with no price), the model, the turns."""
    # one space between the columns, so all nine fit in 80 columns
    table = Table(
        box=None, pad_edge=False, padding=(0, 1), collapse_padding=True, header_style="dim"
    )
    for name in ("#", "tier", "ended", "in", "out", "cached", "cost"):
        right = name in ("#", "in", "out", "cached", "cost")
        wide = 9 if name == "cost" else None  # `unpriced` kept apart from a `—` beside it
        table.add_column(name, justify="right" if right else "left", no_wrap=True, min_width=wide)
    table.add_column("model", overflow="ellipsis", no_wrap=True, max_width=28)
    table.add_column("turns", justify="right", no_wrap=True)
    for drive in attempts:
        table.add_row(
            str(drive.attempt),
            Text(one_line(drive.tier)),
            Text(one_line(drive.status)),
            count(drive.input_tokens),
            count(drive.output_tokens),
            count(drive.cached_tokens),
            drive_cost(drive),
            Text(one_line(drive.model) or UNKNOWN),
            count(drive.turns),
        )
    return table


def candidates_table(race: Sequence[Drive], at: datetime) -> Table:
    """The latest race's candidates as `board card show` lists them: k, tier, state and its
    gate's word, changed lines, how long it ran (to `at` while it runs) and its cost, so the
    operator sees why the race chose as it did without leaving the screen."""
    table = Table(
        box=None, pad_edge=False, padding=(0, 1), collapse_padding=True, header_style="dim"
    )
    for name in ("k", "tier", "state", "gate", "lines", "took", "cost"):
        right = name in ("k", "lines", "took", "cost")
        wide = 9 if name == "cost" else None
        table.add_column(name, justify="right" if right else "left", no_wrap=True, min_width=wide)
    for drive in race:
        took = candidates.seconds(drive, at)
        table.add_row(
            str(drive.candidate),
            Text(one_line(drive.tier)),
            Text(candidates.state(drive)),
            Text(one_line(drive.gate) or UNKNOWN),
            UNKNOWN if drive.lines_changed is None else f"{drive.lines_changed:,}",
            UNKNOWN if took is None else format_elapsed(took),
            drive_cost(drive),
        )
    return table


def _joined(items: Sequence[str]) -> Text:
    return Text(one_line(", ".join(items)) if items else "none")


def render_detail(detail: CardDetail) -> RenderableType:
    """The card as Rich renderables; every user-written string goes through `literal`."""
    head, title, grid = _head(detail)
    top, rest = detail_parts(detail, grid, head, title)
    if detail.race:
        top.append(candidates_table(detail.race, detail.at))
    return Group(*top, *rest)


def _head(detail: CardDetail) -> tuple[Text, Text, Table]:
    """The card's first line, its title and the grid of its fields."""
    card = detail.card
    head = Text()
    head.append(card.id, style="bold")
    head.append(f"  {card.lane}  p{card.priority}  {card.kind}")
    if card.assignee:
        head.append("  @")
        head.append(one_line(card.assignee))
    title = literal(card.title, style="bold")

    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column()
    if card.blocked is not None:
        block = Text()
        block.append(one_line(card.blocked.cls), style="reverse bold")
        block.append("  ")
        block.append_text(literal(card.blocked.reason))
        grid.add_row("blocked", block)
    else:
        grid.add_row("blocked", Text("no"))
    if detail.why:
        grid.add_row("waits", Text(one_line(detail.why)))
    if card.not_before:
        cls = waits.wait_class(card)
        grid.add_row("retry", Text(f"not before {card.not_before}" + (f" ({cls})" if cls else "")))
    if detail.drive is not None:
        grid.add_row("drive", _drive_line(detail.drive, detail.at))
    if detail.usage is not None and detail.usage.drives:
        grid.add_row("spent", spent_line(detail.usage))
    grid.add_row("labels", _joined(card.labels))
    if card.counts():  # the board's own: its tries, rung, timeouts, what it told
        grid.add_row("counts", Text(one_line(card.counts())))
    deps = [f"{dep} ({lane})" for dep, lane in detail.dep_lanes]
    grid.add_row("deps", _joined(deps))
    grid.add_row("dependents", _joined(detail.dependents))
    grid.add_row("branch", Text(one_line(card.branch) or "none"))
    grid.add_row("worktree", Text(one_line(detail.worktree)))
    grid.add_row("stranded", Text("\n".join(one_line(s) for s in detail.stranded) or "none"))
    if card.surface:
        grid.add_row("surface", _joined(card.surface))
    else:  # what the claim makes of it (docs/lifecycle.md, "Lanes")
        grid.add_row("surface", Text("none: it runs alone (no other drive beside it)"))
    if card.pr_url:
        polled = f"  {card.pr_state}, polled {card.pr_polled_at}" if card.pr_state else ""
        grid.add_row("pr", Text(one_line(card.pr_url) + polled))
    if card.source:  # where `board card import` found it
        url = f"  {one_line(card.source_url)}" if card.source_url else ""
        grid.add_row("source", Text(one_line(card.source) + url))

    return head, title, grid


def detail_parts(
    detail: CardDetail, grid: Table, head: Text, title: Text
) -> tuple[list[RenderableType], list[RenderableType]]:
    """The parts above the candidates' rows (their heading last, when the card raced) and
    the parts below them: the screen puts its candidate table between the two."""
    card = detail.card
    parts: list[RenderableType] = [head, title, Text(), grid]
    if detail.attempts:
        shown = len(detail.attempts)
        more = detail.usage.drives - shown if detail.usage is not None else 0
        name = f"attempts (the last {shown} of {shown + more})" if more > 0 else "attempts"
        parts.append(Rule(name, align="left", style="dim"))
        parts.append(attempts_table(detail.attempts))
    if detail.race:
        name = f"candidates (the latest race, {len(detail.race)})"
        if card.lane == "review":
            name += " · tab to a row: enter its diff, a approves it"
        parts.append(Rule(name, align="left", style="dim"))
    top, parts = parts, []
    for name, body in (("spec", card.spec), ("acceptance", card.acceptance)):
        parts.append(Rule(name, align="left", style="dim"))
        parts.append(literal(body) if body.strip() else Text("none", style="dim"))
    parts.append(Rule("timeline", align="left", style="dim"))
    timeline = Table.grid(padding=(0, 1))
    timeline.add_column(no_wrap=True, style="dim")
    timeline.add_column(no_wrap=True)
    timeline.add_column()
    for event in detail.timeline:
        text = Text()
        if event.kind != "event":
            text.append(f"{event.kind}: ", style="bold")
        text.append_text(literal(event.text))
        timeline.add_row(event.at[:19].replace("T", " "), Text(one_line(event.who)), text)
    parts.append(timeline)
    return top, parts


class CandidateTable(DataTable[RenderableType]):
    """The latest race's candidates, a row each, as `candidates_table` draws them; in
    review the operator chooses here: enter opens a candidate's diff, `a` approves it."""

    BINDINGS = [
        Binding(
            "enter",
            "open_candidate",
            "its diff",
            tooltip="this candidate's diff: the card's tree for the one in review, its "
            "saved branch for another",
            id="card.candidate.diff",
        ),
        Binding(
            "a",
            "approve_candidate",
            "approve this one",
            tooltip="publish this candidate instead of the one in review (asks first); the "
            "one in review is saved to a candidate branch",
            id="card.candidate.approve",
        ),
    ]

    def fill(self, detail: CardDetail) -> None:
        """The rows of `detail`'s race, the cursor kept on the row it was on."""
        row = self.cursor_row
        self.clear(columns=True)
        for name in ("k", "tier", "state", "gate", "lines", "took", "cost", ""):
            self.add_column(name, key=name or "chosen")
        for drive in detail.race:
            took = candidates.seconds(drive, detail.at)
            self.add_row(
                Text(str(drive.candidate), justify="right"),
                Text(one_line(drive.tier)),
                Text(candidates.state(drive)),
                Text(one_line(drive.gate) or UNKNOWN),
                Text(
                    UNKNOWN if drive.lines_changed is None else f"{drive.lines_changed:,}",
                    justify="right",
                ),
                Text(UNKNOWN if took is None else format_elapsed(took), justify="right"),
                drive_cost(drive),
                Text("chosen" if drive.candidate == detail.chosen else "", style="bold"),
                key=str(drive.candidate),
            )
        if detail.race:
            self.move_cursor(row=min(row, len(detail.race) - 1))
        # the heading and a line a row, known now: the table's own height follows its rows
        # only once it has measured them, and a layout of the screen in between was kept
        # (Textual's box model cache), leaving the rows 0 lines tall in 1 opening in 4-10
        self.styles.min_height = len(detail.race) + 1

    def current_k(self) -> int | None:
        """The candidate under the cursor."""
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return int(key) if key else None

    def action_open_candidate(self) -> None:
        k = self.current_k()
        if k is not None and isinstance(self.screen, CardScreen):
            self.screen.open_candidate(k)

    def action_approve_candidate(self) -> None:
        k = self.current_k()
        if k is not None and isinstance(self.screen, CardScreen):
            self.screen.approve_candidate(k)


class CardScreen(BoardAppScreen):
    """One card; `esc` goes back to the board. The verbs work here too."""

    BINDINGS = [
        Binding("escape", "back", "back", tooltip="back to the board", id="card.back"),
        *movement_bindings("card", PAGE_MOVES, ids=EDGES, said=EDGES),
        Binding(
            "l", "app.logs", "logs", show=False, tooltip="the card's drive logs", id="card.logs"
        ),
        Binding("o", "stranded", "stranded", tooltip="this card's saved work", id="card.stranded"),
        *verb_bindings(),
        *work_bindings(),
    ]

    class Loaded(Message):
        def __init__(self, detail: CardDetail | None, error: str = "") -> None:
            super().__init__()
            self.detail = detail
            self.error = error

    def __init__(self, card_id: str) -> None:
        super().__init__()
        self.card_id = card_id
        self.detail: CardDetail | None = None
        self._loop_up: bool | None = None  # as the last health reading said

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="card-scroll"):
            yield Static(Text(f"{self.card_id}  loading…"), id="card-body")
            table = CandidateTable(id="card-candidates", cursor_type="row")
            table.display = False
            yield table
            rest = Static(id="card-rest")
            rest.display = False
            yield rest
        yield StatusLine(id="status")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.watch_store()
        self.board_app.health_changes.subscribe(self, self._health_changed)
        self.query_one("#card-scroll").focus()
        self.reload()

    def _health_changed(self, health: Health) -> None:
        """A loop that died or started changes why a ready card waits: read it again."""
        if self._loop_up is not None and health.loop_up != self._loop_up:
            self.reload()
        self._loop_up = health.loop_up

    def reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="card-load", exit_on_error=False)
    def _load(self) -> None:
        worker = get_current_worker()
        app = self.board_app
        try:
            detail = load_detail(app.cfg, app.store, self.card_id, app.now())
        except BoardError as exc:
            message = self.Loaded(None, exc.line())
        else:
            message = self.Loaded(detail)
        if not worker.is_cancelled:
            self.post_message(message)

    def on_card_screen_loaded(self, message: Loaded) -> None:
        body = self.query_one("#card-body", Static)
        table = self.query_one("#card-candidates", CandidateTable)
        rest = self.query_one("#card-rest", Static)
        self.detail = detail = message.detail
        if detail is None:
            body.update(Text(one_line(message.error)))
            table.display = rest.display = False
            return
        if not detail.race:  # one body, as a card that never raced always drew
            body.update(render_detail(detail))
            table.display = rest.display = False
            return
        head, title, grid = _head(detail)
        top, below = detail_parts(detail, grid, head, title)
        body.update(Group(*top))
        table.fill(detail)
        rest.update(Group(*below))
        table.display = rest.display = True

    def open_candidate(self, k: int) -> None:
        """enter on a candidate row: its diff in the streaming diff view. The one in review
        is the card's tree (the `d` key's view); another is its saved branch, opened as the
        stranded browser opens one."""
        detail = self.detail
        if detail is None:
            return
        card = detail.card
        if card.lane != "review":
            self.board_app.say(
                f"{card.id}: candidates are chosen while it waits in review (it is {card.lane})",
                error=True,
            )
            return
        if k == detail.chosen:
            from .workkeys import live_diff

            live_diff(self.board_app, card)
            return
        row = detail.saved.get(k)
        if row is None:
            self.board_app.say(
                f"{card.id}: candidate {k}'s work was not kept: there is no diff to open",
                error=True,
            )
            return
        from .stranded.diff_screen import DiffScreen

        self.app.push_screen(DiffScreen(self.board_app.cfg, row))

    def approve_candidate(self, k: int) -> None:
        """`a` on a candidate row: the approve key's question and worker, for candidate k
        (the core refuses a candidate it cannot publish, in one line)."""
        card = self.current_card()
        if card is None:
            return
        self.board_app.run_verb("approve", card.id, card.title, card.version, candidate=k)

    def current_card(self) -> Card | None:
        return self.detail.card if self.detail else None

    def action_back(self) -> None:
        self.dismiss(None)

    def action_stranded(self) -> None:
        """The stranded browser, filtered to this card.

        The app opens it: the browser opens card screens, so the card module does not
        name the browser (no import cycle between them).
        """
        self.board_app.open_stranded(self.card_id)

    def action_scroll(self, delta: int) -> None:
        self.query_one("#card-scroll", VerticalScroll).scroll_relative(y=delta, animate=False)

    def action_edge(self, end: int) -> None:
        """`g` the top of the card, `G` its end (the timeline's last event)."""
        scroll = self.query_one("#card-scroll", VerticalScroll)
        if end:
            scroll.scroll_end(animate=False)
        else:
            scroll.scroll_home(animate=False)

    def action_page(self, direction: int) -> None:
        scroll = self.query_one("#card-scroll", VerticalScroll)
        scroll.scroll_relative(y=direction * max(1, scroll.size.height - 1), animate=False)

    def action_verb(self, name: str) -> None:
        card = self.current_card()
        if card is None:
            self.board_app.say(f"{name}: no card loaded", error=True)
            return
        self.board_app.run_verb(name, card.id, card.title, card.version)

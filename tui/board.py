"""The board screen: the loop's health on top, the lanes stacked under it, with counts, a
filter, and the verbs by key.

The layout is lazygit's side panels with k9s's header and table rows (docs/architecture.md
says why): a header line answers whether a loop runs and what it is doing; the lanes are
stacked, each the full width, the focused one expanded and the others showing their
heading and first rows (blocked first); every row is a table row with room for its block
class, its title and what it is doing or waiting for.

The store is read in a worker; the rows are sorted and sanitized there too, so the UI
thread only swaps lists. The first paint comes from the early read's lane heads (real
counts, the real top rows); the whole board is read after that paint. Lanes draw with
the line API (`LaneView`), so 10,000 cards cost lists, not widgets. The cursor follows
its card: after a reload (someone else's write, or our own verb) it is on the same
card, even if that card changed lanes. The board opens on the lane where the operator
is needed (`rows.start_lane`). What the agents spent (each card's cost for its row, today's
for the header) is read in a worker of its own, after the first paint and at each store
change: two summing queries, whatever the board's size (`boarddata.read_spend`); the same
worker reads the working cards' race rows (one query), so a working card whose race runs
says `3/5 green` (its green candidates so far, of N) before its drive's words.
"""

from __future__ import annotations

import time
from datetime import UTC

from board.core.cards import candidates, waits
from board.core.config import PublishSection
from board.core.errors import BoardError, CorruptCard
from board.core.model import LANES, Card
from board.core.records import replace
from board.core.store import unreadable_line
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from .boarddata import (
    Lanes,
    Preload,
    Row,
    Spend,
    Totals,
    all_cards,
    lane_heights,
    matches,
    read_board,
    read_spend,
    start_lane,
)
from .commands import verb_bindings
from .health import Health, LiveDrive, row_detail
from .notify import needs_of
from .preview import TREE_EVERY_S, Preview, PreviewData, card_head, read_preview
from .screenbase import BoardAppScreen, PaletteActions
from .widgets import (
    Backdrop,
    Detail,
    HealthBar,
    LaneStyles,
    LaneView,
    LineList,
    StatusLine,
    backdrop_lines,
)
from .workkeys import work_bindings

START_LANE = "backlog"  # until the first read says where the work is
CHROME_LINES = 3  # the header, the status line and the footer: the lanes get the rest
FIRST_READ_WAIT_S = 0.5  # how long the first paint may wait for the first read
FULL_READ_FALLBACK_S = 1.0  # every card is read by then even if no row could be painted
HINT = "? keys · : palette · / filter · enter open · q quit"


PREVIEW_FROM = 140  # columns from which the preview is on until `v` says otherwise
PREVIEW_SETTLE_S = 0.12  # the cursor rests this long before the preview reads its card
PREVIEW_FOLLOW_S = 0.5  # how often a shown working card's log and drive are read again


def derived(
    publish: PublishSection, lanes: Lanes, totals: Totals | None
) -> tuple[dict[str, str], waits.ClaimView | None]:
    """What the rows tell beyond themselves: the cards that need the operator (with why,
    the header's count), and the claim's view of every card (None while
    only the heads are in: a dependency may sit in any lane, so a view of part of the
    board could say a card is free when it is not)."""
    cards = all_cards(lanes)
    return needs_of(publish, cards), waits.claim_view(None, cards, []) if totals is None else None


class FooterSlot(Widget):
    """The footer's line until the footer is mounted into it: blank, in its colours."""

    def render(self) -> str:
        return ""


class BoardScreen(BoardAppScreen):
    """The lanes: backlog, ready, working, review, done (and cancelled behind `c`)."""

    BINDINGS = [
        Binding("enter", "open_card", "open", tooltip="the card's details", id="board.open"),
        Binding("slash", "filter", "filter", tooltip="title, id, label, class", id="board.filter"),
        Binding("escape", "clear_filter", "clear filter", show=False, id="board.clear_filter"),
        Binding("right,tab", "lane(1)", "next lane", show=False, id="board.next_lane"),
        Binding("left,shift+tab", "lane(-1)", "previous lane", show=False, id="board.prev_lane"),
        Binding("c", "toggle_cancelled", "cancelled", show=False, id="board.cancelled"),
        Binding(
            "v",
            "toggle_preview",
            "preview",
            show=False,
            tooltip="the selected card's title, drive, tree and live log beside the lanes",
            id="board.preview",
        ),
        Binding(
            "l", "app.logs", "logs", show=False, tooltip="the card's drive logs", id="card.logs"
        ),
        *verb_bindings(),
        *work_bindings(),
    ]

    class Loaded(Message):
        """Rows read and prepared in a worker, ready to be shown."""

        def __init__(
            self,
            lanes: dict[str, list[Row]],
            count: int,
            totals: Totals | None = None,
            needs: dict[str, str] | None = None,
            claim: waits.ClaimView | None = None,
        ) -> None:
            super().__init__()
            self.lanes = lanes
            self.count = count
            self.totals = totals  # set when the rows are only each lane's head
            self.needs = needs or {}  # cards that need the operator (found in the worker)
            self.claim = claim  # the claim's view of every card (made in the worker)

    class SpendRead(Message):
        """What the agents spent, read in a worker (`boarddata.read_spend`)."""

        def __init__(self, spend: Spend) -> None:
            super().__init__()
            self.spend = spend

    def __init__(self) -> None:
        super().__init__()
        self.lanes: dict[str, list[Row]] = {lane: [] for lane in LANES}
        self.spend: Spend | None = None  # the latest read of what the agents spent
        # a working card whose race runs -> its green candidates so far (read with the spend)
        self.races: dict[str, int] = {}
        self._spend_asked = False  # its first read has started (after the first paint)
        self.current_lane = START_LANE
        self.show_cancelled = False
        self.filter_words: list[str] = []
        self.loaded = False  # every card is in (not only the lane heads)
        self.shown = False  # the lanes are on screen (perhaps only their heads)
        self.totals: Totals | None = None  # lane counts while only the heads are in
        self.paint_pending = False  # the first board with cards is not on screen yet
        self._shown_count = -1
        self._reading_rest = False  # the read of every card after the heads has started
        self.needs = 0  # cards that need the operator (the header's count)
        self.health: Health | None = None  # the app's latest reading of the loop
        # the claim's view of every card (lanes, working surfaces), made once per read;
        # `claim` is it at the latest health reading, what the rows' waits are asked of
        self._claim_base: waits.ClaimView | None = None
        self.claim: waits.ClaimView | None = None
        self._heights: dict[str, int | str] = {}  # each lane's height as last set
        self.preview_choice: bool | None = None  # `v`'s last word; None: by the width
        self._preview_timer: Timer | None = None
        self.preview_pending = False  # a read is due once the cursor rests (tests wait on it)
        self.follow_next: str | None = None  # a card just added here: the cursor goes to it
        self._resumed = False  # the app's first resume (see post_message)

    def post_message(self, message: Message) -> bool:
        """The app's first resume of this screen, which starts it, does not style it all again:
        every widget was styled as it mounted, moments before (fourteen component styles a
        lane). Every later resume (back from a card, after a theme change) restyles."""
        if isinstance(message, events.ScreenResume) and not self._resumed:
            self._resumed = True
            message.refresh_styles = False
        return super().post_message(message)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The screen's own lines: its widgets cover it (`backdrop_lines`)."""
        lines = backdrop_lines(self, crop)
        return super().render_lines(crop) if lines is None else lines

    def compose(self) -> ComposeResult:
        # The lanes stay hidden until the first read lands, so the board is painted once,
        # with its cards, rather than empty and then again. Widgets the first paint does
        # not show (the "reading" line, the filter field) are mounted when first needed.
        # A lane is one widget, heading included: fewer widgets, a quicker first paint.
        yield HealthBar(id="health")
        lanes = Backdrop(id="lanes")
        lanes.display = False
        parts = LaneStyles(id="lane-styles")
        with Backdrop(id="body"):
            with lanes:
                yield parts
                for lane in LANES:
                    view = LaneView(lane, parts, id=f"lane-{lane}")
                    view.display = lane != "cancelled"
                    yield view
            preview = Preview(id="preview")
            preview.display = False
            yield preview
        yield StatusLine(id="status")
        # The keys' footer is mounted into this line once the board is on screen: Textual's
        # footer shows no keys before the screen's bindings settle, after the first paint,
        # and styling it (its rules, its container) was a seventieth of that paint.
        yield FooterSlot(id="footer-slot")

    def on_mount(self) -> None:
        self.watch_store()
        self.set_interval(PREVIEW_FOLLOW_S, self._preview_follow, name="preview-follow")
        # the footer comes with the first paint (`first_painted`), or by then if the board
        # cannot paint a row (no room) or another screen came first
        self.set_timer(FULL_READ_FALLBACK_S, self._mount_footer)
        app = self.board_app
        app.health_changes.subscribe(self, self._health_changed, immediate=True)
        for lane in LANES:
            self.lane_view(lane).detail_of = self._detail
        self.lane_view(self.current_lane).focus()
        self._mark_current()
        text, error = app.last_status
        self.query_one(StatusLine).show(text or HINT, error)
        if app.health is not None:
            self._health_changed(app.health)
        preload = app.take_preload()
        if preload is None:
            app.poll_health()
            self.reload()
            return
        # The read started before Textual did; a board that is read by now (or within a
        # moment: nothing else is on screen yet) is painted once, with its cards.
        try:
            lanes, count = preload.result(timeout=FIRST_READ_WAIT_S)
        except TimeoutError:  # a slow store: say "reading" and let a worker wait
            self.mount(Static(Text("reading the board…"), id="loading"), after="#health")
            app.poll_health()
            self._load(preload)
        except BoardError as exc:
            app.say(exc.line(), error=True)
            app.poll_health()
            self._show(self.lanes, -1)  # an empty board; the store watch retries
        else:
            if preload.unreadable:  # the rest of the board shows; the status names the card
                app.say(unreadable_line(preload.unreadable), error=True)
            if preload.health is None:
                app.poll_health()
            elif app.health is None:
                app.health_changed(preload.health)  # the header's words, in the first paint
            # the heads are few (a screenful a lane): what they say is worked out here
            self._show(
                lanes, count, preload.totals, *derived(app.cfg.publish, lanes, preload.totals)
            )

    # data ----------------------------------------------------------------------------------

    def reload(self) -> None:
        self._load(None)
        if self.shown and not self.paint_pending:  # not before the first paint: it waits
            self._read_spend()

    @work(thread=True, exclusive=True, group="board-spend", exit_on_error=False)
    def _read_spend(self) -> None:
        worker = get_current_worker()
        app = self.board_app
        try:
            spend = read_spend(app.store, app.now())
        except BoardError as exc:
            app.call_from_thread(app.say, exc.line(), True)
            return
        if not worker.is_cancelled:
            self.post_message(self.SpendRead(spend))

    def on_board_screen_spend_read(self, message: SpendRead) -> None:
        spend = self.spend = message.spend
        for lane in LANES:
            self.lane_view(lane).set_costs(spend.costs)
        if spend.races != self.races:
            self.races = spend.races
            self.lane_view("working").refresh_details()
        self.query_one(HealthBar).show_spend(spend.today, self.day_usd())

    def day_usd(self) -> float:
        """The day's money budget for the header's `of $5.00` (`[budget] day_usd`), 0 when
        none is set."""
        return self.board_app.cfg.budget.day_usd

    @work(thread=True, exclusive=True, group="board-load", exit_on_error=False)
    def _load(self, preload: Preload | None) -> None:
        worker = get_current_worker()
        app = self.board_app
        totals: Totals | None = None
        unreadable: list[CorruptCard] = []
        try:
            if preload:
                lanes, count = preload.result()
                totals = preload.totals
                unreadable = preload.unreadable
            else:
                lanes, count = read_board(app.store, unreadable)
        except BoardError as exc:
            app.call_from_thread(app.say, exc.line(), True)
            return
        if unreadable:  # the rest of the board shows; the status line names the card
            app.call_from_thread(app.say, unreadable_line(unreadable), True)
        needs, claim = derived(app.cfg.publish, lanes, totals)
        if not worker.is_cancelled:
            self.post_message(self.Loaded(lanes, count, totals, needs, claim))

    def on_board_screen_loaded(self, message: Loaded) -> None:
        self._show(message.lanes, message.count, message.totals, message.needs, message.claim)

    def _show(
        self,
        lanes: Lanes,
        count: int,
        totals: Totals | None = None,
        needs: dict[str, str] | None = None,
        claim: waits.ClaimView | None = None,
    ) -> None:
        if count < self._shown_count or (totals is not None and self.loaded):
            return  # an older read finishing late, or heads after the whole board
        self._shown_count = count
        self.totals = totals
        app = self.board_app
        if count >= 0 and (app.seen_changes is None or count > app.seen_changes):
            app.seen_changes = count
        following = self.current_card()
        self.lanes = lanes
        self.needs = len(needs or {})
        self._claim_base = claim
        self._update_claim()
        self.query_one(HealthBar).show(self.health, self.needs)
        if not self.shown:
            self.current_lane = start_lane(app.cfg.publish, lanes, self.visible_lanes())
            self._mark_current()
        self._refilter()
        added = self.follow_next
        if added is not None and any(card.id == added for card in all_cards(lanes)):
            self.follow_next = None
            self._follow(added)  # the card just added through the form, in whichever lane
        elif following is not None:
            self._follow(following.id)
        if not self.shown:
            self.shown = True
            for loading in self.query("#loading"):
                loading.display = False
            self.query_one("#lanes").display = True
            self._place_preview()
            self.lane_view(self.current_lane).focus()
            self.paint_pending = True
        self._preview_soon()
        if totals is None:
            self.loaded = True
        elif not self.paint_pending:
            self.reload()
        else:
            # Only the heads are in. Every card is read once they are on screen
            # (`first_painted`), not while they are painted: that read would hold the
            # interpreter from the paint. A board that cannot paint rows (no room) reads
            # them anyway, a moment later.
            self.set_timer(FULL_READ_FALLBACK_S, self._read_rest)

    def first_painted(self) -> None:
        """The app saw the first board with cards on screen: read the rest, if any, and
        what the agents spent."""
        self.paint_pending = False
        self._mount_footer()
        self._read_rest()

    def _mount_footer(self) -> None:
        """The keys' footer, in the line kept for it (`compose`), once; and what the agents
        spent, if the board could not paint a row to say when (`first_painted`)."""
        if self.shown and self.is_attached and not self._spend_asked:
            self._spend_asked = True
            self._read_spend()
        slot = self.query_one(FooterSlot)
        if not slot.children and slot.is_attached:  # not while the app closes
            from .footer import KeysFooter  # its module too: not at start

            slot.mount(KeysFooter())
            self.call_after_refresh(self.refresh_bindings)  # the footer draws its keys then

    def _read_rest(self) -> None:
        if not self.loaded and not self._reading_rest:
            self._reading_rest = True
            self.reload()

    def painted(self) -> bool:
        """True once the lanes have drawn rows (called after each display)."""
        return any(view.painted for view in self.query(LaneView)) or not any(self.lanes.values())

    def _follow(self, card_id: str) -> None:
        """Keep the cursor on its card, switching lanes if the card moved."""
        view = self.lane_view(self.current_lane)
        if view.select(card_id):
            return
        for lane in self.visible_lanes():
            if lane != self.current_lane and self.lane_view(lane).select(card_id):
                self._focus_lane(lane)
                return

    def _refilter(self) -> None:
        words = self.filter_words
        for lane in LANES:
            rows = self.lanes.get(lane, [])
            shown = [r for r in rows if matches(r, words)] if words else rows
            blocked = sum(1 for r in shown if r.card.blocked is not None)
            total = len(rows)
            if self.totals is not None:  # only the heads are in: the counts come with them
                total, all_blocked = self.totals.get(lane, (total, blocked))
                blocked = blocked if words else all_blocked
            self.lane_view(lane).set_rows(
                shown, total, blocked, "no match" if words and rows else "empty"
            )
            self.lane_view(lane).set_heading(len(shown), total, blocked, bool(words))
        self.layout_lanes()

    # the loop's health ---------------------------------------------------------------------

    def _health_changed(self, health: Health) -> None:
        """A new reading of the loop: the header, the working rows and the waits follow."""
        self.health = health
        self.query_one(HealthBar).show(health, self.needs)
        spend = self.spend
        if spend is not None and spend.day != health.at.astimezone(UTC).strftime("%Y-%m-%d"):
            self.spend = None  # a new UTC day: its spend starts again (read once)
            self._read_spend()
        self._update_claim()
        for lane in self.visible_lanes():
            self.lane_view(lane).refresh_details()

    def _update_claim(self) -> None:
        base, health = self._claim_base, self.health
        self.claim = health.view(base) if base is not None and health is not None else None

    def _detail(self, card: Card) -> Detail:
        """The row's words; a working card whose race runs leads with `3/5 green` (its
        green candidates so far of N, as `candidates.candidates_for` counts them)."""
        cfg = self.board_app.cfg
        text, kind = row_detail(cfg, card, self.health, self.claim)
        green = self.races.get(card.id) if card.lane == "working" else None
        if green is None:
            return text, kind
        race = f"{green}/{candidates.candidates_for(cfg.coder, card)} green"
        return (f"{race} · {text}" if text else race), "live"

    # lanes ---------------------------------------------------------------------------------

    def layout_lanes(self) -> None:
        """Give each lane its lines (`rows.lane_heights`): the focused one expands, the
        others keep their heading and first rows. Called when the rows, the focused lane,
        the visible lanes or the screen's size change."""
        if not self.shown and not any(self.lanes.values()):
            return
        visible = self.visible_lanes()
        room = self.query_one("#lanes").size.height
        if room <= 0:  # not laid out yet: the screen less its fixed lines
            room = self.app.size.height - CHROME_LINES
            field = self.filter_field()
            room -= 1 if field is not None and field.display else 0
        wants = {lane: len(self.lane_view(lane).rows) for lane in visible}
        heights = lane_heights(room, wants, self.current_lane)
        for lane in visible:
            # the focused lane takes what is left, however the room was counted
            height: int | str = "1fr" if lane == self.current_lane else heights[lane]
            if self._heights.get(lane) != height:
                self._heights[lane] = height
                self.lane_view(lane).styles.height = height

    def on_resize(self, event: events.Resize) -> None:
        self._place_preview()
        self.call_after_refresh(self.layout_lanes)

    def lane_view(self, lane: str) -> LaneView:
        return self.query_one(f"#lane-{lane}", LaneView)

    def visible_lanes(self) -> list[str]:
        return [lane for lane in LANES if lane != "cancelled" or self.show_cancelled]

    def current_card(self) -> Card | None:
        return self.lane_view(self.current_lane).current

    def palette_actions(self) -> PaletteActions:
        return PaletteActions(
            open_card=self.action_open_card,
            toggle_cancelled=self.action_toggle_cancelled,
            filter=self.action_filter,
        )

    def _focus_lane(self, lane: str) -> None:
        self.current_lane = lane
        # at once, not at the next callback as Widget.focus does: keys already queued
        # behind this one (typed ahead, or read in one burst over SSH) go to this lane
        self.set_focus(self.lane_view(lane))
        self._mark_current()
        self.layout_lanes()
        self._preview_soon()

    def _mark_current(self) -> None:
        for lane in LANES:
            self.lane_view(lane).set_class(lane == self.current_lane, "-current")

    @on(LineList.Moved)
    def _lane_moved(self, event: LineList.Moved) -> None:
        event.stop()
        self._preview_soon()

    def on_descendant_focus(self, event: object) -> None:
        focused = self.focused
        if isinstance(focused, LaneView) and focused.lane != self.current_lane:
            self.current_lane = focused.lane
            self._mark_current()
            self.layout_lanes()

    def action_lane(self, delta: int) -> None:
        lanes = self.visible_lanes()
        index = lanes.index(self.current_lane) if self.current_lane in lanes else 0
        self._focus_lane(lanes[(index + delta) % len(lanes)])

    def action_toggle_cancelled(self) -> None:
        self.show_cancelled = not self.show_cancelled
        self.lane_view("cancelled").display = self.show_cancelled
        if self.show_cancelled:
            self._focus_lane("cancelled")
        elif self.current_lane == "cancelled":
            self._focus_lane("done")
        else:
            self.layout_lanes()

    # filter --------------------------------------------------------------------------------

    def filter_field(self) -> Input | None:
        """The filter's input, once `/` has mounted it."""
        found = self.query("#filter").results(Input)
        return next(found, None)

    def action_filter(self) -> None:
        field = self.filter_field()
        if field is None:
            field = Input(placeholder="filter: title, id, label, class", id="filter")
            self.mount(field, before=self.query_one(StatusLine))
        field.display = True
        field.focus()
        self.call_after_refresh(self.layout_lanes)

    def action_clear_filter(self) -> None:
        field = self.filter_field()
        if field is None or (not field.value and not field.display):
            return
        field.value = ""
        field.display = False
        self._set_filter("")
        self.lane_view(self.current_lane).focus()
        self.call_after_refresh(self.layout_lanes)

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._set_filter(event.value)

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.input.display = bool(event.value)
        self.lane_view(self.current_lane).focus()
        self.call_after_refresh(self.layout_lanes)

    def _set_filter(self, text: str) -> None:
        words = text.lower().split()
        if words != self.filter_words:
            self.filter_words = words
            self._refilter()

    def follow_card(self, card_id: str) -> None:
        self.follow_next = card_id

    # the preview ---------------------------------------------------------------------------

    def preview(self) -> Preview:
        return self.query_one("#preview", Preview)

    def _place_preview(self) -> None:
        """Show the preview by `v`'s last word, else from PREVIEW_FROM columns."""
        if not self.shown:
            return
        wanted = self.preview_choice
        if wanted is None:
            wanted = self.app.size.width >= PREVIEW_FROM
        pane = self.preview()
        if pane.display != wanted:
            pane.display = wanted
            if wanted:  # its head at once; its log and tree once the cursor rests, so
                self._preview_soon()  # the first paint never waits on a read of them

    def action_toggle_preview(self) -> None:
        self.preview_choice = not self.preview().display
        self._place_preview()
        self.board_app.say("preview on" if self.preview_choice else "preview off")

    def _preview_soon(self, at_once: bool = False) -> None:
        """The cursor moved (or the card under it changed): the preview follows once the
        cursor has rested PREVIEW_SETTLE_S, so holding `j` over 10,000 rows costs each key
        nothing of the preview's (no repaint of it, no read)."""
        if not self.shown or not self.preview().display:
            return
        if self.current_card() is None:
            empty = "no card selected" if any(self.lanes.values()) else "no cards"
            self.preview().show(None, empty)
            return
        if self._preview_timer is not None:
            self._preview_timer.stop()
        if at_once:
            self._read_preview_now()
        else:
            self.preview_pending = True
            self._preview_timer = self.set_timer(PREVIEW_SETTLE_S, self._read_preview_now)

    def _preview_follow(self) -> None:
        """Every PREVIEW_FOLLOW_S: a shown card that is working (its log grows) is read
        again; any other once its tree's diffstat is due."""
        if not self.shown or not self.preview().display:
            return
        card, data = self.current_card(), self.preview().data
        if card is None or data is None or data.card != card.id:
            return
        if card.lane == "working" or time.monotonic() - data.tree_read_at >= TREE_EVERY_S:
            self._read_preview_now()

    def _read_preview_now(self) -> None:
        """Its head lines at once, from what the row holds; the log and the tree from a
        worker (the previous card's kept out: a stale log never shows under a new title)."""
        self.preview_pending = False
        card = self.current_card()
        if card is None:
            return
        pane = self.preview()
        live = self.health.drives.get(card.id) if self.health is not None else None
        data = pane.data
        head = card_head(card, live, "")
        if data is None or data.card != card.id:
            pane.show(PreviewData(card.id, card.version, head, "reading…", ""))
        elif data.version != card.version:
            pane.show(replace(data, version=card.version, head=head))
        self._read_preview(card, live, pane.data)

    @work(thread=True, exclusive=True, group="preview", exit_on_error=False)
    def _read_preview(self, card: Card, live: LiveDrive | None, old: PreviewData | None) -> None:
        worker = get_current_worker()
        data = read_preview(self.board_app.cfg, self.board_app.store, card, live, old)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._preview_read, data)

    def _preview_read(self, data: PreviewData) -> None:
        card = self.current_card()
        if card is not None and card.id == data.card:  # the cursor may have moved on
            self.preview().show(data)

    # cards ---------------------------------------------------------------------------------

    def action_open_card(self) -> None:
        card = self.current_card()
        if card is None:
            self.board_app.say("no card here", error=True)
            return
        from .card import CardScreen

        self.app.push_screen(CardScreen(card.id))

    def action_verb(self, name: str) -> None:
        card = self.current_card()
        if card is None:
            self.board_app.say(f"{name}: no card here", error=True)
            return
        self.board_app.run_verb(name, card.id, card.title, card.version)

"""The flow screen (`F`): the last day of the board as pictures with their figures beside.

Drawn with Textual's own Sparkline, not textual-plotext: one row a series, one cell an
hour, so a day fits an 80-column terminal with its numbers beside it; it colours with the
theme's variables (the high-contrast theme included) and adds no dependency. Every picture
has its figures in words next to it, so nothing is read from a bar's height alone.

Money is said the way every screen says it (`usagetext`): a cost is known (`$0.12`),
partial (`$0.12 + 2 unpriced`: drives that said tokens but no cost) or unknown (`—`), never
a zero that stands for "not said".

The figures come from `core.flow` (the store's timeline and drive rows), read in a worker,
at the app's clock (a fixed store and clock give a fixed screen); a store change reads
them again.
"""

from __future__ import annotations

from board.core.failures import stamp
from board.core.flowstats import Flow, TierCost, read_flow
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Sparkline, Static

from .footer import KeysFooter
from .painttext import one_line
from .screenbase import BoardAppScreen
from .times import format_elapsed
from .usagetext import UNKNOWN, cost_text, money

LABEL_W = 18
MAX_FAILURE_ROWS = 6
MAX_TIER_ROWS = 6
# how the cost per done card is counted, said in its heading (the screen's legend): a card
# done in the window costs every attempt of it (failed ones, other tiers' too), under the
# tier of its last drive
DONE_COST_HOW = "cost per done card, by its last drive's tier (all its attempts summed)"

# how a race counts as won, said in its section's heading (shown when a race ended in the
# window): its candidate ended passed and the race's own drive ended passed (the drive rows)
RACES_WON_HOW = "races won by tier (a candidate ended passed and its race folded it)"


Row = tuple[str, list[float] | None, str]  # label, the picture's data (None: words only), figures


def flow_rows(flow: Flow) -> list[Row | str]:
    """The screen as data, top to bottom: a row, or a section's heading (a str)."""
    rows: list[Row | str] = []
    peak_done = max(flow.done_per_hour, default=0)
    rows.append(
        ("done per hour", [float(n) for n in flow.done_per_hour],
         f"{flow.done} done, at most {peak_done} in an hour"),
    )  # fmt: skip
    rows.append(spend_row(flow))
    peak = max(flow.peak_working, default=0)
    rows.append(
        ("working at once", [float(n) for n in flow.peak_working],
         f"peak {peak} of max_concurrent {flow.max_concurrent}"),
    )  # fmt: skip
    if flow.durations:
        median, p90, longest = flow.duration_summary()
        words = (
            f"{len(flow.durations)} ended · median {format_elapsed(median)} · "
            f"p90 {format_elapsed(p90)} · longest {format_elapsed(longest)}"
        )
        rows.append(("longest drive", list(flow.longest_per_hour), words))
    else:
        rows.append(("longest drive", None, "no drive ended in the window"))
    rows.append(DONE_COST_HOW)
    if flow.done_cost:
        tiers = list(flow.done_cost.items())
        for tier, cost in tiers[:MAX_TIER_ROWS]:
            rows.append((f"  {one_line(tier)}", None, tier_figures(cost)))
        others = tiers[MAX_TIER_ROWS:]
        if others:
            cards = sum(c.cards for _, c in others)
            rows.append((f"  {len(others)} more tiers", None, f"{cards} cards"))
    else:
        rows.append(("  none", None, "no card with a drive ended done in the window"))
    if flow.races:  # a board that never raced in the window has no such section
        rows.append(RACES_WON_HOW)
        for tier, won in list(flow.races_won.items())[:MAX_TIER_ROWS]:
            rows.append((f"  {one_line(tier)}", None, f"{won} won"))
        won_all = sum(flow.races_won.values())
        rows.append(("  all tiers", None, f"{won_all} of {flow.races} races won"))
    rows.append("failures by class")
    if flow.failures:
        shown = list(flow.failures.items())[:MAX_FAILURE_ROWS]
        for cls, per_hour in shown:
            rows.append((f"  {one_line(cls)}", [float(n) for n in per_hour], f"{sum(per_hour)}"))
        rest = list(flow.failures.items())[MAX_FAILURE_ROWS:]
        if rest:
            more = sum(sum(h) for _, h in rest)
            rows.append((f"  {len(rest)} more classes", None, f"{more}"))
    else:
        rows.append(("  none", None, "no drive failed in the window"))
    rows.append(f"time in each open lane, the last {flow.hours} h")
    total = sum(flow.lane_seconds.values())
    for lane, seconds in flow.lane_seconds.items():
        share = f"{100 * seconds / total:.0f}%" if total else "0%"
        cards = flow.lane_cards.get(lane, 0)
        plural = "s" if cards != 1 else ""
        figures = f"{format_elapsed(seconds):>8} card-time  {share:>4}  {cards} card{plural}"
        rows.append((f"  {lane}", None, figures))
    return rows


def spend_row(flow: Flow) -> Row:
    """What the agents spent each hour (the known cost of the drives that ended in it),
    with the window's sum and its dearest hour beside; partial when some drive said
    tokens but no cost, and words only when no drive of the window said a cost."""
    if not flow.spend_priced:
        if flow.spend_unpriced:
            return ("spend per hour", None, f"{UNKNOWN}: {flow.spend_unpriced} drives unpriced")
        return ("spend per hour", None, f"{UNKNOWN}: no drive in the window said what it spent")
    total = cost_text(sum(flow.spend_per_hour), flow.spend_unpriced)
    peak = money(max(flow.spend_per_hour, default=0.0))
    return ("spend per hour", list(flow.spend_per_hour), f"{total}, peak {peak}")


def tier_figures(cost: TierCost) -> str:
    """`$0.36 for 3 cards, $0.12 a card`; partial, `$0.36 + 1 unpriced for 3 cards, ≥$0.12
    a card` (the known cost is a floor); `— (2 unpriced) for 2 cards` when none is known."""
    cards = f"{cost.cards} card{'s' if cost.cards != 1 else ''}"
    per = cost.per_card
    each = ""
    if per is not None:
        each = f", {'≥' if cost.unpriced else ''}{money(per)} a card"
    return f"{cost_text(cost.cost_usd, cost.unpriced)} for {cards}{each}"


class FlowRow(Horizontal):
    """One series: its name, its picture (a cell an hour), its figures."""

    def __init__(self, label: str, data: list[float] | None, figures: str) -> None:
        super().__init__(classes="flow-row")
        self.label, self.data, self.figures = label, data, figures

    def compose(self) -> ComposeResult:
        yield Static(Text(self.label), classes="flow-label")
        if self.data is not None:
            yield Sparkline(self.data, summary_function=max, classes="flow-line")
        yield Static(Text(self.figures), classes="flow-figures")


class FlowScreen(BoardAppScreen):
    """Throughput, spend, drive durations, the cost per done card by tier, races won by
    tier (when a race ended in the window), failures by class and fullness over the last
    day."""

    BINDINGS = [
        Binding("escape,F", "app.pop_screen", "back", tooltip="back to the board", id="flow.back"),
        Binding("r", "reread", "read again", tooltip="read the figures again", id="flow.reread"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.flow: Flow | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text("reading the last day…"), id="flow-title")
        yield VerticalScroll(id="flow-rows")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.watch_store()
        self.reload()

    def reload(self) -> None:
        self._read()

    def action_reread(self) -> None:
        self.reload()

    @work(thread=True, exclusive=True, group="flow-read", exit_on_error=False)
    def _read(self) -> None:
        app = self.board_app
        try:
            flow = read_flow(app.store, app.clock(), app.cfg.board.max_concurrent)
        except Exception as exc:  # a store error is a line on the screen, not a crash
            app.call_from_thread(app.say, f"flow: {exc}", True)
            return
        app.call_from_thread(self.show, flow)

    def show(self, flow: Flow) -> None:
        self.flow = flow
        start, end = stamp(flow.start)[:16] + "Z", stamp(flow.end)[:16] + "Z"
        title = f"flow · the last {flow.hours} h, {start} to {end} · a cell an hour"
        self.query_one("#flow-title", Static).update(Text(title))
        rows = self.query_one("#flow-rows", VerticalScroll)
        rows.remove_children()
        widgets: list[Static | FlowRow] = []
        for row in flow_rows(flow):
            if isinstance(row, str):
                widgets.append(Static(Text(row), classes="flow-section"))
            else:
                widgets.append(FlowRow(*row))
        rows.mount_all(widgets)


__all__ = [
    "DONE_COST_HOW",
    "RACES_WON_HOW",
    "FlowRow",
    "FlowScreen",
    "flow_rows",
    "spend_row",
    "tier_figures",
]

"""The flow screen (`F`): the last day of the board as pictures with their figures beside.

Drawn with Textual's own Sparkline, not textual-plotext: one row a series, one cell an
hour, so a day fits an 80-column terminal with its numbers beside it; it colours with the
theme's variables (the high-contrast theme included) and adds no dependency. Every picture
has its figures in words next to it, so nothing is read from a bar's height alone.

The figures come from `core.flow` (the store's timeline and drive rows), read in a worker,
at the app's clock (a fixed store and clock give a fixed screen); a store change reads
them again.
"""

from __future__ import annotations

from board.core.failures import stamp
from board.core.flowstats import Flow, read_flow
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Footer, Sparkline, Static

from .painttext import one_line
from .screenbase import BoardAppScreen
from .times import format_elapsed

LABEL_W = 18
MAX_FAILURE_ROWS = 6


Row = tuple[str, list[float] | None, str]  # label, the picture's data (None: words only), figures


def flow_rows(flow: Flow) -> list[Row | str]:
    """The screen as data, top to bottom: a row, or a section's heading (a str)."""
    rows: list[Row | str] = []
    peak_done = max(flow.done_per_hour, default=0)
    rows.append(
        ("done per hour", [float(n) for n in flow.done_per_hour],
         f"{flow.done} done, at most {peak_done} in an hour"),
    )  # fmt: skip
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
    """Throughput, drive durations, failures by class and fullness over the last day."""

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
        yield Footer(compact=True)

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


__all__ = ["FlowRow", "FlowScreen", "flow_rows"]

"""The stranded browser's screen: the list, its keys, and the watch for new saves.

Speed, because operators meet this screen with thousands of saves: the list is read in a
thread started with the screen. The newest screenful comes first (`rows.first_rows`); the
screen waits briefly for it in `on_mount`, so its first frame has real rows. Once that
frame is out, the whole list replaces it. The result panel and the filter field are
mounted when first needed, the footer after the whole list is painted.

New saves made by the loop show up live: a worker asks the core for the saves' fingerprint
(`stranded.refs_signature`, a few stat calls) every second and reloads when it changed
(and once at the first look, so a save that landed during the first read is not missed).
The app's store changes reload it too (it subscribes, as every board screen does).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from datetime import UTC, datetime

from board.core import ops
from board.core.config import Config
from board.core.errors import BoardError
from board.core.git import stranded
from board.core.model import Card
from board.core.store import Store
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from ..boarddata import one_line
from ..card import CardScreen
from ..dialogs import ConfirmDialog
from ..footer import KeysFooter
from ..screenbase import BoardAppScreen, PaletteActions
from ..stylesheets import add_stylesheet
from ..widgets import LineList, StatusLine
from .diff_screen import STRANDED_CSS, DiffScreen
from .strandrows import (
    SORTS,
    StrandedRow,
    first_rows,
    fold_attempts,
    load_rows,
    matches,
    sort_rows,
)
from .table import StrandedTable, content_widths
from .target import TargetDialog
from .verbs import Outcome, pick_outcome, recovery_commands, salvage_outcome

FIRST_ROWS = 20  # at least this many of the newest rows are painted before the rest is read
HEAD_WAIT_S = 0.15  # the screen waits this long at most for its first rows before mounting
FILL_WAIT_S = 1.0  # the whole list is built once the first rows are painted, or after this
POLL_S = 1.0  # how often the screen looks for saves made by the loop (a few stat calls)
HINT = "enter diff · p pick · S salvage · d discard · y recovery · o card · / filter · s sort"


def _utc_now() -> datetime:
    return datetime.now(UTC)


class StrandedScreen(BoardAppScreen):
    """Every stranded branch and husk; one key to look, pick, salvage, discard or copy."""

    BINDINGS = [
        Binding(
            "enter",
            "diff",
            "diff",
            tooltip="the branch against the base (on a fold of attempts or candidates: open "
            "or close it)",
            id="stranded.diff",
        ),
        Binding("p", "pick", "pick", tooltip="cherry-pick onto a branch", id="stranded.pick"),
        Binding(
            "S",
            "salvage",
            "salvage",
            tooltip="publish it through the gate, with no coder",
            id="stranded.salvage",
        ),
        Binding("d", "discard", "discard", tooltip="delete it (asks first)", id="stranded.discard"),
        Binding(
            "y",
            "copy",
            "recovery",
            show=False,  # the hint line above names it; the footer is full at 80 columns
            tooltip="copy the recovery commands",
            id="stranded.copy",
        ),
        Binding(
            "o",
            "open_card",
            "card",
            show=False,
            tooltip="the card's screen",
            id="stranded.open_card",
        ),
        Binding(
            "slash", "filter", "filter", tooltip="card, title, tree, lane", id="stranded.filter"
        ),
        Binding("s", "sort", "sort", show=False, tooltip="next sort column", id="stranded.sort"),
        Binding(
            "r", "reverse", "reverse", show=False, tooltip="flip the order", id="stranded.reverse"
        ),
        Binding(
            "escape", "back", "back", tooltip="clear the filter, then back", id="stranded.back"
        ),
    ]

    class Loaded(Message):
        """Rows read in a worker."""

        def __init__(
            self,
            rows: list[StrandedRow],
            error: str,
            widths: dict[str, int],
            head_of: int | None = None,
        ) -> None:
            super().__init__()
            self.rows = rows
            self.error = error
            self.widths = widths
            self.head_of = head_of  # set: only the first screenful, of this many branches

    class Changed(Message):
        """The poll saw the refs, the stats file or the husks change (or looked first)."""

        def __init__(self, signature: tuple[object, ...]) -> None:
            super().__init__()
            self.signature = signature

    class VerbDone(Message):
        def __init__(self, verb: str, outcome: Outcome) -> None:
            super().__init__()
            self.verb = verb
            self.outcome = outcome

    def __init__(
        self,
        cfg: Config,
        store: Store,
        *,
        card_id: str | None = None,
        clock: Callable[[], datetime] = _utc_now,
        poll_s: float = POLL_S,
    ) -> None:
        super().__init__()
        self.cfg = cfg
        self.store = store
        self.clock = clock
        self.poll_s = poll_s
        self.rows: list[StrandedRow] = []
        self.widths: dict[str, int] | None = None
        self.card_only = card_id or ""  # the card screen opens the list on one card's saves
        self.opened: set[str] = set()  # cards whose fold of attempts and candidates is open
        self.filter_words: list[str] = []
        self.loaded = False
        self.load_count = 0
        self.busy = ""
        self.result_lines: list[str] = []
        self._signature: tuple[object, ...] | None = None
        self._polling = False
        self.head_of: int | None = None  # while only the first screenful is shown: branches
        self._footer = False
        self._head_painted = threading.Event()
        self._head: Future[tuple[list[StrandedRow], int] | None] | None = Future()
        self._first: Future[list[StrandedRow]] | None = self._start_first_read(self._head)

    def _head_count(self) -> int:
        """Rows enough to fill the screen (the terminal's height), before the rest is read."""
        try:
            return max(FIRST_ROWS, self.app.size.height - 3)
        except Exception:  # no app yet: a tall terminal's worth
            return 3 * FIRST_ROWS

    def _start_first_read(
        self, head: Future[tuple[list[StrandedRow], int] | None]
    ) -> Future[list[StrandedRow]]:
        """Read the list in a thread now, while the screen mounts (as the app's board does).

        One `git for-each-ref`; the newest screenful (the age order is in the ref names) is
        handed over first with its stats and cards looked up for those rows only, and the
        whole list is built once that screenful is painted, so it does not compete with
        the first paint for the interpreter.
        """
        future: Future[list[StrandedRow]] = Future()
        count = self._head_count()

        def read() -> None:
            try:
                now = self.clock()
                if self.card_only:  # one card's saves: not the newest screenful of all
                    head.set_result(None)
                else:
                    newest = stranded.read_refs(self.cfg, newest=count)
                    head.set_result((first_rows(self.cfg, self.store, now, newest, count), count))
                    self._head_painted.wait(FILL_WAIT_S)
                future.set_result(load_rows(self.cfg, self.store, now))
            except BaseException as exc:  # handed to the loader, which says it in one line
                if not head.done():
                    head.set_result(None)
                future.set_exception(exc)

        threading.Thread(target=read, name="stranded-first-read", daemon=True).start()
        return future

    # layout ---------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        add_stylesheet(self.app, STRANDED_CSS)  # not a CSS_PATH: see add_stylesheet
        yield Static(Text("stranded work  loading…"), id="stranded-title")
        yield StrandedTable(id="stranded-table")
        yield Static(Text(""), id="stranded-detail")
        # the result panel and the filter field are mounted when first needed (fewer
        # widgets to style and lay out before the first paint)
        yield StatusLine(id="status")

    def _take_head(self, timeout: float) -> tuple[list[StrandedRow], int] | None:
        """The newest screenful if it is read within `timeout` (else the loader posts it).

        Waiting here, for a read that takes a few milliseconds, lets the first frame show
        rows instead of "loading…", and the reader runs without competing for the
        interpreter with the mounting widgets; a slow read does not hold the screen longer.
        """
        head = self._head
        if head is None:
            return None
        try:
            got = head.result(timeout=timeout)
        except TimeoutError:
            return None
        self._head = None
        return got

    @property
    def table(self) -> StrandedTable:
        return self.query_one(StrandedTable)

    def on_mount(self) -> None:
        self.table.focus()
        early = self._take_head(HEAD_WAIT_S)
        if early is not None:
            rows, self.head_of = early
            self.rows, self.widths = rows, content_widths(rows)
            self._show()
            self.table.on_painted = self._head_drawn
        self.reload()  # the rest of the first read (or all of it) comes through the loader
        text, error = self.board_app.last_status
        self.query_one(StatusLine).show(text or HINT, error)
        self.watch_store()
        if self.poll_s > 0:
            self.set_interval(self.poll_s, self._poll, name="stranded-watch")

    def _say(self, text: str, error: bool = False) -> None:
        self.board_app.say(text, error)

    # loading --------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the list again (the app calls this after any store change, too)."""
        self._load()

    @work(thread=True, exclusive=True, group="stranded-load", exit_on_error=False)
    def _load(self) -> None:
        worker = get_current_worker()
        error = ""
        rows: list[StrandedRow] = []
        first, self._first = self._first, None
        head, self._head = self._head, None
        got = head.result() if head is not None else None
        if got is not None and not worker.is_cancelled:
            self.post_message(self.Loaded(got[0], "", content_widths(got[0]), head_of=got[1]))
        try:
            rows = first.result() if first else load_rows(self.cfg, self.store, self.clock())
        except BoardError as exc:
            error = exc.line()
        except Exception as exc:  # one line, never a traceback
            error = f"stranded list: internal error: {type(exc).__name__}: {exc}"
        if not worker.is_cancelled:
            self.post_message(self.Loaded(rows, error, content_widths(rows)))

    def on_stranded_screen_loaded(self, message: Loaded) -> None:
        if message.head_of is not None:  # the first screenful; the rest follows
            if not self.loaded:
                self.rows = message.rows
                self.widths = message.widths
                self.head_of = message.head_of
                self._show()
                self.table.on_painted = self._head_drawn
            else:
                self._head_painted.set()
            return
        if message.error:
            self._say(message.error, True)
            if self.loaded:
                return
        self.rows = message.rows
        self.widths = message.widths
        self.head_of = None
        self.loaded = True
        self.load_count += 1
        self._show()
        if not self._footer:
            self.table.on_painted = self._rows_painted

    def _head_drawn(self) -> None:
        """The newest rows are being drawn: once the frame is out, build the whole list."""
        self.call_later(self._head_painted.set)

    def _rows_painted(self) -> None:
        """The whole list is being drawn: now the footer.

        The footer restyles a widget per key each time the bindings change (~60 ms here);
        it comes after the rows are on screen, not before.
        """
        self._head_painted.set()
        if not self._footer:
            self._footer = True
            self.call_later(self._mount_footer)

    async def _mount_footer(self) -> None:
        await self.mount(KeysFooter())
        self.refresh_bindings()  # a footer draws its keys when the bindings next change

    def _poll(self) -> None:
        if not self._polling and self.loaded:
            self._polling = True
            self._check()

    @work(thread=True, group="stranded-watch", exit_on_error=False)
    def _check(self) -> None:
        """Ask the core for the saves' fingerprint; reload when it changed since the last look.

        The fingerprint is taken here, not before the first read (2,000 stat calls would
        delay the first paint), so the first look always reloads once: a save that landed
        between the first read and the first look is never missed.
        """
        signature: tuple[object, ...]
        try:
            signature = stranded.refs_signature(self.cfg)
        except BoardError as exc:
            signature = ("unreadable", exc.line())
        finally:
            self._polling = False
        if self._signature is None or signature != self._signature:
            self.post_message(self.Changed(signature))

    def on_stranded_screen_changed(self, message: Changed) -> None:
        self._signature = message.signature
        self.reload()

    def _show(self) -> None:
        """Filter and sort the rows into the table; the cursor stays on its branch."""
        table = self.table
        shown = [
            r
            for r in self.rows
            if matches(r, self.filter_words) and (not self.card_only or r.card_id == self.card_only)
        ]
        table.empty_text = (
            "nothing matches the filter"
            if self.rows
            else "no stranded branches or husks: nothing was left behind"
        )
        sorted_rows = sort_rows(shown, table.sort_by, table.reverse)
        table.set_items(fold_attempts(sorted_rows, self.opened), self.widths)
        branches = sum(1 for r in self.rows if not r.is_husk)
        attempts = sum(1 for r in self.rows if r.attempt)
        candidates = sum(1 for r in self.rows if r.candidate)
        husks = len(self.rows) - branches
        title = Text(no_wrap=True, overflow="ellipsis", end="")
        title.append("stranded work", "bold")
        if self.head_of is not None:
            title.append(f"  the newest {branches:,} branch{'es' * (branches != 1)} (reading all…)")
        else:
            title.append(f"  {branches:,} branch{'es' * (branches != 1)}")
            kept = [f"{attempts:,} failed attempt{'s' * (attempts != 1)}"] if attempts else []
            if candidates:
                kept.append(f"{candidates:,} candidate{'s' * (candidates != 1)}")
            if kept:
                title.append(f" ({', '.join(kept)})")
            title.append(f" · {husks:,} husk" + "s" * (husks != 1))
        if self.filter_words or self.card_only:
            title.append(f" · {len(shown):,} shown")
        if self.card_only:
            title.append(f" · card {one_line(self.card_only)}")
        if self.filter_words:
            title.append(f" · filter: {one_line(' '.join(self.filter_words))}")
        title.append(f" · sort: {table.sort_by}{' reversed' * table.reverse}")
        self.query_one("#stranded-title", Static).update(title)
        self._show_detail()

    def on_line_list_moved(self, message: LineList.Moved) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        row = self.current_row()
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if row is not None:
            text.append(row.describe())
        self.query_one("#stranded-detail", Static).update(text)

    def _show_result(self, title: str, lines: Sequence[str]) -> None:
        found = self.query("#stranded-result")
        if found:
            panel = found.first(Static)
        else:
            panel = Static(Text(""), id="stranded-result")
            self.mount(panel, after=self.query_one("#stranded-detail"))
        self.result_lines = [title, *lines]
        panel.update(Text("\n".join(one_line(x) for x in self.result_lines)))
        panel.display = True

    # selection ------------------------------------------------------------------------------

    def current_row(self) -> StrandedRow | None:
        row: StrandedRow | None = self.table.current
        return row

    def current_card(self) -> Card | None:
        """The selected row's card (the palette offers its verbs)."""
        row = self.current_row()
        return row.card if row else None

    def palette_actions(self) -> PaletteActions:
        return PaletteActions(open_card=self.action_open_card, filter=self.action_filter)

    def _selected(self, verb: str) -> StrandedRow | None:
        row = self.current_row()
        if row is None:
            self._say(f"{verb}: nothing selected", True)
        elif row.is_fold and verb != "open":
            are, them = ("is", "it") if len(row.fold) == 1 else ("are", "them")
            self._say(
                f"{verb}: {row.stat_text()} of {row.card_id} {are} folded here; enter opens "
                f"{them}, then choose one",
                True,
            )
            return None
        return row

    # keys -----------------------------------------------------------------------------------

    def action_sort(self) -> None:
        table = self.table
        table.sort_by = SORTS[(SORTS.index(table.sort_by) + 1) % len(SORTS)]
        table.reverse = False
        self._show()

    def action_reverse(self) -> None:
        self.table.reverse = not self.table.reverse
        self._show()

    def _filter_field(self) -> Input | None:
        found = self.query("#stranded-filter")
        return found.first(Input) if found else None

    async def action_filter(self) -> None:
        field_ = self._filter_field()
        if field_ is None:
            field_ = Input(placeholder="filter: card, title, tree, lane", id="stranded-filter")
            field_.cursor_blink = self.board_app.cursor_blink
            await self.mount(field_, before=self.query_one(StatusLine))
        field_.display = True
        field_.focus()

    @on(Input.Changed, "#stranded-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_words = event.value.lower().split()
        self._show()

    @on(Input.Submitted, "#stranded-filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            event.input.display = False
        self.table.focus()

    def action_back(self) -> None:
        field_ = self._filter_field()
        shown = field_ is not None and field_.display
        if shown or self.filter_words or self.card_only:
            if field_ is not None:
                field_.value = ""
                field_.display = False
            self.filter_words = []
            self.card_only = ""
            self._show()
            self.table.focus()
            return
        self.app.pop_screen()

    def action_diff(self) -> None:
        row = self.current_row()
        if row is not None and row.is_fold:
            self.toggle_fold(row)
            return
        row = self._selected("diff")
        if row is None:
            return
        if row.is_husk:
            self._say(f"{row.label} is a husk (a directory), not a branch: y shows how to reach it")
            return
        self.app.push_screen(DiffScreen(self.cfg, row))

    def toggle_fold(self, row: StrandedRow) -> None:
        """Open or close a card's fold of failed attempts and candidates; the cursor stays on
        the fold."""
        if row.card_id in self.opened:
            self.opened.discard(row.card_id)
        else:
            self.opened.add(row.card_id)
        self._show()
        verb = "opened" if row.card_id in self.opened else "closed"
        self._say(f"{verb} the {row.stat_text()} of {row.card_id}")

    def action_open_card(self) -> None:
        row = self._selected("open")
        if row is None:
            return
        if row.card is None:
            why = "is no longer on the board" if row.card_id else "names no card"
            self._say(f"{row.label}: {row.card_id or 'its tree'} {why}", True)
            return
        self.app.push_screen(CardScreen(row.card.id))

    def action_copy(self) -> None:
        row = self._selected("copy")
        if row is None:
            return
        commands = recovery_commands(self.cfg, row)
        self.app.copy_to_clipboard("\n".join(commands) + "\n")
        self._show_result("recovery commands (copied to the clipboard where the terminal allows):",
                          commands)  # fmt: skip
        self._say(f"copied the recovery commands for {row.label} (also shown above)")

    def action_pick(self) -> None:
        row = self._selected("pick")
        if row is None or not self._free("pick"):
            return
        if row.is_husk:
            self._say(f"{row.label} is a husk: it has no commits to pick (y shows its path)", True)
            return
        question = Text()
        question.append("Cherry-pick ")
        question.append(row.label, "bold")
        question.append(f" ({row.stat_text()}) onto which branch?")
        default, why_not = ops.default_target(self.cfg)
        hint = "enter picks · esc cancels · a branch checked out anywhere is refused"
        if why_not:
            hint += f" ({one_line(why_not)}, so no branch is filled in)"
        titles = ops.titles_from(self.store)

        def answered(target: str | None) -> None:
            if target is None:
                self._say(f"pick {row.label}: not done (abandoned)")
                return
            self._run_verb(
                "pick",
                row,
                lambda: pick_outcome(ops.pick(self.cfg, row.name, onto=target, title_of=titles)),
            )

        self.app.push_screen(TargetDialog(question, default, hint), answered)

    def action_salvage(self) -> None:
        row = self._selected("salvage")
        if row is None or not self._free("salvage"):
            return
        if row.is_husk:
            self._say(f"{row.label} is a husk: salvage publishes branches (y shows its path)", True)
            return
        question = Text()
        question.append("Salvage ")
        question.append(row.describe(), "bold")
        question.append("?\n")
        question.append(
            "Its work is committed onto the current start point, gated, and published the "
            "configured way (fold or push), with no coder; the card moves on."
        )

        def confirmed(yes: bool | None) -> None:
            if not yes:
                self._say(f"salvage {row.label}: not done (you said no)")
                return
            self._say(f"salvaging {row.label}: running the gate…")
            self._run_verb(
                "salvage",
                row,
                lambda: salvage_outcome(ops.salvage(self.store, self.cfg, row.name)),
            )

        self.app.push_screen(ConfirmDialog(question, "Yes, salvage it"), confirmed)

    def action_discard(self) -> None:
        row = self._selected("discard")
        if row is None or not self._free("discard"):
            return
        question = Text()
        question.append("Discard ")
        question.append(row.describe(), "bold")
        question.append("?\n")
        if row.is_husk:
            question.append(
                "The directory and every byte in it are deleted. This cannot be undone."
            )
        else:
            question.append(
                "The branch is deleted: its work is gone for good. It cannot be undone."
            )

        def confirmed(yes: bool | None) -> None:
            if not yes:
                self._say(f"discard {row.label}: not done (you said no)")
                return

            def call() -> Outcome:
                target = ops.discard(self.cfg, row.name, self.store)
                what = f"stranded branch {row.label}" if target.kind == "branch" else row.describe()
                return Outcome(f"discarded {what}")

            self._run_verb("discard", row, call)

        self.app.push_screen(ConfirmDialog(question, "Yes, discard it"), confirmed)

    # running a verb -------------------------------------------------------------------------

    def _free(self, verb: str) -> bool:
        if self.busy:
            self._say(f"{verb}: wait, {self.busy} is still running", True)
            return False
        return True

    def _run_verb(self, verb: str, row: StrandedRow, call: Callable[[], Outcome]) -> None:
        self.busy = f"{verb} of {row.label}"
        self._verb_worker(verb, row.label, call)

    @work(thread=True, group="stranded-verb", exit_on_error=False)
    def _verb_worker(self, verb: str, label: str, call: Callable[[], Outcome]) -> None:
        try:
            outcome = call()
        except BoardError as exc:
            outcome = Outcome(exc.line(), error=True)
        except Exception as exc:  # one line on the operator's screen, never a traceback
            outcome = Outcome(
                f"{verb} {label}: internal error: {type(exc).__name__}: {exc}", error=True
            )
        if self.is_attached:
            self.post_message(self.VerbDone(verb, outcome))
        else:  # the operator left the screen meanwhile: the result still gets said
            app = self.board_app
            app.call_from_thread(app.say, outcome.line, outcome.error)

    def on_stranded_screen_verb_done(self, message: VerbDone) -> None:
        self.busy = ""
        outcome = message.outcome
        self._say(outcome.line, outcome.error)
        if outcome.details:
            self._show_result(f"{message.verb}:", outcome.details)
        self.reload()

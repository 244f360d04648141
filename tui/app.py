"""BoardApp: the control room over the headless core.

The app owns what the screens share: the store watch (a worker polls
`store.change_count()` every half second and publishes the `store_changes` signal when it
moved; the screens subscribe and reload; a store its database wakes, PostgreSQL, is waited
on instead of polled), the loop's health (a worker reads the heartbeats, the live drives and
the pauses every half second and publishes `health_changes`: a loop that dies writes
nothing, so the store watch alone would never see it), the verbs (one `board.core.actions`
call each, in a worker, its result or refusal shown as one line), and the themes. Nothing
here reads the store or runs git on the UI thread. The screens reach the app typed
(`screenbase.py`). The clock is injected, so tests show fixed times.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from board.core.config import Config
from board.core.errors import BoardError, ConfigError, StoreUnavailable
from board.core.model import Card
from board.core.store import Store
from textual import work
from textual.app import App
from textual.binding import Binding
from textual.dom import DOMNode
from textual.driver import Driver
from textual.screen import Screen
from textual.signal import Signal
from textual.theme import Theme
from textual.timer import Timer

from .board import BoardScreen
from .boarddata import Preload, resume_gc
from .commands import VERBS, BoardCommands
from .health import Clock, Health, read_health, store_down, utc_now
from .notify import NoticeReader, osc9
from .screenbase import BoardAppScreen
from .stylesheets import add_stylesheet
from .themes import load_themes, user_theme_dir
from .widgets import StatusLine

SCREENS_CSS = Path(__file__).with_name("screens.tcss")  # see BoardApp.screens_css
POLL_INTERVAL_S = 0.5
LIVE_INTERVAL_S = 0.5  # the header and the working rows: a second shows within half of one
PUSH_WAIT_S = 1.0  # one wait of the pushed store watch (how soon it notices the app ended)
STATUS_TTL_S = 8.0  # a verb's result or refusal stays this long, then the line goes idle

_ASK_TAIL = {
    "cancel": "Its dependents are rewired; its trees are saved to stranded/ branches, "
    "then removed.",
    "done": "Its trees are saved to stranded/ branches, then removed.",
    "hold": "Why? (the loop never clears a hold; only unblock does)",
    "requeue": "Why? (optional: the reason goes into the next brief)",
    "stop": "Its drive is killed, its tree saved to a stranded/ branch; unblock resumes it. "
    "Why? (optional: tab to the field)",
    "approve": "It is published the configured way (fold or push), unless it changed since.",
    "split": "Into which slices? Their titles, separated by ; (each slice keeps the card's "
    "surface, deps and spec; the card is cancelled and its dependents wait on the slices).",
}


def result_line(verb: str, card: Card) -> str:
    """What a verb did, in one line: `hold c-3: ready, blocked held: waiting on design`."""
    state = card.lane
    if card.blocked is not None:
        state += f", blocked {card.blocked.cls}: {card.blocked.reason}"
    return f"{verb} {card.id}: {state}"


class BoardApp(App[int]):
    """`board tui`: the board, the card screen, verbs by key, live from the store."""

    CSS_PATH = str(Path(__file__).with_name("board.tcss"))  # absolute: subclasses live elsewhere
    TITLE = "board"
    COMMANDS = {BoardCommands}
    ENABLE_COMMAND_PALETTE = True
    COMMAND_PALETTE_BINDING = "ctrl+p"

    BINDINGS = [
        Binding("q", "quit", "quit", tooltip="leave board tui", id="app.quit"),
        Binding("question_mark", "help", "help", tooltip="the keys of this screen", id="app.help"),
        Binding(
            "ctrl+p,colon",
            "command_palette",
            "palette",
            show=False,
            tooltip="every verb for the current card, and the app's commands",
            id="app.palette",
        ),
        Binding("R", "refresh", "refresh", show=False, tooltip="reload now", id="app.refresh"),
        Binding("T", "next_theme", "theme", show=False, tooltip="next theme", id="app.theme"),
        Binding(
            "s", "stranded", "stranded", show=False, tooltip="stranded work", id="app.stranded"
        ),
        Binding("F", "flow", "flow", show=False, tooltip="the last day in pictures", id="app.flow"),
        Binding(
            "i",
            "notices",
            "notices",
            show=False,
            tooltip="what the loop told: cards that need you, the run gone idle, pauses",
            id="app.notices",
        ),
    ]

    def __init__(
        self,
        cfg: Config,
        store: Store,
        theme: str | None = None,
        poll_interval: float = POLL_INTERVAL_S,
        preload: Preload | None = None,
        clock: Clock = utc_now,
        live_interval: float = LIVE_INTERVAL_S,
    ) -> None:
        super().__init__()
        self.cfg = cfg
        self.store = store
        self.poll_interval = poll_interval
        self.clock = clock
        self.live_interval = live_interval
        self.verb_versions: dict[str, int] = {}  # card version seen when a verb key was pressed
        self.verb_candidates: dict[str, int] = {}  # the candidate an approve key chose
        self.user_keys: dict[str, str] = {}  # [tui.keys], once checked (`_apply_keys`)
        self.cursor_blink = True
        self.theme_set = load_themes(user_theme_dir(cfg.root, cfg.tui.theme_dir), cfg.cache_folder)
        for item in self.theme_set.themes.values():
            self.register_theme(item)
        name = theme or cfg.tui.theme
        self.theme_set.require(name)  # a one-line ConfigError before anything is drawn
        self.theme = name
        # Setting the theme queues Textual's refresh of the CSS, which parses every
        # stylesheet a second time. Before the first parse that is work for nothing: the
        # first parse reads this theme's variables, given here; the queued refresh is
        # skipped (see refresh_css).
        self.stylesheet.set_variables(self.get_css_variables())
        self._theme_refresh_pending = True
        self.problems: list[str] = list(self.theme_set.problems)
        self.problems += self._apply_keys(cfg.tui.keys)
        self.seen_changes: int | None = None
        # the store's change count, published when it moved: every screen showing the
        # store subscribes (BoardAppScreen.watch_store) and reloads
        self.store_changes: Signal[int] = Signal(self, "store-changes")
        # the loop's health, published at every read (the times in it move every second)
        self.health_changes: Signal[Health] = Signal(self, "health-changes")
        self.last_status: tuple[str, bool] = ("", False)
        self.status_ttl = STATUS_TTL_S
        self._status_timer: Timer | None = None
        self._polling = False
        self._reading_health = False
        self._watch_stop = threading.Event()
        # the first read of the board: started by `board tui` before Textual was imported,
        # or here, so it runs while the app starts either way
        self._preload: Preload | None = preload or Preload(store, cfg=cfg, clock=clock)
        self.health: Health | None = None  # the latest reading (the preload's, at first)
        self.notice_reader = NoticeReader(self)
        self.notices = self.notice_reader.notices  # the store's notices as this app read them
        # where OSC 9 goes: the terminal Textual draws on, set as `run` makes its driver
        # (`get_driver_class`); None until then and when headless, as in tests
        self.terminal_write: Callable[[str], None] | None = None

    # setup ---------------------------------------------------------------------------------

    def _apply_keys(self, keys: dict[str, str]) -> list[str]:
        """`[tui.keys]` from board.toml: binding id → keys. An unknown id, or a key that
        would land on two bindings of one screen (one of them silently hidden), is refused
        in one line before anything is drawn (`keymap_problem`)."""
        if not keys:
            return []
        problem = keymap_problem(keys)
        if problem:
            raise ConfigError(problem)
        self.set_keymap(keys)
        self.user_keys = dict(keys)
        return []

    def key_for(self, binding_id: str, default: str) -> str:
        """The key shown for a binding id, after the user's keymap (`user_keys`: the one
        given to Textual's `set_keymap`, which keeps its own to itself)."""
        keys = normal_keys(self.user_keys.get(binding_id, default))
        return self.get_key_display(Binding(keys[0] if keys else "", ""))

    @property
    def theme_names(self) -> list[str]:
        return self.theme_set.names

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Fallbacks so a user theme without board's own variables still parses."""
        theme: Theme = self.current_theme
        return {
            "board-badge-background": theme.error or "red",
            "board-badge-foreground": theme.background or ("black" if theme.dark else "white"),
            "board-heal-background": theme.warning or "yellow",
            "board-muted": theme.foreground or ("white" if theme.dark else "black"),
        }

    def take_preload(self) -> Preload | None:
        """The preloaded board, once: later loads read the store afresh."""
        preload, self._preload = self._preload, None
        return preload

    def get_default_screen(self) -> Screen[Any]:
        return BoardScreen()

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any:
        """Textual's, once the stylesheet holds the other screens' rules (`screens_css`)."""
        self.screens_css()
        return super().push_screen(screen, *args, **kwargs)

    def screens_css(self) -> None:
        """Add the rules of the screens opened from the board (screens.tcss) to the
        stylesheet, once, before the first of them is pushed. The start leaves them out:
        the first paint shows none of them, and parsing them was a tenth of its styling.
        Added as a source, as Textual adds a widget's DEFAULT_CSS when it first mounts, so
        only this file is parsed (a screen's CSS_PATH would parse every file again and
        restyle the board); its rules name only those screens' widgets, so nothing drawn
        already needs restyling (`add_stylesheet`)."""
        add_stylesheet(self, SCREENS_CSS)

    def on_mount(self) -> None:
        if self.poll_interval > 0 and self.store.pushes_changes:
            threading.Thread(target=self._push_watch, name="store-watch", daemon=True).start()
        elif self.poll_interval > 0:
            self.set_interval(self.poll_interval, self._poll, name="store-watch")
        # The first reading is the early read's (the board screen takes it, or asks for
        # one): a thread started here would run through the first paint and slow it.
        if self.live_interval > 0:
            self.set_interval(self.live_interval, self.poll_health, name="health")
        self.notice_reader.read()  # where the toasts start, and the header's count
        if self.problems:
            self.say(" · ".join(self.problems), error=True)

    def board_painted(self) -> None:
        """Called once, after the first board with the store's cards is on screen."""

    def post_display_hook(self) -> None:
        """After each display: the first one that drew the board's cards calls board_painted."""
        screen = self.screen
        if isinstance(screen, BoardScreen) and screen.paint_pending and screen.painted():
            resume_gc()  # paused by the early read until this first paint
            self.board_painted()
            screen.first_painted()

    def on_unmount(self) -> None:
        self._watch_stop.set()
        resume_gc()  # an app that ends before its first paint leaves the collector on

    # status --------------------------------------------------------------------------------

    def say(self, text: str, error: bool = False) -> None:
        """Show one line on every screen's status line (the last verb's result or refusal);
        it expires after `status_ttl` seconds, so an old refusal is not read as news."""
        self.last_status = (text, error)
        for screen in self.screen_stack:
            for line in screen.query(StatusLine):
                line.show(text, error)
        if self._status_timer is not None:
            self._status_timer.stop()
            self._status_timer = None
        if text and self.status_ttl > 0:
            self._status_timer = self.set_timer(self.status_ttl, self._status_expired)

    def _status_expired(self) -> None:
        """The last line has been up long enough: back to each screen's idle words."""
        from .board import HINT

        self._status_timer = None
        self.last_status = ("", False)
        for screen in self.screen_stack:
            idle = HINT if isinstance(screen, BoardScreen) else ""
            for line in screen.query(StatusLine):
                line.show(idle, False)

    # the store watch -----------------------------------------------------------------------

    def _poll(self) -> None:
        if not self._polling:
            self._polling = True
            self._check_changes(False)

    @work(thread=True, group="store-watch", exit_on_error=False)
    def _check_changes(self, force: bool) -> None:
        try:
            count = self.store.change_count()
        except BoardError as exc:
            if not self._header_says(exc):
                self.call_from_thread(self.say, exc.line(), True)
            return
        finally:
            self._polling = False
        if force or count != self.seen_changes:
            self.call_from_thread(self.store_changed, count)

    def _push_watch(self) -> None:
        """The store watch for a store that is woken by its database (PostgreSQL's NOTIFY):
        one thread blocks on `wait_change`, so a change made on another machine is on screen
        within a second and an idle board asks the server nothing. A daemon thread, not a
        worker: a worker would be waited for when the app quits."""
        since: int | None = None
        while not self._watch_stop.is_set():
            if since is None:
                since = self.seen_changes  # what the board shows, once it shows something
            try:
                if not self.store.wait_change(PUSH_WAIT_S, since=since):
                    continue
                count = self.store.change_count()
            except BoardError as exc:
                if not self._header_says(exc):
                    self._from_watch(self.say, exc.line(), True)
                self._watch_stop.wait(PUSH_WAIT_S)
                continue
            since = count
            if count != self.seen_changes:
                self._from_watch(self.store_changed, count)

    def _header_says(self, exc: BoardError) -> bool:
        """Whether the header already tells of this failure: an unreachable store is shown
        there, by the health reading, until it answers again (so the status line is not
        left saying it once the store is back)."""
        return isinstance(exc, StoreUnavailable) and self.live_interval > 0

    def _from_watch(self, call: Callable[..., Any], *args: Any) -> None:
        """Run `call` on the app's thread, unless the app has ended meanwhile."""
        if self._watch_stop.is_set():
            return
        try:
            self.call_from_thread(call, *args)
        except RuntimeError:  # the app is gone
            self._watch_stop.set()

    def store_changed(self, count: int) -> None:
        """Someone (this app, the CLI, `board run`) committed a write: every screen reloads."""
        self.seen_changes = count
        self.store_changes.publish(count)
        self.notice_reader.read()

    def action_refresh(self) -> None:
        self._check_changes(True)
        self.poll_health()

    # the loop's health -----------------------------------------------------------------------

    def poll_health(self) -> None:
        """Read the loop's heartbeat, the live drives and the pauses (in a worker)."""
        if not self._reading_health:
            self._reading_health = True
            self._read_health()

    @work(thread=True, group="health", exit_on_error=False)
    def _read_health(self) -> None:
        try:
            health = read_health(self.cfg, self.store, self.clock)
        except StoreUnavailable as exc:  # the header says so; the next reading tries again
            health = store_down(self.health, self.cfg.board, exc.line(), self.clock())
        except BoardError as exc:
            self.call_from_thread(self.say, exc.line(), True)
            return
        finally:
            self._reading_health = False
        self.call_from_thread(self.health_changed, health)

    def health_changed(self, health: Health) -> None:
        """A new reading: the header, the working rows and the waits follow it."""
        self.health = health
        self.health_changes.publish(health)

    def now(self) -> datetime:
        """The app's clock (fixed in tests)."""
        return self.clock()

    # verbs ---------------------------------------------------------------------------------

    def run_verb(
        self,
        name: str,
        card_id: str,
        title: str,
        version: int | None = None,
        candidate: int | None = None,
    ) -> None:
        """Ask what the verb needs (a reason, or yes/no naming the card), then call it once.
        `candidate`: the approve of that candidate of the card's latest race (the card
        screen's candidate rows), asked by name; any other call approves what waits."""
        from .dialogs import ConfirmDialog, ConfirmReasonDialog, ReasonDialog, card_question

        verb = VERBS[name]
        if version is not None:
            self.verb_versions[card_id] = version
        if candidate is None:
            self.verb_candidates.pop(card_id, None)
        else:
            self.verb_candidates[card_id] = candidate
        tail = _ASK_TAIL.get(name, "")
        words = verb.question
        if candidate is not None:
            words = f"{verb.question} candidate {candidate} of"
            tail = (
                f"Candidate {candidate}'s work is published the configured way (fold or push) "
                "instead of the one in review, which is saved to a candidate branch first."
            )
        if verb.ask == "confirm":
            question = card_question(words, card_id, title, tail)

            def confirmed(yes: bool | None) -> None:
                if yes:
                    self._call_verb(name, card_id, None)
                else:
                    self.say(f"{name} {card_id}: not done (you said no)")

            self.push_screen(ConfirmDialog(question, f"Yes, {name} {card_id}"), confirmed)
        elif verb.ask == "confirm-reason":  # destructive, with an optional why: "No" focused
            question = card_question(verb.question, card_id, title, tail)

            def stopped(reason: str | None) -> None:
                if reason is None:
                    self.say(f"{name} {card_id}: not done (you said no)")
                else:
                    self._call_verb(name, card_id, reason)

            ask = ConfirmReasonDialog(question, f"Yes, {name} {card_id}", verb.placeholder)
            self.push_screen(ask, stopped)
        elif verb.ask in ("reason", "optional-reason"):
            question = card_question(verb.question, card_id, title, tail)

            def answered(reason: str | None) -> None:
                if reason is None:
                    self.say(f"{name} {card_id}: not done (abandoned)")
                else:
                    self._call_verb(name, card_id, reason)

            dialog = ReasonDialog(question, verb.placeholder, verb.required)
            self.push_screen(dialog, answered)
        else:
            self._call_verb(name, card_id, None)

    @work(thread=True, group="verbs", exit_on_error=False)
    def _call_verb(self, name: str, card_id: str, reason: str | None) -> None:
        call = VERBS[name].call
        assert call is not None
        try:
            out = call(self, card_id, reason)
        except BoardError as exc:
            self.call_from_thread(self.say, exc.line(), True)
        except Exception as exc:  # one line, never a traceback on the operator's screen
            self.call_from_thread(
                self.say, f"{name} {card_id}: internal error: {type(exc).__name__}: {exc}", True
            )
        else:
            line = result_line(name, out) if isinstance(out, Card) else out.summary()
            self.call_from_thread(self.say, line)
        # forced: what a verb changes after its last write (a tree saved and removed after
        # the fold's write) is read again by every screen, even when the watch saw the write
        self.call_from_thread(self._check_changes, True)

    # notices -------------------------------------------------------------------------------

    def action_notices(self) -> None:
        """The notices screen: the recent notices, newest first; opening it marks them seen."""
        from .noticescreen import NoticesScreen  # loaded when first opened, not at start

        if not isinstance(self.screen, NoticesScreen):
            self.push_screen(NoticesScreen())

    def tell(self, text: str) -> None:
        """A toast, and the `[tui] notify` extra: the bell, or a desktop notice (OSC 9)."""
        self.notices.told.append(text)
        self.notify(text, title="board", severity="warning", timeout=10, markup=False)
        if self.cfg.tui.notify == "bell":
            self.bell()
        elif self.cfg.tui.notify == "osc9":
            self._write_terminal(osc9(text))

    def _write_terminal(self, sequence: str) -> None:
        if self.terminal_write is not None:
            self.terminal_write(sequence)

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal, which, once made, becomes `terminal_write`: a
        notice's sequence goes out through it, in order with the frames it writes (Textual
        keeps the driver it makes to itself). Not for a headless app: Textual makes its own
        headless driver, not this class."""
        return terminal_driver(super().get_driver_class(), self)

    # other screens -------------------------------------------------------------------------

    def follow_card(self, card_id: str) -> None:
        """Put the current screen's cursor on this card once it has read it (one just added)."""
        screen = self.screen
        if isinstance(screen, BoardAppScreen):
            screen.follow_card(card_id)

    def _current_card(self) -> Card | None:
        screen = self.screen
        return screen.current_card() if isinstance(screen, BoardAppScreen) else None

    def action_logs(self) -> None:
        """The drive logs: the card's, or with no card selected every drive's (running
        first, then the newest), since "no card selected" only sent the operator looking
        for a card while the drives were one key away."""
        card = self._current_card()
        from .logs.screen import LogsScreen  # loaded when first opened, not at start

        self.push_screen(
            LogsScreen(self.cfg, self.store, card.id if card else None, clock=self.clock)
        )

    def action_stranded(self) -> None:
        self.open_stranded()

    def open_stranded(self, card_id: str | None = None) -> None:
        """The stranded browser: every save, or one card's (the card screen's `o`)."""
        from .stranded.browser import StrandedScreen  # loaded when first opened, not at start

        self.push_screen(StrandedScreen(self.cfg, self.store, card_id=card_id))

    def action_deps(self) -> None:
        """`D`: what the card waits on and what waits on it; on no card, every chain."""
        from .depscreen import DepsScreen  # loaded when first opened, not at start

        card = self._current_card()
        self.push_screen(DepsScreen(card.id if card else None))

    def action_flow(self) -> None:
        """The flow screen: done per hour, drive durations, failures, fullness."""
        from .flowscreen import FlowScreen  # loaded when first opened, not at start

        if not isinstance(self.screen, FlowScreen):
            self.push_screen(FlowScreen())

    def action_help(self) -> None:
        from .dialogs import HelpScreen  # the dialogs load when first opened, not at start

        self.push_screen(HelpScreen(help_rows(self, self.screen)))

    def action_next_theme(self) -> None:
        names = self.theme_names
        index = names.index(self.theme) if self.theme in names else -1
        self.set_board_theme(names[(index + 1) % len(names)])

    def refresh_css(self, animate: bool = True) -> None:
        """Textual's refresh after a theme change, less the one the start queues (its
        theme's variables are in the first parse already; see __init__)."""
        if self._theme_refresh_pending:
            self._theme_refresh_pending = False
            return
        super().refresh_css(animate)

    def set_board_theme(self, name: str) -> None:
        self.theme = name
        self.say(f"theme {name}")


# Textual's own keys, in the board's words (lower case, what it does here); any other
# binding of Textual's is left out of the help, as it is not the board's to explain.
TEXTUAL_WORDS: dict[str, tuple[str, str]] = {
    "quit": ("quit", "leave board tui, from anywhere (a text field too)"),
    "screen.copy_text": ("copy", "copy the selected text (where the terminal allows)"),
}


def help_rows(app: App[Any], screen: Screen[Any]) -> list[tuple[str, str, str, str]]:
    """(keys, what, binding id, why) for each active binding: the help *is* the bindings.
    Textual's own are described in the board's words (`TEXTUAL_WORDS`) or left out."""
    grouped: dict[tuple[str, str], list[str]] = {}
    tips: dict[tuple[str, str], str] = {}
    ours = all_binding_ids()
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if binding.system or not binding.description:
            continue
        if binding.id not in ours:
            words = TEXTUAL_WORDS.get(binding.action)
            if words is None:
                continue
            binding = Binding(binding.key, binding.action, words[0], tooltip=words[1])
        ident = (binding.id or binding.action, binding.description)
        display = app.get_key_display(binding.with_key(key))
        keys = grouped.setdefault(ident, [])
        if display not in keys:
            keys.append(display)
        tips[ident] = binding.tooltip or ""
    return [
        (" ".join(keys), what, ident if ident in ours else "", tips[(ident, what)])
        for (ident, what), keys in grouped.items()
    ]


def binding_classes() -> list[type[DOMNode]]:
    """Every app, screen and widget class of the TUI that declares its own BINDINGS.

    Found by importing every module of the package, not from a list kept by hand (which
    misses a screen as soon as one is added). The screens opened later are otherwise
    loaded when first opened; this walk runs only when `[tui.keys]` is set (and in the
    tests).
    """
    import importlib
    import pkgutil

    name = __name__.rpartition(".")[0]  # board.tui
    package = sys.modules[name]
    modules = [package]
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{name}."):
        modules.append(importlib.import_module(info.name))
    found: list[type[DOMNode]] = []
    for module in modules:
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, DOMNode)
                and value.__module__ == module.__name__
                and "BINDINGS" in value.__dict__
            ):
                found.append(value)
    return found


# Which bindings are live together: each screen with the widgets that sit on it (and the
# app's own, live on every screen). A key bound twice in one group hides one of the two.
# test_tui_keymap checks every class with BINDINGS is in a group, so none is missed.
SCREEN_GROUPS: dict[str, tuple[str, ...]] = {
    "board": ("board.BoardScreen", "widgets.LaneView"),
    "card": ("card.CardScreen", "card.CandidateTable"),
    "stranded": ("stranded.browser.StrandedScreen", "stranded.table.StrandedTable"),
    "diff": (
        "stranded.diff_screen.PatchScreen",
        "stranded.diff_view.DiffView",
        "stranded.diff_view.FileList",
    ),
    "logs": ("logs.screen.LogsScreen", "logs.view.LogView", "logs.screen.DriveList"),
    "new-card form": ("card_form.CardForm",),
    "flow": ("flowscreen.FlowScreen",),
    "notices": ("noticescreen.NoticesScreen",),
    "deps": ("depscreen.DepsScreen", "depscreen.DepTree"),
    "confirm": ("dialogs.ConfirmDialog",),
    "stop question": ("dialogs.ConfirmReasonDialog",),
    "reason": ("dialogs.ReasonDialog",),
    "help": ("dialogs.HelpScreen",),
    "pick target": ("stranded.target.TargetDialog",),
}


def terminal_driver(base: type[Driver], app: BoardApp) -> type[Driver]:
    """`base` (the driver Textual chose), made to give `app` its `write` as it starts: the
    one public way to the terminal an app draws on (`App.get_driver_class`)."""

    class TerminalDriver(base):  # type: ignore[misc,valid-type]  # a base chosen at run time
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            app.terminal_write = self.write

    return TerminalDriver


def class_bindings(cls: type[DOMNode]) -> list[Binding]:
    """The bindings a class carries: its own, and its board ancestors' unless it opts out
    (`inherit_bindings=False`, which only line views use, noted by `LineView`)."""
    found: list[Binding] = []
    for klass in cls.__mro__:
        if "BINDINGS" in klass.__dict__ and klass.__module__.startswith(_PACKAGE):
            found += [b for b in klass.__dict__["BINDINGS"] if isinstance(b, Binding)]
        if not klass.__dict__.get("inherits_bindings", True):
            break
    return found


_PACKAGE = __name__.rpartition(".")[0]  # board.tui


def group_classes() -> dict[str, list[type[DOMNode]]]:
    """SCREEN_GROUPS as classes (every TUI module imported, as for the ids)."""
    binding_classes()  # imports every module of the package
    out: dict[str, list[type[DOMNode]]] = {}
    for group, names in SCREEN_GROUPS.items():
        classes: list[type[DOMNode]] = [BoardApp]
        for name in names:
            module, _, attr = name.rpartition(".")
            classes.append(getattr(sys.modules[f"{_PACKAGE}.{module}"], attr))
        out[group] = classes
    return out


def _keys_by_id(classes: list[type[DOMNode]], keymap: dict[str, str]) -> dict[str, set[str]]:
    """binding id → the keys it answers to on a screen of these classes, after `keymap`."""
    out: dict[str, set[str]] = {}
    for cls in classes:
        for binding in class_bindings(cls):
            ident = binding.id or binding.action
            out.setdefault(ident, set()).update(normal_keys(keymap.get(ident, binding.key)))
    return out


def normal_keys(keys: str) -> list[str]:
    """A comma-separated list of keys as Textual matches them, one name each in its long
    form (`?` is `question_mark`), empty ones left out: what a keymap or BINDINGS entry
    answers to, through `Binding.make_bindings`, Textual's public way of reading one."""
    parts = [key.strip() for key in keys.split(",") if key.strip()]
    if not parts:
        return []
    return [binding.key for binding in Binding.make_bindings([Binding(",".join(parts), "")])]


def _overlaps(by_id: dict[str, set[str]]) -> dict[frozenset[str], str]:
    """{the two ids: a key both answer to} for every pair of ids sharing a key."""
    owners: dict[str, list[str]] = {}
    for ident, keys in by_id.items():
        for key in keys:
            owners.setdefault(key, []).append(ident)
    pairs: dict[frozenset[str], str] = {}
    for key, ids in owners.items():
        for i, first in enumerate(ids):
            for second in ids[i + 1 :]:
                pairs.setdefault(frozenset((first, second)), key)
    return pairs


def keymap_problem(keys: dict[str, str]) -> str:
    """'' when `[tui.keys]` is sound; else the one line refusing it: an id no binding has,
    or a key that a rebinding puts on two bindings of one screen (where one would hide the
    other: a verb silently gone). Overlaps the board ships with (a screen's key over the
    app's, as the browser's `s` sorts) are by design and not counted."""
    known = all_binding_ids()
    unknown = sorted(k for k in keys if k not in known)
    if unknown:
        return (
            f"[tui.keys] in board.toml: no binding has the id {unknown[0]!r} "
            "(press ? in board tui: each key's id is in the help)"
        )
    for group, classes in group_classes().items():
        before = _overlaps(_keys_by_id(classes, {}))
        after = _overlaps(_keys_by_id(classes, keys))
        for pair, key in sorted(after.items(), key=lambda item: sorted(item[0])):
            if pair in before:
                continue
            first, second = sorted(pair, key=lambda ident: (ident not in keys, ident))
            return (
                f"[tui.keys] in board.toml: {first} and {second} would both be {key!r} on "
                f"the {group} screen, and one would hide the other: give one another key"
            )
    return ""


def all_binding_ids() -> set[str]:
    """Every binding id a user may rebind in `[tui.keys]`: the ids the bindings carry."""
    return {
        binding.id
        for cls in binding_classes()
        for binding in cls.BINDINGS
        if isinstance(binding, Binding) and binding.id
    }


def run(cfg: Config, store: Store, theme: str | None = None, preload: Preload | None = None) -> int:
    """Start the app on the terminal; returns the exit status for the CLI."""
    app = BoardApp(cfg, store, theme=theme, preload=preload)  # refuses a bad theme first
    if not served_to_a_browser(app):
        require_terminal()
    app.run()
    return app.return_code or 0


def served_to_a_browser(app: BoardApp) -> bool:
    """Whether `board web` started this app (Textual's web driver, chosen by the
    TEXTUAL_DRIVER it sets): its stdin and stdout are the server's pipes, not a terminal."""
    if not os.environ.get("TEXTUAL_DRIVER"):
        return False  # the usual case, without importing the web driver
    from textual.drivers.web_driver import WebDriver

    return issubclass(app.driver_class, WebDriver)


def require_terminal() -> None:
    """Textual reads keys from stdin and draws on stderr; stdout is where a pipe or a file
    would be named. Started without a terminal it draws into the void and keeps a core
    busy for ever, so it is refused in one line instead."""
    for fd, name in ((1, "stdout"), (0, "stdin"), (2, "stderr")):
        if not os.isatty(fd):
            raise BoardError(
                f"the control room needs a terminal, and its {name} is not one "
                "(`board card list` prints the board as text)"
            )


__all__ = [
    "BoardApp",
    "all_binding_ids",
    "binding_classes",
    "help_rows",
    "keymap_problem",
    "require_terminal",
    "served_to_a_browser",
    "result_line",
    "run",
]

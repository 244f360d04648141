"""One stranded branch against where it started: its files, then its hunks, as git writes.

git runs in a worker and feeds the buffer; a second worker shows a big new file's start
from its blob meanwhile. Leaving the screen kills git: nobody is watching.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable
from pathlib import Path

from board.core import proc
from board.core.config import Config
from board.core.errors import BoardError
from board.core.git import runbranch, stranded
from board.core.proc import Result
from board.core.safetext import sanitize
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from ..boarddata import one_line
from ..footer import KeysFooter
from ..stylesheets import add_stylesheet
from .buffer import DiffBuffer
from .diff_view import DiffView, FileList
from .strandrows import StrandedRow


def _start_name(cfg: Config) -> str:
    """What a saved tree's diff is against, by name, without a git call on the UI thread:
    the run branch where the tree started (fold), or the base (push)."""
    return cfg.board.run_branch if runbranch.folds(cfg.publish) else cfg.board.base


# the browser's and the diffs' rules (the live diff is opened from the board, not the browser)
STRANDED_CSS = Path(__file__).with_name("stranded.tcss")


class PatchScreen(Screen[None]):
    """A patch streamed as git writes it: its files, then its hunks. What git runs is the
    subclass's (`run_git`): a stranded branch against its start (`DiffScreen`), or a live
    tree's work against its start (`LiveDiffScreen`), in the same view with the same keys."""

    BINDINGS = [
        Binding("escape", "back", "back", tooltip="back to the stranded list", id="diff.back"),
        Binding("tab", "switch_pane", "files/diff", tooltip="files or hunks", id="diff.pane"),
        Binding("enter", "open_file", "go to file", show=False, id="diff.open_file"),
        Binding("right_square_bracket", "file(1)", "next file", id="diff.next_file"),
        Binding("left_square_bracket", "file(-1)", "previous file", id="diff.prev_file"),
    ]

    # the diff has the focus from the start: one focus, one set of keys for the footer to draw
    AUTO_FOCUS = "#diff-view"

    class Ended(Message):
        """git finished (or could not start); the buffer says how."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.cfg = cfg
        self.buffer = DiffBuffer()
        self._files_generation = 0
        self._pgid = 0
        self._left = threading.Event()
        self._preview_thread: threading.Thread | None = None

    def compose(self) -> ComposeResult:
        add_stylesheet(self.app, STRANDED_CSS)  # not a CSS_PATH: see add_stylesheet
        yield Static(self._title(), id="diff-title")
        files = FileList(id="diff-files")
        files.reserve(self.expected_files() or 0)
        yield files
        yield DiffView(id="diff-view")
        yield Static(Text("starting git diff…"), id="diff-status")
        # here, not after the first lines: mounted then, its layout fell on the first keys
        yield KeysFooter()

    def _title(self) -> Text:
        """The line above the files: what is diffed against what."""
        raise NotImplementedError

    def run_git(self, feed: Callable[[bytes], None], started: Callable[[int], None]) -> Result:
        """Run git, passing its bytes to `feed` and its process group to `started`."""
        raise NotImplementedError

    def preview_bytes(self) -> bytes | None:
        """A big new first file's start, before git writes it (None: no head start)."""
        return None

    def expected_files(self) -> int | None:
        """How many files the patch is known to hold before git says (None: unknown)."""
        return None

    def start_words(self) -> str:
        """What the patch is against, by name, for `nothing differs from …`."""
        return sanitize(_start_name(self.cfg))

    @property
    def view(self) -> DiffView:
        return self.query_one(DiffView)

    @property
    def files(self) -> FileList:
        return self.query_one(FileList)

    def on_mount(self) -> None:
        self.view.attach(self.buffer)
        self._stream()
        if self._preview_thread is None:
            self._preview()

    def start_preview(self) -> None:
        """Start reading the preview now, before the screen is even mounted: its git calls
        then run while the screen is built, not after (a worker can only start once the
        screen is mounted). `DiffScreen` calls it on creation."""
        self._preview_thread = threading.Thread(
            target=self._preview_now, name="diff-preview", daemon=True
        )
        self._preview_thread.start()

    def on_unmount(self) -> None:
        self._left.set()
        if self._pgid and not self.buffer.done:
            proc.kill_group(self._pgid)  # nobody is watching: git stops now

    @work(thread=True, exclusive=True, group="diff-stream", exit_on_error=False)
    def _stream(self) -> None:
        def started(pid: int) -> None:
            self._pgid = pid
            if self._left.is_set():
                proc.kill_group(pid)

        try:
            result = self.run_git(self.buffer.feed, started)
        except BoardError as exc:
            self.buffer.finish(None, exc.line())
        except Exception as exc:  # one line on the screen, never a traceback
            self.buffer.finish(None, f"internal error: {type(exc).__name__}: {exc}")
        else:
            self.buffer.finish(result)
        if not self._left.is_set():
            self.post_message(self.Ended())

    @work(thread=True, exclusive=True, group="diff-preview", exit_on_error=False)
    def _preview(self) -> None:
        self._preview_now()

    def _preview_now(self) -> None:
        """While git diffs a big new file, show its start from the blob (checked against
        git's bytes as they come, and replaced if they differ). Only ever a head start:
        if it cannot be had, git's own output is all there is."""
        try:
            data = self.preview_bytes()
        except BoardError:
            return
        except Exception:  # a head start that failed: git's own output is all there is
            return
        if data and not self._left.is_set():
            self.buffer.preview(data)

    def on_diff_screen_ended(self, message: Ended) -> None:
        self.view.sync()

    def on_diff_view_status(self, message: DiffView.Status) -> None:
        files = self.buffer.files
        replaced = self.buffer.generation != self._files_generation  # a preview was replaced
        if len(files) != len(self.files.items) or self.buffer.done or replaced:
            self._files_generation = self.buffer.generation
            if self.buffer.done:
                self.files.reserve(0)
            self.files.set_items(files)
        else:
            self.files.refresh()  # the last file's counts grew
        # one line, its size fixed by the stylesheet: new words need no layout
        self.query_one("#diff-status", Static).update(self.status_text(), layout=False)

    def status_text(self) -> Text:
        b = self.buffer
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        n = len(b.files)
        text.append(f"{b.count:,} lines · {n:,} file{'s' * (n != 1)}")
        if b.previewing:
            text.append(" · git is diffing; the new file's start is shown from it", "bold")
        elif not b.done:
            text.append(f" · reading… {b.bytes / 1e6:,.1f} MB", "bold")
        elif b.error:
            text.append(f" · {one_line(b.error)}", "bold red")
        elif b.result is not None and (b.result.returncode != 0 or b.result.timed_out):
            why = "timed out" if b.result.timed_out else f"exit {b.result.returncode}"
            text.append(f" · git diff failed ({why}): see its words above", "bold red")
        elif b.count == 0:
            text.append(f" · nothing differs from {self.start_words()}")
        else:
            text.append(" · all read")
        return text

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_switch_pane(self) -> None:
        if self.view.has_focus:
            self.files.focus()
        else:
            self.view.focus()

    def action_open_file(self) -> None:
        current = self.files.current
        if self.files.has_focus and current is not None:
            self.view.show_line(current.line)
            self.view.focus()

    def action_file(self, step: int) -> None:
        lines = [f.line for f in self.buffer.files]
        if not lines:
            return
        top = self.view.top_line
        if step > 0:
            i = bisect.bisect_right(lines, top)
            target = lines[i] if i < len(lines) else lines[-1]
        else:
            i = bisect.bisect_left(lines, top) - 1
            target = lines[max(i, 0)]
        self.view.show_line(target)
        index = lines.index(target)
        self.files.cursor = index


class DiffScreen(PatchScreen):
    """A stranded branch against the base: its files, then its hunks, streamed as git writes."""

    def __init__(self, cfg: Config, row: StrandedRow) -> None:
        super().__init__(cfg)
        self.row = row
        self.start_preview()

    def _title(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(self.row.label, "bold")
        text.append(f"  against {sanitize(_start_name(self.cfg))} · {self.row.stat_text()}")
        if self.row.card_id:
            text.append(f" · {self.row.card_id}")
            if self.row.title:
                text.append(f" “{self.row.title}”")
        return text

    def run_git(self, feed: Callable[[bytes], None], started: Callable[[int], None]) -> Result:
        return stranded.stream_diff(self.cfg, self.row.name, feed, started)

    def preview_bytes(self) -> bytes | None:
        return stranded.diff_preview(self.cfg, self.row.name)

    def expected_files(self) -> int | None:
        return self.row.files  # the save's recorded diffstat


class LiveDiffScreen(PatchScreen):
    """A live tree's work against its start point, untracked files included, read through a
    private index (`core.git.livediff`): the tree and its index are never written, so a
    coder running in it is not disturbed. `R`-free: leave and press the key again to see
    what was written since."""

    def __init__(self, cfg: Config, card_id: str, title: str, tree: Path) -> None:
        super().__init__(cfg)
        self.card_id = card_id
        self.card_title = title
        self.tree_path = tree

    def _title(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(self.card_id, "bold")
        text.append(f" “{one_line(self.card_title)}”")
        text.append(f"  the live tree {sanitize(str(self.tree_path))}")
        text.append(f" against where it started ({self.start_words()})")
        return text

    def run_git(self, feed: Callable[[bytes], None], started: Callable[[int], None]) -> Result:
        from board.core.git import livediff

        return livediff.stream_live_diff(self.cfg, self.tree_path, feed, started)

    def start_words(self) -> str:
        return f"its start on {sanitize(_start_name(self.cfg))}"

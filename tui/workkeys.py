"""Into the work, from the keyboard: add or edit a card, its spec in `$EDITOR`, a shell in its
tree, the live tree's diff.

The board and the card screen carry these keys (`work_bindings`); the screens' actions
(`BoardAppScreen`) call the functions here with the card they are on. Each write is one core
verb (`ops.add_card`, `ops.edit_card`), as `board card add` and `board card edit`.

The shell and the editor are the operator's own programs on the operator's terminal: the
app suspends itself around them (`suspended`), as lazygit does for a commit message, and
they run through `proc.run_interactive`, the one door that lets a child read the terminal
(its docstring says why that door has no process group and no timeout). A headless app
(the tests) has no terminal to hand over, so there it only runs the program.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from board.core import proc  # loaded at start anyway (waits asks it whether a pid lives)
from board.core.errors import BoardError, Refused
from board.core.model import Card
from textual.binding import Binding

from .boarddata import one_line

if TYPE_CHECKING:
    from .app import BoardApp

SHELL_DEFAULT = "/bin/sh"
EDITOR_DEFAULT = "vi"


def work_bindings() -> list[Binding]:
    """The keys into the work, for every screen that has a current card (board, card)."""
    return [
        Binding("n", "new_card", "new", tooltip="add a card (a form)", id="card.new"),
        Binding(
            "e",
            "edit_card",
            "edit",
            show=False,
            tooltip="edit a card not yet started (the same form, filled)",
            id="card.edit",
        ),
        Binding(
            "E",
            "edit_spec",
            "spec in $EDITOR",
            show=False,
            tooltip="edit the card's spec in $VISUAL or $EDITOR (the app waits)",
            id="card.edit_spec",
        ),
        Binding(
            "exclamation_mark",
            "shell",
            "shell",
            show=False,
            tooltip="a shell in the card's tree ($SHELL; exit comes back)",
            id="card.shell",
        ),
        Binding(
            "d",
            "live_diff",
            "diff",
            show=False,
            tooltip="the card's tree against where it started, untracked files included",
            id="card.diff",
        ),
        Binding(
            "D",
            "app.deps",
            "deps",
            show=False,
            tooltip="what the card waits on and what waits on it, as trees",
            id="card.deps",
        ),
    ]


@contextlib.contextmanager
def suspended(app: BoardApp) -> Iterator[None]:
    """The terminal handed to a child for the length of the block; a headless app has none
    to hand over (its tests), so there the block just runs."""
    if app.is_headless:
        yield
        return
    with app.suspend():
        yield


# the form ------------------------------------------------------------------------------------


def new_card(app: BoardApp) -> None:
    """`n`: the form, empty; the card is added by `ops.add_card`."""
    from .card_form import CardForm

    def added(card: Card | None) -> None:
        if card is None:
            app.say("new card: not added (cancelled)")
        else:
            app.say(f"added {card.id}: {card.lane}")
            app.follow_card(card.id)  # the cursor goes to it once it is read
            app.action_refresh()

    app.push_screen(CardForm(None), added)


def editable(card: Card, verb: str) -> str:
    """'' when the card may be edited, else the one line saying why not (the core's check)."""
    from board.core import ops  # the card verbs load when one runs, not at start

    if card.lane in ops.EDITABLE_LANES:
        return ""
    started = "only a card not yet started (backlog or ready) is edited"
    return f"{verb} {card.id}: is {card.lane}; {started}"


def edit_card(app: BoardApp, card: Card) -> None:
    """`e`: the form filled from the card as shown; the write expects that version."""
    from .card_form import CardForm

    why = editable(card, "edit")
    if why:
        app.say(why, error=True)
        return

    def saved(after: Card | None) -> None:
        if after is None:
            app.say(f"edit {card.id}: not changed (cancelled)")
        else:
            app.say(f"edited {after.id}: {after.lane}")
            app.action_refresh()

    app.push_screen(CardForm(card), saved)


# $EDITOR -------------------------------------------------------------------------------------


def editor_argv() -> list[str]:
    """`$VISUAL`, else `$EDITOR`, else vi, split as words (`code -w` works; no shell parses it)."""
    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if value:
            import shlex

            return shlex.split(value)
    return [EDITOR_DEFAULT]


def edit_spec(app: BoardApp, card: Card) -> None:
    """`E`: the spec in the operator's editor, the app suspended; written back with the
    version the editor was opened on, so a card claimed meanwhile is refused, its text kept."""
    why = editable(card, "spec")
    if why:
        app.say(why, error=True)
        return
    fd, name = tempfile.mkstemp(prefix=f"board-spec-{card.id}-", suffix=".md")
    path = Path(name)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(card.spec)
    try:
        with suspended(app):
            status = proc.run_interactive([*editor_argv(), str(path)], cwd=app.cfg.root)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        app.say(f"spec {card.id}: cannot read the edited file {path}: {exc}", error=True)
        return
    if status != 0:
        path.unlink(missing_ok=True)
        app.say(f"spec {card.id}: the editor exited {status}; nothing saved", error=True)
        return
    if text == card.spec:
        path.unlink(missing_ok=True)
        app.say(f"spec {card.id}: unchanged")
        return
    _save_spec(app, card, text, path)


def _save_spec(app: BoardApp, card: Card, text: str, path: Path) -> None:
    def write() -> None:
        try:
            from board.core import ops

            after = ops.edit_card(app.store, card.id, ops.CardEdit(spec=text), seen=card)
        except BoardError as exc:
            line = f"{exc.line()}; your text is kept in {path}"
            app.call_from_thread(app.say, line, True)
            return
        path.unlink(missing_ok=True)
        app.call_from_thread(app.say, f"spec {after.id}: saved ({len(text)} chars)")
        app.call_from_thread(app.action_refresh)

    app.run_worker(write, thread=True, group="verbs", exit_on_error=False)


# the tree: a shell, the live diff ------------------------------------------------------------


def _tree_of(app: BoardApp, card: Card) -> tuple[Path, bool]:
    """The card's tree and whether a drive is running in it (read in a worker)."""
    from board.core.git import naming

    tree = naming.card_worktree(app.cfg, card.id, card.branch)
    if tree is None:
        raise Refused(f"{card.id}: has no tree now (a tree exists while it is built)")
    drives = app.store.list_drives(card.id, limit=1)
    return tree, bool(drives) and drives[0].live


def _with_tree(app: BoardApp, card: Card, verb: str, then: Any) -> None:
    """Find the card's tree off the UI thread, then call `then(tree, live)` on it."""

    def find() -> None:
        try:
            tree, live = _tree_of(app, card)
        except BoardError as exc:
            app.call_from_thread(app.say, f"{verb} {exc.line()}", True)
            return
        try:
            app.call_from_thread(then, tree, live)
        except Exception as exc:  # one line on the status line, never a silent nothing
            line = f"{verb} {card.id}: internal error: {type(exc).__name__}: {exc}"
            app.call_from_thread(app.say, line, True)

    app.run_worker(find, thread=True, group="verbs", exit_on_error=False)


def shell_banner(card: Card, tree: Path, live: bool) -> str:
    """What is printed before the shell: where it is, and whether the drive is at work."""
    head = f"board: a shell in {tree} for {card.id} “{one_line(card.title)}”"
    head += f" on {card.branch or '-'}"
    if live:
        state = (
            "The tree is live: its drive is running and the coder may be writing here now; "
            "the drive is not disturbed, and what you change here goes into its build."
        )
    else:
        state = "No drive runs in it now."
    return f"{head}\n{state}\nBOARD_CARD and BOARD_BRANCH are set. `exit` returns to board tui.\n"


def shell_env(card: Card) -> dict[str, str]:
    """The card and its branch for the shell (values, never parsed by a shell). Not
    BOARD_WORKTREE or BOARD_DRIVE: those mark a drive's processes, killed before a save."""
    return {"BOARD_CARD": card.id, "BOARD_BRANCH": card.branch}


def open_shell(app: BoardApp, card: Card) -> None:
    """`!`: `$SHELL` in the card's tree, the app suspended until it exits."""

    def run(tree: Path, live: bool) -> None:
        import shlex

        argv = shlex.split(os.environ.get("SHELL", "").strip() or SHELL_DEFAULT)
        env = {k: v for k, v in os.environ.items() if k not in ("BOARD_WORKTREE", "BOARD_DRIVE")}
        env.update(shell_env(card))
        with suspended(app):
            sys.stdout.write(shell_banner(card, tree, live))
            sys.stdout.flush()
            status = proc.run_interactive(argv, cwd=tree, env=env)
        app.say(f"shell {card.id}: back from {tree.name} (exit {status})")
        app.action_refresh()

    _with_tree(app, card, "shell", run)


def live_diff(app: BoardApp, card: Card) -> None:
    """`d`: the card's tree against its start point, in the stranded browser's diff view."""
    from .stranded.diff_screen import LiveDiffScreen

    def show(tree: Path, live: bool) -> None:
        app.push_screen(LiveDiffScreen(app.cfg, card.id, card.title, tree))

    _with_tree(app, card, "diff", show)


__all__ = [
    "edit_card",
    "edit_spec",
    "editable",
    "editor_argv",
    "live_diff",
    "new_card",
    "open_shell",
    "shell_banner",
    "shell_env",
    "suspended",
    "work_bindings",
]

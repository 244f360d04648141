"""Into the work from the keyboard: `n` adds a card through a form, `e` edits one not yet
started, `E` edits its spec in $EDITOR, `!` opens a shell in its tree, `d` shows the live
tree's diff. Real store, real git trees, real scripts as the editor and the shell."""

from __future__ import annotations

from pathlib import Path

from board.core.drive.claim import claim
from board.core.store import Expect
from board.tui.board import BoardScreen
from board.tui.card_form import CardForm
from board.tui.stranded.diff_screen import LiveDiffScreen
from textual.widgets import Input, Static, TextArea

from tests.support.paths import script
from tests.support.repos import git
from tests.support.tui import (
    goto,
    loaded,
    make_app,
    run_pilot,
    screen_lines,
    settle,
    status,
)
from tests.support.waiting import wait_for


def form_error(app) -> str:
    return str(app.screen.query_one("#form-error", Static).render())


async def fill(pilot, selector: str, text: str) -> None:
    app = pilot.app
    field = app.screen.query_one(selector)
    if isinstance(field, TextArea):
        field.text = text
    else:
        assert isinstance(field, Input)
        field.value = text
    await pilot.pause()


# -- n: a new card -------------------------------------------------------------------------


async def test_n_adds_a_ready_card_with_a_dependency_picked_from_the_fuzzy_list(board) -> None:
    app = make_app(board)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("n")
        assert isinstance(app.screen, CardForm), "n did not open the form"
        await pilot.press(*"Add a health check")
        await fill(pilot, "#form-spec", "GET /health returns 200")
        await fill(pilot, "#form-acceptance", "curl says ok")
        await fill(pilot, "#form-priority", "1")
        await fill(pilot, "#form-surface", "src/api/** docs/*.md")
        app.screen.query_one("#form-dep-search", Input).focus()
        await pilot.press(*"readme")  # fuzzy: c-5 "Write the README"
        await settle(pilot)
        await pilot.press("enter")
        assert app.screen.deps == ["c-5"], app.screen.deps
        app.screen.query_one("#form-ready").value = True
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, BoardScreen), what="the board")
        await settle(pilot)
        await wait_for(
            pilot,
            lambda: (app.screen.current_card() or board.store.get("c-1")).id == "c-13",
            what="the cursor on the card just added",
        )
    card = board.store.get("c-13")
    assert (card.title, card.spec, card.acceptance) == (
        "Add a health check",
        "GET /health returns 200",
        "curl says ok",
    )
    assert (card.lane, card.priority, card.deps) == ("ready", 1, ("c-5",))
    assert card.surface == ("src/api/**", "docs/*.md")
    assert status(app) == "added c-13: ready"


async def test_n_with_bad_input_shows_the_error_inside_the_form_and_adds_nothing(board) -> None:
    app = make_app(board)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        before = len(board.store.list_cards())
        await pilot.press("n", "ctrl+s")  # no title
        await wait_for(pilot, lambda: "needs a title" in form_error(app), what="the error")
        assert isinstance(app.screen, CardForm), "a refusal closed the form"
        await pilot.press(*"Ship it")
        app.screen.query_one("#form-ready").value = True  # ready with no spec
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "needs a spec" in form_error(app), what="the spec error")
        await fill(pilot, "#form-priority", "9")
        await fill(pilot, "#form-spec", "do it")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "priority must be 0-4" in form_error(app), what="priority")
        assert isinstance(app.screen, CardForm)
        assert app.screen.query_one("#form-title", Input).value == "Ship it", "the typing went"
        assert len(board.store.list_cards()) == before, "a refused form added a card"
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, BoardScreen)
        assert len(board.store.list_cards()) == before


# -- e: edit -------------------------------------------------------------------------------


async def test_e_edits_a_ready_card_through_the_same_form(board) -> None:
    app = make_app(board)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        await pilot.press("e")
        assert isinstance(app.screen, CardForm)
        assert app.screen.query_one("#form-title", Input).value == "Set up CI pipeline"
        await fill(pilot, "#form-title", "Set up CI on every push")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, BoardScreen), what="the board")
        await settle(pilot)
    assert board.store.get("c-1").title == "Set up CI on every push"
    assert status(app) == "edited c-1: ready"


async def test_e_after_the_loop_claimed_the_card_keeps_the_form_open_saying_what_changed(
    board,
) -> None:
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        await pilot.press("e")
        assert isinstance(app.screen, CardForm)
        claim(board.cfg, board.store, board.store.get("c-1"))  # the loop, meanwhile
        await fill(pilot, "#form-spec", "a spec the coder never reads")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "changed since it was shown" in form_error(app), what="it")
        assert "lane ready → working" in form_error(app), form_error(app)
        assert isinstance(app.screen, CardForm), "the refusal closed the form"
    card = board.store.get("c-1")
    assert card.lane == "working" and card.spec == "spec of Set up CI pipeline"


async def test_e_on_a_working_card_is_refused_in_one_line(board) -> None:
    app = make_app(board)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        await goto(pilot, "working", "c-3")
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, BoardScreen), "a working card's form opened"
        assert status(app) == (
            "edit c-3: is working; only a card not yet started (backlog or ready) is edited"
        )


# -- E: the spec in $EDITOR ----------------------------------------------------------------


async def test_E_edits_the_spec_in_the_editor_and_writes_it_back(board, monkeypatch) -> None:
    monkeypatch.setenv("EDITOR", script("editor_append.sh"))
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR_LINE", "and log every request")
    app = make_app(board)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        await pilot.press("E")
        await wait_for(pilot, lambda: status(app).startswith("spec c-1: saved"), what="saved")
    assert board.store.get("c-1").spec == "spec of Set up CI pipelineand log every request\n"


async def test_E_after_a_claim_is_refused_and_the_text_kept(board, monkeypatch) -> None:
    monkeypatch.setenv("EDITOR", script("editor_append.sh"))
    monkeypatch.delenv("VISUAL", raising=False)
    app = make_app(board, poll=0)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        claim(board.cfg, board.store, board.store.get("c-1"))  # the board still shows ready
        await pilot.press("E")
        await wait_for(pilot, lambda: "changed since it was shown" in status(app), what="no")
        assert "your text is kept in" in status(app)
        kept = status(app).rsplit("kept in ", 1)[1]
        with open(kept, encoding="utf-8") as fh:
            assert "edited in the editor" in fh.read()
    assert board.store.get("c-1").spec == "spec of Set up CI pipeline"


# -- !: a shell, d: the live diff ----------------------------------------------------------


def make_tree(board, card_id: str) -> Path:
    """A real worktree for the card, as a drive makes it (`feat-<id>` on `feat/<id>`)."""
    root = board.root
    (root / "app.py").write_text("print('hello')\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    git(root, "branch", "-f", board.cfg.board.run_branch, "HEAD")
    tree = root / board.cfg.board.worktrees / f"feat-{card_id}"
    git(
        root,
        "worktree",
        "add",
        "-q",
        "-b",
        f"feat/{card_id}",
        str(tree),
        board.cfg.board.run_branch,
    )
    board.store.update(card_id, Expect(), {"branch": f"feat/{card_id}"}, who="fixture")
    return tree


async def test_bang_opens_the_shell_in_the_tree_with_the_card_in_its_environment(
    board, monkeypatch, tmp_path
) -> None:
    tree = make_tree(board, "c-3")
    record = tmp_path / "shell.txt"
    monkeypatch.setenv("SHELL", script("shell_record.sh"))
    monkeypatch.setenv("SHELL_RECORD", str(record))
    monkeypatch.setenv("BOARD_WORKTREE", "/elsewhere")  # never handed on: it marks drives
    app = make_app(board)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        await goto(pilot, "working", "c-3")
        await pilot.press("exclamation_mark")
        await wait_for(pilot, lambda: status(app).startswith("shell c-3: back"), what="back")
        assert isinstance(app.screen, BoardScreen)
    lines = record.read_text().splitlines()
    assert lines == [
        f"pwd={tree.resolve()}",
        "card=c-3",
        "branch=feat/c-3",
        "worktree=unset",
    ], lines
    assert status(app) == "shell c-3: back from feat-c-3 (exit 3)"


async def test_bang_on_a_card_with_no_tree_says_so(board) -> None:
    app = make_app(board)
    async with run_pilot(app, size=(80, 24)) as pilot:
        await loaded(pilot)
        await goto(pilot, "ready", "c-1")
        await pilot.press("exclamation_mark")
        await wait_for(pilot, lambda: "has no tree" in status(app), what="the refusal")


async def test_d_shows_the_live_tree_against_its_start_without_touching_its_index(
    board,
) -> None:
    tree = make_tree(board, "c-3")
    (tree / "app.py").write_text("print('hello, board')\n")
    (tree / "new_module.py").write_text("ANSWER = 42\n")  # untracked: the coder's new file
    index_path = Path(git(tree, "rev-parse", "--path-format=absolute", "--git-path", "index"))
    before = index_path.read_bytes()
    status_before = git(tree, "status", "--porcelain")
    app = make_app(board)
    async with run_pilot(app, size=(100, 30)) as pilot:
        await loaded(pilot)
        await goto(pilot, "working", "c-3")
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, LiveDiffScreen), what="the diff")
        diff = app.screen
        await wait_for(pilot, lambda: diff.buffer.done, what="git diff to finish")
        await pilot.pause()
        text = "\n".join(screen_lines(app))
        assert "+ANSWER = 42" in text, text
        assert "+print('hello, board')" in text and "-print('hello')" in text, text
        assert [f.path for f in diff.buffer.files] == ["app.py", "new_module.py"]
        await pilot.press("escape")
        assert isinstance(app.screen, BoardScreen)
    assert index_path.read_bytes() == before, "the live diff wrote the tree's own index"
    assert git(tree, "status", "--porcelain") == status_before
